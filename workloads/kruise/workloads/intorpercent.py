"""Int-or-percent values (Kubernetes ``IntOrString``) scaled against a total.

Kubernetes has two scalers for ``IntOrString`` and OpenKruise uses both, so both are mirrored:

* :func:`scaled_value` is ``intstr.GetScaledValueFromIntOrPercent``: a string must end in ``%``
  (the Advanced DaemonSet's maxSurge, maxUnavailable, partition and burstReplicas);
* :func:`legacy_scaled_value` is the deprecated ``intstr.GetValueFromIntOrPercent`` that the
  CloneSet controller calls for maxSurge / maxUnavailable / scaleStrategy.maxUnavailable: every
  ``%`` is stripped and *any* string is a percentage (``"5"`` means 5%).

Both parse the number like Go's ``strconv.Atoi`` (optional sign, ASCII digits, int64 range) and
compute ``ceil``/``floor`` of ``value * total / 100`` in float64, exactly as Go does.
"""

from __future__ import annotations

import math
import re

#: ``int`` or a string such as ``"20%"`` (Kubernetes ``IntOrString``).
IntOrPercent = int | str

MAX_INT32 = 2**31 - 1

_ATOI = re.compile(r"[+-]?[0-9]+")
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


def check_int(value: object) -> int:
    """``value`` when it is an ``int`` (not a bool); raises :class:`IntOrPercentError` otherwise."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise IntOrPercentError(f"invalid type for IntOrString: {value!r} is neither int nor string")
    return value


def scale_percent(percent: float, total: int, round_up: bool) -> int:
    """``ceil``/``floor`` of ``percent * total / 100`` computed in float64, as Go does."""
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
        return scale_percent(_atoi(value[:-1], value), total, round_up)
    return check_int(value)


def legacy_scaled_value(value: IntOrPercent, total: int, *, round_up: bool) -> int:
    """Scale like the deprecated ``intstr.GetValueFromIntOrPercent`` used by the CloneSet controller.

    Every ``%`` in a string is removed and the rest is read as an integer percentage, so
    ``"20%"`` and ``"20"`` both mean 20% of ``total``.

    Raises:
        IntOrPercentError: the string (without ``%``) is not an integer.
    """
    if isinstance(value, str):
        return scale_percent(_atoi(value.replace("%", ""), value), total, round_up)
    return check_int(value)
