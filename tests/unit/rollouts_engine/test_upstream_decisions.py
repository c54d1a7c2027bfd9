"""Decisions the integration scenarios caught diverging from Kruise Rollouts (pure, table-driven).

Each test states the upstream behaviour it pins (``KR:pkg/controller/rollout/...``).
"""

from __future__ import annotations

import datetime
from typing import Any

import pytest

from kruise.rollouts.api.common import (
    CanaryStepState,
    FinalisingStepType,
    ProgressingReason,
    RolloutConditionType,
    RolloutPhase,
)
from kruise.rollouts.release.hashing import rollout_hash
from kruise.rollouts.release.timefmt import fmt_time
from kruise.rollouts.rollout.machine import decide
from kruise.rollouts.rollout.model import ActionKind, BatchView, Decision, Observed, Outcomes
from kruise.rollouts.rollout.requests import batch_release_spec
from kruise.rollouts.rollout.stepjump import recalculate_step
from kruise.rollouts.workloads.cloneset import decide_cloneset
from kruise.rollouts.workloads.info import WorkloadInfo

T0 = datetime.datetime(2026, 1, 1, tzinfo=datetime.UTC)
ROUTING = {"service": "web", "gracePeriodSeconds": 2, "gateway": {"httpRouteName": "web"}}
STEPS: list[dict[str, Any]] = [
    {"replicas": "20%", "traffic": "20%", "pause": {}},
    {"replicas": "40%", "pause": {"duration": 10}},
    {"replicas": "60%", "pause": {"duration": 10}},
    {"replicas": "100%"},
]


def at(seconds: float) -> datetime.datetime:
    return T0 + datetime.timedelta(seconds=seconds)


def workload(**kw: Any) -> WorkloadInfo:
    base: dict[str, Any] = dict(
        kind="CloneSet",
        api_version="apps.kruise.io/v1alpha1",
        name="web",
        namespace="shop",
        uid="u",
        replicas=10,
        stable_revision="v1",
        canary_revision="v2",
        pod_template_hash="v2",
        in_progressing=True,
        in_rollback=False,
        generation=3,
        rollback_in_batches=True,  # what the CloneSet port reports
    )
    base.update(kw)
    return WorkloadInfo(**base)


def rollout(
    status: dict[str, Any] | None = None, steps: list[dict[str, Any]] | None = None, **canary: Any
) -> dict[str, Any]:
    """A Rollout; a sub-status without ``rolloutHash`` gets the hash of this spec (no plan change)."""
    ro: dict[str, Any] = {
        "metadata": {"name": "web", "namespace": "shop", "generation": 1},
        "spec": {
            "workloadRef": {"apiVersion": "apps.kruise.io/v1alpha1", "kind": "CloneSet", "name": "web"},
            "strategy": {"canary": {"steps": steps or STEPS, "trafficRoutings": [ROUTING], **canary}},
        },
        "status": status or {},
    }
    sub = ro["status"].get("canaryStatus")
    if sub is not None:
        sub.setdefault("rolloutHash", rollout_hash(ro))
    return ro


def progressing(cs: dict[str, Any], reason: str = ProgressingReason.IN_ROLLING) -> dict[str, Any]:
    """A Progressing status whose sub-status is ``cs``."""
    sub = {
        "canaryRevision": "v2",
        "stableRevision": "v1",
        "podTemplateHash": "v2",
        "lastUpdateTime": fmt_time(T0),
        **cs,
    }
    return {
        "phase": RolloutPhase.PROGRESSING,
        "conditions": [
            {
                "type": RolloutConditionType.PROGRESSING,
                "status": "True",
                "reason": reason,
                "lastUpdateTime": fmt_time(T0),
            }
        ],
        "canaryStatus": sub,
    }


def obs(
    now: datetime.datetime = T0, wl: WorkloadInfo | None = None, batch: BatchView | None = None
) -> Observed:
    return Observed(now=now, workload=wl or workload(), batch=batch or BatchView.absent())


def twice(ro: dict[str, Any], o: Observed, outcomes: list[bool] | None = None) -> tuple[Decision, Decision]:
    """The shell's two calls; ``outcomes`` are what the actions report (all unchanged by default),
    cut after the first change when the decision is sequential."""
    first = decide(ro, o)
    changed = outcomes if outcomes is not None else [False] * len(first.actions)
    if first.sequential and True in changed:
        changed = changed[: changed.index(True) + 1]
    return first, decide(ro, o, Outcomes.of(first.actions, changed))


def kinds(d: Decision) -> list[ActionKind]:
    return [a.kind for a in d.actions]


# ----------------------------------------------------------------------------------- status sync
def test_paused_step_follows_the_batchrelease_counts_after_scaling() -> None:
    """syncBatchRelease runs whatever the state: scaling in StepPaused updates canaryReplicas."""
    ro = rollout(
        progressing(
            {"currentStepIndex": 1, "nextStepIndex": 2, "currentStepState": CanaryStepState.STEP_PAUSED}
        )
    )
    batch = BatchView(exists=True, updated_replicas=3, updated_ready_replicas=2)
    _, second = twice(ro, obs(batch=batch))
    cs = second.status["canaryStatus"]
    assert (cs["canaryReplicas"], cs["canaryReadyReplicas"]) == (3, 2)
    assert cs["currentStepState"] == CanaryStepState.STEP_PAUSED


def test_observed_workload_generation_and_rollout_id_follow_the_workload() -> None:
    """calculateRolloutStatus refreshes them while the canary revision is the workload's."""
    ro = rollout(
        progressing(
            {"currentStepIndex": 1, "nextStepIndex": 2, "currentStepState": CanaryStepState.STEP_PAUSED}
        )
    )
    _, second = twice(ro, obs(wl=workload(generation=7)))
    cs = second.status["canaryStatus"]
    assert cs["observedWorkloadGeneration"] == 7
    assert cs["observedRolloutID"] == "v2"  # no rollout-id label: the canary revision


@pytest.mark.parametrize(
    ("label", "rollback", "want"),
    [
        pytest.param("", False, "v2", id="no label: canary revision"),
        pytest.param("", True, "rollback-v2", id="no label, rolling back"),
        pytest.param("release-7", True, "release-7", id="the label wins"),
    ],
)
def test_get_rollout_id(label: str, rollback: bool, want: str) -> None:
    assert workload(rollout_id=label, in_rollback=rollback).observed_rollout_id == want


# ----------------------------------------------------------------------------------- phases
def test_workload_not_found_resets_the_status() -> None:
    ro = rollout(progressing({"currentStepIndex": 2}))
    d = decide(ro, Observed(now=T0, workload=None, batch=BatchView.absent()))
    assert d.status == {
        "observedGeneration": 1,
        "phase": RolloutPhase.INITIAL,
        "message": "Workload Not Found",
        "currentStepIndex": 0,
        "currentStepState": "",
    }


def test_settled_workload_first_healthy_then_completed_at_the_last_step() -> None:
    first = decide(rollout(), obs(wl=workload(in_progressing=False, canary_revision="v1")))
    assert (first.status["phase"], first.status["message"]) == (RolloutPhase.HEALTHY, "rollout is healthy")
    assert "canaryStatus" not in first.status
    second = decide({**rollout(), "status": first.status}, obs(wl=workload(in_progressing=False)))
    cs = second.status["canaryStatus"]
    assert second.status["message"] == "workload deployment is completed"
    assert (cs["currentStepIndex"], cs["nextStepIndex"], cs["currentStepState"]) == (
        4,
        -1,
        CanaryStepState.COMPLETED,
    )
    assert cs["observedRolloutID"] == "v2"


def test_disabling_a_progressing_rollout_says_so_then_finalises() -> None:
    ro = rollout(progressing({"currentStepIndex": 1, "currentStepState": CanaryStepState.STEP_PAUSED}))
    ro["spec"]["disabled"] = True
    d = decide(ro, obs())
    assert (d.status["phase"], d.status["message"]) == (
        RolloutPhase.DISABLING,
        "Disabling rollout, release resources",
    )
    assert not d.actions


def test_enabling_a_disabled_rollout_makes_it_healthy_at_once() -> None:
    ro = rollout({"phase": RolloutPhase.DISABLED, "message": "Rollout is disabled"})
    d = decide(ro, obs(wl=workload(in_progressing=False)))
    assert (d.status["phase"], d.status["message"]) == (RolloutPhase.HEALTHY, "rollout is healthy")


def test_initializing_waits_a_grace_period_before_rolling() -> None:
    """doProgressingInitializing: 3 s after entering Initializing, for a late Rollout spec update."""
    ro = rollout(progressing({}, reason=ProgressingReason.INITIALIZING))
    early = decide(ro, obs(now=at(1)))
    assert early.status["conditions"][0]["reason"] == ProgressingReason.INITIALIZING
    assert early.status["canaryStatus"]["currentStepState"] == CanaryStepState.BEFORE_STEP_UPGRADE
    assert early.requeue_after == pytest.approx(2.0)
    late = decide(ro, obs(now=at(3)))
    assert late.status["conditions"][0]["reason"] == ProgressingReason.IN_ROLLING


# ----------------------------------------------------------------------------------- teardown
def test_step_without_traffic_tears_routing_down_in_order_with_grace() -> None:
    """FinalisingTrafficRouting: stable Service, routes, canary Service, each then the grace."""
    ro = rollout(
        progressing(
            {
                "currentStepIndex": 2,
                "nextStepIndex": 3,
                "currentStepState": CanaryStepState.BEFORE_STEP_UPGRADE,
            }
        )
    )
    first, second = twice(ro, obs(), [True, True, True])
    assert first.sequential
    assert kinds(first) == [
        ActionKind.RESTORE_STABLE_SERVICE,
        ActionKind.RESTORE_ROUTES,
        ActionKind.DELETE_CANARY_SERVICE,
    ]
    cs = second.status["canaryStatus"]
    assert (cs["finalisingStep"], cs["currentStepState"]) == (
        FinalisingStepType.RESTORE_STABLE_SERVICE,
        CanaryStepState.BEFORE_STEP_UPGRADE,
    )

    # within the grace period nothing runs (a status write wakes us early)
    ro = {**ro, "status": second.status}
    waiting, _ = twice(ro, obs(now=at(1)))
    assert not waiting.actions

    # after it: the routes (stable Service already fine), then wait again
    first, second = twice(ro, obs(now=at(2.5)), [False, True, True])
    assert kinds(first)[0] == ActionKind.RESTORE_STABLE_SERVICE
    assert second.status["canaryStatus"]["finalisingStep"] == FinalisingStepType.ROUTE_TRAFFIC_TO_STABLE

    ro = {**ro, "status": second.status}
    first, second = twice(ro, obs(now=at(5)), [False, False])
    assert kinds(first) == [ActionKind.RESTORE_ROUTES, ActionKind.DELETE_CANARY_SERVICE]
    cs = second.status["canaryStatus"]
    assert (cs["finalisingStep"], cs["currentStepState"]) == ("", CanaryStepState.STEP_UPGRADE)


def test_step_with_traffic_pins_the_stable_service_only_before_the_first_batch() -> None:
    steps = [dict(STEPS[0]), {"replicas": "60%", "traffic": "60%"}, {"replicas": "100%"}]
    for index, pinned in ((1, True), (2, False)):
        ro = rollout(
            progressing({"currentStepIndex": index, "currentStepState": CanaryStepState.BEFORE_STEP_UPGRADE}),
            steps=steps,
        )
        assert (ActionKind.PIN_STABLE_SERVICE in kinds(decide(ro, obs()))) is pinned


def test_disable_generate_canary_service_never_pins_the_stable_service() -> None:
    ro = rollout(
        progressing({"currentStepIndex": 1, "currentStepState": CanaryStepState.STEP_TRAFFIC_ROUTING}),
        disableGenerateCanaryService=True,
    )
    assert ActionKind.PIN_STABLE_SERVICE not in kinds(decide(ro, obs()))


def test_step_request_header_modifier_reaches_the_routes() -> None:
    modifier = {"set": [{"name": "x-canary", "value": "1"}]}
    steps = [{**STEPS[0], "requestHeaderModifier": modifier}, *STEPS[1:]]
    ro = rollout(
        progressing({"currentStepIndex": 1, "currentStepState": CanaryStepState.STEP_TRAFFIC_ROUTING}),
        steps=steps,
    )
    ensure = next(a for a in decide(ro, obs()).actions if a.kind == ActionKind.ENSURE_ROUTES)
    assert ensure.payload["intent"]["requestHeaderModifier"] == modifier


# ----------------------------------------------------------------------------------- jumps
@pytest.mark.parametrize(
    ("current", "state", "target", "canary", "want_state"),
    [
        pytest.param(
            3,
            CanaryStepState.STEP_PAUSED,
            2,
            6,
            CanaryStepState.BEFORE_STEP_UPGRADE,
            id="back to a smaller step",
        ),
        pytest.param(
            3,
            CanaryStepState.STEP_UPGRADE,
            1,
            2,
            CanaryStepState.STEP_TRAFFIC_ROUTING,
            id="pods already there: routing",
        ),
        pytest.param(
            1,
            CanaryStepState.STEP_TRAFFIC_ROUTING,
            4,
            2,
            CanaryStepState.BEFORE_STEP_UPGRADE,
            id="any state jumps",
        ),
    ],
)
def test_patched_next_step_index_jumps(
    current: int, state: str, target: int, canary: int, want_state: str
) -> None:
    """doStepJump: TrafficRouting when the target step asks for the pods already released."""
    ro = rollout(
        progressing(
            {
                "currentStepIndex": current,
                "nextStepIndex": target,
                "currentStepState": state,
                "canaryReplicas": canary,
            }
        )
    )
    d = decide(ro, obs(batch=BatchView(exists=True, updated_replicas=canary, updated_ready_replicas=canary)))
    cs = d.status["canaryStatus"]
    assert (cs["currentStepIndex"], cs["currentStepState"]) == (target, want_state)
    assert cs["nextStepIndex"] == (target + 1 if target < 4 else -1)
    assert not d.actions


def test_invalid_next_step_index_is_corrected() -> None:
    ro = rollout(
        progressing(
            {"currentStepIndex": 2, "nextStepIndex": 9, "currentStepState": CanaryStepState.STEP_PAUSED}
        )
    )
    assert decide(ro, obs()).status["canaryStatus"]["nextStepIndex"] == 3


# ----------------------------------------------------------------------------------- plan change
@pytest.mark.parametrize(
    ("current", "released", "want"),
    [
        pytest.param(3, "60%", 3, id="same pods: the current step"),
        pytest.param(3, "70%", 4, id="more than the current step: the next that covers it"),
        pytest.param(1, "20%", 1, id="first step"),
        pytest.param(2, None, 1, id="no BatchRelease: step 1"),
    ],
)
def test_recalculate_step(current: int, released: str | None, want: int) -> None:
    batch = BatchView(exists=released is not None, partition_replicas=released)
    assert recalculate_step(STEPS, current, batch, 10) == want


def test_plan_change_reruns_the_current_step_from_traffic_routing() -> None:
    """e2e "Change traffic of step 3": same pods, new traffic -> step 3 again, at TrafficRouting."""
    ro = rollout(
        progressing(
            {
                "currentStepIndex": 3,
                "nextStepIndex": 4,
                "currentStepState": CanaryStepState.STEP_PAUSED,
                "canaryReplicas": 6,
                "rolloutHash": "old",
            }
        )
    )
    ro["spec"]["strategy"]["canary"]["steps"][2] = {
        "replicas": 6,
        "traffic": "60%",
        "pause": {"duration": 10},
    }
    batch = BatchView(exists=True, partition_replicas="60%", updated_replicas=6, updated_ready_replicas=6)
    d = decide(ro, obs(batch=batch))
    cs = d.status["canaryStatus"]
    assert (cs["currentStepIndex"], cs["nextStepIndex"], cs["currentStepState"]) == (
        3,
        4,
        CanaryStepState.STEP_TRAFFIC_ROUTING,
    )
    assert cs["rolloutHash"] != "old"


def test_plan_change_landing_on_the_next_step_continues() -> None:
    ro = rollout(
        progressing(
            {
                "currentStepIndex": 2,
                "nextStepIndex": 3,
                "currentStepState": CanaryStepState.STEP_PAUSED,
                "rolloutHash": "old",
            }
        )
    )
    ro["spec"]["strategy"]["canary"]["steps"][1] = {"replicas": "30%", "pause": {}}  # fewer than released
    d = decide(ro, obs(batch=BatchView(exists=True, partition_replicas="40%")))
    cs = d.status["canaryStatus"]
    assert (cs["currentStepIndex"], cs["currentStepState"]) == (2, CanaryStepState.STEP_READY)


# ----------------------------------------------------------------------------------- continuous
def test_continuous_release_resets_in_upstream_order() -> None:
    """doProgressingReset: routes (grace) -> BatchRelease gone -> canary Service -> Initializing."""
    status = progressing({"currentStepIndex": 2, "currentStepState": CanaryStepState.STEP_PAUSED})
    ro = rollout(status)
    v3 = workload(canary_revision="v3", pod_template_hash="v3")
    batch = BatchView(exists=True)
    first, second = twice(ro, obs(wl=v3, batch=batch), [True])
    assert kinds(first) == [ActionKind.RESTORE_ROUTES]
    ro = {**ro, "status": second.status}
    first, second = twice(ro, obs(now=at(1), wl=v3, batch=batch))  # within the grace period
    assert second.status["canaryStatus"]["finalisingStep"] == FinalisingStepType.ROUTE_TRAFFIC_TO_STABLE
    first, second = twice(ro, obs(now=at(3), wl=v3, batch=batch))
    assert second.status["canaryStatus"]["finalisingStep"] == FinalisingStepType.RELEASE_WORKLOAD_CONTROL
    ro = {**ro, "status": second.status}
    first, second = twice(ro, obs(now=at(3), wl=v3, batch=batch), [True])
    assert kinds(first) == [ActionKind.DELETE_BATCH_RELEASE]
    assert (
        second.status["canaryStatus"]["finalisingStep"] == FinalisingStepType.RELEASE_WORKLOAD_CONTROL
    )  # until it is gone
    first, second = twice(ro, obs(now=at(4), wl=v3))
    ro = {**ro, "status": second.status}
    first, second = twice(ro, obs(now=at(4), wl=v3))
    assert kinds(first) == [ActionKind.DELETE_CANARY_SERVICE]
    assert "canaryStatus" not in second.status
    assert second.status["conditions"][0]["reason"] == ProgressingReason.INITIALIZING
    assert second.status["message"] == "Workload is continuous release"


# ----------------------------------------------------------------------------------- finalising
@pytest.mark.parametrize(
    ("reason", "policy"),
    [
        pytest.param(ProgressingReason.FINALISING, "WaitResume", id="success waits for every pod"),
        pytest.param(ProgressingReason.CANCELLING, "Immediate", id="rollback does not"),
    ],
)
def test_finalizing_policy(reason: str, policy: str) -> None:
    step = FinalisingStepType.RESUME_WORKLOAD
    ro = rollout(
        progressing({"currentStepState": CanaryStepState.COMPLETED, "finalisingStep": step}, reason=reason)
    )
    d = decide(ro, obs(batch=BatchView(exists=True)))
    finalize = next(a for a in d.actions if a.kind == ActionKind.FINALIZE_BATCH_RELEASE)
    assert finalize.payload["spec"]["releasePlan"]["finalizingPolicy"] == policy


def test_batch_release_carries_the_rollout_id() -> None:
    assert batch_release_spec(rollout(), workload(), 0)["releasePlan"]["rolloutID"] == "v2"


# ----------------------------------------------------------------------------------- BatchRelease
def test_batchrelease_stops_when_the_update_revision_changes_until_the_rollout_resets() -> None:
    """isWorkloadRevisionChanged: v3 arrived under a v2 BatchRelease; the partition is not moved,
    in that round nor in the next ones (upstream's next round would release the v2 batch's share
    as v3 if the Rollout's reset had not deleted it yet), until the release is v2's again."""
    br = {
        "metadata": {"name": "web", "namespace": "shop", "uid": "b", "generation": 2},
        "spec": {"releasePlan": {"batches": [{"canaryReplicas": "50%"}], "batchPartition": 0}},
        "status": {"phase": "Progressing", "updateRevision": "v2", "canaryStatus": {"currentBatch": 0}},
    }
    cloneset = {
        "metadata": {"name": "web", "generation": 5, "annotations": {}},
        "spec": {"replicas": 10, "updateStrategy": {"partition": "100%"}},
        "status": {"observedGeneration": 5, "currentRevision": "web-v1", "updateRevision": "web-v3"},
    }
    for _ in range(3):
        d = decide_cloneset(br, cloneset)
        assert (d.workload_patch, d.status["updateRevision"]) == (None, "v2")
        br["status"] = d.status
    cloneset["status"]["updateRevision"] = "web-v2"  # back to the release's own revision
    patch = decide_cloneset(br, cloneset).workload_patch or {}
    # the first write takes control (Initialize): the pause is written false with it
    assert patch["spec"] == {"updateStrategy": {"partition": "50%", "paused": False}}


def test_batchrelease_records_the_update_revision_only_from_a_status_that_caught_up() -> None:
    """A first round on a status behind its spec (isWorkloadUnstable) records no revision: the stale
    one (v1, before the template change to v2) would read as a continuous release next round and,
    since such a release waits for the Rollout's reset, stop it for good."""
    br = {
        "metadata": {"name": "web", "namespace": "shop", "uid": "b", "generation": 1},
        "spec": {"releasePlan": {"batches": [{"canaryReplicas": "50%"}], "batchPartition": 0}},
        "status": {"phase": "Progressing", "canaryStatus": {"currentBatch": 0}},
    }
    cloneset = {
        "metadata": {"name": "web", "generation": 6, "annotations": {}},
        "spec": {"replicas": 10, "updateStrategy": {"partition": "100%"}},
        "status": {"observedGeneration": 5, "currentRevision": "web-v1", "updateRevision": "web-v1"},
    }
    d = decide_cloneset(br, cloneset)
    assert (d.workload_patch, d.status["updateRevision"]) == (None, "")
    br["status"] = d.status
    cloneset["status"].update(observedGeneration=6, updateRevision="web-v2")
    d = decide_cloneset(br, cloneset)
    assert d.status["updateRevision"] == "v2"
    # the first write takes control (Initialize): the pause is written false with it
    assert (d.workload_patch or {})["spec"] == {"updateStrategy": {"partition": "50%", "paused": False}}
