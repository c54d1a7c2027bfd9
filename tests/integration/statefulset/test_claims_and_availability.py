"""Upstream e2e ``StatefulSet v1beta1``: MinReadySeconds, the non-retain PVC policies
(``[Feature:StatefulSetAutoDeletePVC]``) and PVC re-creation for a pending pod.

Claims bind through kube-controller-manager's PV binder (hostPath provisioner, the cluster's
default StorageClass); deleting a set or a pod lets its garbage collector delete the claims the
retention policy gave to it, once the PVC protection controller sees no pod using them. Upstream's
"orphaning" patch (a strategic merge of an empty ``ownerReferences``) changes nothing; here the
pod really loses its owner (merge patch), so the set must re-adopt it first.
"""

from __future__ import annotations

import asyncio

import pytest

from kruise.core.kube import KubeClient
from kruise.core.kube.resources import NODES, PODS, PVCS, STATEFULSETS
from tests.integration.statefulset.helpers import (
    create,
    get,
    new_statefulset,
    patch_spec,
    pods,
    wait_running_and_ready,
    wait_status,
)
from tests.support.wait import eventually

pytestmark = pytest.mark.usefixtures("manager")


async def test_min_ready_seconds_should_be_honored_when_enabled(kube: KubeClient, namespace: str) -> None:
    """MinReadySeconds should be honored when enabled"""
    await create(kube, namespace, new_statefulset("test-ss", 1, rolling={"minReadySeconds": 3}))
    ready = await wait_status(kube, namespace, "test-ss", readyReplicas=1)
    assert ready["status"]["availableReplicas"] == 0
    await wait_status(kube, namespace, "test-ss", availableReplicas=1, timeout=30)


async def test_available_replicas_should_get_updated_accordingly_when_min_ready_seconds_is_enabled(
    kube: KubeClient, namespace: str
) -> None:
    """AvailableReplicas should get updated accordingly when MinReadySeconds is enabled"""
    body = new_statefulset("test-ss", 2, parallel=True, rolling={"minReadySeconds": 8})
    await create(kube, namespace, body)
    await wait_status(kube, namespace, "test-ss", readyReplicas=2, availableReplicas=0)
    await asyncio.sleep(2)
    assert (await get(kube, namespace, "test-ss"))["status"]["availableReplicas"] == 0
    await wait_status(kube, namespace, "test-ss", availableReplicas=2, timeout=30)
    await patch_spec(
        kube, namespace, "test-ss", {"updateStrategy": {"rollingUpdate": {"minReadySeconds": 300}}}
    )
    await wait_status(kube, namespace, "test-ss", availableReplicas=0)
    await patch_spec(
        kube, namespace, "test-ss", {"updateStrategy": {"rollingUpdate": {"minReadySeconds": 0}}}
    )
    await wait_status(kube, namespace, "test-ss", availableReplicas=2)


def _ordinal(claim_name: str) -> int:
    return int(claim_name.rsplit("-", 1)[1])


async def claims_exist(
    kube: KubeClient, namespace: str, wanted: list[int], *, timeout: float = 90
) -> list[dict]:
    """``verifyStatefulSetPVCsExist``: exactly the claims ``datadir-ss-<n>`` for ``wanted`` (terminating
    ones count as gone)."""

    async def probe() -> tuple[list[dict]] | None:
        items = (await kube.list(PVCS, namespace))["items"]
        live = [c for c in items if not c["metadata"].get("deletionTimestamp")]
        return (live,) if sorted(_ordinal(c["metadata"]["name"]) for c in live) == sorted(wanted) else None

    return (await eventually(probe, timeout=timeout, what=f"claims {wanted}"))[0]


def _owners(claim: dict) -> set[str]:
    return {r["kind"] for r in claim["metadata"].get("ownerReferences") or []}


def _with_policy(replicas: int, **policy: str) -> dict:
    return new_statefulset("ss", replicas, claims=("datadir",), persistentVolumeClaimRetentionPolicy=policy)


async def test_should_delete_pvcs_with_a_when_deleted_policy(kube: KubeClient, namespace: str) -> None:
    """should delete PVCs with a WhenDeleted policy"""
    await create(kube, namespace, _with_policy(3, whenDeleted="Delete"))
    await wait_running_and_ready(kube, namespace, "ss", 3, timeout=90)

    async def set_owned() -> bool:
        found = await claims_exist(kube, namespace, [0, 1, 2])
        return all(_owners(c) == {"StatefulSet"} for c in found)

    await eventually(set_owned, timeout=30, what="claims owned by the set only")
    await kube.delete(STATEFULSETS, "ss", namespace)
    await claims_exist(kube, namespace, [])


async def test_should_delete_pvcs_with_a_on_scaledown_policy(kube: KubeClient, namespace: str) -> None:
    """should delete PVCs with a OnScaledown policy"""
    await create(kube, namespace, _with_policy(3, whenScaled="Delete"))
    await wait_running_and_ready(kube, namespace, "ss", 3, timeout=90)
    await claims_exist(kube, namespace, [0, 1, 2])
    await patch_spec(kube, namespace, "ss", {"replicas": 1})
    await claims_exist(kube, namespace, [0])


async def test_should_delete_pvcs_with_a_on_scaledown_policy_and_range_reserve_ordinals(
    kube: KubeClient, namespace: str
) -> None:
    """should delete PVCs with a OnScaledown policy and range reserveOrdinals=[0,2-5]"""
    body = _with_policy(3, whenScaled="Delete")
    body["spec"]["reserveOrdinals"] = [0, "2-5"]
    body["spec"]["podManagementPolicy"] = "Parallel"
    await create(kube, namespace, body)
    await wait_running_and_ready(kube, namespace, "ss", 3, timeout=90)
    await claims_exist(kube, namespace, [1, 6, 7])
    await patch_spec(kube, namespace, "ss", {"replicas": 1})
    await claims_exist(kube, namespace, [1])


async def _orphan(kube: KubeClient, namespace: str, pod: str) -> None:
    await kube.patch(PODS, pod, {"metadata": {"ownerReferences": None}}, namespace, patch_type="merge")

    async def adopted() -> bool:
        refs = (await kube.get(PODS, pod, namespace))["metadata"].get("ownerReferences") or []
        return any(r.get("kind") == "StatefulSet" and r.get("controller") for r in refs)

    await eventually(adopted, timeout=30, what=f"{pod} re-adopted")


async def test_should_delete_pvcs_after_adopting_pod_when_deleted(kube: KubeClient, namespace: str) -> None:
    """should delete PVCs after adopting pod (WhenDeleted)"""
    await create(kube, namespace, _with_policy(3, whenDeleted="Delete"))
    await wait_running_and_ready(kube, namespace, "ss", 3, timeout=90)
    await claims_exist(kube, namespace, [0, 1, 2])
    await _orphan(kube, namespace, "ss-2")
    await kube.delete(STATEFULSETS, "ss", namespace)
    await claims_exist(kube, namespace, [])


async def test_should_delete_pvcs_after_adopting_pod_when_scaled(kube: KubeClient, namespace: str) -> None:
    """should delete PVCs after adopting pod (WhenScaled) [Feature:StatefulSetAutoDeletePVC]"""
    await create(kube, namespace, _with_policy(3, whenScaled="Delete"))
    await wait_running_and_ready(kube, namespace, "ss", 3, timeout=90)
    await claims_exist(kube, namespace, [0, 1, 2])
    await _orphan(kube, namespace, "ss-1")
    await patch_spec(kube, namespace, "ss", {"replicas": 1})
    await claims_exist(kube, namespace, [0])


async def test_retain_policy_keeps_claims_when_the_set_is_deleted(kube: KubeClient, namespace: str) -> None:
    """(the issue's acceptance) ``whenDeleted: Retain`` keeps the claims after the set is deleted"""
    await create(kube, namespace, _with_policy(2, whenDeleted="Retain"))
    await wait_running_and_ready(kube, namespace, "ss", 2, timeout=90)
    before = await claims_exist(kube, namespace, [0, 1])
    assert all(not c["metadata"].get("ownerReferences") for c in before)
    await kube.delete(STATEFULSETS, "ss", namespace)
    await eventually(lambda: _no_pods(kube, namespace), timeout=60, what="pods deleted")
    await asyncio.sleep(2)
    after = await claims_exist(kube, namespace, [0, 1])
    assert {c["metadata"]["uid"] for c in after} == {c["metadata"]["uid"] for c in before}


async def _no_pods(kube: KubeClient, namespace: str) -> bool:
    return not await pods(kube, namespace, "ss", include_terminating=True)


async def test_pvc_should_be_recreated_when_pod_is_pending_due_to_missing_pvc(
    kube: KubeClient, namespace: str
) -> None:
    """PVC should be recreated when pod is pending due to missing PVC"""
    node = (await kube.list(NODES, label_selector="type=kwok"))["items"][-1]["metadata"]["name"]
    body = new_statefulset("ss", 1, claims=("datadir",))
    body["spec"]["template"]["spec"]["nodeSelector"] = {"kubernetes.io/hostname": node}
    await create(kube, namespace, body)
    await wait_running_and_ready(kube, namespace, "ss", 1, timeout=90)
    (claim,) = await claims_exist(kube, namespace, [0])
    await kube.patch(NODES, node, {"spec": {"unschedulable": True}}, patch_type="merge")
    try:
        old = (await kube.get(PODS, "ss-0", namespace))["metadata"]["uid"]
        await kube.delete(PODS, "ss-0", namespace)

        async def pending_again() -> bool:
            pod = await kube.get_or_none(PODS, "ss-0", namespace)
            return (
                pod is not None and pod["metadata"]["uid"] != old and pod["status"].get("phase") == "Pending"
            )

        await eventually(pending_again, timeout=60, what="ss-0 recreated, unschedulable")
        await kube.delete(PVCS, claim["metadata"]["name"], namespace)

        async def recreated() -> bool:
            now = await kube.get_or_none(PVCS, claim["metadata"]["name"], namespace)
            return now is not None and now["metadata"]["uid"] != claim["metadata"]["uid"]

        await eventually(recreated, timeout=90, what="claim recreated for the pending pod")
    finally:
        await kube.patch(NODES, node, {"spec": {"unschedulable": None}}, patch_type="merge")
    (pod,) = await wait_running_and_ready(kube, namespace, "ss", 1, timeout=90)
    assert pod["spec"]["nodeName"] == node
