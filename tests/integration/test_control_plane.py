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

    async def unready() -> bool:
        return _condition(await kube.get(PODS, "gated", namespace), "Ready") == "False"

    await eventually(unready, what="pod not Ready after its gate turned False")


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
