"""WorkloadSpread on the shared embedded cluster: the validating webhook's refusals (upstream's
messages) change nothing."""

from __future__ import annotations

import asyncio
import re

import pytest

from kruise.core.errors import ApiError
from kruise.core.kube import KubeClient
from kruise.workloads.api.workloadspread import WORKLOADSPREADS

pytestmark = pytest.mark.usefixtures("manager")
JSON = dict[str, object]
ZONE = "topology.kubernetes.io/zone"


def workloadspread(name: str, target: str, *, cap_a: object = 2, cap_b: object = None) -> JSON:
    def subset(zone: str, cap: object) -> JSON:
        term = {"matchExpressions": [{"key": ZONE, "operator": "In", "values": [zone]}]}
        out: JSON = {"name": f"subset-{zone}", "requiredNodeSelectorTerm": term}
        if cap is not None:
            out["maxReplicas"] = cap
        return out

    return {
        "apiVersion": "apps.kruise.io/v1alpha1",
        "kind": "WorkloadSpread",
        "metadata": {"name": name},
        "spec": {
            "targetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": target},
            "subsets": [subset("a", cap_a), subset("b", cap_b)],
        },
    }


async def test_validating_webhook_refusals_change_nothing(kube: KubeClient, namespace: str) -> None:
    await kube.create(WORKLOADSPREADS, workloadspread("first", "web"), namespace)
    await asyncio.sleep(3)  # the webhook reads the manager's informer (no controller writes a status yet)
    with pytest.raises(
        ApiError, match=re.escape("ws.spec.targetRef is in conflict with other WorkloadSpread first")
    ):
        await kube.create(WORKLOADSPREADS, workloadspread("second", "web"), namespace)
    with pytest.raises(ApiError, match="the maxReplicas type of all subsets must be the same"):
        await kube.create(WORKLOADSPREADS, workloadspread("third", "other", cap_b="50%"), namespace)
    moved = {"spec": {"targetRef": {"name": "moved"}}}
    with pytest.raises(ApiError, match="change TargetReference is not permitted for WorkloadSpread"):
        await kube.patch(WORKLOADSPREADS, "first", moved, namespace, patch_type="merge")
    names = [w["metadata"]["name"] for w in (await kube.list(WORKLOADSPREADS, namespace))["items"]]
    assert names == ["first"]
    stored = await kube.get(WORKLOADSPREADS, "first", namespace)
    assert stored["spec"]["targetRef"]["name"] == "web"
