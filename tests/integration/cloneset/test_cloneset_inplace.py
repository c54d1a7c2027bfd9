"""CloneSet through ``kruise manager`` on the real control plane.

Upstream e2e scenarios covered (``test/e2e/apps/v1alpha1/cloneset.go``) are named
in each test's docstring; ``tests/integration/cloneset/UPSTREAM_SCENARIOS.md``
lists them all.
"""

from __future__ import annotations

from typing import Any

import pytest

from kruise.core.kube import KubeClient
from kruise.core.kube.resources import CLONESETS, CONTROLLER_REVISIONS, PODS
from kruise.rollouts.manager.process import ManagerProcess
from tests.support.wait import eventually, wait_observed

pytestmark = pytest.mark.usefixtures("manager")


def web_cloneset(
    namespace: str, *, replicas: int = 10, partition: Any = 8, **strategy: Any
) -> dict[str, Any]:
    """OpenKruise's documented example CloneSet ``web``."""
    return {
        "apiVersion": "apps.kruise.io/v1alpha1",
        "kind": "CloneSet",
        "metadata": {"name": "web", "namespace": namespace},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": "web"}},
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [{"name": "web", "image": "registry.example.com/shop/web:1.4.0"}]},
            },
            "updateStrategy": {
                "type": "InPlaceIfPossible",
                "partition": partition,
                "maxUnavailable": "20%",
                **strategy,
            },
        },
    }


async def pods_of(kube: KubeClient, namespace: str) -> list[dict[str, Any]]:
    return [p for p in (await kube.list(PODS, namespace, label_selector="app=web"))["items"]]


def _ready(pod: dict[str, Any]) -> bool:
    return any(
        c["type"] == "Ready" and c["status"] == "True" for c in pod.get("status", {}).get("conditions") or []
    )


async def wait_status(kube: KubeClient, namespace: str, timeout: float = 60, **want: Any) -> dict[str, Any]:
    return await wait_observed(
        lambda: kube.get(CLONESETS, "web", namespace), timeout=timeout, what="CloneSet", **want
    )


async def test_documented_example_scales_to_ten_ready_pods(kube: KubeClient, namespace: str) -> None:
    """Upstream: "CloneSet Scaling: scale with scaleStrategy" / pods named <name>-<id>."""
    await kube.create(CLONESETS, web_cloneset(namespace), namespace)
    cs = await wait_status(
        kube, namespace, replicas=10, readyReplicas=10, availableReplicas=10, updatedReplicas=10
    )
    pods = await pods_of(kube, namespace)
    assert len(pods) == 10
    assert all(_ready(p) for p in pods)
    revision = cs["status"]["updateRevision"]
    assert cs["status"]["currentRevision"] == revision
    assert cs["status"]["labelSelector"] == "app=web"
    assert cs["status"]["expectedUpdatedReplicas"] == 2  # replicas - partition
    for pod in pods:
        labels = pod["metadata"]["labels"]
        instance_id = labels["apps.kruise.io/cloneset-instance-id"]
        assert pod["metadata"]["name"] == f"web-{instance_id}"
        assert len(instance_id) == 5
        assert labels["controller-revision-hash"] == revision
        assert labels["pod-template-hash"] == revision.rsplit("-", 1)[1]
        assert {"conditionType": "InPlaceUpdateReady"} in pod["spec"]["readinessGates"]
        assert pod["metadata"]["ownerReferences"][0]["uid"] == cs["metadata"]["uid"]
    revisions = (await kube.list(CONTROLLER_REVISIONS, namespace))["items"]
    assert [r["metadata"]["name"] for r in revisions] == [revision]


async def test_new_image_reaches_exactly_two_pods_in_place_then_all_after_partition_zero(
    kube: KubeClient, namespace: str, manager: ManagerProcess
) -> None:
    """Upstream: "CloneSet Updating: in-place update images with the same imageID" and
    "partition" scenarios: 10 replicas, partition 8, InPlaceIfPossible."""
    await kube.create(CLONESETS, web_cloneset(namespace), namespace)
    await wait_status(kube, namespace, replicas=10, readyReplicas=10)
    before = {p["metadata"]["name"]: p for p in await pods_of(kube, namespace)}

    await kube.patch(
        CLONESETS,
        "web",
        {
            "spec": {
                "template": {
                    "spec": {"containers": [{"name": "web", "image": "registry.example.com/shop/web:1.5.0"}]}
                }
            }
        },
        namespace,
        patch_type="merge",
    )
    cs = await wait_status(
        kube, namespace, timeout=90, replicas=10, updatedReplicas=2, updatedReadyReplicas=2, readyReplicas=10
    )
    after = {p["metadata"]["name"]: p for p in await pods_of(kube, namespace)}
    assert set(after) == set(before), "in-place update must not recreate pods"
    updated = [
        p
        for p in after.values()
        if p["metadata"]["labels"]["controller-revision-hash"] == cs["status"]["updateRevision"]
    ]
    assert len(updated) == 2
    for pod in updated:
        name = pod["metadata"]["name"]
        assert pod["metadata"]["uid"] == before[name]["metadata"]["uid"]
        assert pod["spec"]["containers"][0]["image"] == "registry.example.com/shop/web:1.5.0"
        status = pod["status"]["containerStatuses"][0]
        assert status["image"] == "registry.example.com/shop/web:1.5.0"
        assert status["restartCount"] == before[name]["status"]["containerStatuses"][0]["restartCount"] + 1
        assert "apps.kruise.io/inplace-update-state" in pod["metadata"]["annotations"]
        assert _ready(pod)
    assert cs["status"]["currentRevision"] != cs["status"]["updateRevision"]

    await kube.patch(
        CLONESETS, "web", {"spec": {"updateStrategy": {"partition": 0}}}, namespace, patch_type="merge"
    )
    cs = await wait_status(
        kube,
        namespace,
        timeout=120,
        replicas=10,
        updatedReplicas=10,
        updatedReadyReplicas=10,
        readyReplicas=10,
    )
    final = {p["metadata"]["name"]: p for p in await pods_of(kube, namespace)}
    assert set(final) == set(before)
    assert all(final[n]["metadata"]["uid"] == before[n]["metadata"]["uid"] for n in final)
    assert cs["status"]["currentRevision"] == cs["status"]["updateRevision"]


async def test_scale_down_removes_pods_and_keeps_partition(kube: KubeClient, namespace: str) -> None:
    """Upstream: "CloneSet Scaling: scale in with specified delete / normal"."""
    await kube.create(CLONESETS, web_cloneset(namespace, replicas=5, partition=0), namespace)
    await wait_status(kube, namespace, replicas=5, readyReplicas=5)
    victim = sorted(p["metadata"]["name"] for p in await pods_of(kube, namespace))[0]
    await kube.patch(
        CLONESETS,
        "web",
        {"spec": {"replicas": 3, "scaleStrategy": {"podsToDelete": [victim]}}},
        namespace,
        patch_type="merge",
    )
    await wait_status(kube, namespace, replicas=3, readyReplicas=3)

    async def settled() -> list[dict[str, Any]] | None:
        pods = [p for p in await pods_of(kube, namespace) if not p["metadata"].get("deletionTimestamp")]
        return pods if len(pods) == 3 else None

    pods = await eventually(settled, what="3 pods left")
    assert victim not in {p["metadata"]["name"] for p in pods}
    cs = await kube.get(CLONESETS, "web", namespace)
    assert not (cs["spec"].get("scaleStrategy") or {}).get("podsToDelete")


async def test_kubectl_scale_uses_the_scale_subresource(
    kube: KubeClient, namespace: str, cluster: Any
) -> None:
    """`kubectl scale` works (scale subresource with labelSelector)."""
    await kube.create(CLONESETS, web_cloneset(namespace, replicas=2, partition=0), namespace)
    await wait_status(kube, namespace, replicas=2, readyReplicas=2)
    cluster.kubectl("scale", "-n", namespace, "cloneset/web", "--replicas=4")
    await wait_status(kube, namespace, replicas=4, readyReplicas=4)
    out = cluster.kubectl(
        "get", "-n", namespace, "clone", "web", "-o", "jsonpath={.status.labelSelector}"
    ).stdout
    assert out == "app=web"
