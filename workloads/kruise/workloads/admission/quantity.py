"""``resource.Quantity`` as the defaulting webhook writes it back: rounded to milli, canonical text.

Upstream decodes the object into Go structs, runs ``SetDefaults_ResourceList`` (round every
quantity *up*, away from zero, to a multiple of 1m) and marshals the struct again, which prints
every quantity in canonical form (``resource.Quantity.CanonicalizeBytes``):

- ``DecimalSI`` (no suffix or ``n u m k M G T P E``) and ``DecimalExponent`` (``e``/``E``): the
  smallest integer mantissa with an exponent that is a multiple of 3 (``"0.5"`` -> ``"500m"``,
  ``"1000"`` -> ``"1k"``, ``"1.5e3"`` -> ``"1500"``, ``"2e6"`` -> ``"2e6"``).
- ``BinarySI`` (``Ki Mi Gi Ti Pi Ei``): the largest power-of-1024 suffix that keeps an integer
  (``"1024Mi"`` -> ``"1Gi"``); values below 1024 or not whole fall back to ``DecimalSI``.
- A string Go's parser would keep verbatim (already canonical, cached in ``Quantity.s``) is kept.

JSON numbers (``cpu: 1``) are read as their decimal text. Strings that are not quantities are
returned unchanged (upstream would reject the whole request when decoding).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from decimal import ROUND_UP, Decimal, localcontext
from typing import Any

__all__ = ["canonical_quantity", "default_resource_list", "quantity_value"]

_NUMBER = re.compile(r"([+-]?)(0*)([0-9]*)(?:\.([0-9]*))?(.*)")
_EXPONENT = re.compile(r"[eE]([+-]?[0-9]+)")
_DECIMAL_SUFFIXES = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
_BINARY_SUFFIXES = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}
_DECIMAL_BY_EXPONENT = {v: k for k, v in _DECIMAL_SUFFIXES.items()}
_BINARY_BY_EXPONENT = {v: k for k, v in _BINARY_SUFFIXES.items()}
_MILLI = Decimal("0.001")


def _parse(text: str) -> tuple[Decimal, str, bool] | None:
    """Parse like ``resource.ParseQuantity``: ``(value, format, keeps_original_text)`` or None."""
    match = _NUMBER.fullmatch(text)
    if not text or match is None:
        return None
    sign, _zeros, num, denom, suffix = match.groups()
    denom = denom or ""
    num = num or "0"
    if suffix in _DECIMAL_SUFFIXES:
        base, exponent, fmt = 10, _DECIMAL_SUFFIXES[suffix], "DecimalSI"
    elif suffix in _BINARY_SUFFIXES:
        base, exponent, fmt = 2, _BINARY_SUFFIXES[suffix], "BinarySI"
    elif (exp_match := _EXPONENT.fullmatch(suffix)) is not None:
        base, exponent, fmt = 10, int(exp_match.group(1)), "DecimalExponent"
    else:
        return None
    with localcontext() as ctx:
        ctx.prec = 200
        magnitude = Decimal(f"{num}.{denom}" if denom else num)
        value = magnitude.scaleb(exponent) if base == 10 else magnitude * (Decimal(2) ** exponent)
        if sign == "-":
            value = -value
    return value, fmt, text == "0" or _cached(num, denom, base, exponent)


def _cached(num: str, denom: str, base: int, exponent: int) -> bool:
    """Whether Go's fast path keeps the input string as the canonical text (``Quantity.s``)."""
    shifted = num + denom
    if base == 2:
        if denom or 15 - len(num) - int(exponent * 3 / 10) - 1 < 0:
            return False
        return int(shifted) & 0x07 != 0
    scale = exponent - len(denom)
    if 18 - len(shifted) < 0 or scale < -9:
        return False
    return scale % 3 == 0 and not shifted.endswith("000") and shifted[0] != "0"


def _remove_factors(value: int, base: int) -> tuple[int, int]:
    times = 0
    while value != 0 and value % base == 0:
        value //= base
        times += 1
    return value, times


def _canonical(value: Decimal, fmt: str) -> str:
    if value == 0:
        return "0"
    if fmt == "BinarySI":
        if -1024 < value < 1024 or value != value.to_integral_value():
            fmt = "DecimalSI"
        else:
            mantissa, times = _remove_factors(int(value), 1024)
            return f"{mantissa}{_BINARY_BY_EXPONENT.get(times * 10, '')}"
    sign, digits, exponent = value.normalize().as_tuple()
    assert isinstance(exponent, int)
    mantissa = int("".join(map(str, digits))) * (-1 if sign else 1)
    shift = exponent % 3
    mantissa, exponent = mantissa * 10**shift, exponent - shift
    if fmt == "DecimalExponent":
        return f"{mantissa}e{exponent}" if exponent else str(mantissa)
    suffix = _DECIMAL_BY_EXPONENT.get(exponent)
    return f"{mantissa}{suffix}" if suffix is not None else f"{mantissa}e{exponent}"


def canonical_quantity(value: Any, *, round_to_milli: bool = True) -> Any:
    """The text Go writes back for a quantity after ``RoundUp(-3)`` (see the module docstring).

    ``value`` is the JSON value (string or number); anything unparsable is returned unchanged.
    """
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        return value
    parsed = _parse(value if isinstance(value, str) else str(value))
    if parsed is None:
        return value
    number, fmt, keep = parsed
    rounded = number
    if round_to_milli:
        with localcontext() as ctx:
            ctx.prec = 200
            rounded = number.quantize(_MILLI, rounding=ROUND_UP)
    if keep and rounded == number and isinstance(value, str):
        return value
    return _canonical(rounded, fmt)


def default_resource_list(resources: Any) -> Any:
    """``SetDefaults_ResourceList`` plus Go's canonical marshalling for every entry of a map."""
    if not isinstance(resources, Mapping):
        return resources
    return {name: canonical_quantity(quantity) for name, quantity in resources.items()}


def quantity_value(value: Any) -> Decimal | None:
    """The number a quantity stands for (``"1Gi"`` -> 1073741824), ``None`` when absent or not a
    quantity; JSON numbers are read as their decimal text."""
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        return None
    parsed = _parse(value if isinstance(value, str) else str(value))
    return None if parsed is None else parsed[0]
