"""Finalisation (pure): undo the release machinery in upstream's order (``nextCanaryTask``).

- success, disable, delete: RestoreStableService -> RouteTrafficToStable ->
  RemoveCanaryService -> ResumeWorkload -> ReleaseWorkloadControl;
- rollback: RouteTrafficToStable **first** (so no A/B traffic reaches the bad
  version, KR#229) -> ResumeWorkload -> ReleaseWorkloadControl ->
  RestoreStableService -> RemoveCanaryService;
- blue-green (``nextBlueGreenTask``) success: RouteTrafficToNew (traffic 100% to the new
  version) -> RestoreStableService -> ResumeWorkload -> RouteTrafficToStable ->
  RemoveCanaryService -> ReleaseWorkloadControl; rollback: RouteTrafficToStable ->
  ResumeWorkload -> RestoreStableService -> RemoveCanaryService -> ReleaseWorkloadControl;
  disable/delete as canary success.

Every round first drops the workload's ``rollouts.kruise.io/in-progressing`` annotation, as
upstream's ``removeRolloutProgressingAnnotation`` does.

Progress is ``status.canaryStatus.finalisingStep``; a step advances when its actions
changed nothing (and, for Service/route steps, the grace period passed).
``ResumeWorkload`` waits until the BatchRelease reports ``Completed`` (or is gone);
``ReleaseWorkloadControl`` until it is deleted.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kruise.rollouts.api.common import (
    CanaryStepState,
    FinaliseReason,
    FinalisingStepType,
    ProgressingReason,
    RolloutConditionType,
    RolloutPhase,
    TerminatingReason,
)
from kruise.rollouts.release.timefmt import fmt_time, seconds_since
from kruise.rollouts.rollout.analysis_gate import has_analysis
from kruise.rollouts.rollout.conditions import mirror, set_condition
from kruise.rollouts.rollout.model import (
    Action,
    ActionKind,
    Decision,
    Event,
    Observed,
    Round,
    delete_batch_release,
)
from kruise.rollouts.rollout.requests import batch_release_spec, grace_seconds, traffic_intent
from kruise.rollouts.rollout.steps import is_blue_green, strategy_of

COMPLETED_MESSAGE = "Rollout progressing has been completed"
CANCELED_MESSAGE = "Rollout progressing has been canceled"
TERMINATED_MESSAGE = "Rollout is terminated"

SUCCESS_ORDER = (
    FinalisingStepType.RESTORE_STABLE_SERVICE,
    FinalisingStepType.ROUTE_TRAFFIC_TO_STABLE,
    FinalisingStepType.REMOVE_CANARY_SERVICE,
    FinalisingStepType.RESUME_WORKLOAD,
    FinalisingStepType.RELEASE_WORKLOAD_CONTROL,
)
ROLLBACK_ORDER = (
    FinalisingStepType.ROUTE_TRAFFIC_TO_STABLE,
    FinalisingStepType.RESUME_WORKLOAD,
    FinalisingStepType.RELEASE_WORKLOAD_CONTROL,
    FinalisingStepType.RESTORE_STABLE_SERVICE,
    FinalisingStepType.REMOVE_CANARY_SERVICE,
)
# kruise: a failed analysis aborts like a rollback, with the workload reverted to stable first
ABORT_ORDER = (
    FinalisingStepType.ROUTE_TRAFFIC_TO_STABLE,
    FinalisingStepType.REVERT_WORKLOAD,
    FinalisingStepType.RESUME_WORKLOAD,
    FinalisingStepType.RELEASE_WORKLOAD_CONTROL,
    FinalisingStepType.RESTORE_STABLE_SERVICE,
    FinalisingStepType.REMOVE_CANARY_SERVICE,
)
# blue-green (``nextBlueGreenTask``); disable and delete use SUCCESS_ORDER
BLUE_GREEN_SUCCESS_ORDER = (
    FinalisingStepType.ROUTE_TRAFFIC_TO_NEW,
    FinalisingStepType.RESTORE_STABLE_SERVICE,
    FinalisingStepType.RESUME_WORKLOAD,
    FinalisingStepType.ROUTE_TRAFFIC_TO_STABLE,
    FinalisingStepType.REMOVE_CANARY_SERVICE,
    FinalisingStepType.RELEASE_WORKLOAD_CONTROL,
)
BLUE_GREEN_ROLLBACK_ORDER = (
    FinalisingStepType.ROUTE_TRAFFIC_TO_STABLE,
    FinalisingStepType.RESUME_WORKLOAD,
    FinalisingStepType.RESTORE_STABLE_SERVICE,
    FinalisingStepType.REMOVE_CANARY_SERVICE,
    FinalisingStepType.RELEASE_WORKLOAD_CONTROL,
)
_TRAFFIC_STEPS = {
    FinalisingStepType.RESTORE_STABLE_SERVICE,
    FinalisingStepType.ROUTE_TRAFFIC_TO_STABLE,
    FinalisingStepType.REMOVE_CANARY_SERVICE,
    FinalisingStepType.ROUTE_TRAFFIC_TO_NEW,
}


def finalising_order(
    rollout: Mapping[str, Any], reason: FinaliseReason, *, rollback: bool
) -> tuple[FinalisingStepType, ...]:
    """The finalising steps for ``reason`` (Success, Rollback, RolloutDisabled, RolloutDeleting)."""
    if is_blue_green(rollout):
        if reason == FinaliseReason.SUCCESS:
            return BLUE_GREEN_SUCCESS_ORDER
        if rollback or reason == FinaliseReason.ROLLBACK:
            return BLUE_GREEN_ROLLBACK_ORDER
        return SUCCESS_ORDER
    if reason == FinaliseReason.ABORT:
        return ABORT_ORDER
    return ROLLBACK_ORDER if rollback else SUCCESS_ORDER


def _actions(rnd: Round, step: str, *, wait_ready: bool = True) -> list[Action]:
    rollout, obs = rnd.rollout, rnd.obs
    routings = bool(strategy_of(rollout).get("trafficRoutings"))
    intent = traffic_intent(rollout, rnd.status, obs, None, [])
    if step == FinalisingStepType.RESTORE_STABLE_SERVICE:
        return [Action(ActionKind.RESTORE_STABLE_SERVICE, {"intent": intent})] if routings else []
    if step == FinalisingStepType.ROUTE_TRAFFIC_TO_STABLE:
        return [Action(ActionKind.RESTORE_ROUTES, {"intent": intent})] if routings else []
    if step == FinalisingStepType.REMOVE_CANARY_SERVICE:
        return [Action(ActionKind.DELETE_CANARY_SERVICE, {"intent": intent})] if routings else []
    if step == FinalisingStepType.ROUTE_TRAFFIC_TO_NEW:  # RouteAllTrafficToNewVersion: 100%, no matches
        return [Action(ActionKind.ENSURE_ROUTES, {"intent": {**intent, "weight": 100}})] if routings else []
    if step == FinalisingStepType.RESUME_WORKLOAD:
        workload = obs.workload
        if workload is None:
            # the workload is gone (deleted with its namespace, say): nothing to resume; its
            # BatchRelease is deleted by RELEASE_WORKLOAD_CONTROL
            return []
        spec = batch_release_spec(rollout, workload, None, finalizing=True, wait_ready=wait_ready)
        return [Action(ActionKind.FINALIZE_BATCH_RELEASE, {"spec": spec, "exists": obs.batch.exists})]
    if step == FinalisingStepType.RELEASE_WORKLOAD_CONTROL:
        release = [*delete_batch_release(obs.batch), Action(ActionKind.RELEASE_WORKLOAD)]
        if has_analysis(rollout):
            release.insert(0, Action(ActionKind.TERMINATE_ANALYSIS_RUNS))
        return release
    if step == FinalisingStepType.REVERT_WORKLOAD:
        stable = rnd.cs.get("stableRevision", "")
        return [Action(ActionKind.REVERT_WORKLOAD, {"stableRevision": stable})]
    return []


def _extra_done(step: str, obs: Observed) -> bool:
    if step == FinalisingStepType.RESUME_WORKLOAD:
        return not obs.batch.exists or obs.batch.phase == RolloutPhase.COMPLETED
    if step == FinalisingStepType.RELEASE_WORKLOAD_CONTROL:
        return not obs.batch.exists
    return True


def finalise(rnd: Round, reason: FinaliseReason) -> Decision:
    """Run the current finalising step; ``finalisingStep`` becomes ``END`` at the end."""
    cs, obs = rnd.cs, rnd.obs
    cs.setdefault("canaryRevision", "")  # the fields the CRD requires, as upstream's zero values
    cs.setdefault("podTemplateHash", "")
    cs.setdefault("currentStepState", "")
    cs.setdefault("nextStepIndex", -1)
    cs.setdefault("canaryReplicas", 0)
    cs.setdefault("canaryReadyReplicas", 0)
    rollback = reason in (FinaliseReason.ROLLBACK, FinaliseReason.ABORT)
    order = finalising_order(rnd.rollout, reason, rollback=rollback)
    cursor = cs.get("finalisingStep") or order[0]
    if cursor == FinalisingStepType.END:
        return Decision(rnd.status)
    step = FinalisingStepType(cursor) if cursor in order else order[0]
    cs["finalisingStep"] = step
    # only a successful release waits for every pod (upstream's WaitReady -> WaitResume)
    actions = _actions(rnd, step, wait_ready=reason == FinaliseReason.SUCCESS)
    if (
        obs.workload is not None
        and obs.workload.in_progressing
        and step != FinalisingStepType.RELEASE_WORKLOAD_CONTROL
    ):
        # removeRolloutProgressingAnnotation runs first in every finalising round upstream: a
        # hold webhook would otherwise hold the workload again when it is resumed
        actions.insert(0, Action(ActionKind.RELEASE_WORKLOAD))
    if rnd.outcomes is None:
        return Decision(rnd.status, tuple(actions), requeue_after=1.0)
    grace = grace_seconds(rnd.rollout) if step in _TRAFFIC_STEPS and actions else 0
    if rnd.outcomes.any_changed(actions):
        cs["lastUpdateTime"] = fmt_time(rnd.now)
        return Decision(rnd.status, requeue_after=float(grace) if grace else 1.0)
    waited = seconds_since(cs.get("lastUpdateTime"), rnd.now)
    if waited < grace:
        return Decision(rnd.status, requeue_after=grace - waited)
    if not _extra_done(step, obs):
        return Decision(rnd.status, requeue_after=1.0)
    position = order.index(step)
    cs["finalisingStep"] = order[position + 1] if position + 1 < len(order) else FinalisingStepType.END
    cs["lastUpdateTime"] = fmt_time(rnd.now)
    cs["message"] = f"Rollout is in finalising: {step} done"
    return Decision(rnd.status, requeue_after=0.0)


def conclude(
    rnd: Round, reason: FinaliseReason, *, terminating: bool = False, disabling: bool = False
) -> Decision:
    """Finalise, and once the last finalising step is done close the release: a deleted Rollout
    loses its finalizer, a disabled one reads Disabled (its sub-status kept, as upstream's); any
    other ends Healthy with Progressing False/``Completed`` either way, its message telling a
    success from a cancellation (``reconcileRolloutProgressing``), and ``Succeeded`` created anew
    with only its status."""
    decision = finalise(rnd, reason)
    status, now = decision.status, rnd.now
    if status.get("canaryStatus", {}).get("finalisingStep") != FinalisingStepType.END:
        mirror(status)
        return decision
    if terminating:
        set_condition(
            status,
            RolloutConditionType.TERMINATING,
            "False",
            TerminatingReason.COMPLETED,
            TERMINATED_MESSAGE,
            now,
        )
        return Decision(status, remove_finalizer=True)
    if disabling:
        status["phase"] = RolloutPhase.DISABLED
        status["message"] = "Rollout is disabled"
        return Decision(status)
    succeeded = reason == FinaliseReason.SUCCESS
    message = COMPLETED_MESSAGE if succeeded else CANCELED_MESSAGE
    set_condition(
        status, RolloutConditionType.PROGRESSING, "False", ProgressingReason.COMPLETED, message, now
    )
    set_condition(status, RolloutConditionType.SUCCEEDED, "True" if succeeded else "False", "", "", now)
    status["phase"] = RolloutPhase.HEALTHY
    status["message"] = message
    cs = status.setdefault("canaryStatus", {})
    cs["message"] = message
    if succeeded:
        cs["currentStepState"] = CanaryStepState.COMPLETED
    elif rnd.obs.workload is not None:  # a cancelled release never reached its last step
        cs["canaryRevision"] = rnd.obs.workload.canary_revision  # (its step state stays as it was)
    mirror(status)
    event = Event("Normal", "Succeeded" if succeeded else "Cancelled", message)
    return Decision(status, events=(event,))
