"""Int-or-percent parsing for the webhooks, with the error texts each upstream helper gives.

Validators quote these errors in their own messages (``failed getValueFromIntOrPercent for
partition: <err>``), so the wording matters. Three parsers, one per upstream helper:

- :func:`get_scaled_float_percent` is OpenKruise's ``util.GetScaledValueFromIntOrPercent``
  (``pkg/util/tools.go``, since v1.4 / PR #1124): a string must end with ``%`` and its number is
  parsed with ``strconv.ParseFloat``, so ``"33.5%"`` is fine (``ceil(33.5 * total / 100)``).
  Errors carry no ``invalid value for IntOrString`` prefix.
- :func:`get_scaled_int_percent` is the same shape for fields whose consumer reads an integer
  percentage only: ``"<int>%"``, the number parsed like ``strconv.Atoi``, no prefix either.
- :func:`get_scaled_value` is apimachinery's ``intstr.GetScaledValueFromIntOrPercent``: integer
  percentages, errors prefixed ``invalid value for IntOrString: ``.

Which field uses which (upstream's choice, and ours where upstream has none):

=============================================  =================================================
CloneSet ``updateStrategy.partition``          float (kruise ``validateUpdateStrategy``)
CloneSet ``updateStrategy.maxUnavailable``,    integer: v1.8 used the deprecated
``maxSurge``, ``scaleStrategy.maxUnavailable`` ``GetValueFromIntOrPercent`` (any string, every
                                               ``%`` stripped, so ``"5%%"`` and ``"5"`` passed);
                                               v1.9 (#2111) switched the webhook to the float
                                               helper, but the controller (upstream's and ours)
                                               still reads these with ``Atoi``, so a fraction
                                               would silently count as 0. Refused here instead.
                                               (upstream does not validate the scale one at all)
Rollout steps' ``replicas`` and ``traffic``    apimachinery (Kruise Rollouts' validating webhook)
StatefulSet ``rollingUpdate.maxUnavailable``,  the deprecated lenient parser, :func:`get_value`
``scaleStrategy.maxUnavailable``               (kruise's webhook and controller both use it; the
                                               webhook refuses a non-``<int>%`` string first)
=============================================  =================================================

Numbers are parsed like Go and scaled in float64 like Go; an int-or-string integer must fit
``int32`` (``IntOrString.IntVal``), which the CRD schema enforces before any webhook runs.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from typing import Any

from kruise.workloads.admission.fielderrors import FieldError, go_int_or_string, go_quote, invalid
from kruise.workloads.admission.metavalidation import IS_NEGATIVE_ERROR_MSG

__all__ = [
    "PERCENT_MESSAGE",
    "IntOrStringError",
    "get_scaled_float_percent",
    "get_scaled_int_percent",
    "get_scaled_value",
    "get_value",
    "int_or_string_text",
    "percent_value",
    "validate_positive_int_or_percent",
]

_ATOI = re.compile(r"[+-]?[0-9]+")
_DECIMAL_FLOAT = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
_HEX_FLOAT = re.compile(r"[+-]?0[xX](?:[0-9a-fA-F]+(?:\.[0-9a-fA-F]*)?|\.[0-9a-fA-F]+)[pP][+-]?[0-9]+")
_SPECIAL_FLOAT = re.compile(r"[+-]?(?:inf|infinity)|nan", re.IGNORECASE)
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


def _parse_float(text: str) -> float:
    """``strconv.ParseFloat(text, 64)``: decimal, hex (``0x1p4``), ``inf``/``nan``; Go's errors."""
    quoted = go_quote(text)
    if _SPECIAL_FLOAT.fullmatch(text):
        return float(text)
    if _HEX_FLOAT.fullmatch(text):
        number = float.fromhex(text)
    elif _DECIMAL_FLOAT.fullmatch(text):
        number = float(text)
    else:
        raise IntOrStringError(f"strconv.ParseFloat: parsing {quoted}: invalid syntax")
    if math.isinf(number):
        raise IntOrStringError(f"strconv.ParseFloat: parsing {quoted}: value out of range")
    return number


def _scale(percent: float, total: int, round_up: bool) -> int:
    """``int(math.Ceil/Floor(percent * total / 100))`` as Go computes it on amd64, where a NaN,
    infinite or out-of-range float converts to ``MinInt64``."""
    scaled = float(percent) * float(total) / 100
    if not math.isfinite(scaled):
        return _INT64_MIN
    rounded = math.ceil(scaled) if round_up else math.floor(scaled)
    return rounded if _INT64_MIN <= rounded <= _INT64_MAX else _INT64_MIN


def _check_int(value: Any, prefix: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise IntOrStringError(f"{prefix}invalid type: neither int nor percentage")
    return value


def _percent_body(value: str, prefix: str) -> str:
    if not value.endswith("%"):
        raise IntOrStringError(f"{prefix}invalid type: string is not a percentage")
    return value[:-1]


def _scaled(value: Any, total: int, round_up: bool, parse: Callable[[str], float]) -> int:
    if value is None:
        raise IntOrStringError("nil value for IntOrString")
    if isinstance(value, str):
        return _scale(parse(_percent_body(value, "")), total, round_up)
    return _check_int(value, "")


def get_scaled_float_percent(value: Any, total: int, round_up: bool) -> int:
    """OpenKruise's ``util.GetScaledValueFromIntOrPercent``: int as is, ``"<float>%"`` scaled.

    ``"33.5%"`` of 10 is ``ceil(3.35) = 4`` (``round_up``) or 3. ``"NaN%"``/``"Inf%"`` parse, and
    scale to ``MinInt64`` as Go's conversion does (a negative result the caller then refuses).

    Raises:
        IntOrStringError: ``nil value for IntOrString``; ``invalid type: string is not a
            percentage``; ``strconv.ParseFloat: parsing "x": invalid syntax`` (or ``value out of
            range``); ``invalid type: neither int nor percentage`` for other JSON types.
    """
    return _scaled(value, total, round_up, _parse_float)


def get_scaled_int_percent(value: Any, total: int, round_up: bool) -> int:
    """Int as is, ``"<int>%"`` scaled: the values an ``Atoi``-reading controller can use.

    Raises:
        IntOrStringError: as :func:`get_scaled_float_percent`, but the number is parsed like
            ``strconv.Atoi`` (``strconv.Atoi: parsing "5.5": invalid syntax``).
    """
    return _scaled(value, total, round_up, _atoi)


def get_scaled_value(value: Any, total: int, round_up: bool) -> int:
    """apimachinery's ``intstr.GetScaledValueFromIntOrPercent``: int as is, ``"<int>%"`` scaled.

    Raises:
        IntOrStringError: ``nil value for IntOrString``; ``invalid value for IntOrString:
            invalid type: string is not a percentage`` for a string without ``%``;
            ``invalid value for IntOrString: invalid value "x%": strconv.Atoi: ...`` otherwise.
    """
    prefix = "invalid value for IntOrString: "
    if value is None:
        raise IntOrStringError("nil value for IntOrString")
    if isinstance(value, str):
        body = _percent_body(value, prefix)
        try:
            number = _atoi(body)
        except IntOrStringError as err:
            raise IntOrStringError(f"{prefix}invalid value {go_quote(value)}: {err}") from err
        return _scale(number, total, round_up)
    return _check_int(value, prefix)


def get_value(value: Any, total: int, round_up: bool) -> int:
    """Deprecated ``intstr.GetValueFromIntOrPercent``: any string, every ``%`` stripped, is an
    integer percentage (``"5"`` and ``"5%%"`` both mean 5%).

    Raises:
        IntOrStringError: ``nil value for IntOrString``, or ``invalid value for IntOrString:
            invalid value "x": strconv.Atoi: parsing "x": invalid syntax``.
    """
    if value is None:
        raise IntOrStringError("nil value for IntOrString")
    prefix = "invalid value for IntOrString: "
    if isinstance(value, str):
        try:
            number = _atoi(value.replace("%", ""))
        except IntOrStringError as err:
            raise IntOrStringError(f"{prefix}invalid value {go_quote(value)}: {err}") from err
        return _scale(number, total, round_up)
    return _check_int(value, prefix)


_PERCENT = re.compile(r"^[0-9]+%$")
PERCENT_MESSAGE = (
    "a valid percent string must be a numeric string followed by an ending '%' (e.g. '1%',  or '93%', "
    "regex used for validation is '[0-9]+%')"
)
"""``ValidatePositiveIntOrPercent``'s detail for a string that is not ``<digits>%``."""


def percent_value(value: Any) -> int | None:
    """``getPercentValue``: the number of a valid ``"<n>%"``, else ``None``."""
    return int(value[:-1]) if isinstance(value, str) and _PERCENT.match(value) else None


def validate_positive_int_or_percent(value: Any, path: str, *, max_100: bool = True) -> list[FieldError]:
    """``apps/validation.ValidatePositiveIntOrPercent`` then, with ``max_100``,
    ``IsNotMoreThan100Percent``: a negative int, a string that is not ``<digits>%`` and a percentage
    above 100 are each one ``Invalid`` error at ``path`` (Kubernetes' messages)."""
    errs: list[FieldError] = []
    if isinstance(value, str):
        if percent_value(value) is None:
            errs.append(invalid(path, go_int_or_string(value), PERCENT_MESSAGE))
    elif isinstance(value, int) and value < 0:
        errs.append(invalid(path, value, IS_NEGATIVE_ERROR_MSG))
    percent = percent_value(value)
    if max_100 and percent is not None and percent > 100:
        errs.append(invalid(path, go_int_or_string(value), "must not be greater than 100%"))
    return errs
