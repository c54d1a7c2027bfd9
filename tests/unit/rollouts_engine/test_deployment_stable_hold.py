"""A held abort of a Deployment release puts its pods back on the stable revision (pure; issue 23
item 5): the rule is in :mod:`kruise.rollouts.workloads.deployment.stablehold`."""

from __future__ import annotations

import json
from typing import Any

from kruise.rollouts.workloads.deployment.stablehold import deployment_stable_hold
from kruise.rollouts.workloads.deployment.strategy import DEPLOYMENT_STRATEGY_ANNOTATION
from kruise.rollouts.workloads.ops import Target
from tests.unit.rollouts_engine.test_advanced_deployment import deployment, rs

JSON = dict[str, Any]


def owned(replicaset: JSON) -> JSON:
    replicaset["metadata"]["ownerReferences"] = [{"kind": "Deployment", "uid": "dep-uid", "controller": True}]
    return replicaset


def test_partition_style_goes_to_partition_zero_first() -> None:
    d = deployment(replicas=5, partition="40%")
    d["metadata"]["resourceVersion"] = "12"
    hold = deployment_stable_hold(
        d, [owned(rs("web-a", "v1", 3)), owned(rs("web-b", "v2", 2, created="2"))], [], "h-v1"
    )
    [op] = hold.ops
    assert hold.waiting and op.target == Target.DEPLOYMENT
    strategy = json.loads(op.body["metadata"]["annotations"][DEPLOYMENT_STRATEGY_ANNOTATION])
    assert strategy["partition"] == 0 and "paused" not in strategy
    assert op.body["metadata"]["resourceVersion"] == "12", "a guarded write"


def test_partition_style_then_scales_the_other_revisions_to_zero_and_waits_for_the_stable_one() -> None:
    d = deployment(replicas=5, partition=0)
    hold = deployment_stable_hold(
        d, [owned(rs("web-a", "v1", 3)), owned(rs("web-b", "v2", 2, created="2"))], [], "h-v1"
    )
    assert [(op.target, op.name, op.body["spec"]) for op in hold.ops] == [
        (Target.REPLICASET, "web-b", {"replicas": 0})
    ]
    assert hold.ops[0].body["metadata"]["resourceVersion"] == "7", "a guarded write"
    assert hold.waiting
    emptied = owned(rs("web-b", "v2", 0, created="2"))
    growing = deployment_stable_hold(d, [owned(rs("web-a", "v1", 3)), emptied], [], "h-v1")
    assert growing.ops == () and growing.waiting, "the stable ReplicaSet is not back to 5 yet"
    done = deployment_stable_hold(d, [owned(rs("web-a", "v1", 5)), emptied], [], "h-v1")
    assert done.ops == () and not done.waiting


def test_canary_style_waits_for_the_canary_deployments_to_go() -> None:
    stable = deployment(replicas=5)
    assert deployment_stable_hold(stable, [], [{"metadata": {"name": "web-x1"}}], "h-v1").waiting
    free = deployment(replicas=5)
    free["spec"]["paused"] = True
    free["metadata"]["annotations"] = {}
    hold = deployment_stable_hold(free, [owned(rs("web-a", "v1", 5))], [], "h-v1")
    assert hold.ops == () and not hold.waiting, "a Deployment not under the advanced controller: nothing"
