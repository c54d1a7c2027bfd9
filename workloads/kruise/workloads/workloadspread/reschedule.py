"""Adaptive rescheduling of a WorkloadSpread (pure): upstream's ``rescheduleSubset`` (v1.8).

Only with ``scheduleStrategy.type: Adaptive`` and ``adaptive.rescheduleCriticalSeconds`` > 0
(:func:`critical_seconds`); otherwise every subset's ``Schedulable`` condition is removed.
For each subset but the last, in spec order:

- a pod of the subset is *schedule-failed* when it is Pending, unbound, not deleting, carries
  ``PodScheduled=False`` with reason ``Unschedulable`` and was created more than
  ``rescheduleCriticalSeconds`` ago (:meth:`~kruise.workloads.pods.PodScheduling.pending_timeout`;
  a younger one asks to be looked at again when it would time out);
- any schedule-failed pod sets ``Schedulable=False`` (reason ``PodUnschedulable``) and the pods
  are deleted by the controller, so their replacements go to the next subset (the pod webhook
  passes over a subset whose ``Schedulable`` is False);
- with none, a subset that had no condition gets ``Schedulable=True`` (``Sufficient``); one that
  is False stays False until :data:`MAX_SCHEDULED_FAILED` has passed since its
  ``lastTransitionTime``, then turns True again (event ``RecoverSchedulable``); the wait is asked
  for as a recheck.

The last subset is never rescheduled: it is ``Schedulable=True`` (``Sufficient``).
Conditions change as upstream's ``setWorkloadSpreadSubsetCondition``: the same status and
reason leave the condition as it is; a new reason with the same status keeps its
``lastTransitionTime``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from kruise.workloads.api.workloadspread import SUBSET_SCHEDULABLE, ConditionView, SubsetStatusView
from kruise.workloads.objects import KubeObject, name, parse_time
from kruise.workloads.pods import PodScheduling

__all__ = ["MAX_SCHEDULED_FAILED", "Rescheduled", "critical_seconds", "reschedule"]

MAX_SCHEDULED_FAILED = timedelta(seconds=300)
"""How long a subset stays unschedulable before it is tried again (upstream's
``MaxScheduledFailedDuration``)."""
UNSCHEDULABLE = "PodUnschedulable"
SUFFICIENT = "Sufficient"
JSON = dict[str, Any]


@dataclass
class Rescheduled:
    """What :func:`reschedule` decided.

    Attributes:
        statuses: the subset statuses with their ``Schedulable`` condition set or removed.
        failed: subset name -> names of its schedule-failed pods to delete.
        recovered: subsets turned schedulable again this round (one event each).
        check_after: seconds until a pod could time out or a subset recover (``None``: none).
    """

    statuses: list[SubsetStatusView]
    failed: dict[str, list[str]] = field(default_factory=dict)
    recovered: list[str] = field(default_factory=list)
    check_after: float | None = None

    def _wait(self, after: timedelta | None) -> None:
        if after is not None and after.total_seconds() > 0:
            seconds = after.total_seconds()
            self.check_after = seconds if self.check_after is None else min(self.check_after, seconds)


def critical_seconds(ws_spec: Mapping[str, Any]) -> int:
    """``adaptive.rescheduleCriticalSeconds`` under an Adaptive strategy, else 0 (no rescheduling)."""
    strategy = ws_spec.get("scheduleStrategy") or {}
    if strategy.get("type") != "Adaptive":
        return 0
    return int((strategy.get("adaptive") or {}).get("rescheduleCriticalSeconds") or 0)


def _condition(status: SubsetStatusView) -> ConditionView | None:
    return next((c for c in status.get("conditions") or [] if c.get("type") == SUBSET_SCHEDULABLE), None)


def _set(status: SubsetStatusView, value: str, reason: str, now: datetime) -> None:
    current = _condition(status)
    if current is not None and current.get("status") == value and current.get("reason") == reason:
        return
    stamp = now.strftime("%Y-%m-%dT%H:%M:%SZ")
    if current is not None and current.get("status") == value:
        stamp = str(current.get("lastTransitionTime") or stamp)
    kept = [c for c in status.get("conditions") or [] if c.get("type") != SUBSET_SCHEDULABLE]
    condition: ConditionView = {
        "type": SUBSET_SCHEDULABLE,
        "status": value,
        "lastTransitionTime": stamp,
        "reason": reason,
    }
    status["conditions"] = [*kept, condition]


def _remove(status: SubsetStatusView) -> None:
    kept = [c for c in status.get("conditions") or [] if c.get("type") != SUBSET_SCHEDULABLE]
    if kept:
        status["conditions"] = kept
    else:
        status.pop("conditions", None)


def reschedule(
    statuses: Sequence[SubsetStatusView],
    pods_by_subset: Mapping[str, Sequence[KubeObject]],
    critical: int,
    now: datetime,
) -> Rescheduled:
    """The ``Schedulable`` conditions of ``statuses`` (the new subset statuses in spec order,
    carrying the previous conditions) and the pods to delete, over each subset's active pods
    ``pods_by_subset``, with ``critical`` = :func:`critical_seconds` at ``now`` (aware)."""
    out = Rescheduled([SubsetStatusView(**s) for s in statuses])
    for index, status in enumerate(out.statuses):
        if critical <= 0:
            _remove(status)
            continue
        if index == len(out.statuses) - 1:
            _set(status, "True", SUFFICIENT, now)
            continue
        subset = str(status.get("name", ""))
        failed: list[str] = []
        for pod in pods_by_subset.get(subset) or ():
            timed_out, after = PodScheduling.of(pod).pending_timeout(timedelta(seconds=critical), now)
            if timed_out:
                failed.append(name(pod))
            out._wait(after)
        if failed:
            out.failed[subset] = failed
            _set(status, "False", UNSCHEDULABLE, now)
            continue
        current = _condition(status)
        if current is None:
            _set(status, "True", SUFFICIENT, now)
        elif current.get("status") == "False":
            since = parse_time(current.get("lastTransitionTime"))
            recover_at = (since or now) + MAX_SCHEDULED_FAILED
            if recover_at < now:
                _set(status, "True", SUFFICIENT, now)
                out.recovered.append(subset)
            else:
                out._wait(recover_at - now)
    return out
