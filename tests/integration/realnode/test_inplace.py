"""OpenKruise's in-place update, proven on real containers (the kubelet does the restart).

Upstream promise (openkruise.io/docs/core-concepts/inplace-update): an image-only change
restarts the changed container inside the same pod (same name, UID, IP, sandbox, node;
``restartCount + 1``; a new containerID and imageID), other containers keep running, the
``InPlaceUpdateReady`` readiness gate holds the pod unready while it restarts; any other
pod-spec change (here an env var) makes ``InPlaceIfPossible`` recreate the pod.
``kruise rollout check-update`` must predict what then happens.
"""

from __future__ import annotations

import asyncio
import contextlib
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from kruise.core.kube import KubeClient
from kruise.core.kube.resources import CLONESETS, PODS
from kruise.core.localcluster.realnode import busybox
from tests.integration.realnode.conftest import (
    RealNode,
    condition,
    container_status,
    real_pod_spec,
    web_container,
)
from tests.integration.rollouts.helpers import wait_settled
from tests.support.cluster import TestCluster
from tests.support.wait import eventually

pytestmark = pytest.mark.usefixtures("manager")

JSON = dict[str, Any]
KRUISE = str(Path(sys.executable).parent / "kruise")
GATE = "InPlaceUpdateReady"


def real_cloneset(replicas: int, **strategy: Any) -> JSON:
    """CloneSet ``web`` on the real node: ``web`` (port 8080) and an unchanging ``sidecar`` (8081)."""
    spec = real_pod_spec(web_container("web", "v1", 8080), web_container("sidecar", "v1", 8081))
    return {
        "apiVersion": "apps.kruise.io/v1alpha1",
        "kind": "CloneSet",
        "metadata": {"name": "web"},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": "web"}},
            "template": {"metadata": {"labels": {"app": "web"}}, "spec": spec},
            "updateStrategy": {"type": "InPlaceIfPossible", **strategy},
        },
    }


async def settled(kube: KubeClient, namespace: str, replicas: int) -> JSON:
    """Every pod updated and Ready (Ready counts the InPlaceUpdateReady gate)."""
    return await wait_settled(kube, namespace, replicas, timeout=90)


async def web_pods(kube: KubeClient, namespace: str) -> list[JSON]:
    items = (await kube.list(PODS, namespace, label_selector="app=web"))["items"]
    return sorted(
        (p for p in items if not p["metadata"].get("deletionTimestamp")), key=lambda p: p["metadata"]["name"]
    )


def check_update(cluster: TestCluster, namespace: str, *change: str) -> str:
    proc = subprocess.run(
        [
            KRUISE,
            "rollout",
            "check-update",
            "cloneset/web",
            *change,
            "-n",
            namespace,
            f"--kubeconfig={cluster.kubeconfig}",
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


class PodHistory:
    """Every state the watch delivers for the CloneSet's pods, in order."""

    def __init__(self, kube: KubeClient, namespace: str) -> None:
        self.kube, self.namespace = kube, namespace
        self.states: list[JSON] = []
        self._task: asyncio.Task[None] | None = None

    async def start(self) -> None:
        listed = await self.kube.list(PODS, self.namespace, label_selector="app=web")
        self.states += listed["items"]
        self._task = asyncio.create_task(self._run(str(listed["metadata"]["resourceVersion"])))

    async def _run(self, rv: str) -> None:
        async for event in self.kube.watch(
            PODS, self.namespace, resource_version=rv, label_selector="app=web"
        ):
            if event.type in ("ADDED", "MODIFIED"):
                self.states.append(event.object)

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task


async def test_image_change_restarts_only_that_container_in_the_same_pod(
    kube: KubeClient, namespace: str, real_node: RealNode, cluster: TestCluster
) -> None:
    await kube.create(CLONESETS, real_cloneset(2), namespace)
    await settled(kube, namespace, 2)
    before = {p["metadata"]["name"]: p for p in await web_pods(kube, namespace)}
    sandboxes = {}
    for name, pod in before.items():
        assert pod["spec"]["nodeName"] == real_node.name
        # InPlaceUpdateReady, and KruisePodReady, which upstream's pod webhook puts on every pod
        # of a Kruise workload
        assert {g["conditionType"] for g in pod["spec"]["readinessGates"]} == {GATE, "KruisePodReady"}
        (sandbox,) = real_node.sandboxes(pod["metadata"]["uid"])
        sandboxes[name] = sandbox["id"]

    verdict = check_update(cluster, namespace, "--image", f"web={busybox('v2')}")
    assert "IN PLACE" in verdict, verdict

    history = PodHistory(kube, namespace)
    await history.start()
    patch = [{"op": "replace", "path": "/spec/template/spec/containers/0/image", "value": busybox("v2")}]
    await kube.patch(CLONESETS, "web", patch, namespace, patch_type="json")
    await settled(kube, namespace, 2)
    await history.stop()

    after = {p["metadata"]["name"]: p for p in await web_pods(kube, namespace)}
    assert after.keys() == before.keys(), "no pod was replaced"
    for name, pod in after.items():
        old = before[name]
        assert pod["metadata"]["uid"] == old["metadata"]["uid"]
        assert pod["status"]["podIP"] == old["status"]["podIP"]
        web, old_web = container_status(pod, "web"), container_status(old, "web")
        assert (web["restartCount"], web["image"]) == (1, busybox("v2"))
        assert web["containerID"] != old_web["containerID"]
        assert web["imageID"] != old_web["imageID"]
        sidecar, old_sidecar = container_status(pod, "sidecar"), container_status(old, "sidecar")
        assert (sidecar["restartCount"], sidecar["containerID"]) == (0, old_sidecar["containerID"])
        # containerd: still the one sandbox, holding both attempts of `web`
        (sandbox,) = real_node.sandboxes(pod["metadata"]["uid"])
        assert sandbox["id"] == sandboxes[name]
        attempts = real_node.containers(sandbox["id"], "web")
        assert [(c["metadata"]["attempt"], c["state"]) for c in attempts] == [
            (0, "CONTAINER_EXITED"),
            (1, "CONTAINER_RUNNING"),
        ]
        assert web["containerID"] == f"containerd://{attempts[1]['id']}"
        assert attempts[1]["imageRef"] != attempts[0]["imageRef"]

    # the readiness gate went False before the kubelet restarted anything (the controller writes
    # it before the image), stayed False until the kubelet reported the new image, and the pod
    # was never Ready while its container was down
    for name, old in before.items():
        old_image_id = container_status(old, "web")["imageID"]
        states = [s for s in history.states if s["metadata"]["name"] == name]
        changed = [s for s in states if s["spec"]["containers"][0]["image"] == busybox("v2")]
        assert changed and all(
            condition(s, GATE) == "False"
            for s in changed
            if container_status(s, "web")["imageID"] == old_image_id
        )
        assert all(
            container_status(s, "web")["imageID"] != old_image_id
            for s in changed
            if condition(s, GATE) == "True"
        )
        down = [s for s in changed if not _web_running_and_ready(s)]
        assert down, "the watch saw the container restart"
        assert all(condition(s, "Ready") == "False" for s in down)
        assert condition(states[-1], GATE) == "True" and condition(states[-1], "Ready") == "True"


def _web_running_and_ready(pod: JSON) -> bool:
    web = container_status(pod, "web")
    return bool(web.get("ready")) and "running" in (web.get("state") or {})


async def test_env_change_recreates_the_pod(
    kube: KubeClient, namespace: str, real_node: RealNode, cluster: TestCluster
) -> None:
    await kube.create(CLONESETS, real_cloneset(1), namespace)
    await settled(kube, namespace, 1)
    (old,) = await web_pods(kube, namespace)
    (old_sandbox,) = real_node.sandboxes(old["metadata"]["uid"])

    verdict = check_update(cluster, namespace, "--env", "web:GREETING=hello")
    assert "RECREATE" in verdict, verdict

    patch = [
        {
            "op": "add",
            "path": "/spec/template/spec/containers/0/env/-",
            "value": {"name": "GREETING", "value": "hello"},
        }
    ]
    await kube.patch(CLONESETS, "web", patch, namespace, patch_type="json")
    await settled(kube, namespace, 1)

    (new,) = await web_pods(kube, namespace)
    assert new["metadata"]["uid"] != old["metadata"]["uid"]
    assert container_status(new, "web")["restartCount"] == 0
    assert {"name": "GREETING", "value": "hello"} in new["spec"]["containers"][0]["env"]
    (new_sandbox,) = real_node.sandboxes(new["metadata"]["uid"])
    assert new_sandbox["id"] != old_sandbox["id"]

    async def old_sandbox_stopped() -> bool:  # removed by the kubelet's GC later (every minute)
        return all(s["state"] == "SANDBOX_NOTREADY" for s in real_node.sandboxes(old["metadata"]["uid"]))

    await eventually(old_sandbox_stopped, timeout=30, what="the old pod's sandbox stopped by the kubelet")
