"""Partition-style release of a native Deployment: the BatchRelease control and the workload
hold webhook's partition branch (pure)."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from kruise.rollouts.release.constants import (
    BATCH_RELEASE_CONTROL_ANNOTATION,
    IN_PROGRESSING_ANNOTATION,
    STABLE_REVISION_LABEL,
)
from kruise.rollouts.workloads.deployment.hold import hold_deployment
from kruise.rollouts.workloads.deployment.partition import decide_deployment_partition
from kruise.rollouts.workloads.deployment.strategy import (
    ADVANCED_DEPLOYMENT_CONTROL_LABEL,
    DEPLOYMENT_EXTRA_STATUS_ANNOTATION,
    DEPLOYMENT_STRATEGY_ANNOTATION,
)
from kruise.rollouts.workloads.ops import OpKind, Target, control_info
from tests.unit.rollouts_engine.test_batchrelease_deployments import br
from tests.unit.rollouts_engine.test_deployment_workload import deployment, rollout

JSON = dict[str, Any]
CONTROL = control_info(br(0, style="Partition"))


def strategy(partition: int | str = 0, **extra: Any) -> str:
    body = {
        "rollingStyle": "Partition",
        "rollingUpdate": {"maxUnavailable": 0, "maxSurge": 1},
        **extra,
        "partition": partition,
    }
    return json.dumps(body, separators=(",", ":"))


def controlled(
    partition: int | str = "20%", *, updated: int = 0, ready: int = 0, owner: str = CONTROL, **status: Any
) -> JSON:
    d = deployment(
        "v2",
        annotations={
            BATCH_RELEASE_CONTROL_ANNOTATION: owner,
            DEPLOYMENT_STRATEGY_ANNOTATION: strategy(partition),
            DEPLOYMENT_EXTRA_STATUS_ANNOTATION: json.dumps({"updatedReadyReplicas": ready}),
        },
        labels={STABLE_REVISION_LABEL: "h1", ADVANCED_DEPLOYMENT_CONTROL_LABEL: "true"},
    )
    d["metadata"]["resourceVersion"] = "11"
    d["spec"].update(paused=True, strategy={"type": "Recreate"})
    d["status"].update(updatedReplicas=updated, replicas=5, **status)
    return d


def test_initialize_takes_the_deployment_from_kube_with_partition_zero() -> None:
    d = deployment("v2")
    d["spec"]["strategy"] = {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1, "maxUnavailable": 0}}
    decision = decide_deployment_partition(br(0, style="Partition", phase="Preparing"), d)
    [op] = decision.ops
    assert (op.kind, op.target, op.name) == (OpKind.PATCH, Target.DEPLOYMENT, "web")
    assert op.body["spec"] == {"paused": True, "strategy": {"type": "Recreate", "rollingUpdate": None}}
    annotations = op.body["metadata"]["annotations"]
    assert annotations[DEPLOYMENT_STRATEGY_ANNOTATION] == strategy(0)
    assert annotations[BATCH_RELEASE_CONTROL_ANNOTATION] == CONTROL
    assert op.body["metadata"]["labels"] == {ADVANCED_DEPLOYMENT_CONTROL_LABEL: "true"}
    assert decision.status["phase"] == "Preparing"


def test_a_new_batchrelease_reinitializes_a_deployment_left_by_an_earlier_one() -> None:
    d = controlled("60%", owner=control_info({**br(0), "metadata": {"name": "web", "uid": "old"}}))
    d["metadata"]["annotations"][DEPLOYMENT_STRATEGY_ANNOTATION] = strategy("60%", paused=True)
    [op] = decide_deployment_partition(br(0, style="Partition", phase="Progressing"), d).ops
    assert op.body["metadata"]["annotations"][DEPLOYMENT_STRATEGY_ANNOTATION] == strategy(0)


@pytest.mark.parametrize(
    ("current", "batch", "want"),
    [
        pytest.param(0, 0, "20%", id="the first batch writes its canaryReplicas"),
        pytest.param("20%", 1, "60%", id="the next batch moves it up"),
        pytest.param("60%", 0, None, id="never down"),
        pytest.param(3, 1, None, id="3 already covers 60% of 5"),
    ],
)
def test_upgrade_batch_writes_the_partition(current: int | str, batch: int, want: str | None) -> None:
    decision = decide_deployment_partition(br(batch, style="Partition"), controlled(current))
    if want is None:
        assert decision.ops == ()
        return
    [op] = decision.ops
    assert json.loads(op.body["metadata"]["annotations"][DEPLOYMENT_STRATEGY_ANNOTATION])["partition"] == want
    assert op.body["metadata"]["resourceVersion"] == "11"
    assert decision.status["canaryStatus"]["batchState"] == "Upgrading"


@pytest.mark.parametrize(
    ("updated", "ready", "generation_seen", "want"),
    [
        pytest.param(1, 1, 2, "Ready", id="one updated ready pod of 20%"),
        pytest.param(1, 0, 2, "Upgrading", id="not ready yet"),
        pytest.param(0, 0, 2, "Upgrading", id="not updated yet"),
        pytest.param(1, 1, 1, "Upgrading", id="status behind the generation"),
    ],
)
def test_batch_ready(updated: int, ready: int, generation_seen: int, want: str) -> None:
    d = controlled("20%", updated=updated, ready=ready, observedGeneration=generation_seen)
    decision = decide_deployment_partition(br(0, style="Partition"), d)
    assert decision.ops == ()
    status = decision.status
    assert status["canaryStatus"]["batchState"] == want
    assert (status["canaryStatus"]["updatedReplicas"], status["canaryStatus"]["updatedReadyReplicas"]) == (
        updated,
        ready,
    )
    assert status["stableRevision"] == "h1"


def test_finalize_hands_the_deployment_back_with_its_strategy() -> None:
    decision = decide_deployment_partition(br(None, style="Partition"), controlled("100%", updated=5))
    [op] = decision.ops
    assert op.body["spec"] == {
        "paused": False,
        "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 0, "maxSurge": 1}},
    }
    assert op.body["metadata"]["annotations"] == {
        BATCH_RELEASE_CONTROL_ANNOTATION: None,
        DEPLOYMENT_STRATEGY_ANNOTATION: None,
        DEPLOYMENT_EXTRA_STATUS_ANNOTATION: None,
    }
    assert op.body["metadata"]["labels"] == {
        STABLE_REVISION_LABEL: None,
        ADVANCED_DEPLOYMENT_CONTROL_LABEL: None,
    }
    assert decision.status["phase"] == "Finalizing"


@pytest.mark.parametrize(
    ("gate", "policy", "paused"),
    [
        pytest.param(False, "Immediate", False, id="gate off: resumed"),
        pytest.param(True, "Immediate", True, id="gate on, cancelled mid-release: kept paused"),
        pytest.param(True, "WaitResume", False, id="gate on, a finished release: resumed"),
    ],
)
def test_keep_workload_paused_on_rollout_deletion_keeps_a_cancelled_deployment_paused(
    gate: bool, policy: str, paused: bool
) -> None:
    """``KeepWorkloadPausedOnRolloutDeletion``: finalizing without ``WaitResume`` leaves
    ``paused: true``; the strategy and the annotations are restored either way."""
    decision = decide_deployment_partition(
        br(None, style="Partition", policy=policy), controlled("20%", updated=1), keep_paused_on_cancel=gate
    )
    [op] = decision.ops
    assert op.body["spec"]["paused"] is paused
    assert op.body["spec"]["strategy"]["type"] == "RollingUpdate"
    assert op.body["metadata"]["annotations"][DEPLOYMENT_STRATEGY_ANNOTATION] is None


def test_finalize_completes_at_once_or_when_every_pod_is_updated() -> None:
    released = deployment("v2")
    released["status"].update(replicas=5, updatedReplicas=3)
    assert decide_deployment_partition(br(None, style="Partition"), released).status["phase"] == "Completed"
    waiting = decide_deployment_partition(br(None, style="Partition", policy="WaitResume"), released)
    assert waiting.status["phase"] == "Finalizing"
    released["status"]["updatedReplicas"] = 5
    done = decide_deployment_partition(br(None, style="Partition", policy="WaitResume"), released)
    assert done.status["phase"] == "Completed"


def test_a_missing_deployment_is_reported() -> None:
    assert (
        decide_deployment_partition(br(0, style="Partition"), None).status["message"] == "workload not found"
    )


# ------------------------------------------------------------------------------ the hold webhook


def partition_rollout() -> JSON:
    return rollout(extra=False)


def in_release(image: str = "v2", paused_strategy: bool = False) -> JSON:
    d = controlled("20%")
    d["metadata"]["annotations"][IN_PROGRESSING_ANNOTATION] = '{"rolloutName":"web"}'
    d["metadata"]["annotations"][DEPLOYMENT_STRATEGY_ANNOTATION] = strategy(
        "20%", **({"paused": True} if paused_strategy else {})
    )
    d["spec"]["template"]["spec"]["containers"][0]["image"] = image
    return d


def test_partition_style_stays_recreate_and_paused() -> None:
    old = in_release()
    new = copy.deepcopy(old)
    new["spec"]["paused"] = False
    new["spec"]["strategy"] = {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 2, "maxUnavailable": 1}}
    held = hold_deployment(new, old, [partition_rollout()], [])
    assert held is not None
    assert held["spec"]["paused"] is True
    assert held["spec"]["strategy"] == {"type": "Recreate"}
    saved = json.loads(held["metadata"]["annotations"][DEPLOYMENT_STRATEGY_ANNOTATION])
    assert saved["rollingUpdate"] == {"maxUnavailable": 1, "maxSurge": 2}
    assert not saved.get("paused")
    assert hold_deployment(old, old, [partition_rollout()], []) is None


def test_partition_style_pauses_the_strategy_on_a_new_revision() -> None:
    old = in_release("v2")
    held = hold_deployment(in_release("v3"), old, [partition_rollout()], [])
    assert held is not None
    assert json.loads(held["metadata"]["annotations"][DEPLOYMENT_STRATEGY_ANNOTATION])["paused"] is True
    assert held["spec"]["strategy"] == {"type": "Recreate"}
