"""Int-or-percent arithmetic behind CloneSet partition, maxSurge and maxUnavailable.

Kubernetes has two scalers for ``IntOrString`` and OpenKruise uses both, so both are mirrored:

* :func:`scaled_value` is ``intstr.GetScaledValueFromIntOrPercent``: a string must end in ``%``.
* :func:`legacy_scaled_value` is the deprecated ``intstr.GetValueFromIntOrPercent`` that the
  CloneSet controller calls for maxSurge / maxUnavailable / scaleStrategy.maxUnavailable: every
  ``%`` is stripped and *any* string is a percentage (``"5"`` means 5%).

Both parse the number like Go's ``strconv.Atoi`` (optional sign, ASCII digits, int64 range) and
compute ``ceil``/``floor`` of ``value * total / 100`` in float64, exactly as Go does.

The partition is the one deliberate deviation: upstream parses it with ``Atoi`` too (so
``"12.5%"`` is an error there and counts as 0), while here — as the project reference asks — the
percentage is parsed as a float. For integer percentages the result is identical.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any

from kruise.workloads.objects import KubeObject, mapping, spec

#: ``int`` or a string such as ``"20%"`` (Kubernetes ``IntOrString``).
IntOrPercent = int | str

MAX_INT32 = 2**31 - 1
DEFAULT_MAX_UNAVAILABLE = "20%"

_ATOI = re.compile(r"[+-]?[0-9]+")
_FLOAT = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)")
_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1


class IntOrPercentError(ValueError):
    """An int-or-percent value is malformed (not an int, not ``"<n>%"``, or out of range)."""


def _atoi(text: str, original: object) -> int:
    if not _ATOI.fullmatch(text):
        raise IntOrPercentError(f"invalid value {original!r}: not an integer percentage")
    number = int(text)
    if not _INT64_MIN <= number <= _INT64_MAX:
        raise IntOrPercentError(f"invalid value {original!r}: value out of range")
    return number


def _check_int(value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise IntOrPercentError(f"invalid type for IntOrString: {value!r} is neither int nor string")
    return value


def _scale(percent: float, total: int, round_up: bool) -> int:
    scaled = float(percent) * float(total) / 100
    return int(math.ceil(scaled) if round_up else math.floor(scaled))


def scaled_value(value: IntOrPercent, total: int, *, round_up: bool) -> int:
    """Scale an int-or-percent against ``total`` (``intstr.GetScaledValueFromIntOrPercent``).

    ``value`` is an ``int`` (returned unchanged) or a string ``"<int>%"``, scaled as
    ``ceil``/``floor(value * total / 100)``.

    Raises:
        IntOrPercentError: the string lacks the ``%`` suffix or its number is not an integer.
    """
    if isinstance(value, str):
        if not value.endswith("%"):
            raise IntOrPercentError(f"invalid value {value!r}: string is not a percentage")
        return _scale(_atoi(value[:-1], value), total, round_up)
    return _check_int(value)


def legacy_scaled_value(value: IntOrPercent, total: int, *, round_up: bool) -> int:
    """Scale like the deprecated ``intstr.GetValueFromIntOrPercent`` used by the CloneSet controller.

    Every ``%`` in a string is removed and the rest is read as an integer percentage, so
    ``"20%"`` and ``"20"`` both mean 20% of ``total``.

    Raises:
        IntOrPercentError: the string (without ``%``) is not an integer.
    """
    if isinstance(value, str):
        return _scale(_atoi(value.replace("%", ""), value), total, round_up)
    return _check_int(value)


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
        value = _scale(float(partition[:-1]), total, True)
        if total > 1 and value == total and partition != "100%":
            value = total - 1
    else:
        value = _check_int(partition)
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
