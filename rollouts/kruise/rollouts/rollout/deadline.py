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
  revision deleted: it recreates them at the stable revision), then ``Held``. The new template
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
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from kruise.rollouts.rollout import constants as c
from kruise.rollouts.rollout.analysis_gate import ABORTED_CONDITION
from kruise.rollouts.rollout.canary import grace_seconds, traffic_intent
from kruise.rollouts.rollout.conditions import set_condition
from kruise.rollouts.rollout.model import JSON, Action, ActionKind, Decision, Event, Observed
from kruise.rollouts.rollout.steps import steps_of, strategy_of
from kruise.rollouts.rollout.timefmt import fmt_time, parse_time, seconds_since

DEADLINE_CONDITION = "ProgressDeadline"
DEADLINE_REASON = "ProgressDeadlineExceeded"
USER_ABORT_REASON = "AbortedByUser"
RETRY_REASON = "RetryRequested"
HOLD_REASONS = (DEADLINE_REASON, USER_ABORT_REASON)
"""``Aborted`` reasons whose abort holds the new template (an analysis abort reverts it)."""
FIN_RETURN_PODS = "ReturnPodsToStable"
FIN_HELD = "Held"
HOLD_ORDER = (c.FIN_ROUTE_TRAFFIC_TO_STABLE, c.FIN_RELEASE_WORKLOAD, FIN_RETURN_PODS)
HELD_MESSAGE = "Rollout is aborted: traffic and pods are on the stable revision, the new template is held"


def _condition(status: Mapping[str, Any], ctype: str) -> Mapping[str, Any]:
    return next((x for x in status.get("conditions") or () if x.get("type") == ctype), {})


def _drop(status: JSON, ctype: str) -> None:
    if any(x.get("type") == ctype for x in status.get("conditions") or ()):
        status["conditions"] = [x for x in status["conditions"] if x.get("type") != ctype]


def deadline_of(rollout: Mapping[str, Any]) -> int | None:
    """``spec.progressDeadlineSeconds`` (None: no deadline)."""
    value = (rollout.get("spec") or {}).get("progressDeadlineSeconds")
    return int(value) if isinstance(value, int) and value > 0 else None


def stalled_seconds(rollout: Mapping[str, Any], status: Mapping[str, Any], now: datetime.datetime) -> float:
    """Seconds the release has gone without progress (0 while paused or not InRolling)."""
    progressing = _condition(status, c.COND_PROGRESSING)
    cs = status.get("canaryStatus") or {}
    paused = bool(((rollout.get("spec") or {}).get("strategy") or {}).get("paused"))
    if progressing.get("reason") != c.REASON_IN_ROLLING or paused:
        return 0.0
    if cs.get("currentStepState") in (c.STEP_PAUSED, c.STEP_COMPLETED, ""):
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
    cancelling = _condition(status, c.COND_PROGRESSING).get("reason") == c.REASON_CANCELLING
    return cancelling and reason in (*HOLD_REASONS, RETRY_REASON)


def is_held(status: Mapping[str, Any]) -> bool:
    """The held abort finished: traffic and pods on stable, the template held."""
    return held(status) and (status.get("canaryStatus") or {}).get("finalisingStep") == FIN_HELD


def deadline_exceeded(status: Mapping[str, Any]) -> bool:
    return _condition(status, DEADLINE_CONDITION).get("status") == "True"


# ---------------------------------------------------------------------------- the machine's hooks
def intercept(
    rollout: Mapping[str, Any], status: JSON, obs: Observed, changed: Sequence[bool] | None, reason: str
) -> Decision | None:
    """Run before the Progressing reason's own handling: an abort to start (requested, or the
    deadline passed with ``progressDeadlineAbort``), a held abort to carry on, a retry; None
    otherwise."""
    aborted = _condition(status, ABORTED_CONDITION)
    if held(status):
        return _holding(rollout, status, obs, changed)
    if reason not in (c.REASON_IN_ROLLING, c.REASON_PAUSED):
        return None
    if aborted.get("status") == "True" and aborted.get("reason") == USER_ABORT_REASON:
        message = str(aborted.get("message") or "Rollout is aborted by kruise rollout abort")
        return _start_abort(status, USER_ABORT_REASON, message, obs.now)
    limit = deadline_of(rollout)
    abort = bool((rollout.get("spec") or {}).get("progressDeadlineAbort"))
    if limit is not None and abort and stalled_seconds(rollout, status, obs.now) >= limit:
        message = f"{deadline_message(rollout, status)}: aborted, traffic and pods go back to stable"
        return _start_abort(status, DEADLINE_REASON, message, obs.now)
    return None


def watch(rollout: Mapping[str, Any], decision: Decision, now: datetime.datetime) -> Decision:
    """After a Progressing round: keep the ``ProgressDeadline`` condition (with its event when
    it turns True) and look again when the deadline would pass."""
    status = decision.status
    limit = deadline_of(rollout)
    stalled = stalled_seconds(rollout, status, now) if limit is not None else 0.0
    if limit is None or stalled < limit:
        _drop(status, DEADLINE_CONDITION)
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
def _start_abort(status: JSON, reason: str, message: str, now: datetime.datetime) -> Decision:
    set_condition(status, c.COND_PROGRESSING, "True", c.REASON_CANCELLING, message, now)
    set_condition(status, ABORTED_CONDITION, "True", reason, message, now)
    _drop(status, DEADLINE_CONDITION)
    status["message"] = message
    cs = status.setdefault("canaryStatus", {})
    cs["message"] = message
    cs["finalisingStep"] = ""
    return Decision(status, requeue_after=0.0, events=(Event("Warning", reason, message),))


def _holding(
    rollout: Mapping[str, Any], status: JSON, obs: Observed, changed: Sequence[bool] | None
) -> Decision:
    cs: JSON = status.setdefault("canaryStatus", {})
    now, workload = obs.now, obs.workload
    assert workload is not None
    if _condition(status, ABORTED_CONDITION).get("reason") == RETRY_REASON:
        return _retry(status, now)
    if workload.canary_revision != cs.get("canaryRevision"):  # a fix pushed, or rolled back
        set_condition(
            status, c.COND_PROGRESSING, "True", c.REASON_IN_ROLLING, "Rollout is in Progressing", now
        )
        _drop(status, ABORTED_CONDITION)
        cs["finalisingStep"] = ""
        return Decision(status, requeue_after=0.0)
    step = cs.get("finalisingStep")
    if step == FIN_HELD:
        return Decision(status)
    if step not in HOLD_ORDER:
        step = cs["finalisingStep"] = HOLD_ORDER[0]
    actions = _hold_actions(rollout, status, obs, str(step))
    if changed is None:
        return Decision(status, actions, requeue_after=1.0)
    grace = grace_seconds(rollout) if step == c.FIN_ROUTE_TRAFFIC_TO_STABLE and actions else 0
    if any(changed):
        cs["lastUpdateTime"] = fmt_time(now)
        return Decision(status, requeue_after=float(grace) or 1.0)
    waited = seconds_since(cs.get("lastUpdateTime"), now)
    if waited < grace:
        return Decision(status, requeue_after=grace - waited)
    if step == c.FIN_RELEASE_WORKLOAD and obs.batch.exists:
        return Decision(status, requeue_after=1.0)
    position = HOLD_ORDER.index(step)
    cs["lastUpdateTime"] = fmt_time(now)
    if position + 1 < len(HOLD_ORDER):
        cs["finalisingStep"] = HOLD_ORDER[position + 1]
        return Decision(status, requeue_after=0.0)
    cs["finalisingStep"] = FIN_HELD
    cs["message"] = status["message"] = HELD_MESSAGE
    return Decision(status)


def _hold_actions(rollout: Mapping[str, Any], status: JSON, obs: Observed, step: str) -> tuple[Action, ...]:
    if step == c.FIN_ROUTE_TRAFFIC_TO_STABLE:
        if not strategy_of(rollout).get("trafficRoutings"):
            return ()
        return (Action(ActionKind.RESTORE_ROUTES, {"intent": traffic_intent(rollout, status, None, [])}),)
    if step == c.FIN_RELEASE_WORKLOAD:
        return (Action(ActionKind.DELETE_BATCH_RELEASE),)
    cs = status.get("canaryStatus") or {}
    return (Action(ActionKind.HOLD_STABLE_PODS, {"stableRevision": cs.get("stableRevision", "")}),)


def _retry(status: JSON, now: datetime.datetime) -> Decision:
    """Start the release over: ``Initializing`` writes a fresh sub-status at step 1."""
    _drop(status, ABORTED_CONDITION)
    message = "Rollout is retried from step 1"
    set_condition(status, c.COND_PROGRESSING, "True", c.REASON_INITIALIZING, message, now)
    status["message"] = message
    return Decision(status, requeue_after=0.0, events=(Event("Normal", "Retried", message),))


def abort_request(status: Mapping[str, Any], now: datetime.datetime) -> list[JSON]:
    """The conditions ``kruise rollout abort`` writes (raises ValueError when it cannot)."""
    reason = _condition(status, c.COND_PROGRESSING).get("reason")
    if status.get("phase") != c.PHASE_PROGRESSING or reason not in (c.REASON_IN_ROLLING, c.REASON_PAUSED):
        raise ValueError("cannot abort: the Rollout is not rolling out a release")
    if _condition(status, ABORTED_CONDITION).get("status") == "True":
        raise ValueError("the Rollout is already aborted")
    return _with_aborted(status, "True", USER_ABORT_REASON, "Rollout is aborted by kruise rollout abort", now)


def retry_request(status: Mapping[str, Any], now: datetime.datetime) -> list[JSON]:
    """The conditions ``kruise rollout retry`` writes (raises ValueError when it cannot)."""
    aborted = _condition(status, ABORTED_CONDITION)
    if not held(status) or aborted.get("status") != "True":
        raise ValueError("cannot retry: the Rollout is not aborted with its new template held")
    return _with_aborted(status, "False", RETRY_REASON, "Rollout is retried by kruise rollout retry", now)


def _with_aborted(
    status: Mapping[str, Any], cstatus: str, reason: str, message: str, now: datetime.datetime
) -> list[JSON]:
    copy: JSON = {"conditions": [dict(x) for x in status.get("conditions") or ()]}
    set_condition(copy, ABORTED_CONDITION, cstatus, reason, message, now)
    return list(copy["conditions"])
