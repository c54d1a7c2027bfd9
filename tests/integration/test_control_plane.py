"""The local control plane is real: scheduler, KWOK kubelets, our stages, GC.

These are the foundation's acceptance checks (issue: foundation). Each test
asserts the objects the real API server holds.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from kruise.core.kube import KubeClient
from kruise.core.kube.resources import CONFIGMAPS, NODES, PODS
from tests.support.cluster import TestCluster
from tests.support.podready import condition, hold_unready, let_ready, patch_conditions, set_gate
from tests.support.wait import eventually


def _pod(name: str, image: str = "registry.example.com/app:1.0", **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name},
        "spec": {"containers": [{"name": "app", "image": image}], **spec},
    }


def _condition(pod: dict[str, Any], ctype: str) -> str | None:
    for cond in (pod.get("status") or {}).get("conditions") or []:
        if cond.get("type") == ctype:
            return str(cond.get("status"))
    return None


async def test_three_nodes_are_ready(kube: KubeClient, cluster: TestCluster) -> None:
    if cluster.local is None:
        pytest.skip("external cluster: node count is the cluster's own")
    nodes = (await kube.list(NODES))["items"]
    assert len(nodes) == 3
    assert all(_condition(n, "Ready") == "True" for n in nodes)


async def test_server_version_is_stamped(cluster: TestCluster) -> None:
    if cluster.local is None:
        pytest.skip("external cluster")
    out = json.loads(cluster.kubectl("version", "-o", "json").stdout)
    assert out["serverVersion"]["gitVersion"] == "v1.37.2"
    assert out["clientVersion"]["gitVersion"] == "v1.37.2"


async def test_plain_pod_is_scheduled_and_becomes_running_and_ready(kube: KubeClient, namespace: str) -> None:
    await kube.create(PODS, _pod("plain"), namespace)

    async def ready() -> dict[str, Any] | None:
        pod = await kube.get(PODS, "plain", namespace)
        ok = pod["status"].get("phase") == "Running" and _condition(pod, "Ready") == "True"
        return pod if ok else None

    pod = await eventually(ready, what="pod Running and Ready")
    assert pod["spec"]["nodeName"].startswith("kwok-node-")
    status = pod["status"]["containerStatuses"][0]
    assert status["image"] == "registry.example.com/app:1.0"
    assert status["imageID"].startswith("sha256:")
    assert status["restartCount"] == 0


async def test_unmet_readiness_gate_keeps_pod_not_ready_until_condition_is_true(
    kube: KubeClient, namespace: str
) -> None:
    gate = "example.com/feature-ready"
    await kube.create(PODS, _pod("gated", readinessGates=[{"conditionType": gate}]), namespace)

    async def running() -> dict[str, Any] | None:
        pod = await kube.get(PODS, "gated", namespace)
        return pod if pod["status"].get("phase") == "Running" else None

    await eventually(running, what="gated pod Running")
    # several KWOK rounds later it is still not Ready
    for _ in range(10):
        pod = await kube.get(PODS, "gated", namespace)
        assert _condition(pod, "Ready") == "False", pod["status"]
        assert _condition(pod, "ContainersReady") == "True"
        await _sleep(0.1)

    # the gate owner sets its condition; the "kubelet" follows
    await kube.patch(
        PODS,
        "gated",
        {"status": {"conditions": [{"type": gate, "status": "True"}]}},
        namespace,
        patch_type="strategic",
        subresource="status",
    )

    async def ready() -> bool:
        return _condition(await kube.get(PODS, "gated", namespace), "Ready") == "True"

    await eventually(ready, what="gated pod Ready after its gate is True")

    # and back: the gate turning False makes the pod not Ready again
    await kube.patch(
        PODS,
        "gated",
        {"status": {"conditions": [{"type": gate, "status": "False"}]}},
        namespace,
        patch_type="strategic",
        subresource="status",
    )

    async def unready() -> dict[str, Any] | None:
        pod = await kube.get(PODS, "gated", namespace)
        return pod if _condition(pod, "Ready") == "False" else None

    pod = await eventually(unready, what="pod not Ready after its gate turned False")
    assert condition(pod, "Ready")["reason"] == "ReadinessGatesNotReady"
    assert condition(pod, "Ready")["message"] == (
        'the status of pod readiness gate "example.com/feature-ready" is not "True", but False'
    )


@pytest.mark.parametrize("gated", [False, True], ids=["no readiness gate", "readiness gate True"])
async def test_pod_held_unready_by_its_containers_stays_not_ready_as_a_kubelet_reports(
    kube: KubeClient, namespace: str, gated: bool
) -> None:
    """``GeneratePodReadyCondition``: Ready is False while ContainersReady is not True (with its
    reason and message), whatever the gates say; only then do the gates decide."""
    gate = "example.com/feature-ready"
    spec: dict[str, Any] = {"readinessGates": [{"conditionType": gate}]} if gated else {}
    await kube.create(PODS, _pod("held", **spec), namespace)
    if gated:
        await set_gate(kube, namespace, "held", gate)

    async def ready() -> bool:
        return _condition(await kube.get(PODS, "held", namespace), "Ready") == "True"

    await eventually(ready, what="pod Ready")
    await hold_unready(kube, namespace, "held")
    for _ in range(15):  # KWOK's stages run within milliseconds: 3 s is many rounds
        pod = await kube.get(PODS, "held", namespace)
        assert condition(pod, "Ready")["status"] == "False", pod["status"]["conditions"]
        await _sleep(0.2)

    await let_ready(kube, namespace, "held")
    await eventually(ready, what="pod Ready once its containers are ready again")

    # ContainersReady turning False alone: Ready follows it, with its reason and message
    await patch_conditions(
        kube, namespace, "held", {"type": "ContainersReady", "status": "False", "reason": "Probe"}
    )

    async def follows() -> dict[str, Any] | None:
        cond = condition(await kube.get(PODS, "held", namespace), "Ready")
        return cond if cond["status"] == "False" else None

    assert (await eventually(follows, what="Ready False after ContainersReady"))["reason"] == "Probe"


async def test_ready_set_false_by_hand_on_a_pod_whose_containers_are_ready_comes_back(
    kube: KubeClient, namespace: str
) -> None:
    """Ready is the kubelet's to compute: False written over ContainersReady True does not last."""
    await kube.create(PODS, _pod("flip"), namespace)

    async def ready() -> bool:
        return _condition(await kube.get(PODS, "flip", namespace), "Ready") == "True"

    await eventually(ready, what="pod Ready")
    await patch_conditions(kube, namespace, "flip", {"type": "Ready", "status": "False"})
    await eventually(ready, what="Ready recomputed from ContainersReady")


async def test_image_change_on_running_pod_restarts_container_in_place(
    kube: KubeClient, namespace: str
) -> None:
    await kube.create(PODS, _pod("inplace", "registry.example.com/app:1.0"), namespace)

    async def running() -> dict[str, Any] | None:
        pod = await kube.get(PODS, "inplace", namespace)
        return pod if _condition(pod, "Ready") == "True" else None

    before = await eventually(running, what="pod Ready")
    old_status = before["status"]["containerStatuses"][0]

    await kube.patch(
        PODS,
        "inplace",
        {"spec": {"containers": [{"name": "app", "image": "registry.example.com/app:2.0"}]}},
        namespace,
        patch_type="strategic",
    )

    async def updated() -> dict[str, Any] | None:
        pod = await kube.get(PODS, "inplace", namespace)
        cs = pod["status"]["containerStatuses"][0]
        return pod if cs["image"] == "registry.example.com/app:2.0" else None

    after = await eventually(updated, what="container status to follow the new image")
    cs = after["status"]["containerStatuses"][0]
    assert after["metadata"]["uid"] == before["metadata"]["uid"]
    assert after["status"]["phase"] == "Running"
    assert cs["restartCount"] == old_status["restartCount"] + 1
    assert cs["imageID"] != old_status["imageID"]
    assert cs["lastState"]["terminated"]["reason"] == "Completed"
    assert "running" in cs["state"]
    assert _condition(after, "Ready") == "True"
    # the stage does not fire again once status matches spec
    await _sleep(1.0)
    again = await kube.get(PODS, "inplace", namespace)
    assert again["status"]["containerStatuses"][0]["restartCount"] == cs["restartCount"]


BROKEN_IMAGES = [
    pytest.param("invalid.registry.k8s.io/app:1.0", id="invalid-registry"),
    pytest.param("echoserver:failed", id="failed-tag"),
    pytest.param("busybox:not-exists", id="not-exists-tag"),
]
"""The broken-image rule of ``kwok-stages.yaml``: a registry host starting ``invalid.`` (Kubernetes'
e2e ``InvalidRegistryImage``) or the tag ``failed`` or ``not-exists`` (Kruise Rollouts' e2e:
``echoserver:failed``, ``failed_image:failed``, the Advanced Deployment checker's
``busybox:not-exists``)."""


def _waiting_reason(pod: dict[str, Any]) -> str | None:
    statuses = (pod.get("status") or {}).get("containerStatuses") or []
    return ((statuses[0].get("state") or {}).get("waiting") or {}).get("reason") if statuses else None


@pytest.mark.parametrize("image", BROKEN_IMAGES)
async def test_new_pod_with_a_broken_image_stays_pending_in_image_pull_backoff(
    kube: KubeClient, namespace: str, image: str
) -> None:
    """As a kubelet reports a pod whose image cannot be pulled: Pending, IPs and start time set, the
    container waiting in ImagePullBackOff, ContainersReady and Ready False with the kubelet's
    reason and message; an in-place update to a good image lets it start and become Ready."""
    await kube.create(PODS, _pod("broken", image), namespace)

    async def backing_off() -> dict[str, Any] | None:
        pod = await kube.get(PODS, "broken", namespace)
        return pod if _waiting_reason(pod) == "ImagePullBackOff" else None

    pod = await eventually(backing_off, what="the container in ImagePullBackOff")
    st = pod["status"]
    assert st["phase"] == "Pending"
    assert st["podIP"] and st["hostIP"] and st["startTime"]
    cs = st["containerStatuses"][0]
    assert (cs["image"], cs["ready"], cs["started"], cs["imageID"]) == (image, False, False, "")
    assert cs["state"]["waiting"]["message"] == f'Back-off pulling image "{image}"'
    for ctype in ("ContainersReady", "Ready"):
        cond = condition(pod, ctype)
        assert (cond["status"], cond["reason"], cond["message"]) == (
            "False",
            "ContainersNotReady",
            "containers with unready status: [app]",
        )
    await _sleep(1.0)  # no stage takes it further
    again = await kube.get(PODS, "broken", namespace)
    assert again["status"]["phase"] == "Pending" and _condition(again, "Ready") == "False"

    good = {"spec": {"containers": [{"name": "app", "image": "registry.example.com/app:1.0"}]}}
    await kube.patch(PODS, "broken", good, namespace, patch_type="strategic")

    async def ready() -> dict[str, Any] | None:
        pod = await kube.get(PODS, "broken", namespace)
        return pod if _condition(pod, "Ready") == "True" else None

    fixed = await eventually(ready, what="the pod Running and Ready on a good image")
    assert fixed["status"]["phase"] == "Running"
    assert fixed["status"]["containerStatuses"][0]["image"] == "registry.example.com/app:1.0"


@pytest.mark.parametrize("image", BROKEN_IMAGES)
async def test_running_pod_updated_in_place_to_a_broken_image_backs_off_and_recovers(
    kube: KubeClient, namespace: str, image: str
) -> None:
    """A running pod whose container image becomes a broken one keeps running, that container
    waiting in ImagePullBackOff, not Ready; back on a good image it restarts and is Ready."""
    await kube.create(PODS, _pod("inplace-broken"), namespace)

    async def ready() -> dict[str, Any] | None:
        pod = await kube.get(PODS, "inplace-broken", namespace)
        return pod if _condition(pod, "Ready") == "True" else None

    await eventually(ready, what="pod Ready")
    patch = {"spec": {"containers": [{"name": "app", "image": image}]}}
    await kube.patch(PODS, "inplace-broken", patch, namespace, patch_type="strategic")

    async def backing_off() -> dict[str, Any] | None:
        pod = await kube.get(PODS, "inplace-broken", namespace)
        return pod if _waiting_reason(pod) == "ImagePullBackOff" else None

    pod = await eventually(backing_off, what="the container in ImagePullBackOff")
    assert pod["status"]["phase"] == "Running"
    assert pod["status"]["containerStatuses"][0]["image"] == image
    assert _condition(pod, "Ready") == "False"

    patch = {"spec": {"containers": [{"name": "app", "image": "registry.example.com/app:2.0"}]}}
    await kube.patch(PODS, "inplace-broken", patch, namespace, patch_type="strategic")
    fixed = await eventually(ready, what="pod Ready on a good image")
    assert fixed["status"]["containerStatuses"][0]["image"] == "registry.example.com/app:2.0"


async def test_garbage_collector_deletes_dependents_of_deleted_owner(
    kube: KubeClient, namespace: str
) -> None:
    owner = await kube.create(
        CONFIGMAPS, {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "owner"}}, namespace
    )
    ref = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "name": "owner",
        "uid": owner["metadata"]["uid"],
    }
    await kube.create(
        CONFIGMAPS,
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "child", "ownerReferences": [ref]}},
        namespace,
    )
    await kube.delete(CONFIGMAPS, "owner", namespace)

    async def gone() -> bool:
        return await kube.get_or_none(CONFIGMAPS, "child", namespace) is None

    await eventually(gone, timeout=60, what="garbage collector to delete the dependent")


async def _sleep(seconds: float) -> None:
    import asyncio

    await asyncio.sleep(seconds)
