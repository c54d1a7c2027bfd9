"""Batch arithmetic of a release (pure): planned canary pods, partitions, batch readiness.

Mirrors Kruise Rollouts' BatchRelease controls (``pkg/controller/batchrelease/control``):

- a batch's planned canary pods are ``canaryReplicas`` scaled against the workload's
  replicas, rounding percentages **up** and clamping to ``[0, replicas]``;
- for a CloneSet, an integer batch is written as ``partition = replicas - planned``;
  a percentage batch as the percentage of *stable* pods,
  ``floor(stable * 100 / replicas)%`` (``ParseIntegerAsPercentageIfPossible``:
  ``"100%"`` when nothing is released, ``"0%"`` when everything is, and ``"1%"`` when
  the percentage would leave no stable pod although the batch is not ``"100%"``);
- the partition only ever moves down during a release (``UpgradeBatch``);
- a batch is ready when ``updated >= goal``, ``updatedReady + ceil(failureThreshold x
  updated) >= goal`` and at least one pod is ready when the goal is positive
  (``IsBatchReady``; a nil failureThreshold means 0 tolerated unready pods).
"""

from __future__ import annotations

import math
import re

IntOrStr = int | str
_PERCENT = re.compile(r"^(\d+)%$")


class BatchPlanError(ValueError):
    """A malformed int-or-percent value."""


def percent_of(value: str) -> int | None:
    """``"20%"`` -> 20; None when ``value`` is not a percentage."""
    match = _PERCENT.match(value.strip()) if isinstance(value, str) else None
    return int(match.group(1)) if match else None


def scaled(value: IntOrStr | None, total: int, *, round_up: bool = True) -> int:
    """k8s ``GetScaledValueFromIntOrPercent``: an int as is, ``"x%"`` of ``total`` rounded up/down."""
    if value is None:
        return 0
    if isinstance(value, bool):
        raise BatchPlanError(f"invalid int-or-percent value {value!r}")
    if isinstance(value, int):
        return value
    pct = percent_of(value)
    if pct is None:
        if value.strip().lstrip("-").isdigit():
            return int(value)
        raise BatchPlanError(
            f"invalid value for IntOrString: invalid type: string is not a percentage: {value!r}"
        )
    exact = pct * total / 100
    return math.ceil(exact) if round_up else math.floor(exact)


def planned_canary(batch_replicas: IntOrStr, replicas: int) -> int:
    """Canary pods a batch asks for (rounded up, clamped to ``[0, replicas]``)."""
    return max(0, min(replicas, scaled(batch_replicas, replicas, round_up=True)))


def stable_partition_percent(stable: int, replicas: int, batch_replicas: IntOrStr) -> str:
    """``ParseIntegerAsPercentageIfPossible``: the stable share as a whole percentage string."""
    if stable >= replicas:
        return "100%"
    if stable <= 0:
        return "0%"
    pct = stable * 100 // replicas
    restored = math.ceil(pct * replicas / 100)
    if restored <= 0 and batch_replicas != "100%":
        return "1%"
    return f"{pct}%"


def cloneset_partition(batch_replicas: IntOrStr, replicas: int) -> IntOrStr:
    """The CloneSet ``updateStrategy.partition`` for a batch."""
    planned = planned_canary(batch_replicas, replicas)
    if isinstance(batch_replicas, int):
        return replicas - planned
    return stable_partition_percent(replicas - planned, replicas, batch_replicas)


def cloneset_partition_pods(partition: IntOrStr | None, replicas: int) -> int:
    """Stable pods a CloneSet keeps for ``partition`` (CloneSet's own CalculatePartitionReplicas)."""
    if partition is None:
        return 0
    if isinstance(partition, int):
        return max(0, min(replicas, partition))
    pct = percent_of(partition)
    if pct is None:
        return 0
    value = math.ceil(pct * replicas / 100)
    if replicas > 1 and value == replicas and partition != "100%":
        value = replicas - 1
    return max(0, min(replicas, value))


def real_canary_goal(batch_replicas: IntOrStr, replicas: int) -> int:
    """Canary pods the workload will really have once the partition is applied
    (``CalculateRealCanaryReplicasGoal``)."""
    if isinstance(batch_replicas, int):
        return planned_canary(batch_replicas, replicas)
    partition = cloneset_partition(batch_replicas, replicas)
    return replicas - cloneset_partition_pods(partition, replicas)


def partition_moves_down(current: IntOrStr | None, desired: IntOrStr, replicas: int) -> bool:
    """Whether writing ``desired`` releases more pods than ``current`` (never move back up)."""
    if current is None:
        return False  # no partition: everything already released
    return cloneset_partition_pods(desired, replicas) < cloneset_partition_pods(current, replicas)


def batch_ready(
    goal: int,
    updated: int,
    updated_ready: int,
    *,
    failure_threshold: IntOrStr | None = None,
) -> bool:
    """``IsBatchReady`` over counts of pods at the canary revision."""
    if goal <= 0:
        return True
    tolerated = 0
    if failure_threshold is not None:
        tolerated = scaled(failure_threshold, updated, round_up=True)
    return updated >= goal and updated_ready + tolerated >= goal and updated_ready >= 1
