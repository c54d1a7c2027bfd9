"""The daemon's CRR controller against the real API server, with a scripted container runtime.

The daemon controller runs in-process on the runtime as ``kruise daemon`` wires it (informers
narrowed to one node: its CRRs by label, pods by ``spec.nodeName``), beside the session's manager
(webhooks, manager controller). The CRI is :class:`FakeNode`: it holds the pod's containers and,
when one is stopped, plays the kubelet: the old attempt exits, a new one starts (new ID, restart
count + 1) and the pod status says so (KWOK does not restart containers on a CRI stop). What the
real runtime does is proven in ``tests/integration/realnode/test_containerrecreate.py``.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime
import time
from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import pytest

from kruise.core.informer import Informer
from kruise.core.kube import KubeClient, Resource
from kruise.core.kube.resources import CONTAINERRECREATEREQUESTS, PODS
from kruise.core.runtime import Runtime
from kruise.daemon.containerrecreate.controller import ContainerRecreateController, crr_label_selector
from kruise.daemon.cri.port import (
    ContainerState,
    CriContainer,
    CriImage,
    CriNotFoundError,
    ExecResult,
    PullAuth,
    RuntimeVersion,
)
from kruise.daemon.node import NodeDeps
from tests.integration.crr.helpers import crr_body, running_pod
from tests.support.wait import eventually

pytestmark = pytest.mark.usefixtures("manager")
JSON = dict[str, Any]


def _ns_now() -> int:
    return time.time_ns()


@dataclass
class FakeNode:
    """A CRI runtime holding one pod's containers; stopping one restarts it as a kubelet would."""

    kube: KubeClient
    namespace: str
    pod: str = ""
    containers: dict[str, CriContainer] = field(default_factory=dict)
    execs: list[tuple[str, tuple[str, ...]]] = field(default_factory=list)
    stops: list[tuple[str, int]] = field(default_factory=list)

    def adopt(self, pod: JSON) -> None:
        self.pod = pod["metadata"]["name"]
        for status in pod["status"]["containerStatuses"]:
            cid = status["containerID"].split("://", 1)[1]
            self.containers[cid] = CriContainer(
                id=cid,
                pod_sandbox_id="sandbox",
                name=status["name"],
                attempt=0,
                state=ContainerState.RUNNING,
                image=status["image"],
                image_ref="sha256:1",
                created_at=_ns_now() - 10**10,
                started_at=_ns_now() - 10**10,
                pod_uid=pod["metadata"]["uid"],
                annotations={"io.kubernetes.container.restartCount": "0"},
            )

    async def version(self) -> RuntimeVersion:
        return RuntimeVersion("0.1.0", "fake", "1", "v1")

    async def pull_image(
        self,
        image: str,
        *,
        auth: PullAuth | None = None,
        sandbox_config: Mapping[str, object] | None = None,
        timeout: float | None = None,
    ) -> str:
        raise NotImplementedError

    async def list_images(self) -> list[CriImage]:
        return []

    async def image_status(self, image: str) -> CriImage | None:
        return None

    async def list_containers(self, *, pod_uid: str | None = None) -> list[CriContainer]:
        return [c for c in self.containers.values() if pod_uid is None or c.pod_uid == pod_uid]

    async def container_status(self, container_id: str) -> CriContainer:
        if container_id not in self.containers:
            raise CriNotFoundError(container_id)
        return self.containers[container_id]

    async def exec_sync(self, container_id: str, cmd: Sequence[str], timeout: int) -> ExecResult:
        self.execs.append((container_id, tuple(cmd)))
        return ExecResult(b"", b"", 0)

    async def stop_container(self, container_id: str, timeout: int) -> None:
        self.stops.append((container_id, timeout))
        old = self.containers[container_id]
        now = _ns_now()
        self.containers[container_id] = replace(old, state=ContainerState.EXITED, finished_at=now)
        attempt = old.attempt + 1
        new_id = f"{old.name}-{attempt + 1}"
        self.containers[new_id] = replace(
            old,
            id=new_id,
            attempt=attempt,
            created_at=now,
            started_at=now,
            annotations={"io.kubernetes.container.restartCount": str(attempt)},
        )
        pod = await self.kube.get(PODS, self.pod, self.namespace)
        started = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        statuses = [
            {
                **s,
                "containerID": f"containerd://{new_id}",
                "restartCount": attempt,
                "ready": True,
                "state": {"running": {"startedAt": started}},
            }
            if s["name"] == old.name
            else s
            for s in pod["status"]["containerStatuses"]
        ]
        await self.kube.patch(
            PODS,
            self.pod,
            {"status": {"containerStatuses": statuses}},
            self.namespace,
            patch_type="strategic",
            subresource="status",
        )

    async def close(self) -> None:
        return None


@pytest.fixture
async def pod_and_daemon(kube: KubeClient, namespace: str) -> AsyncIterator[tuple[JSON, FakeNode]]:
    pod = await running_pod(kube, namespace, "web-0")
    node_name = pod["spec"]["nodeName"]
    node = FakeNode(kube, namespace)
    node.adopt(pod)

    def informer(k: KubeClient, res: Resource) -> Informer:
        if res == CONTAINERRECREATEREQUESTS:
            return Informer(k, res, namespace=namespace, label_selector=crr_label_selector(node_name))
        return Informer(k, res, namespace=namespace, field_selector=f"spec.nodeName={node_name}")

    runtime = Runtime(kube, informer_factory=informer)
    view = runtime.cache(ContainerRecreateController.name)
    controller = ContainerRecreateController(NodeDeps(kube, node, node_name), view)
    runtime.add(controller.spec(), controller.reconcile, view)
    runtime.start_informers()
    task = asyncio.create_task(runtime.run_controllers())
    try:
        yield pod, node
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
        await runtime.stop()
        await controller.recorder.flush()


async def completed(kube: KubeClient, namespace: str, name: str) -> JSON:
    async def probe() -> Any:
        crr = await kube.get(CONTAINERRECREATEREQUESTS, name, namespace)
        return crr if (crr.get("status") or {}).get("phase") == "Completed" else None

    done: JSON = await eventually(probe, timeout=30, what=f"CRR {name} Completed")
    return done


async def test_recreates_simple_containers(
    kube: KubeClient, namespace: str, pod_and_daemon: tuple[JSON, FakeNode]
) -> None:
    """One container is stopped (its preStop exec first, the CRR's grace) and comes back; the
    sibling is untouched; the CRR completes with every state Succeeded."""
    _, node = pod_and_daemon
    await kube.create(CONTAINERRECREATEREQUESTS, crr_body("r", "web-0", "sidecar"), namespace)
    crr = await completed(kube, namespace, "r")
    assert crr["status"]["containerRecreateStates"] == [
        {"name": "sidecar", "phase": "Succeeded", "isKilled": True}
    ]
    assert crr["status"].get("message") is None and crr["status"]["completionTime"]
    assert node.execs == [("web-0-sidecar-1", ("sh", "-c", "sleep 1"))]
    assert [cid for cid, _ in node.stops] == ["web-0-sidecar-1"]
    assert 2 <= node.stops[0][1] <= 20
    pod = await kube.get(PODS, "web-0", namespace)
    by_name = {s["name"]: s for s in pod["status"]["containerStatuses"]}
    assert (
        by_name["sidecar"]["containerID"] == "containerd://sidecar-2"
        and by_name["sidecar"]["restartCount"] == 1
    )
    assert by_name["app"]["containerID"] == "containerd://web-0-app-1" and by_name["app"]["restartCount"] == 0


async def test_crrs_of_one_pod_run_one_at_a_time_in_order(
    kube: KubeClient, namespace: str, pod_and_daemon: tuple[JSON, FakeNode]
) -> None:
    _, node = pod_and_daemon
    await kube.create(
        CONTAINERRECREATEREQUESTS,
        crr_body("both", "web-0", "app", "sidecar", strategy={"orderedRecreate": True}),
        namespace,
    )
    both = await completed(kube, namespace, "both")
    assert [s["phase"] for s in both["status"]["containerRecreateStates"]] == ["Succeeded", "Succeeded"]
    assert [cid for cid, _ in node.stops] == ["web-0-app-1", "web-0-sidecar-1"]


async def test_a_second_crr_of_the_pod_waits_pending_for_the_first(
    kube: KubeClient, namespace: str, pod_and_daemon: tuple[JSON, FakeNode]
) -> None:
    """One CRR per pod at a time: the first holds the pod through its unready grace (the manager
    records unready-acquired; this pod has no KruisePodReady gate), the second is set Pending and
    runs once the first completed."""
    _, node = pod_and_daemon
    first = crr_body("first", "web-0", "sidecar", strategy={"unreadyGracePeriodSeconds": 3})
    await kube.create(CONTAINERRECREATEREQUESTS, first, namespace)

    async def recreating() -> bool:
        crr = await kube.get(CONTAINERRECREATEREQUESTS, "first", namespace)
        return (crr.get("status") or {}).get("phase") == "Recreating"

    await eventually(recreating, what="the first CRR Recreating")
    await kube.create(CONTAINERRECREATEREQUESTS, crr_body("second", "web-0", "app"), namespace)

    async def pending() -> bool:
        crr = await kube.get(CONTAINERRECREATEREQUESTS, "second", namespace)
        return (crr.get("status") or {}).get("phase") == "Pending"

    await eventually(pending, what="the second CRR Pending")
    assert node.stops == []  # nothing is stopped during the first one's unready grace
    done_first = await completed(kube, namespace, "first")
    done_second = await completed(kube, namespace, "second")
    assert done_first["metadata"]["annotations"]["crr.apps.kruise.io/unready-acquired"]
    assert [cid for cid, _ in node.stops] == ["web-0-sidecar-1", "web-0-app-1"]
    assert done_first["status"]["completionTime"] <= done_second["status"]["completionTime"]
