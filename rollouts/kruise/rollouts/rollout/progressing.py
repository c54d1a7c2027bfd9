"""A release in progress (pure): the Progressing reasons of ``reconcileRolloutProgressing``, one
function each, and the special cases of ``doProgressingInRolling`` in upstream's order.

:data:`REASONS` maps the ``Progressing`` condition's reason to its handler:

- ``Initializing``: a fresh sub-status at step 1; after a grace period (a Rollout spec updated a
  moment after the workload) -> ``InRolling``;
- ``InRolling``: the first of :data:`IN_ROLLING` that decides ends the round: rolled back at
  once (-> ``Cancelling``), paused (-> ``Paused``), rolled back in batches (step 1 again), a
  continuous release (reset, then ``Initializing``; blue-green refuses it), a plan change (the
  step recalculated), the last step completed (-> ``Finalising``); otherwise the normal round:
  counts synced from the BatchRelease, ``nextStepIndex`` jumps, a failed analysis aborts (->
  ``Cancelling``), else the current step runs (:mod:`~kruise.rollouts.rollout.canary`), with the
  background actions (rollout-id sync, background analysis) in front;
- ``Paused``: back to ``InRolling`` once ``spec.strategy.paused`` is lifted;
- ``Finalising`` / ``Cancelling``: finalise (success; rollback or, after a failed analysis, abort).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace

from kruise.rollouts.api.common import (
    CanaryStepState,
    FinaliseReason,
    FinalisingStepType,
    ProgressingReason,
    RolloutConditionType,
)
from kruise.rollouts.release import constants as c
from kruise.rollouts.release.hashing import rollout_hash
from kruise.rollouts.release.timefmt import fmt_time, seconds_since
from kruise.rollouts.rollout import deadline
from kruise.rollouts.rollout.analysis_gate import ABORTED_CONDITION, background_actions, failed_analysis
from kruise.rollouts.rollout.canary import canary_step
from kruise.rollouts.rollout.conditions import condition, mirror, set_condition
from kruise.rollouts.rollout.finalise import conclude
from kruise.rollouts.rollout.model import Action, ActionKind, Decision, Event, Round, delete_batch_release
from kruise.rollouts.rollout.requests import grace_seconds, traffic_intent
from kruise.rollouts.rollout.rolloutid import restart_in_batches, rollback_in_batch, sync_rollout_id
from kruise.rollouts.rollout.stepjump import correct_next_step_index, jump, plan_changed
from kruise.rollouts.rollout.steps import is_blue_green, steps_of, strategy_of

PAUSED_MESSAGE = "Rollout has been paused, you can resume it by kube-cli"
# upstream's spelling since openkruise/rollouts 885497f (released v0.6.x still spells "cancelled")
ROLLBACK_MESSAGE = "The workload has been rolled back and the rollout process will be canceled"
ROLLBACK_EVENT = "workload has been rollback, then rollout is canceled"
FINALISING_MESSAGE = "Rollout has been completed and some closing work is being done"
CONTINUOUS_MESSAGE = "Workload is continuous release"
IN_PROGRESS_MESSAGE = "Rollout is in Progressing"


def _progress(rnd: Round, reason: str, message: str, *, into_status: bool = True) -> None:
    set_condition(rnd.status, RolloutConditionType.PROGRESSING, "True", reason, message, rnd.now)
    if into_status:
        rnd.status["message"] = message


def initializing(rnd: Round) -> Decision:
    workload = rnd.obs.workload
    assert workload is not None
    steps = steps_of(rnd.rollout)
    rnd.status["canaryStatus"] = {
        "observedWorkloadGeneration": workload.generation,
        "rolloutHash": rollout_hash(rnd.rollout),
        "observedRolloutID": workload.observed_rollout_id,
        "stableRevision": workload.stable_revision,
        "canaryRevision": workload.canary_revision,
        "podTemplateHash": "",
        "currentStepIndex": 1,
        "nextStepIndex": 2 if len(steps) > 1 else -1,
        "currentStepState": CanaryStepState.BEFORE_STEP_UPGRADE,
        "finalisingStep": "",
        "canaryReplicas": 0,
        "canaryReadyReplicas": 0,
        "message": f"Rollout is in step(1/{len(steps)}), and upgrade workload to new version",
        "lastUpdateTime": fmt_time(rnd.now),
    }
    mirror(rnd.status)
    # doProgressingInitializing: wait a grace period after entering Initializing, in case the
    # Rollout spec is updated a moment after the workload (the webhook forbids it later)
    entered = condition(rnd.status, RolloutConditionType.PROGRESSING).get("lastUpdateTime")
    waited = seconds_since(entered, rnd.now)
    if waited < c.DEFAULT_GRACE_SECONDS:
        return Decision(rnd.status, requeue_after=c.DEFAULT_GRACE_SECONDS - waited)
    _progress(rnd, ProgressingReason.IN_ROLLING, IN_PROGRESS_MESSAGE, into_status=False)
    return Decision(rnd.status, requeue_after=0.0)


def paused(rnd: Round) -> Decision:
    """From paused back to rolling; nothing else until then."""
    if not (rnd.rollout.get("spec") or {}).get("strategy", {}).get("paused"):
        _progress(rnd, ProgressingReason.IN_ROLLING, PAUSED_MESSAGE, into_status=False)
        return Decision(rnd.status, requeue_after=0.0)
    return Decision(rnd.status)


def finalising(rnd: Round) -> Decision:
    return conclude(rnd, FinaliseReason.SUCCESS)


def cancelling(rnd: Round) -> Decision:
    aborted = condition(rnd.status, ABORTED_CONDITION).get("status") == "True"
    return conclude(rnd, FinaliseReason.ABORT if aborted else FinaliseReason.ROLLBACK)


# ------------------------------------------------------------------------------------ in rolling
def _rolled_back(rnd: Round) -> bool:
    workload = rnd.obs.workload
    assert workload is not None
    return workload.in_rollback and rnd.cs.get("canaryRevision") != workload.canary_revision


def rolled_back_at_once(rnd: Round) -> Decision | None:
    """The workload went back to its stable revision: cancel (unless rolling back in batches)."""
    workload = rnd.obs.workload
    assert workload is not None
    if not _rolled_back(rnd) or rollback_in_batch(rnd.rollout, workload):
        return None
    rnd.cs["canaryRevision"] = workload.canary_revision
    _progress(rnd, ProgressingReason.CANCELLING, ROLLBACK_MESSAGE)
    rnd.cs["finalisingStep"] = ""
    return Decision(rnd.status, requeue_after=0.0, events=(Event("Normal", "Progressing", ROLLBACK_EVENT),))


def paused_now(rnd: Round) -> Decision | None:
    if not (rnd.rollout.get("spec") or {}).get("strategy", {}).get("paused"):
        return None
    _progress(rnd, ProgressingReason.PAUSED, PAUSED_MESSAGE)
    return Decision(rnd.status)


def rolled_back_in_batches(rnd: Round) -> Decision | None:
    """``rollouts.kruise.io/rollback-in-batch``: step 1 again, the stable revision as canary."""
    if not _rolled_back(rnd):
        return None
    assert rnd.obs.workload is not None
    event = restart_in_batches(rnd.rollout, rnd.status, rnd.obs.workload, rnd.now)
    mirror(rnd.status)
    return Decision(rnd.status, requeue_after=0.0, events=(event,))


def continuous_release(rnd: Round) -> Decision | None:
    """A new canary revision mid-release (``handleContinuousRelease``): reset and start over; a
    blue-green release refuses it (only a rollback is accepted)."""
    workload, cs = rnd.obs.workload, rnd.cs
    assert workload is not None
    if not workload.canary_revision or cs.get("canaryRevision") in ("", None, workload.canary_revision):
        return None
    if is_blue_green(rnd.rollout):
        reason = ProgressingReason.IN_ROLLING
        _progress(rnd, reason, c.BLUE_GREEN_CONTINUOUS_RELEASE_MESSAGE)
        return Decision(rnd.status, requeue_after=c.RECHECK_SECONDS)
    return reset(rnd)


def plan_edited(rnd: Round) -> Decision | None:
    if not rnd.cs.get("rolloutHash") or rnd.cs.get("rolloutHash") == rollout_hash(rnd.rollout):
        return None
    plan_changed(rnd)
    mirror(rnd.status)
    return Decision(rnd.status, requeue_after=0.0)


def last_step_completed(rnd: Round) -> Decision | None:
    if rnd.cs.get("currentStepState") != CanaryStepState.COMPLETED:
        return None
    _progress(rnd, ProgressingReason.FINALISING, FINALISING_MESSAGE)
    rnd.cs["finalisingStep"] = ""
    return Decision(rnd.status, requeue_after=0.0)


def normal_rolling(rnd: Round) -> Decision:
    """``handleNormalRolling``: the BatchRelease's counts, whatever the state (``syncBatchRelease``),
    a ``nextStepIndex`` jump, a failed analysis, else the current step."""
    workload, cs, batch = rnd.obs.workload, rnd.cs, rnd.obs.batch
    assert workload is not None
    steps = steps_of(rnd.rollout)
    correct_next_step_index(cs, len(steps))
    if batch.exists:
        cs["canaryReplicas"] = batch.updated_replicas
        cs["canaryReadyReplicas"] = batch.updated_ready_replicas
    if not cs.get("podTemplateHash"):
        cs["podTemplateHash"] = workload.pod_template_hash
    if jump(cs, steps, workload.replicas, rnd.now):
        mirror(rnd.status)
        return Decision(rnd.status, requeue_after=0.0)
    failed = failed_analysis(rnd.rollout, rnd.status, rnd.obs)
    if failed is not None:
        message = f"Rollout is aborted: analysis {failed} failed; traffic and pods go back to stable"
        _progress(rnd, ProgressingReason.CANCELLING, message)
        set_condition(rnd.status, ABORTED_CONDITION, "True", "AnalysisFailed", message, rnd.now)
        cs["message"] = message
        cs["finalisingStep"] = ""
        return Decision(rnd.status, requeue_after=0.0, events=(Event("Warning", "AnalysisFailed", message),))
    background = (*sync_rollout_id(batch, workload), *background_actions(rnd.rollout, rnd.status))
    decision = canary_step(rnd)
    if background:
        decision = replace(decision, actions=(*background, *decision.actions))
    mirror(decision.status)
    return decision


IN_ROLLING: Sequence[Callable[[Round], Decision | None]] = (
    rolled_back_at_once,
    paused_now,
    rolled_back_in_batches,
    continuous_release,
    plan_edited,
    last_step_completed,
)
"""``doProgressingInRolling``'s special cases in upstream's order; the first that decides wins."""


def in_rolling(rnd: Round) -> Decision:
    for case in IN_ROLLING:
        decision = case(rnd)
        if decision is not None:
            return decision
    return normal_rolling(rnd)


REASONS: Mapping[str, Callable[[Round], Decision]] = {
    ProgressingReason.INITIALIZING: initializing,
    ProgressingReason.IN_ROLLING: in_rolling,
    ProgressingReason.PAUSED: paused,
    ProgressingReason.FINALISING: finalising,
    ProgressingReason.CANCELLING: cancelling,
}
"""Progressing reason -> its handler (any other reason decides nothing)."""


def progressing(rnd: Round) -> Decision:
    reason = condition(rnd.status, RolloutConditionType.PROGRESSING).get("reason", "")
    if reason != ProgressingReason.INITIALIZING:
        rnd.status.setdefault("canaryStatus", {})  # (Initializing writes a fresh one)
    decision = deadline.intercept(rnd, reason)  # an abort, a held abort, a retry (rollout/deadline.py)
    if decision is None:
        handler = REASONS.get(reason)
        decision = handler(rnd) if handler is not None else Decision(rnd.status)
    return deadline.watch(rnd.rollout, decision, rnd.now)


# ------------------------------------------------------------------------------------ reset
RESET_WITH_ROUTING = (
    FinalisingStepType.ROUTE_TRAFFIC_TO_STABLE,
    FinalisingStepType.RELEASE_WORKLOAD_CONTROL,
    FinalisingStepType.REMOVE_CANARY_SERVICE,
)


def reset(rnd: Round) -> Decision:
    """v1 -> v2 -> v3 (``doProgressingReset``): restore the routes (then wait the grace period),
    delete the BatchRelease (and wait until it is gone), remove the canary Service; then clear
    the sub-status and start over from Initializing. Progress is kept in ``finalisingStep``.

    The stable Service selector is deliberately kept pinned (upstream keeps it): restoring it
    here would send traffic to v1 and v2 pods alike before v3's first step routes it again.
    """
    cs, obs, now = rnd.cs, rnd.obs, rnd.now
    intent = {"intent": traffic_intent(rnd.rollout, rnd.status, obs, None, [])}
    routed = bool(strategy_of(rnd.rollout).get("trafficRoutings"))
    order = RESET_WITH_ROUTING if routed else (FinalisingStepType.RELEASE_WORKLOAD_CONTROL,)
    cursor = cs.get("finalisingStep", "")
    step = FinalisingStepType(cursor) if cursor in order else order[0]
    if step == FinalisingStepType.REMOVE_CANARY_SERVICE and obs.batch.exists:
        step = FinalisingStepType.RELEASE_WORKLOAD_CONTROL  # a teardown left this cursor: BatchRelease first
    cs["finalisingStep"] = step
    actions = {
        FinalisingStepType.ROUTE_TRAFFIC_TO_STABLE: (Action(ActionKind.RESTORE_ROUTES, intent),),
        FinalisingStepType.RELEASE_WORKLOAD_CONTROL: delete_batch_release(obs.batch),
        FinalisingStepType.REMOVE_CANARY_SERVICE: (Action(ActionKind.DELETE_CANARY_SERVICE, intent),),
    }[step]
    if rnd.outcomes is None:
        return Decision(rnd.status, actions, requeue_after=1.0)
    changed = rnd.outcomes.any_changed(actions)
    if step == FinalisingStepType.ROUTE_TRAFFIC_TO_STABLE:
        grace = grace_seconds(rnd.rollout)
        if changed:
            cs["lastUpdateTime"] = fmt_time(now)
            return Decision(rnd.status, requeue_after=float(grace) or 0.5)
        waited = seconds_since(cs.get("lastUpdateTime"), now)
        if waited < grace:
            return Decision(rnd.status, requeue_after=grace - waited)
    elif step == FinalisingStepType.RELEASE_WORKLOAD_CONTROL and (changed or obs.batch.exists):
        return Decision(rnd.status, requeue_after=1.0)
    position = order.index(step)
    if position + 1 < len(order):  # the last step (canary Service) ignores the grace period
        cs["finalisingStep"] = order[position + 1]
        cs["lastUpdateTime"] = fmt_time(now)
        return Decision(rnd.status, requeue_after=0.0)
    rnd.status.pop("canaryStatus", None)
    _progress(rnd, ProgressingReason.INITIALIZING, CONTINUOUS_MESSAGE)
    event = Event(
        "Normal", "Progressing", "workload continuous publishing canaryRevision, then restart publishing"
    )
    return Decision(rnd.status, requeue_after=0.0, events=(event,))
