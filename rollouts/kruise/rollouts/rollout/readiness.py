"""The Rollout's kstatus conditions (pure): ``Ready``, ``Reconciling``, ``Stalled``.

Kruise Rollouts writes no such conditions, so kstatus (Flux) calls every Rollout Current and
``kubectl wait --for=condition=Ready`` never returns. These are additive and read off
:func:`kruise.rollouts.rollout.outcome.release_outcome`:

| outcome | Ready | Reconciling | Stalled | kstatus |
|---|---|---|---|---|
| Pending, Progressing, RollingBack, Terminating | False | True | - | InProgress |
| AwaitingApproval, Paused | False | - | - | InProgress (a person must act) |
| Failed (an analysis or an abort ended the release) | False | - | True | Failed |
| Stalled (``progressDeadlineSeconds`` passed, no abort) | False | - | True | Failed |
| Succeeded, Idle, Cancelled, Disabled | True | - | - | Current |

A cancelled release (the workload was rolled back, for instance by reverting it in Git) is
Current: the Rollout reached what is asked of it now. ``kruise rollout status`` still exits 1
for it, since the release it watched did not happen.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kruise.core.kstatus import Health, with_kstatus
from kruise.rollouts.rollout import deadline
from kruise.rollouts.rollout.analysis_gate import ABORTED_CONDITION
from kruise.rollouts.rollout.outcome import Outcome, condition, release_outcome, sub_status

_READY_REASONS = {
    Outcome.SUCCEEDED: "Succeeded",
    Outcome.IDLE: "Healthy",
    Outcome.CANCELLED: "Cancelled",
    Outcome.DISABLED: "Disabled",
}


def rollout_health(rollout: Mapping[str, Any]) -> Health:
    """The kstatus :class:`Health` of ``rollout`` (JSON, status as decided)."""
    outcome = release_outcome(rollout)
    status = rollout.get("status") or {}
    message = str(status.get("message") or "")
    if outcome in _READY_REASONS:
        return Health(ready=True, reason=_READY_REASONS[outcome], message=message)
    if outcome is Outcome.STALLED or (
        outcome is Outcome.FAILED
        and condition(rollout, ABORTED_CONDITION).get("reason") == deadline.DEADLINE_REASON
    ):
        return Health(ready=False, reason=deadline.DEADLINE_REASON, message=message, stalled=True)
    if outcome is Outcome.FAILED:
        return Health(ready=False, reason="ReleaseFailed", message=message, stalled=True)
    if outcome is Outcome.AWAITING_APPROVAL:
        step = sub_status(rollout).get("currentStepIndex")
        return Health(
            ready=False,
            reason="AwaitingApproval",
            message=f"step {step} is paused until approved (kubectl-kruise rollout approve)",
        )
    if outcome is Outcome.PAUSED:
        return Health(ready=False, reason="Paused", message=message)
    return Health(ready=False, reason=str(outcome), message=message, reconciling=True)


def with_rollout_kstatus(
    rollout: Mapping[str, Any], new_status: Mapping[str, Any], now: str
) -> dict[str, Any]:
    """``new_status`` with its kstatus conditions set for the Rollout it becomes."""
    health = rollout_health({**rollout, "status": new_status})
    out = dict(new_status)
    out["conditions"] = with_kstatus(new_status.get("conditions"), health, now, update_time=True)
    return out
