"""Durations as kubectl's flags parse them (Go's ``time.ParseDuration``), e.g. ``--timeout 5m``.

A sequence of decimal numbers with a unit each (``ns``, ``us``/``µs``, ``ms``, ``s``, ``m``,
``h``): ``300ms``, ``1.5h``, ``2h45m``; ``0`` needs no unit. A bare number is also taken as
seconds, as this CLI accepted before (Go refuses it).
"""

from __future__ import annotations

import re

_UNITS = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "μs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}
_PART = re.compile(r"(\d+\.?\d*|\.\d+)(ns|us|µs|μs|ms|s|m|h)")


def parse_duration(text: str) -> float:
    """Seconds in ``text``; ``ValueError`` naming the text when it is not a duration."""
    value = text.strip()
    sign = -1.0 if value.startswith("-") else 1.0
    body = value.lstrip("+-")
    if re.fullmatch(r"\d+(\.\d*)?", body):
        return sign * float(body)
    pos, total = 0, 0.0
    while pos < len(body):
        match = _PART.match(body, pos)
        if match is None:
            break
        total += float(match.group(1)) * _UNITS[match.group(2)]
        pos = match.end()
    if not body or pos != len(body):
        raise ValueError(f'invalid duration "{text}": want a number with a unit, e.g. 30s, 5m, 1h30m')
    return sign * total
