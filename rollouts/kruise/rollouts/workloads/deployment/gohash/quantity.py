"""``resource.ParseQuantity`` as the Go value it leaves (pure), for :mod:`.spew`.

A ``resource.Quantity`` is printed by spew with its unexported internals::

    {i:(resource.int64Amount){value:(int64)100 scale:(resource.Scale)-3}
     d:(resource.infDecAmount){Dec:(*inf.Dec)<nil>} s:(string)100m Format:(resource.Format)DecimalSI}

so the hash depends on exactly which of the two representations ``ParseQuantity`` picks and on
whether it keeps the input string as the cached canonical form ``s``. This is a port of
``ParseQuantity``/``parseQuantityString`` of k8s.io/apimachinery (identical in v0.28.9 and
v0.37.2, ``pkg/api/resource/quantity.go``): the int64 fast path, and otherwise the ``inf.Dec``
path (value shifted by its suffix, rounded up to nano scale, capped at ``MaxInt64`` for
binary-SI, negated back), whose ``big.Int`` is printed as its sign and its 64-bit words.

:func:`parse_quantity` returns the Go value in the shape :mod:`.spew` prints (a ``dict`` per
struct, ``None`` for nil pointers); it raises :class:`ValueError` where ``ParseQuantity``
returns an error.
"""

from __future__ import annotations

from typing import Any

_INT64_MAX = (1 << 63) - 1
_INT64_MIN = -(1 << 63)
_MAX_INT64_FACTORS = 18
_NANO = -9
_DECIMAL_SUFFIXES = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
_BINARY_SUFFIXES = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}
_SUFFIX_CHARS = set("eEinumkKMGTP")
_DIGITS = set("0123456789")
_WORD_BITS = 64  # big.Word on amd64/arm64


def _split(text: str) -> tuple[bool, str, str, str, str]:
    """``parseQuantityString``: ``(positive, value, num, denom, suffix)``."""
    positive, pos, end = True, 0, len(text)
    if pos < end and text[0] in "+-":
        positive = text[0] != "-"
        pos += 1
    while pos < end and text[pos] == "0":  # leading zeros
        pos += 1
    if pos >= end:
        return positive, "0", "0", "", ""
    start = pos
    while pos < end and text[pos] in _DIGITS:
        pos += 1
    if pos >= end:
        return positive, text, text[start:], "", ""
    num = text[start:pos] or "0"
    denom = ""
    if text[pos] == ".":
        pos += 1
        dstart = pos
        while pos < end and text[pos] in _DIGITS:
            pos += 1
        denom = text[dstart:pos]
        if pos >= end:
            return positive, text, num, denom, ""
    value = text[:pos]
    suffix_start = pos
    while pos < end and text[pos] in _SUFFIX_CHARS:
        pos += 1
    if pos < end and text[pos] in "+-":
        pos += 1
    while pos < end and text[pos] in _DIGITS:
        pos += 1
    if pos < end:
        raise ValueError(f"quantities must match the regular expression: {text!r}")
    return positive, value, num, denom, text[suffix_start:]


def _interpret(suffix: str) -> tuple[int, int, str]:
    """``quantitySuffixer.interpret``: ``(base, exponent, format)``."""
    if suffix in _DECIMAL_SUFFIXES:
        return 10, _DECIMAL_SUFFIXES[suffix], "DecimalSI"
    if suffix in _BINARY_SUFFIXES:
        return 2, _BINARY_SUFFIXES[suffix], "BinarySI"
    if len(suffix) > 1 and suffix[0] in "eE":
        exp = suffix[1:]
        body = exp[1:] if exp[:1] in "+-" else exp
        if body and set(body) <= _DIGITS and _INT64_MIN <= int(exp) <= _INT64_MAX:
            return 10, _wrap_int32(int(exp)), "DecimalExponent"
    raise ValueError(f"unable to parse quantity's suffix: {suffix!r}")


def _wrap_int32(value: int) -> int:
    return (value + (1 << 31)) % (1 << 32) - (1 << 31)


def _go_float32_mul(exponent: int) -> int:
    """``int32(float32(exponent)*3/10)`` for the small exponents of binary suffixes."""
    return int(exponent * 3 / 10)


def _quantity(value: int, scale: int, fmt: str, text: str, dec: tuple[int, int] | None) -> dict[str, Any]:
    out: dict[str, Any] = {"i": {"value": value, "scale": scale}, "s": text, "Format": fmt}
    if dec is not None:
        unscaled, dec_scale = dec
        words = []
        rest = abs(unscaled)
        while rest:
            words.append(rest & ((1 << _WORD_BITS) - 1))
            rest >>= _WORD_BITS
        out["d"] = {"Dec": {"unscaled": {"neg": unscaled < 0, "abs": words or None}, "scale": dec_scale}}
    return out


def parse_quantity(text: str) -> dict[str, Any]:
    """The Go ``resource.Quantity`` value ``ParseQuantity(text)`` returns (see the module docstring)."""
    if not text:
        raise ValueError("quantities must match the regular expression")
    if text == "0":
        return _quantity(0, 0, "DecimalSI", text, None)
    positive, value, num, denom, suffix = _split(text)
    base, exponent, fmt = _interpret(suffix)
    precision, scale, mantissa = 0, 0, 1
    if fmt in ("DecimalExponent", "DecimalSI"):
        scale = exponent
        precision = _MAX_INT64_FACTORS - (len(num) + len(denom))
    elif exponent >= 0 and not denom:
        mantissa = 1 << exponent
        precision = 15 - len(num) - _go_float32_mul(exponent) - 1
    else:
        precision = -1
    if precision >= 0:
        scale -= len(denom)
        if scale >= _NANO:
            shifted = num + denom
            parsed = int(shifted)
            if parsed > _INT64_MAX:
                raise ValueError(f"unable to parse quantity's numeric part: {text!r}")
            result = parsed * mantissa
            if _INT64_MIN <= result <= _INT64_MAX:  # int64Multiply did not overflow
                result = result if positive else -result
                if fmt == "BinarySI":
                    canonical = exponent % 10 == 0 and parsed & 0x07 != 0
                else:
                    canonical = scale % 3 == 0 and not shifted.endswith("000") and shifted[0] != "0"
                return _quantity(result, scale, fmt, text if canonical else "", None)
    unscaled, dec_scale = _dec_from_string(value)
    if base == 10:
        dec_scale -= exponent
    else:
        unscaled <<= exponent
    sign = -1 if unscaled < 0 else (1 if unscaled else 0)
    unscaled = abs(unscaled)
    if unscaled:  # Round(amount, 9, RoundUp): to nano scale, away from zero
        if dec_scale <= -_NANO:
            unscaled *= 10 ** (-_NANO - dec_scale)
        else:
            unscaled = -(-unscaled // 10 ** (dec_scale + _NANO))
        dec_scale = -_NANO
    if fmt == "BinarySI" and _dec_cmp(unscaled, dec_scale, _INT64_MAX, 0) > 0:
        unscaled, dec_scale = _INT64_MAX, 0
    if fmt == "BinarySI" and _dec_cmp(unscaled, dec_scale, 1, 0) < 0 and unscaled > 0:
        fmt = "DecimalSI"
    if sign == -1:
        unscaled = -unscaled
    return _quantity(0, 0, fmt, "", (unscaled, dec_scale))


def _dec_from_string(value: str) -> tuple[int, int]:
    """``inf.Dec.SetString``: the unscaled integer and the number of fraction digits."""
    sign = -1 if value.startswith("-") else 1
    body = value.lstrip("+-")
    whole, _, frac = body.partition(".")
    if not (whole + frac) or not set(whole + frac) <= _DIGITS:
        raise ValueError(f"unable to parse quantity's numeric part: {value!r}")
    return sign * int(whole + frac), len(frac)


def _dec_cmp(a: int, a_scale: int, b: int, b_scale: int) -> int:
    """``inf.Dec.Cmp`` of ``a * 10**-a_scale`` and ``b * 10**-b_scale``: -1, 0 or 1."""
    top = max(a_scale, b_scale)
    x, y = a * pow(10, top - a_scale), b * pow(10, top - b_scale)
    return int(x > y) - int(x < y)
