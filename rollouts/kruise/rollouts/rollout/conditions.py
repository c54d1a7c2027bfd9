"""Rollout conditions (``metav1.Condition``-like with ``lastUpdateTime``, as upstream's RolloutCondition)."""

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
