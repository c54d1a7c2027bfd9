"""ContainerRecreateRequest on the real node: the daemon's controller stops a real container
through CRI and the kubelet starts it again.

Named after upstream's ``It``\\ s (``test/e2e/apps/v1alpha1/containerrecreate.go``). The node's
``kruise daemon`` process (its CRRs by the node label, pods by ``spec.nodeName``) executes them
over the grpc CRI adapter on the node's containerd socket; the session's manager serves the
webhooks and the manager controller. The tests read containerd directly
(:class:`~kruise.daemon.cri.grpcclient.GrpcCri`) to check what was stopped.
"""

from __future__ import annotations

import datetime
from collections.abc import AsyncIterator
from typing import Any

import pytest

from kruise.core.kube import KubeClient
from kruise.core.kube.resources import CONTAINERRECREATEREQUESTS, PODS
from kruise.daemon.cri.endpoint import resolve_endpoint
from kruise.daemon.cri.grpcclient import GrpcCri
from kruise.daemon.cri.port import CriRuntime
from tests.integration.realnode.conftest import (
    RealNode,
    container_status,
    real_pod_spec,
    wait_pod,
    web_container,
)
from tests.support.wait import eventually

pytestmark = pytest.mark.usefixtures("manager")
JSON = dict[str, Any]


async def connect_cri(real_node: RealNode) -> GrpcCri:
    """The grpc CRI adapter on the real node's containerd."""
    (plan,) = [p for p in real_node.local.real_node_plans() if p.name == real_node.name]
    return await GrpcCri.connect(resolve_endpoint(str(plan.containerd_socket), "/hostvarrun"))


@pytest.fixture
async def daemon(real_node: RealNode) -> AsyncIterator[CriRuntime]:
    """The real node's containerd, to look at what the node's ``kruise daemon`` (started by the
    cluster beside the kubelet, as the chart's DaemonSet would) did to the containers."""
    cri = await connect_cri(real_node)
    try:
        yield cri
    finally:
        await cri.close()


def crr_body(name: str, pod: str, *containers: str, **spec: Any) -> JSON:
    return {
        "apiVersion": "apps.kruise.io/v1alpha1",
        "kind": "ContainerRecreateRequest",
        "metadata": {"name": name},
        "spec": {"podName": pod, "containers": [{"name": c} for c in containers], **spec},
    }


async def completed(kube: KubeClient, namespace: str, name: str, timeout: float = 90) -> JSON:
    async def probe() -> Any:
        crr = await kube.get(CONTAINERRECREATEREQUESTS, name, namespace)
        status = crr.get("status") or {}
        active = "crr.apps.kruise.io/active" in crr["metadata"].get("labels", {})
        return crr if status.get("phase") == "Completed" and not active else None

    done: JSON = await eventually(probe, timeout=timeout, what=f"CRR {name} Completed")
    return done


async def two_container_pod(kube: KubeClient, namespace: str, name: str, **web: Any) -> JSON:
    spec = real_pod_spec(
        web_container("web", port=8080, **web), web_container("sidecar", port=8081), grace=10
    )
    await kube.create(
        PODS, {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name}, "spec": spec}, namespace
    )
    return await wait_pod(kube, namespace, name, timeout=120)


def _time(value: str) -> datetime.datetime:
    return datetime.datetime.fromisoformat(value.replace("Z", "+00:00"))


async def test_recreates_simple_containers(
    kube: KubeClient, namespace: str, real_node: RealNode, daemon: CriRuntime
) -> None:
    """One container restarts (new ID, restartCount + 1) after minStartedSeconds; its sibling
    is untouched; the CRR completes with the container Succeeded and killed."""
    pod = await two_container_pod(kube, namespace, "web-0")
    web, sidecar = container_status(pod, "web"), container_status(pod, "sidecar")
    crr = await kube.create(
        CONTAINERRECREATEREQUESTS, crr_body("r", "web-0", "web", strategy={"minStartedSeconds": 3}), namespace
    )
    assert crr["metadata"]["labels"]["crr.apps.kruise.io/pod-uid"] == pod["metadata"]["uid"]
    assert crr["metadata"]["labels"]["crr.apps.kruise.io/node-name"] == real_node.name
    assert crr["spec"]["containers"][0]["statusContext"]["containerID"] == web["containerID"]

    crr = await completed(kube, namespace, "r")
    assert crr["status"]["containerRecreateStates"] == [
        {"name": "web", "phase": "Succeeded", "isKilled": True}
    ]
    assert not crr["status"].get("message")
    pod = await wait_pod(kube, namespace, "web-0")
    after_web, after_sidecar = container_status(pod, "web"), container_status(pod, "sidecar")
    assert after_web["containerID"] != web["containerID"]
    assert after_web["restartCount"] == web["restartCount"] + 1
    assert after_sidecar["containerID"] == sidecar["containerID"]
    assert after_sidecar["restartCount"] == sidecar["restartCount"]
    started = _time(after_web["state"]["running"]["startedAt"])
    assert (
        _time(crr["status"]["completionTime"]) - started
    ).total_seconds() >= 2  # minStartedSeconds, to the second
    (sandbox,) = real_node.sandboxes(pod["metadata"]["uid"])
    attempts = real_node.containers(sandbox["id"], "web")
    assert [a["state"] for a in attempts] == ["CONTAINER_EXITED", "CONTAINER_RUNNING"]


async def test_recreates_containers_with_prestophook(
    kube: KubeClient, namespace: str, real_node: RealNode, daemon: CriRuntime
) -> None:
    """The preStop hook copied into the CRR runs in the container before it is stopped."""
    hook = {"preStop": {"exec": {"command": ["sh", "-c", "sleep 3"]}}}
    pod = await two_container_pod(kube, namespace, "web-1", lifecycle=hook)
    web = container_status(pod, "web")
    crr = await kube.create(CONTAINERRECREATEREQUESTS, crr_body("r", "web-1", "web", "sidecar"), namespace)
    assert crr["spec"]["containers"][0]["preStop"] == {"exec": {"command": ["sh", "-c", "sleep 3"]}}
    crr = await completed(kube, namespace, "r")
    assert crr["status"]["containerRecreateStates"] == [
        {"name": "web", "phase": "Succeeded", "isKilled": True},
        {"name": "sidecar", "phase": "Succeeded", "isKilled": True},
    ]
    pod = await wait_pod(kube, namespace, "web-1")
    assert container_status(pod, "web")["restartCount"] == web["restartCount"] + 1
    assert container_status(pod, "sidecar")["restartCount"] == 1
    (sandbox,) = real_node.sandboxes(pod["metadata"]["uid"])
    first = real_node.containers(sandbox["id"], "web")[0]
    stopped = await daemon.container_status(first["id"])  # the exited attempt, in full
    created = _time(crr["metadata"]["creationTimestamp"]).timestamp()
    assert stopped.finished_at / 1e9 - created >= 3, "the container stopped after its preStop hook"


async def test_recreates_containers_by_force(
    kube: KubeClient, namespace: str, real_node: RealNode, daemon: CriRuntime
) -> None:
    """``forceRecreate``: both containers are stopped once each and come back."""
    pod = await two_container_pod(kube, namespace, "web-2")
    before = {n: container_status(pod, n) for n in ("web", "sidecar")}
    body = crr_body("r", "web-2", "web", "sidecar", strategy={"forceRecreate": True})
    await kube.create(CONTAINERRECREATEREQUESTS, body, namespace)
    crr = await completed(kube, namespace, "r")
    assert crr["status"]["containerRecreateStates"] == [
        {"name": "web", "phase": "Succeeded", "isKilled": True},
        {"name": "sidecar", "phase": "Succeeded", "isKilled": True},
    ]
    pod = await wait_pod(kube, namespace, "web-2")
    for name, old in before.items():
        now = container_status(pod, name)
        assert now["containerID"] != old["containerID"], name
        assert now["restartCount"] == old["restartCount"] + 1, name


async def test_unready_grace_keeps_the_pod_out_of_service_while_its_container_restarts(
    kube: KubeClient, namespace: str, real_node: RealNode, daemon: CriRuntime
) -> None:
    """``unreadyGracePeriodSeconds``: the manager sets ``KruisePodReady`` False (the kubelet then
    reports the pod not Ready) before the daemon stops anything, and gives it back on completion."""
    spec = real_pod_spec(web_container("web", port=8080), web_container("sidecar", port=8081), grace=10)
    spec["readinessGates"] = [{"conditionType": "KruisePodReady"}]
    pod_body = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web-3"}, "spec": spec}
    await kube.create(PODS, pod_body, namespace)
    ready_gate = {"type": "KruisePodReady", "status": "True"}
    await kube.patch(
        PODS,
        "web-3",
        {"status": {"conditions": [ready_gate]}},
        namespace,
        patch_type="strategic",
        subresource="status",
    )
    pod = await wait_pod(kube, namespace, "web-3", timeout=120)
    web = container_status(pod, "web")
    body = crr_body("r", "web-3", "web", strategy={"unreadyGracePeriodSeconds": 3})
    await kube.create(CONTAINERRECREATEREQUESTS, body, namespace)

    async def out_of_service() -> Any:
        current = await kube.get(PODS, "web-3", namespace)
        gate = next(c for c in current["status"]["conditions"] if c["type"] == "KruisePodReady")
        ready = next(c for c in current["status"]["conditions"] if c["type"] == "Ready")
        return current if gate["status"] == "False" and ready["status"] == "False" else None

    unready = await eventually(out_of_service, timeout=30, what="the pod not ready")
    assert container_status(unready, "web")["containerID"] == web["containerID"], (
        "stopped only after the grace"
    )
    crr = await completed(kube, namespace, "r")
    assert crr["status"]["containerRecreateStates"] == [
        {"name": "web", "phase": "Succeeded", "isKilled": True}
    ]
    pod = await wait_pod(kube, namespace, "web-3")
    assert container_status(pod, "web")["restartCount"] == web["restartCount"] + 1
