"""Progress deadline, abort and retry of a release (pure): kruise's additive fields.

Kruise Rollouts has no deadline; these follow Argo Rollouts' ``spec.progressDeadlineSeconds`` and
``spec.progressDeadlineAbort`` (both unset: upstream's behaviour, a stuck step waits forever).

- **The clock.** A release ``InRolling`` makes progress when its step or step state changes
  (``canaryStatus.lastUpdateTime``) or its ``Progressing`` condition changes reason (a lifted
  pause). Time since the later of the two counts toward the deadline except while the step is
  ``StepPaused`` (waiting for approval or a pause duration) or ``spec.strategy.paused``.
- **Deadline passed, no abort**: condition ``ProgressDeadline`` True with reason
  ``ProgressDeadlineExceeded`` and one Warning event of that reason; the condition goes once the
  release moves again. ``kruise rollout status`` exits 1 and kstatus says Stalled meanwhile.
- **Deadline passed with ``progressDeadlineAbort: true``, or ``kruise rollout abort``** (which
  writes condition ``Aborted`` True, reason ``AbortedByUser``, while the release is InRolling or
  Paused): a Warning event, ``Progressing`` reason ``Cancelling``, ``Aborted`` True with reason
  ``ProgressDeadlineExceeded`` or ``AbortedByUser``, then the **held abort** in this order
  (``canaryStatus.finalisingStep``): ``RouteTrafficToStable`` (routes back, grace period),
  ``ReleaseWorkloadControl`` (the BatchRelease deleted; the partition stays where it is),
  ``ReturnPodsToStable`` (the CloneSet's partition at every replica and its pods of another
  revision deleted: it recreates them at the stable revision; a Deployment's canary Deployments
  gone with the BatchRelease, or its partition at 0 and its ReplicaSets of another revision
  scaled to 0, :mod:`~kruise.rollouts.workloads.deployment.stablehold`), then ``Held``. The new template
  stays in the workload (a GitOps syncer sees no drift), the phase stays ``Progressing``, the
  release outcome is Failed (kstatus Stalled).
- **Held**: ``kruise rollout retry`` (condition ``Aborted`` False, reason ``RetryRequested``)
  restarts the release at step 1 (``Initializing``, event ``Retried``). A new revision of the
  workload (a fix pushed) or a rollback to the stable one goes back to ``InRolling``, whose
  special cases take it from there (continuous release, cancel).

An analysis that fails keeps aborting as before (reason ``AnalysisFailed``: the template reverted).
"""

from __future__ import annotations

import datetime
from collections.abc import Mapping
from dataclasses import replace
from typing import Any, cast

from kruise.rollouts.api.common import (
    CanaryStepState,
    FinalisingStepType,
    ProgressingReason,
    RolloutConditionType,
    RolloutPhase,
)
from kruise.rollouts.release.timefmt import fmt_time, parse_time, seconds_since
from kruise.rollouts.release.views import ConditionView, RolloutStatusView
from kruise.rollouts.rollout.analysis_gate import ABORTED_CONDITION
from kruise.rollouts.rollout.conditions import condition, drop_condition, set_condition
from kruise.rollouts.rollout.model import Action, ActionKind, Decision, Event, Round, delete_batch_release
from kruise.rollouts.rollout.requests import grace_seconds, traffic_intent
from kruise.rollouts.rollout.steps import steps_of, strategy_of

DEADLINE_CONDITION = "ProgressDeadline"
DEADLINE_REASON = "ProgressDeadlineExceeded"
USER_ABORT_REASON = "AbortedByUser"
RETRY_REASON = "RetryRequested"
HOLD_REASONS = (DEADLINE_REASON, USER_ABORT_REASON)
"""``Aborted`` reasons whose abort holds the new template (an analysis abort reverts it)."""
FIN_RETURN_PODS = "ReturnPodsToStable"
FIN_HELD = "Held"
HOLD_ORDER = (
    FinalisingStepType.ROUTE_TRAFFIC_TO_STABLE,
    FinalisingStepType.RELEASE_WORKLOAD_CONTROL,
    FIN_RETURN_PODS,
)
HELD_MESSAGE = "Rollout is aborted: traffic and pods are on the stable revision, the new template is held"


def _condition(status: Mapping[str, Any], ctype: str) -> ConditionView:
    return condition(cast(RolloutStatusView, status), ctype)


def deadline_of(rollout: Mapping[str, Any]) -> int | None:
    """``spec.progressDeadlineSeconds`` (None: no deadline)."""
    value = (rollout.get("spec") or {}).get("progressDeadlineSeconds")
    return int(value) if isinstance(value, int) and value > 0 else None


def stalled_seconds(rollout: Mapping[str, Any], status: Mapping[str, Any], now: datetime.datetime) -> float:
    """Seconds the release has gone without progress (0 while paused or not InRolling)."""
    progressing = _condition(status, RolloutConditionType.PROGRESSING)
    cs = status.get("canaryStatus") or {}
    paused = bool(((rollout.get("spec") or {}).get("strategy") or {}).get("paused"))
    if progressing.get("reason") != ProgressingReason.IN_ROLLING or paused:
        return 0.0
    if cs.get("currentStepState") in (CanaryStepState.STEP_PAUSED, CanaryStepState.COMPLETED, ""):
        return 0.0
    marks = [parse_time(cs.get("lastUpdateTime")), parse_time(progressing.get("lastUpdateTime"))]
    since = max((m for m in marks if m is not None), default=None)
    return 0.0 if since is None else max(0.0, (now - since).total_seconds())


def _step_text(rollout: Mapping[str, Any], status: Mapping[str, Any]) -> str:
    cs = status.get("canaryStatus") or {}
    return f"step {cs.get('currentStepIndex')}/{len(steps_of(rollout))} ({cs.get('currentStepState')})"


def deadline_message(rollout: Mapping[str, Any], status: Mapping[str, Any]) -> str:
    return (
        f"Rollout made no progress at {_step_text(rollout, status)} within "
        f"progressDeadlineSeconds={deadline_of(rollout)}"
    )


def held(status: Mapping[str, Any]) -> bool:
    """Whether a held abort is under way or done (the release is Failed once ``Held``)."""
    reason = _condition(status, ABORTED_CONDITION).get("reason")
    progressing = _condition(status, RolloutConditionType.PROGRESSING).get("reason")
    return progressing == ProgressingReason.CANCELLING and reason in (*HOLD_REASONS, RETRY_REASON)


def is_held(status: Mapping[str, Any]) -> bool:
    """The held abort finished: traffic and pods on stable, the template held."""
    return held(status) and (status.get("canaryStatus") or {}).get("finalisingStep") == FIN_HELD


def deadline_exceeded(status: Mapping[str, Any]) -> bool:
    return _condition(status, DEADLINE_CONDITION).get("status") == "True"


# ---------------------------------------------------------------------------- the machine's hooks
def intercept(rnd: Round, reason: str) -> Decision | None:
    """Run before the Progressing reason's own handler: an abort to start (requested, or the
    deadline passed with ``progressDeadlineAbort``), a held abort to carry on, a retry; None
    otherwise."""
    status, rollout = rnd.status, rnd.rollout
    if held(status):
        return _holding(rnd)
    if reason not in (ProgressingReason.IN_ROLLING, ProgressingReason.PAUSED):
        return None
    aborted = _condition(status, ABORTED_CONDITION)
    if aborted.get("status") == "True" and aborted.get("reason") == USER_ABORT_REASON:
        message = str(aborted.get("message") or "Rollout is aborted by kruise rollout abort")
        return _start_abort(rnd, USER_ABORT_REASON, message)
    limit = deadline_of(rollout)
    abort = bool((rollout.get("spec") or {}).get("progressDeadlineAbort"))
    if limit is not None and abort and stalled_seconds(rollout, status, rnd.now) >= limit:
        message = f"{deadline_message(rollout, status)}: aborted, traffic and pods go back to stable"
        return _start_abort(rnd, DEADLINE_REASON, message)
    return None


def watch(rollout: Mapping[str, Any], decision: Decision, now: datetime.datetime) -> Decision:
    """After a Progressing round: keep the ``ProgressDeadline`` condition (with its event when
    it turns True) and look again when the deadline would pass."""
    status = decision.status
    limit = deadline_of(rollout)
    stalled = stalled_seconds(rollout, status, now) if limit is not None else 0.0
    if limit is None or stalled < limit:
        if deadline_exceeded(status) or limit is not None:
            drop_condition(status, DEADLINE_CONDITION)
        if limit is None or stalled == 0.0:
            return decision
        left = limit - stalled
        after = left if decision.requeue_after is None else min(decision.requeue_after, left)
        return replace(decision, requeue_after=after)
    message = deadline_message(rollout, status)
    events = decision.events
    if not deadline_exceeded(status):
        events = (*events, Event("Warning", DEADLINE_REASON, message))
    set_condition(status, DEADLINE_CONDITION, "True", DEADLINE_REASON, message, now)
    return replace(decision, events=events)


# ---------------------------------------------------------------------------- abort and retry
def _start_abort(rnd: Round, reason: str, message: str) -> Decision:
    status, now = rnd.status, rnd.now
    set_condition(
        status, RolloutConditionType.PROGRESSING, "True", ProgressingReason.CANCELLING, message, now
    )
    set_condition(status, ABORTED_CONDITION, "True", reason, message, now)
    drop_condition(status, DEADLINE_CONDITION)
    status["message"] = message
    rnd.cs["message"] = message
    rnd.cs["finalisingStep"] = ""
    return Decision(status, requeue_after=0.0, events=(Event("Warning", reason, message),))


def _holding(rnd: Round) -> Decision:
    status, cs, now, workload = rnd.status, rnd.cs, rnd.now, rnd.obs.workload
    assert workload is not None
    if _condition(status, ABORTED_CONDITION).get("reason") == RETRY_REASON:
        return _retry(rnd)
    if workload.canary_revision != cs.get("canaryRevision"):  # a fix pushed, or rolled back
        message = "Rollout is in Progressing"
        set_condition(
            status, RolloutConditionType.PROGRESSING, "True", ProgressingReason.IN_ROLLING, message, now
        )
        drop_condition(status, ABORTED_CONDITION)
        cs["finalisingStep"] = ""
        return Decision(status, requeue_after=0.0)
    step = cs.get("finalisingStep")
    if step == FIN_HELD:
        return Decision(status)
    if step not in HOLD_ORDER:
        step = cs["finalisingStep"] = HOLD_ORDER[0]
    actions = _hold_actions(rnd, str(step))
    if rnd.outcomes is None:
        return Decision(status, actions, requeue_after=1.0)
    routing = step == FinalisingStepType.ROUTE_TRAFFIC_TO_STABLE and actions
    grace = grace_seconds(rnd.rollout) if routing else 0
    if rnd.outcomes.any_changed(actions):
        cs["lastUpdateTime"] = fmt_time(now)
        return Decision(status, requeue_after=float(grace) or 1.0)
    waited = seconds_since(cs.get("lastUpdateTime"), now)
    if waited < grace:
        return Decision(status, requeue_after=grace - waited)
    if step == FinalisingStepType.RELEASE_WORKLOAD_CONTROL and rnd.obs.batch.exists:
        return Decision(status, requeue_after=1.0)
    position = HOLD_ORDER.index(step)
    cs["lastUpdateTime"] = fmt_time(now)
    if position + 1 < len(HOLD_ORDER):
        cs["finalisingStep"] = HOLD_ORDER[position + 1]
        return Decision(status, requeue_after=0.0)
    cs["finalisingStep"] = FIN_HELD
    cs["message"] = status["message"] = HELD_MESSAGE
    return Decision(status)


def _hold_actions(rnd: Round, step: str) -> tuple[Action, ...]:
    if step == FinalisingStepType.ROUTE_TRAFFIC_TO_STABLE:
        if not strategy_of(rnd.rollout).get("trafficRoutings"):
            return ()
        intent = traffic_intent(rnd.rollout, rnd.status, rnd.obs, None, [])
        return (Action(ActionKind.RESTORE_ROUTES, {"intent": intent}),)
    if step == FinalisingStepType.RELEASE_WORKLOAD_CONTROL:
        return delete_batch_release(rnd.obs.batch)
    return (Action(ActionKind.HOLD_STABLE_PODS, {"stableRevision": rnd.cs.get("stableRevision", "")}),)


def _retry(rnd: Round) -> Decision:
    """Start the release over: ``Initializing`` writes a fresh sub-status at step 1."""
    status = rnd.status
    drop_condition(status, ABORTED_CONDITION)
    message = "Rollout is retried from step 1"
    set_condition(
        status, RolloutConditionType.PROGRESSING, "True", ProgressingReason.INITIALIZING, message, rnd.now
    )
    status["message"] = message
    return Decision(status, requeue_after=0.0, events=(Event("Normal", "Retried", message),))


def abort_request(status: Mapping[str, Any], now: datetime.datetime) -> list[ConditionView]:
    """The conditions ``kruise rollout abort`` writes (raises ValueError when it cannot)."""
    reason = _condition(status, RolloutConditionType.PROGRESSING).get("reason")
    rolling = reason in (ProgressingReason.IN_ROLLING, ProgressingReason.PAUSED)
    if status.get("phase") != RolloutPhase.PROGRESSING or not rolling:
        raise ValueError("cannot abort: the Rollout is not rolling out a release")
    if _condition(status, ABORTED_CONDITION).get("status") == "True":
        raise ValueError("the Rollout is already aborted")
    return _with_aborted(status, "True", USER_ABORT_REASON, "Rollout is aborted by kruise rollout abort", now)


def retry_request(status: Mapping[str, Any], now: datetime.datetime) -> list[ConditionView]:
    """The conditions ``kruise rollout retry`` writes (raises ValueError when it cannot)."""
    aborted = _condition(status, ABORTED_CONDITION)
    if not held(status) or aborted.get("status") != "True":
        raise ValueError("cannot retry: the Rollout is not aborted with its new template held")
    return _with_aborted(status, "False", RETRY_REASON, "Rollout is retried by kruise rollout retry", now)


def _with_aborted(
    status: Mapping[str, Any], cstatus: str, reason: str, message: str, now: datetime.datetime
) -> list[ConditionView]:
    copy = RolloutStatusView(
        conditions=[cast(ConditionView, dict(x)) for x in status.get("conditions") or ()]
    )
    set_condition(copy, ABORTED_CONDITION, cstatus, reason, message, now)
    return list(copy.get("conditions") or ())
