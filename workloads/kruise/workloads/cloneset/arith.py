"""Int-or-percent arithmetic behind CloneSet partition, maxSurge and maxUnavailable.

The scalers themselves are shared (:mod:`kruise.workloads.intorpercent`); the CloneSet reads
maxSurge / maxUnavailable / scaleStrategy.maxUnavailable with the legacy one.

The partition is the one deliberate deviation: upstream parses it with ``Atoi`` too (so
``"12.5%"`` is an error there and counts as 0), while here — as the project reference asks — the
percentage is parsed as a float. For integer percentages the result is identical.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from kruise.workloads.intorpercent import (
    MAX_INT32,
    IntOrPercent,
    IntOrPercentError,
    check_int,
    legacy_scaled_value,
    scale_percent,
    scaled_value,
)
from kruise.workloads.objects import KubeObject, mapping, spec

__all__ = [
    "MAX_INT32",
    "IntOrPercent",
    "IntOrPercentError",
    "StrategyNumbers",
    "calculate_partition",
    "legacy_scaled_value",
    "max_surge",
    "max_unavailable",
    "replicas_of",
    "scale_max_unavailable",
    "scaled_value",
    "strategy_numbers",
]

DEFAULT_MAX_UNAVAILABLE = "20%"
_FLOAT = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)")


def calculate_partition(partition: IntOrPercent | None, replicas: int | None) -> int:
    """How many pods to keep at the old revision (upstream ``util.CalculatePartitionReplicas``).

    * ``None`` -> 0; ``replicas`` ``None`` counts as 1 (the API default).
    * An ``int`` is used as is; ``"x%"`` is ``ceil(x * replicas / 100)`` with ``x`` a float.
    * If ``replicas > 1``, the result equals ``replicas`` and the value is a string other than
      exactly ``"100%"``, one pod is still updated: ``"99%"`` of 4 is 3.
    * The result is clamped to ``[0, replicas]``.

    Raises:
        IntOrPercentError: a string without ``%`` or with a non-numeric body (upstream logs the
        error and the controller then uses 0; :func:`strategy_numbers` does the same).
    """
    if partition is None:
        return 0
    total = 1 if replicas is None else replicas
    if isinstance(partition, str):
        if not partition.endswith("%") or not _FLOAT.fullmatch(partition[:-1]):
            raise IntOrPercentError(f"invalid partition {partition!r}: expected an int or '<number>%'")
        value = scale_percent(float(partition[:-1]), total, True)
        if total > 1 and value == total and partition != "100%":
            value = total - 1
    else:
        value = check_int(partition)
    return max(min(value, total), 0)


def max_surge(value: IntOrPercent | None, replicas: int, *, paused: bool = False) -> int:
    """``updateStrategy.maxSurge`` as a pod count: rounds up, 0 when unset or while ``paused``.

    Raises:
        IntOrPercentError: malformed value (the controller treats it as 0).
    """
    if value is None:
        return 0
    surge = legacy_scaled_value(value, replicas, round_up=True)
    return 0 if paused else surge


def max_unavailable(value: IntOrPercent | None, replicas: int, *, max_surge: int) -> int:
    """``updateStrategy.maxUnavailable`` as a pod count.

    Defaults to ``"20%"``; rounds up, but **down** when ``max_surge > 0`` (so 20% of 10 is 2 and
    20% of 9 is 2 with no surge, 1 with surge).

    Raises:
        IntOrPercentError: malformed value (the controller treats it as 0).
    """
    chosen: IntOrPercent = DEFAULT_MAX_UNAVAILABLE if value is None else value
    return legacy_scaled_value(chosen, replicas, round_up=max_surge == 0)


def scale_max_unavailable(value: IntOrPercent | None, replicas: int) -> int:
    """``scaleStrategy.maxUnavailable`` as a pod count: rounds up, ``MaxInt32`` when unset.

    Raises:
        IntOrPercentError: malformed value (the controller treats it as 0).
    """
    if value is None:
        return MAX_INT32
    return legacy_scaled_value(value, replicas, round_up=True)


@dataclass(frozen=True)
class StrategyNumbers:
    """The resolved numbers of a CloneSet's strategies, all pod counts."""

    replicas: int
    partition: int
    max_surge: int
    max_unavailable: int
    scale_max_unavailable: int


def _lenient(func: Any, *args: Any, **kwargs: Any) -> int:
    try:
        result: int = func(*args, **kwargs)
    except IntOrPercentError:
        return 0
    return result


def replicas_of(cloneset: KubeObject) -> int:
    """``spec.replicas`` (1 when unset, the API default)."""
    value = spec(cloneset).get("replicas")
    return 1 if value is None else int(value)


def strategy_numbers(cloneset: KubeObject) -> StrategyNumbers:
    """Resolve partition / maxSurge / maxUnavailable / scale maxUnavailable of a CloneSet dict.

    Mirrors the prologue of upstream ``calculateDiffsWithExpectation``: malformed values count
    as 0 (upstream ignores the errors), maxSurge is 0 while ``updateStrategy.paused``.
    """
    replicas = replicas_of(cloneset)
    update = mapping(spec(cloneset).get("updateStrategy"))
    scale = mapping(spec(cloneset).get("scaleStrategy"))
    surge = _lenient(max_surge, update.get("maxSurge"), replicas, paused=bool(update.get("paused")))
    return StrategyNumbers(
        replicas=replicas,
        partition=_lenient(calculate_partition, update.get("partition"), replicas),
        max_surge=surge,
        max_unavailable=_lenient(max_unavailable, update.get("maxUnavailable"), replicas, max_surge=surge),
        scale_max_unavailable=_lenient(scale_max_unavailable, scale.get("maxUnavailable"), replicas),
    )
