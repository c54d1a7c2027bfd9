"""The Rollout state machine (pure): ``decide(rollout, observed, changed) -> Decision``.

Mirrors Kruise Rollouts v1beta1 (``pkg/controller/rollout``): the phase machine of
``calculateRolloutStatus`` (Initial -> Healthy -> Progressing -> Healthy, Terminating,
Disabling/Disabled), the Progressing reasons (Initializing -> InRolling ->
Finalising -> Completed; Cancelling on rollback; Paused), the per-step states of
``runCanary`` (BeforeStepUpgrade -> StepUpgrade -> StepTrafficRouting ->
StepMetricsAnalysis -> StepPaused -> StepReady -> next step / Completed) and the
finalisation orders of ``nextCanaryTask``; in rolling, upstream's special cases in its
order (rollback, paused, rollback in batches, continuous release, plan changed), ``nextStepIndex`` jumps
(``doStepJump``) and the BatchRelease counts synced into the sub-status every round.

The controller calls ``decide`` twice per reconcile: once with ``changed=None`` to
learn the actions of the current state, and once with what each action reported
(``changed[i]`` True when it had to modify the world). A state advances only when
its actions changed nothing and, for traffic steps, ``gracePeriodSeconds`` passed
since the last change. Everything the machine remembers is in ``status``, so a
restarted manager decides the same from the objects alone.
"""

from __future__ import annotations

import copy
import datetime
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from kruise.rollouts.rollout import constants as c
from kruise.rollouts.rollout import deadline
from kruise.rollouts.rollout.analysis_gate import ABORTED_CONDITION, background_actions, failed_analysis
from kruise.rollouts.rollout.batchplan import scaled
from kruise.rollouts.rollout.canary import canary_step
from kruise.rollouts.rollout.conditions import set_condition
from kruise.rollouts.rollout.finalise import finalise
from kruise.rollouts.rollout.hashing import rollout_hash
from kruise.rollouts.rollout.model import JSON, BatchView, Decision, Event, Observed, WorkloadInfo
from kruise.rollouts.rollout.rolloutid import restart_in_batches, rollback_in_batch, sync_rollout_id
from kruise.rollouts.rollout.steps import is_blue_green, steps_of, strategy_of
from kruise.rollouts.rollout.timefmt import fmt_time, parse_time, seconds_since

PAUSED_MESSAGE = "Rollout has been paused, you can resume it by kube-cli"
# upstream's spelling since openkruise/rollouts 885497f (released v0.6.x still spells "cancelled")
ROLLBACK_MESSAGE = "The workload has been rolled back and the rollout process will be canceled"
ROLLBACK_EVENT = "workload has been rollback, then rollout is canceled"
COMPLETED_MESSAGE = "Rollout progressing has been completed"
CANCELED_MESSAGE = "Rollout progressing has been canceled"
FINALISING_MESSAGE = "Rollout has been completed and some closing work is being done"
CONTINUOUS_MESSAGE = "Workload is continuous release"


def decide(rollout: Mapping[str, Any], obs: Observed, changed: Sequence[bool] | None = None) -> Decision:
    """Decide for ``rollout`` given ``obs`` (and, on the second call, the actions' outcomes)."""
    status: JSON = copy.deepcopy(dict(rollout.get("status") or {}))
    status["observedGeneration"] = int((rollout.get("metadata") or {}).get("generation") or 0)
    status.setdefault("currentStepIndex", 0)  # required by the CRD schema, as upstream
    status.setdefault("currentStepState", "")
    spec = rollout.get("spec") or {}
    phase = status.get("phase") or ""
    workload = obs.workload
    now = obs.now

    if obs.deleting:
        if phase != c.PHASE_TERMINATING:
            status["phase"] = c.PHASE_TERMINATING
            set_condition(
                status, c.COND_TERMINATING, "True", c.REASON_IN_TERMINATING, "Rollout is in terminating", now
            )
            return Decision(status, requeue_after=0.0)
        return _finalising(rollout, status, obs, changed, reason="RolloutDeleting", terminating=True)

    # calculateRolloutStatus
    disabled = bool(spec.get("disabled"))
    if disabled and phase not in (c.PHASE_DISABLED, c.PHASE_DISABLING):
        if phase == c.PHASE_PROGRESSING:  # a working rollout is disabled: finalise it first
            status["phase"] = c.PHASE_DISABLING
            status["message"] = "Disabling rollout, release resources"
            return Decision(status, requeue_after=0.0)
        phase = status["phase"] = c.PHASE_DISABLED
        status["message"] = "Rollout is disabled"
    if not phase:
        phase = status["phase"] = c.PHASE_INITIAL
    if workload is None:
        if not disabled:  # upstream resets the whole status
            status = {
                "observedGeneration": status["observedGeneration"],
                "phase": c.PHASE_INITIAL,
                "message": "Workload Not Found",
                "currentStepIndex": 0,
                "currentStepState": "",
            }
        return Decision(status, requeue_after=None)
    if not workload.status_consistent:
        return Decision(dict(rollout.get("status") or {}), requeue_after=1.0)
    _refresh_observed(status, workload)

    if phase == c.PHASE_INITIAL:
        status["phase"] = c.PHASE_HEALTHY
        status["message"] = "rollout is healthy"
        return Decision(status, requeue_after=0.0)
    if phase == c.PHASE_HEALTHY:
        if workload.in_progressing:
            status["phase"] = c.PHASE_PROGRESSING
            set_condition(
                status, c.COND_PROGRESSING, "True", c.REASON_INITIALIZING, "Rollout is in Progressing", now
            )
            status["message"] = "Rollout is in Progressing"
            _drop_condition(status, c.COND_SUCCEEDED)
            _drop_condition(status, ABORTED_CONDITION)  # the previous release's abort, if any
            _drop_condition(status, deadline.DEADLINE_CONDITION)
            return Decision(
                status, requeue_after=0.0, events=(Event("Normal", "Progressing", "upgrade workload"),)
            )
        _synthesise_completed(rollout, status, workload, now)
        return Decision(status)
    if phase == c.PHASE_DISABLED:
        if not disabled:
            status["phase"] = c.PHASE_HEALTHY
            status["message"] = "rollout is healthy"
        return Decision(status)
    if phase == c.PHASE_DISABLING:
        return _finalising(rollout, status, obs, changed, reason="RolloutDisabled", disabling=True)
    if phase == c.PHASE_PROGRESSING:
        return deadline.watch(rollout, _progressing(rollout, status, obs, changed), now)
    return Decision(status)


def _refresh_observed(status: JSON, workload: WorkloadInfo) -> None:
    """The sub-status follows the workload it describes (``observedWorkloadGeneration``/``ID``)."""
    cs = status.get("canaryStatus")
    if cs and cs.get("canaryRevision") and cs.get("canaryRevision") == workload.canary_revision:
        cs["observedRolloutID"] = workload.observed_rollout_id
        cs["observedWorkloadGeneration"] = workload.generation


# ---------------------------------------------------------------------- progressing
def _progressing(
    rollout: Mapping[str, Any], status: JSON, obs: Observed, changed: Sequence[bool] | None
) -> Decision:
    assert obs.workload is not None
    workload = obs.workload
    now = obs.now
    reason = _condition_reason(status, c.COND_PROGRESSING)
    strategy = (rollout.get("spec") or {}).get("strategy") or {}
    steps = steps_of(rollout)
    held = deadline.intercept(rollout, status, obs, changed, reason)  # abort, held abort, retry
    if held is not None:
        return held

    if reason == c.REASON_INITIALIZING:
        status["canaryStatus"] = {
            "observedWorkloadGeneration": workload.generation,
            "rolloutHash": rollout_hash(rollout),
            "observedRolloutID": workload.observed_rollout_id,
            "stableRevision": workload.stable_revision,
            "canaryRevision": workload.canary_revision,
            "podTemplateHash": "",
            "currentStepIndex": 1,
            "nextStepIndex": 2 if len(steps) > 1 else -1,
            "currentStepState": c.BEFORE_STEP_UPGRADE,
            "finalisingStep": "",
            "canaryReplicas": 0,
            "canaryReadyReplicas": 0,
            "message": f"Rollout is in step(1/{len(steps)}), and upgrade workload to new version",
            "lastUpdateTime": fmt_time(now),
        }
        _mirror(status)
        # doProgressingInitializing: wait a grace period after entering Initializing, in case the
        # Rollout spec is updated a moment after the workload (the webhook forbids it later)
        waited = seconds_since(_condition(status, c.COND_PROGRESSING).get("lastUpdateTime"), now)
        if waited < c.DEFAULT_GRACE_SECONDS:
            return Decision(status, requeue_after=c.DEFAULT_GRACE_SECONDS - waited)
        set_condition(
            status, c.COND_PROGRESSING, "True", c.REASON_IN_ROLLING, "Rollout is in Progressing", now
        )
        return Decision(status, requeue_after=0.0)

    canary_status: JSON = status.setdefault("canaryStatus", {})
    if reason == c.REASON_PAUSED:  # from paused back to rolling; nothing else until then
        if not strategy.get("paused"):
            set_condition(status, c.COND_PROGRESSING, "True", c.REASON_IN_ROLLING, PAUSED_MESSAGE, now)
            return Decision(status, requeue_after=0.0)
        return Decision(status)
    if reason == c.REASON_IN_ROLLING:
        # doProgressingInRolling's special cases, in upstream's order
        rolled_back = workload.in_rollback and canary_status.get("canaryRevision") != workload.canary_revision
        in_batches = rollback_in_batch(rollout, workload)
        if rolled_back and not in_batches:
            canary_status["canaryRevision"] = workload.canary_revision
            set_condition(status, c.COND_PROGRESSING, "True", c.REASON_CANCELLING, ROLLBACK_MESSAGE, now)
            status["message"] = ROLLBACK_MESSAGE
            canary_status["finalisingStep"] = ""
            return Decision(
                status, requeue_after=0.0, events=(Event("Normal", "Progressing", ROLLBACK_EVENT),)
            )
        if strategy.get("paused"):
            set_condition(status, c.COND_PROGRESSING, "True", c.REASON_PAUSED, PAUSED_MESSAGE, now)
            status["message"] = PAUSED_MESSAGE
            return Decision(status)
        if rolled_back:  # rollouts.kruise.io/rollback-in-batch (rollout/rolloutid.py)
            event = restart_in_batches(rollout, status, workload, now)
            _mirror(status)
            return Decision(status, requeue_after=0.0, events=(event,))
        if workload.canary_revision_aliases and canary_status.get("canaryRevision") in (
            workload.canary_revision_aliases
        ):  # a provisional Deployment revision became known (rollout/podtemplate.py)
            canary_status["canaryRevision"] = workload.canary_revision
        if workload.canary_revision and canary_status.get("canaryRevision") not in (
            "",
            None,
            workload.canary_revision,
        ):
            if is_blue_green(rollout):  # handleContinuousRelease: only a rollback is accepted
                set_condition(
                    status,
                    c.COND_PROGRESSING,
                    "True",
                    reason,
                    c.BLUE_GREEN_CONTINUOUS_RELEASE_MESSAGE,
                    now,
                )
                status["message"] = c.BLUE_GREEN_CONTINUOUS_RELEASE_MESSAGE
                return Decision(status, requeue_after=c.RECHECK_SECONDS)
            return _continuous_release(rollout, status, obs, changed)
        if canary_status.get("rolloutHash") and canary_status.get("rolloutHash") != rollout_hash(rollout):
            _plan_changed(rollout, status, obs)
            _mirror(status)
            return Decision(status, requeue_after=0.0)
        # handleNormalRolling
        if canary_status.get("currentStepState") == c.STEP_COMPLETED:
            set_condition(status, c.COND_PROGRESSING, "True", c.REASON_FINALISING, FINALISING_MESSAGE, now)
            status["message"] = FINALISING_MESSAGE
            canary_status["finalisingStep"] = ""
            return Decision(status, requeue_after=0.0)
        _correct_next_step_index(canary_status, len(steps))
        if obs.batch.exists:  # syncBatchRelease: the BatchRelease's counts, whatever the state
            canary_status["canaryReplicas"] = obs.batch.updated_replicas
            canary_status["canaryReadyReplicas"] = obs.batch.updated_ready_replicas
        if not canary_status.get("podTemplateHash"):
            canary_status["podTemplateHash"] = workload.pod_template_hash
        if _jump(canary_status, steps, workload.replicas, now):
            _mirror(status)
            return Decision(status, requeue_after=0.0)
        failed = failed_analysis(rollout, status, obs)
        if failed is not None:
            message = f"Rollout is aborted: analysis {failed} failed; traffic and pods go back to stable"
            set_condition(status, c.COND_PROGRESSING, "True", c.REASON_CANCELLING, message, now)
            set_condition(status, ABORTED_CONDITION, "True", "AnalysisFailed", message, now)
            status["message"] = message
            canary_status["message"] = message
            canary_status["finalisingStep"] = ""
            return Decision(status, requeue_after=0.0, events=(Event("Warning", "AnalysisFailed", message),))
        background = [*sync_rollout_id(obs.batch, workload), *background_actions(rollout, status)]
        decision = canary_step(rollout, status, obs, None if changed is None else changed[len(background) :])
        if background:
            decision = replace(decision, actions=(*background, *decision.actions))
        _mirror(decision.status)
        return decision
    if reason == c.REASON_FINALISING:
        return _finalising(rollout, status, obs, changed, reason="Success")
    if reason == c.REASON_CANCELLING:
        aborted = any(
            x.get("type") == ABORTED_CONDITION and x.get("status") == "True"
            for x in status.get("conditions") or []
        )
        return _finalising(rollout, status, obs, changed, reason="Abort" if aborted else "Rollback")
    return Decision(status)


def _finalising(
    rollout: Mapping[str, Any],
    status: JSON,
    obs: Observed,
    changed: Sequence[bool] | None,
    *,
    reason: str,
    terminating: bool = False,
    disabling: bool = False,
) -> Decision:
    now = obs.now
    decision = finalise(
        rollout, status, obs, changed, rollback=reason in ("Rollback", "Abort"), reason=reason
    )
    st = decision.status
    if st.get("canaryStatus", {}).get("finalisingStep") != c.FIN_DONE:
        _mirror(st)
        return decision
    if terminating:
        set_condition(st, c.COND_TERMINATING, "False", c.REASON_COMPLETED, "Rollout is terminated", now)
        return Decision(st, remove_finalizer=True)
    if disabling:
        st["phase"] = c.PHASE_DISABLED
        st["message"] = "Rollout is disabled"
        return Decision(st)  # the sub-status stays, as upstream's
    # the Finalising / Cancelling branches of reconcileRolloutProgressing: Progressing False with
    # reason Completed either way, its message telling the two apart (and becoming status.message);
    # Succeeded (dropped when the release began) is created anew with no reason and no message
    succeeded = reason == "Success"
    message = COMPLETED_MESSAGE if succeeded else CANCELED_MESSAGE
    set_condition(st, c.COND_PROGRESSING, "False", c.REASON_COMPLETED, message, now)
    set_condition(st, c.COND_SUCCEEDED, "True" if succeeded else "False", "", "", now)
    st["phase"] = c.PHASE_HEALTHY
    st["message"] = message
    cs = st.setdefault("canaryStatus", {})
    cs["message"] = message
    if succeeded:
        cs["currentStepState"] = c.STEP_COMPLETED
    else:  # a cancelled release never reached its last step: the step state stays as it was
        workload = obs.workload
        if workload is not None:
            cs["canaryRevision"] = workload.canary_revision
    _mirror(st)
    event = Event("Normal", "Succeeded" if succeeded else "Cancelled", message)
    return Decision(st, events=(event,))


def _continuous_release(
    rollout: Mapping[str, Any], status: JSON, obs: Observed, changed: Sequence[bool] | None
) -> Decision:
    """v1 -> v2 -> v3 (``doProgressingReset``): restore the routes (then wait the grace period),
    delete the BatchRelease (and wait until it is gone), remove the canary Service; then clear
    the sub-status and start over from Initializing. Progress is kept in ``finalisingStep``.

    The stable Service selector is deliberately kept pinned (upstream keeps it): restoring it
    here would send traffic to v1 and v2 pods alike before v3's first step routes it again.
    """
    from kruise.rollouts.rollout.canary import grace_seconds, traffic_intent
    from kruise.rollouts.rollout.model import Action, ActionKind

    cs: JSON = status["canaryStatus"]
    intent = {"intent": traffic_intent(rollout, status, None, [])}
    routings = bool(strategy_of(rollout).get("trafficRoutings"))
    order = (
        (c.FIN_ROUTE_TRAFFIC_TO_STABLE, c.FIN_RELEASE_WORKLOAD, c.FIN_REMOVE_CANARY_SERVICE)
        if routings
        else (c.FIN_RELEASE_WORKLOAD,)
    )
    step = cs.get("finalisingStep") if cs.get("finalisingStep") in order else order[0]
    if step == c.FIN_REMOVE_CANARY_SERVICE and obs.batch.exists:
        step = c.FIN_RELEASE_WORKLOAD  # a step's teardown left this cursor: the BatchRelease first
    cs["finalisingStep"] = step
    if step == c.FIN_ROUTE_TRAFFIC_TO_STABLE:
        actions = [Action(ActionKind.RESTORE_ROUTES, intent)]
    elif step == c.FIN_RELEASE_WORKLOAD:
        actions = [Action(ActionKind.DELETE_BATCH_RELEASE)]
    else:
        actions = [Action(ActionKind.DELETE_CANARY_SERVICE, intent)]
    if changed is None:
        return Decision(status, tuple(actions), requeue_after=1.0)
    now = obs.now
    if step == c.FIN_ROUTE_TRAFFIC_TO_STABLE:
        grace = grace_seconds(rollout)
        if any(changed):
            cs["lastUpdateTime"] = fmt_time(now)
            return Decision(status, requeue_after=float(grace) or 0.5)
        waited = seconds_since(cs.get("lastUpdateTime"), now)
        if waited < grace:
            return Decision(status, requeue_after=grace - waited)
    elif step == c.FIN_RELEASE_WORKLOAD and (any(changed) or obs.batch.exists):
        return Decision(status, requeue_after=1.0)
    position = order.index(step)
    if position + 1 < len(order):  # the last step (canary Service) ignores the grace period
        cs["finalisingStep"] = order[position + 1]
        cs["lastUpdateTime"] = fmt_time(now)
        return Decision(status, requeue_after=0.0)
    status.pop("canaryStatus", None)
    set_condition(status, c.COND_PROGRESSING, "True", c.REASON_INITIALIZING, CONTINUOUS_MESSAGE, now)
    status["message"] = CONTINUOUS_MESSAGE
    event = Event(
        "Normal", "Progressing", "workload continuous publishing canaryRevision, then restart publishing"
    )
    return Decision(status, requeue_after=0.0, events=(event,))


def _plan_changed(rollout: Mapping[str, Any], status: JSON, obs: Observed) -> None:
    """Steps edited mid-rollout (``handleRolloutPlanChanged``): find the step the pods released so
    far belong to; run it from its start, or go on to the next step if that is where it lands."""
    cs = status["canaryStatus"]
    steps = steps_of(rollout)
    assert obs.workload is not None
    target = recalculate_step(steps, int(cs.get("currentStepIndex") or 1), obs.batch, obs.workload.replicas)
    cs["lastUpdateTime"] = fmt_time(obs.now)
    cs["rolloutHash"] = rollout_hash(rollout)
    if cs.get("nextStepIndex") == target:
        cs["currentStepState"] = c.STEP_READY
        return
    cs["nextStepIndex"] = target
    _jump(cs, steps, obs.workload.replicas, obs.now)


def recalculate_step(
    steps: Sequence[Mapping[str, Any]], current_index: int, batch: BatchView, replicas: int
) -> int:
    """``recalculateCanaryStep``: the first step (the current one tried first) asking for at least
    as many pods as the BatchRelease's current batch; step 1 without a BatchRelease."""
    if not batch.exists or batch.partition_replicas is None:
        return 1
    released = scaled(batch.partition_replicas, replicas, round_up=True)
    order = [current_index - 1] if 0 <= current_index - 1 < len(steps) else []
    order += [i for i in range(len(steps)) if i != current_index - 1]
    target = 0
    for i in order:
        target = i + 1
        if released <= scaled(steps[i].get("replicas"), replicas, round_up=True):
            break
    return target


def _correct_next_step_index(cs: JSON, step_count: int) -> None:
    """``CheckNextBatchIndexWithCorrect``: a ``nextStepIndex`` outside ``1..steps`` is reset."""
    nxt = int(cs.get("nextStepIndex") or 0)
    if nxt <= 0 or nxt > step_count:
        cs["nextStepIndex"] = _next_index(int(cs.get("currentStepIndex") or 1), step_count)


def _next_index(current: int, step_count: int) -> int:
    """``NextBatchIndex``: ``current + 1``, or ``-1`` on the last step."""
    return -1 if current >= step_count else current + 1


def _jump(cs: JSON, steps: Sequence[Mapping[str, Any]], replicas: int, now: datetime.datetime) -> bool:
    """``doStepJump``: ``nextStepIndex`` patched to another step (by a user, or a plan change) moves
    the release there, in any state. A step that wants the pods already released goes straight to
    StepTrafficRouting, any other starts over at BeforeStepUpgrade (the partition never moves back
    up, so a jump back keeps its pods)."""
    current = int(cs.get("currentStepIndex") or 1)
    nxt = int(cs.get("nextStepIndex") or 0)
    if nxt == _next_index(current, len(steps)) or not 0 < nxt <= len(steps):
        return False
    cs["currentStepIndex"] = nxt
    cs["nextStepIndex"] = _next_index(nxt, len(steps))
    wanted = scaled(steps[nxt - 1].get("replicas"), replicas, round_up=True)
    same = wanted == int(cs.get("canaryReplicas") or 0)
    cs["currentStepState"] = c.STEP_TRAFFIC_ROUTING if same else c.BEFORE_STEP_UPGRADE
    cs["lastUpdateTime"] = fmt_time(now)
    return True


def _synthesise_completed(
    rollout: Mapping[str, Any], status: JSON, workload: Any, now: datetime.datetime
) -> None:
    """A Rollout created against a settled workload reports Completed at the last step."""
    if workload.in_progressing or status.get("canaryStatus"):
        return
    steps = steps_of(rollout)
    status["canaryStatus"] = {
        "observedWorkloadGeneration": workload.generation,
        "rolloutHash": rollout_hash(rollout),
        "observedRolloutID": workload.observed_rollout_id,
        "stableRevision": workload.stable_revision,
        "canaryRevision": workload.canary_revision,
        "podTemplateHash": workload.pod_template_hash,
        "currentStepIndex": len(steps),
        "nextStepIndex": -1,
        "currentStepState": c.STEP_COMPLETED,
        "finalisingStep": "",
        "canaryReplicas": 0,
        "canaryReadyReplicas": 0,
        "lastUpdateTime": fmt_time(now),
    }
    _mirror(status)
    status["message"] = "workload deployment is completed"


def _mirror(status: JSON) -> None:
    """Top-level ``currentStepIndex``/``currentStepState`` mirror the sub-status (printer columns)."""
    cs = status.get("canaryStatus") or {}
    if cs:
        status["currentStepIndex"] = cs.get("currentStepIndex", 0)
        status["currentStepState"] = cs.get("currentStepState", "")
        if cs.get("message"):
            status["message"] = cs["message"]


def _condition(status: Mapping[str, Any], ctype: str) -> Mapping[str, Any]:
    for cond in status.get("conditions") or []:
        if cond.get("type") == ctype:
            return dict(cond)
    return {}


def _condition_reason(status: Mapping[str, Any], ctype: str) -> str:
    for cond in status.get("conditions") or []:
        if cond.get("type") == ctype:
            return str(cond.get("reason") or "")
    return ""


def _drop_condition(status: JSON, ctype: str) -> None:
    status["conditions"] = [x for x in status.get("conditions") or [] if x.get("type") != ctype]


__all__ = ["decide", "parse_time"]
