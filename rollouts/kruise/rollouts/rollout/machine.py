"""The Rollout state machine (pure): ``decide(rollout, observed, outcomes) -> Decision``.

Mirrors Kruise Rollouts v1beta1 (``pkg/controller/rollout``). Each state is a small function
looked up in a table:

- :data:`PHASES` (``calculateRolloutStatus``): Initial -> Healthy -> Progressing -> Healthy,
  Disabling/Disabled; Terminating (the Rollout deleted) and a missing or not yet consistent
  workload come first;
- :data:`~kruise.rollouts.rollout.progressing.REASONS`: the Progressing reasons
  (Initializing -> InRolling -> Finalising -> Completed; Cancelling on rollback; Paused), and
  :data:`~kruise.rollouts.rollout.progressing.IN_ROLLING` upstream's special cases in order;
- :data:`~kruise.rollouts.rollout.canary.STEP_STATES`: the per-step states of ``runCanary``
  (BeforeStepUpgrade -> StepUpgrade -> StepTrafficRouting -> StepMetricsAnalysis -> StepPaused
  -> StepReady -> next step / Completed);
- finalisation in upstream's orders (:mod:`~kruise.rollouts.rollout.finalise`).

The machine speaks of workloads only through :class:`~kruise.rollouts.workloads.info.WorkloadInfo`
(the workload port's view), never of their kinds.

The controller calls ``decide`` twice per reconcile: once with ``outcomes=None`` to learn the
actions of the current state, and once with what each action reported
(:class:`~kruise.rollouts.rollout.model.Outcomes`, matched by action). A state advances only
when its actions changed nothing and, for traffic steps, ``gracePeriodSeconds`` passed since the
last change. Everything the machine remembers is in ``status``, so a restarted manager decides
the same from the objects alone.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, cast

from kruise.core.jsoncopy import json_copy
from kruise.rollouts.api.common import (
    CanaryStepState,
    FinaliseReason,
    ProgressingReason,
    RolloutConditionType,
    RolloutPhase,
    TerminatingReason,
)
from kruise.rollouts.release.hashing import rollout_hash
from kruise.rollouts.release.timefmt import fmt_time, parse_time
from kruise.rollouts.release.views import RolloutStatusView
from kruise.rollouts.rollout.analysis_gate import ABORTED_CONDITION
from kruise.rollouts.rollout.conditions import drop_condition, mirror, set_condition
from kruise.rollouts.rollout.deadline import DEADLINE_CONDITION
from kruise.rollouts.rollout.finalise import conclude
from kruise.rollouts.rollout.model import Decision, Event, Observed, Outcomes, Round
from kruise.rollouts.rollout.progressing import IN_PROGRESS_MESSAGE, progressing
from kruise.rollouts.rollout.steps import steps_of

HEALTHY_MESSAGE = "rollout is healthy"
WORKLOAD_NOT_FOUND_MESSAGE = "Workload Not Found"  # upstream's status.message, the status reset


def decide(rollout: Mapping[str, Any], obs: Observed, outcomes: Outcomes | None = None) -> Decision:
    """Decide for ``rollout`` given ``obs`` (and, on the second call, the actions' outcomes)."""
    status = cast(RolloutStatusView, json_copy(dict(rollout.get("status") or {})))
    status["observedGeneration"] = int((rollout.get("metadata") or {}).get("generation") or 0)
    status.setdefault("currentStepIndex", 0)  # required by the CRD schema, as upstream
    status.setdefault("currentStepState", "")
    rnd = Round(rollout, status, obs, outcomes)
    if obs.deleting:
        return terminating(rnd)
    disabled = bool((rollout.get("spec") or {}).get("disabled"))
    phase = status.get("phase") or ""
    if disabled and phase not in (RolloutPhase.DISABLED, RolloutPhase.DISABLING):
        if phase == RolloutPhase.PROGRESSING:  # a working rollout is disabled: finalise it first
            status["phase"] = RolloutPhase.DISABLING
            status["message"] = "Disabling rollout, release resources"
            return Decision(status, requeue_after=0.0)
        phase = status["phase"] = RolloutPhase.DISABLED
        status["message"] = "Rollout is disabled"
    if not phase:
        phase = status["phase"] = RolloutPhase.INITIAL
    workload = obs.workload
    if workload is None:
        if not disabled:  # upstream resets the whole status
            status = RolloutStatusView(
                observedGeneration=status["observedGeneration"],
                phase=RolloutPhase.INITIAL,
                message=WORKLOAD_NOT_FOUND_MESSAGE,
                currentStepIndex=0,
                currentStepState="",
            )
        return Decision(status, requeue_after=None)
    if not workload.status_consistent:
        # the status as it was, nothing decided: but the shell still adds the kstatus conditions,
        # so a first status must carry what the CRD schema requires
        waiting = cast(RolloutStatusView, dict(rollout.get("status") or {}))
        waiting.setdefault("currentStepIndex", 0)
        waiting.setdefault("currentStepState", "")
        return Decision(waiting, requeue_after=1.0)
    cs = status.get("canaryStatus")
    if cs and cs.get("canaryRevision") and cs.get("canaryRevision") == workload.canary_revision:
        # the sub-status follows the workload it describes (upstream refreshes both on every pass)
        cs["observedRolloutID"] = workload.observed_rollout_id
        cs["observedWorkloadGeneration"] = workload.generation
    handler = PHASES.get(phase)
    return handler(rnd) if handler is not None else Decision(status)


def terminating(rnd: Round) -> Decision:
    """The Rollout is being deleted: Terminating, then finalise and drop the finalizer."""
    if rnd.status.get("phase") != RolloutPhase.TERMINATING:
        rnd.status["phase"] = RolloutPhase.TERMINATING
        set_condition(
            rnd.status,
            RolloutConditionType.TERMINATING,
            "True",
            TerminatingReason.IN_TERMINATING,
            "Rollout is in terminating",
            rnd.now,
        )
        return Decision(rnd.status, requeue_after=0.0)
    return conclude(rnd, FinaliseReason.DELETING, terminating=True)


def initial(rnd: Round) -> Decision:
    rnd.status["phase"] = RolloutPhase.HEALTHY
    rnd.status["message"] = HEALTHY_MESSAGE
    return Decision(rnd.status, requeue_after=0.0)


def healthy(rnd: Round) -> Decision:
    """A release starts when the hold webhook marked the workload in progress; a Rollout created
    against a settled workload reports Completed at the last step."""
    workload, status = rnd.obs.workload, rnd.status
    assert workload is not None
    if workload.in_progressing:
        status["phase"] = RolloutPhase.PROGRESSING
        set_condition(
            status,
            RolloutConditionType.PROGRESSING,
            "True",
            ProgressingReason.INITIALIZING,
            IN_PROGRESS_MESSAGE,
            rnd.now,
        )
        status["message"] = IN_PROGRESS_MESSAGE
        drop_condition(status, RolloutConditionType.SUCCEEDED)
        drop_condition(status, ABORTED_CONDITION)  # the previous release's abort, if any
        drop_condition(status, DEADLINE_CONDITION)
        return Decision(
            status, requeue_after=0.0, events=(Event("Normal", "Progressing", "upgrade workload"),)
        )
    if not status.get("canaryStatus"):
        steps = steps_of(rnd.rollout)
        status["canaryStatus"] = {
            "observedWorkloadGeneration": workload.generation,
            "rolloutHash": rollout_hash(rnd.rollout),
            "observedRolloutID": workload.observed_rollout_id,
            "stableRevision": workload.stable_revision,
            "canaryRevision": workload.canary_revision,
            "podTemplateHash": workload.pod_template_hash,
            "currentStepIndex": len(steps),
            "nextStepIndex": -1,
            "currentStepState": CanaryStepState.COMPLETED,
            "finalisingStep": "",
            "canaryReplicas": 0,
            "canaryReadyReplicas": 0,
            "lastUpdateTime": fmt_time(rnd.now),
        }
        mirror(status)
        status["message"] = "workload deployment is completed"
    return Decision(status)


def disabled(rnd: Round) -> Decision:
    if not (rnd.rollout.get("spec") or {}).get("disabled"):
        rnd.status["phase"] = RolloutPhase.HEALTHY
        rnd.status["message"] = HEALTHY_MESSAGE
    return Decision(rnd.status)


def disabling(rnd: Round) -> Decision:
    return conclude(rnd, FinaliseReason.DISABLED, disabling=True)


PHASES: Mapping[str, Callable[[Round], Decision]] = {
    RolloutPhase.INITIAL: initial,
    RolloutPhase.HEALTHY: healthy,
    RolloutPhase.PROGRESSING: progressing,
    RolloutPhase.DISABLING: disabling,
    RolloutPhase.DISABLED: disabled,
}
"""Phase -> its handler (Terminating is decided before the table, from the deletion)."""


__all__ = ["PHASES", "decide", "parse_time"]
