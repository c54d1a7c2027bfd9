"""Rollout conditions (``metav1.Condition``-like with ``lastUpdateTime``, as upstream's
RolloutCondition) and the top-level mirror of the sub-status."""

from __future__ import annotations

import datetime

from kruise.rollouts.release.timefmt import fmt_time
from kruise.rollouts.release.views import ConditionView, RolloutStatusView


def set_condition(
    status: RolloutStatusView, ctype: str, cstatus: str, reason: str, message: str, now: datetime.datetime
) -> None:
    """Set condition ``ctype``; ``lastTransitionTime`` changes only when the status flips."""
    conditions = [ConditionView(**x) for x in status.get("conditions") or []]
    for cond in conditions:
        if cond.get("type") == ctype:
            if cond.get("status") != cstatus:
                cond["lastTransitionTime"] = fmt_time(now)
            if cond.get("reason") != reason or cond.get("status") != cstatus:
                cond["lastUpdateTime"] = fmt_time(now)
            cond["status"], cond["reason"], cond["message"] = cstatus, reason, message
            break
    else:
        conditions.append(
            {
                "type": ctype,
                "status": cstatus,
                "reason": reason,
                "message": message,
                "lastUpdateTime": fmt_time(now),
                "lastTransitionTime": fmt_time(now),
            }
        )
    status["conditions"] = conditions


def condition(status: RolloutStatusView, ctype: str) -> ConditionView:
    """The condition ``ctype`` (empty when absent)."""
    found = [x for x in status.get("conditions") or [] if x.get("type") == ctype]
    return ConditionView(**found[0]) if found else ConditionView()


def drop_condition(status: RolloutStatusView, ctype: str) -> None:
    status["conditions"] = [x for x in status.get("conditions") or [] if x.get("type") != ctype]


def mirror(status: RolloutStatusView) -> None:
    """Top-level ``currentStepIndex``/``currentStepState`` mirror the sub-status (printer columns),
    and its message becomes ``status.message``."""
    cs = status.get("canaryStatus") or {}
    if cs:
        status["currentStepIndex"] = cs.get("currentStepIndex", 0)
        status["currentStepState"] = cs.get("currentStepState", "")
        if cs.get("message"):
            status["message"] = cs["message"]
