"""``intstr`` int-or-percent scaling with Go's exact error texts, for webhook messages.

The CloneSet validator quotes these errors inside its own messages
(``failed getValueFromIntOrPercent for maxSurge: <err>``), so unlike the controller's arithmetic
the wording matters here. Two upstream functions exist and OpenKruise v1.8 uses both:

- :func:`get_scaled_value` mirrors ``intstr.GetScaledValueFromIntOrPercent`` (used for
  ``partition``): a string must end with ``%``.
- :func:`get_value` mirrors the deprecated ``intstr.GetValueFromIntOrPercent`` (used for
  ``maxUnavailable``/``maxSurge``): every ``%`` is removed and any string is a percentage.

Numbers are parsed like Go's ``strconv.Atoi`` and scaled in float64 like Go.
"""

from __future__ import annotations

import math
import re
from typing import Any

from kruise.workloads.admission.fielderrors import go_quote

__all__ = ["IntOrStringError", "get_scaled_value", "get_value", "int_or_string_text"]

_ATOI = re.compile(r"[+-]?[0-9]+")
_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1


class IntOrStringError(ValueError):
    """An int-or-percent value Go refuses; ``str(err)`` is Go's error text."""


def int_or_string_text(value: Any) -> str:
    """``(*IntOrString).String()``: the string, the decimal int, or ``<nil>`` for nil."""
    if value is None:
        return "<nil>"
    if isinstance(value, bool):
        return "0"
    return str(value)


def _atoi(text: str) -> int:
    """``strconv.Atoi``; raises with Go's ``strconv.Atoi: parsing "x": ...`` text."""
    quoted = go_quote(text)
    if not _ATOI.fullmatch(text):
        raise IntOrStringError(f"strconv.Atoi: parsing {quoted}: invalid syntax")
    number = int(text)
    if not _INT64_MIN <= number <= _INT64_MAX:
        raise IntOrStringError(f"strconv.Atoi: parsing {quoted}: value out of range")
    return number


def _scale(percent: int, total: int, round_up: bool) -> int:
    scaled = float(percent) * float(total) / 100
    return int(math.ceil(scaled) if round_up else math.floor(scaled))


def _check_int(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise IntOrStringError("invalid value for IntOrString: invalid type: neither int nor percentage")
    return value


def get_scaled_value(value: Any, total: int, round_up: bool) -> int:
    """``intstr.GetScaledValueFromIntOrPercent``: int as is, ``"<n>%"`` scaled against ``total``.

    Raises:
        IntOrStringError: ``nil value for IntOrString`` for ``None``; ``invalid value for
            IntOrString: invalid type: string is not a percentage`` for a string without ``%``;
            ``invalid value for IntOrString: invalid value "x%": strconv.Atoi: ...`` otherwise.
    """
    if value is None:
        raise IntOrStringError("nil value for IntOrString")
    if isinstance(value, str):
        if not value.endswith("%"):
            raise IntOrStringError("invalid value for IntOrString: invalid type: string is not a percentage")
        try:
            number = _atoi(value[:-1])
        except IntOrStringError as err:
            raise IntOrStringError(
                f"invalid value for IntOrString: invalid value {go_quote(value)}: {err}"
            ) from err
        return _scale(number, total, round_up)
    return _check_int(value)


def get_value(value: Any, total: int, round_up: bool) -> int:
    """Deprecated ``intstr.GetValueFromIntOrPercent``: any string (``%`` stripped) is a percentage.

    Raises:
        IntOrStringError: ``nil value for IntOrString`` or ``invalid value for IntOrString:
            invalid value "x": strconv.Atoi: parsing "x": invalid syntax``.
    """
    if value is None:
        raise IntOrStringError("nil value for IntOrString")
    if isinstance(value, str):
        try:
            number = _atoi(value.replace("%", ""))
        except IntOrStringError as err:
            raise IntOrStringError(
                f"invalid value for IntOrString: invalid value {go_quote(value)}: {err}"
            ) from err
        return _scale(number, total, round_up)
    return _check_int(value)
