"""The workload's rollout-id (label, else annotation), keeping the BatchRelease's id current and
rolling back in batches (pure; ``KR:pkg/controller/rollout/rollout_progressing.go``,
``rollout_canary.go:syncBatchRelease``, ``pkg/util/rollout_utils.go:IsRollbackInBatchPolicy``)."""

from __future__ import annotations

from typing import Any

import pytest

from kruise.rollouts.api.common import CanaryStepState, ProgressingReason, RolloutConditionType
from kruise.rollouts.release.rolloutid import workload_rollout_id
from kruise.rollouts.rollout.model import ActionKind, BatchView
from kruise.rollouts.rollout.rolloutid import batch_release_annotations
from kruise.rollouts.workloads.cloneset import cloneset_info, hold_cloneset
from tests.unit.rollouts_engine.test_upstream_decisions import (
    kinds,
    obs,
    progressing,
    rollout,
    twice,
    workload,
)

ID = "rollouts.kruise.io/rollout-id"
IN_BATCH = "rollouts.kruise.io/rollback-in-batch"
STEPS: list[dict[str, Any]] = [
    {"replicas": "20%", "pause": {}},
    {"replicas": "60%", "pause": {}},
    {"replicas": "100%"},
]


def meta(labels: dict[str, str] | None = None, annotations: dict[str, str] | None = None) -> dict[str, Any]:
    return {"metadata": {"labels": labels or {}, "annotations": annotations or {}}}


@pytest.mark.parametrize(
    ("obj", "want"),
    [
        pytest.param(meta({ID: "7"}), "7", id="label"),
        pytest.param(meta(annotations={ID: "8"}), "8", id="annotation when no label"),
        pytest.param(meta({ID: "7"}, {ID: "8"}), "7", id="the label wins"),
        pytest.param(meta(), "", id="neither"),
    ],
)
def test_the_label_is_authoritative_and_the_annotation_a_fallback(obj: dict[str, Any], want: str) -> None:
    assert workload_rollout_id(obj) == want


def test_the_controller_reads_the_annotation_when_the_cloneset_has_no_label() -> None:
    cs = {"metadata": {"name": "web", "annotations": {ID: "9"}}, "spec": {"replicas": 2}, "status": {}}
    assert cloneset_info(cs).observed_rollout_id == "9"


def test_a_rollout_id_annotation_change_alone_enters_a_release() -> None:
    ro = {"metadata": {"name": "web"}, "spec": {"workloadRef": {"kind": "CloneSet", "name": "web"}}}
    old = {"kind": "CloneSet", "metadata": {"name": "web", "annotations": {ID: "1"}}, "spec": {"replicas": 2}}
    new = {"kind": "CloneSet", "metadata": {"name": "web", "annotations": {ID: "2"}}, "spec": {"replicas": 2}}
    held = hold_cloneset(new, old, [ro])
    assert held is not None and held["spec"]["updateStrategy"]["partition"] == "100%"


# ------------------------------------------------------------------------------ syncBatchRelease
def test_a_changed_rollout_id_is_pushed_to_the_batchrelease_even_while_paused() -> None:
    ro = rollout(
        progressing(
            {"currentStepIndex": 2, "nextStepIndex": 3, "currentStepState": CanaryStepState.STEP_PAUSED}
        )
    )
    first, second = twice(ro, obs(wl=workload(rollout_id="2"), batch=BatchView(exists=True, rollout_id="1")))
    assert kinds(first) == [ActionKind.SYNC_BATCH_RELEASE_ID]
    assert first.actions[0].payload == {"rolloutID": "2"}
    assert second.status["canaryStatus"]["currentStepState"] == CanaryStepState.STEP_PAUSED


def test_nothing_to_sync_when_the_ids_agree_or_the_id_is_unknown() -> None:
    ro = rollout(
        progressing(
            {"currentStepIndex": 2, "nextStepIndex": 3, "currentStepState": CanaryStepState.STEP_PAUSED}
        )
    )
    for batch in (BatchView(exists=True, rollout_id="2"), BatchView(exists=True)):
        first, _ = twice(ro, obs(wl=workload(rollout_id="2"), batch=batch))
        assert first.actions == ()


# ------------------------------------------------------------------------------ rollback in batches
def no_routing(status: dict[str, Any], annotations: dict[str, str]) -> dict[str, Any]:
    ro = rollout(status, steps=STEPS)
    ro["spec"]["strategy"]["canary"].pop("trafficRoutings")
    ro["metadata"]["annotations"] = annotations
    ro["status"]["canaryStatus"].pop("rolloutHash", None)
    return rollout_hashed(ro)


def rollout_hashed(ro: dict[str, Any]) -> dict[str, Any]:
    from kruise.rollouts.release.hashing import rollout_hash

    ro["status"]["canaryStatus"]["rolloutHash"] = rollout_hash(ro)
    return ro


ROLLED_BACK = {"canary_revision": "v1", "pod_template_hash": "v1", "in_rollback": True, "rollout_id": "2"}


def test_rollback_in_batch_restarts_at_step_one_with_the_stable_revision_as_canary() -> None:
    ro = no_routing(
        progressing(
            {"currentStepIndex": 2, "nextStepIndex": 3, "currentStepState": CanaryStepState.STEP_PAUSED}
        ),
        {IN_BATCH: "true"},
    )
    _, second = twice(ro, obs(wl=workload(**ROLLED_BACK)))
    cs = second.status["canaryStatus"]
    assert (cs["currentStepIndex"], cs["nextStepIndex"], cs["currentStepState"]) == (
        1,
        2,
        CanaryStepState.BEFORE_STEP_UPGRADE,
    )
    assert cs["canaryRevision"] == "v1"
    assert (
        next(x for x in second.status["conditions"] if x["type"] == RolloutConditionType.PROGRESSING)[
            "reason"
        ]
        == ProgressingReason.IN_ROLLING
    )


@pytest.mark.parametrize(
    ("annotations", "routed"),
    [
        pytest.param({}, False, id="no annotation"),
        pytest.param({IN_BATCH: "false"}, False, id="annotation not true"),
        pytest.param({IN_BATCH: "true"}, True, id="with traffic routing"),
    ],
)
def test_otherwise_a_rollback_cancels_at_once(annotations: dict[str, str], routed: bool) -> None:
    status = progressing(
        {"currentStepIndex": 2, "nextStepIndex": 3, "currentStepState": CanaryStepState.STEP_PAUSED}
    )
    ro = rollout(status, steps=STEPS) if routed else no_routing(status, annotations)
    ro["metadata"]["annotations"] = annotations
    _, second = twice(ro, obs(wl=workload(**ROLLED_BACK)))
    assert (
        next(x for x in second.status["conditions"] if x["type"] == RolloutConditionType.PROGRESSING)[
            "reason"
        ]
        == ProgressingReason.CANCELLING
    )


def test_the_batchrelease_carries_the_annotation_only_while_rolling_back() -> None:
    ro = no_routing(
        progressing(
            {
                "currentStepIndex": 1,
                "nextStepIndex": 2,
                "currentStepState": CanaryStepState.STEP_UPGRADE,
                "canaryRevision": "v1",
            }
        ),
        {IN_BATCH: "true"},
    )
    assert batch_release_annotations(ro, workload(**ROLLED_BACK)) == {IN_BATCH: "true"}
    assert batch_release_annotations(ro, workload()) == {}
    first, _ = twice(ro, obs(wl=workload(**ROLLED_BACK)))
    ensure = next(a for a in first.actions if a.kind == ActionKind.ENSURE_BATCH_RELEASE)
    assert ensure.payload["annotations"] == {IN_BATCH: "true"}
    assert ensure.payload["spec"]["releasePlan"]["rolloutID"] == "2"
