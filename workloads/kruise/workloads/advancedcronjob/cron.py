"""Cron schedules as robfig/cron v3's ``ParseStandard`` reads them (upstream's AdvancedCronJob).

Grammar (:func:`parse_standard`):

- an optional ``TZ=<zone> `` or ``CRON_TZ=<zone> `` prefix (an IANA name, loaded with
  :mod:`zoneinfo`); without it the schedule runs in UTC (upstream: the controller's local zone,
  UTC in its image);
- a descriptor: ``@yearly`` = ``@annually`` (``0 0 1 1 *``), ``@monthly`` (``0 0 1 * *``),
  ``@weekly`` (``0 0 * * 0``), ``@daily`` = ``@midnight`` (``0 0 * * *``), ``@hourly``
  (``0 * * * *``), or ``@every <Go duration>`` (``1h30m``, ``2s``, ``1.5m``...: a constant
  delay, truncated to whole seconds, at least 1 s, that ignores the zone);
- otherwise exactly five whitespace-separated fields, minute (0-59), hour (0-23), day of month
  (1-31), month (1-12 or ``jan``-``dec``), day of week (0-6 or ``sun``-``sat``; 7 is rejected, as
  v3); each a comma list of ``*``/``?``, ``N``, ``N-M``, optionally ``/STEP`` (``N/STEP`` means
  ``N-max/STEP``); names are case-insensitive. If either day field is a ``*`` (or ``*/1``), both
  day fields must match; otherwise either may match (Vixie cron's rule, as robfig).

Errors raise :class:`CronError` with robfig's texts (``expected exactly 5 fields, found 4: ...``).

``next(t)`` (:meth:`SpecSchedule.next`) mirrors robfig's ``SpecSchedule.Next`` step for step: from
the next whole second, it walks month, day, hour, minute (whole-second 0 only), each field
advanced in *wall-clock* terms for months and days (Go ``AddDate``) and in *absolute* time for
hours and minutes (Go ``Add``). Consequences on DST change days, which the tests pin:

- spring forward: wall times in the gap never occur, so a ``30 2 * * *`` run in New York is
  skipped that day (next is 02:30 the day after), while ``@hourly``/``0 * * * *`` just has one
  run fewer;
- fall back: wall times in the repeated hour occur twice, so ``30 1 * * *`` in New York runs at
  01:30 EDT *and* at 01:30 EST (an hour apart);
- a truncation to a wall time (``time.Date``) picks the offset as Go does
  (:func:`_go_date`), which for ambiguous times depends on the zone's offset sign.

No run later than five years ahead: ``next`` returns ``None`` (robfig's zero time), e.g. for
``0 0 30 2 *``.
"""

from __future__ import annotations

import datetime
import re
from dataclasses import dataclass
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

__all__ = [
    "ConstantDelaySchedule",
    "CronError",
    "Schedule",
    "SpecSchedule",
    "parse_go_duration",
    "parse_standard",
]

UTC = datetime.UTC
STAR_BIT = 1 << 63

_MONTH_NAMES = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")
_MONTHS = {n: i + 1 for i, n in enumerate(_MONTH_NAMES)}
_DOWS = {n: i for i, n in enumerate(["sun", "mon", "tue", "wed", "thu", "fri", "sat"])}


@dataclass(frozen=True)
class _Bounds:
    lo: int
    hi: int
    names: dict[str, int] | None = None


_MINUTE, _HOUR, _DOM = _Bounds(0, 59), _Bounds(0, 23), _Bounds(1, 31)
_MONTH, _DOW = _Bounds(1, 12, _MONTHS), _Bounds(0, 6, _DOWS)


class CronError(ValueError):
    """An unparseable schedule; the text is robfig/cron v3's."""


def _bits(lo: int, hi: int, step: int) -> int:
    if step == 1:
        return ~(((1 << 64) - 1) << (hi + 1)) & (((1 << 64) - 1) << lo) & ((1 << 64) - 1)
    out = 0
    for i in range(lo, hi + 1, step):
        out |= 1 << i
    return out


def _parse_uint(expr: str) -> int:
    if not re.fullmatch(r"[+-]?[0-9]+", expr):
        raise CronError(f'failed to parse int from {expr}: strconv.Atoi: parsing "{expr}": invalid syntax')
    num = int(expr)
    if num < 0:
        raise CronError(f"negative number ({num}) not allowed: {expr}")
    return num


def _int_or_name(expr: str, b: _Bounds) -> int:
    if b.names is not None and expr.lower() in b.names:
        return b.names[expr.lower()]
    return _parse_uint(expr)


def _range(expr: str, b: _Bounds) -> int:
    range_and_step = expr.split("/")
    low_high = range_and_step[0].split("-")
    extra = 0
    if low_high[0] in ("*", "?"):
        start, end, extra = b.lo, b.hi, STAR_BIT
    else:
        start = _int_or_name(low_high[0], b)
        if len(low_high) == 1:
            end = start
        elif len(low_high) == 2:
            end = _int_or_name(low_high[1], b)
        else:
            raise CronError(f"too many hyphens: {expr}")
    if len(range_and_step) == 1:
        step = 1
    elif len(range_and_step) == 2:
        step = _parse_uint(range_and_step[1])
        if len(low_high) == 1:
            end = b.hi
        if step > 1:
            extra = 0
    else:
        raise CronError(f"too many slashes: {expr}")
    if start < b.lo:
        raise CronError(f"beginning of range ({start}) below minimum ({b.lo}): {expr}")
    if end > b.hi:
        raise CronError(f"end of range ({end}) above maximum ({b.hi}): {expr}")
    if start > end:
        raise CronError(f"beginning of range ({start}) beyond end of range ({end}): {expr}")
    if step == 0:
        raise CronError(f"step of range should be a positive number: {expr}")
    return _bits(start, end, step) | extra


def _field(text: str, b: _Bounds) -> int:
    out = 0
    for part in text.split(","):
        out |= _range(part, b)
    return out


# --- Go time emulation -----------------------------------------------------------------------


def _offset(instant: int, loc: datetime.tzinfo) -> int:
    off = datetime.datetime.fromtimestamp(instant, loc).utcoffset()
    return int(off.total_seconds()) if off is not None else 0


def _go_date(y: int, mo: int, d: int, h: int, mi: int, s: int, loc: datetime.tzinfo) -> int:
    """Go's ``time.Date(y, mo, d, h, mi, s, 0, loc)`` as unix seconds: out-of-range month and day
    normalise forward; a wall time in a gap or overlap takes the offset found at (wall time read
    as UTC), re-looked-up at the resulting instant when that instant lies outside its period."""
    y += (mo - 1) // 12
    mo = (mo - 1) % 12 + 1
    base = datetime.datetime(y, mo, 1, tzinfo=UTC) + datetime.timedelta(
        days=d - 1, hours=h, minutes=mi, seconds=s
    )
    local = int(base.timestamp())
    off = _offset(local, loc)
    off2 = _offset(local - off, loc)
    return local - off2


def _wall(instant: int, loc: datetime.tzinfo) -> datetime.datetime:
    return datetime.datetime.fromtimestamp(instant, loc)


class Schedule:
    """A parsed schedule: :meth:`next` gives the first activation strictly after ``t``."""

    def next(self, t: datetime.datetime) -> datetime.datetime | None:  # pragma: no cover - abstract
        raise NotImplementedError


@dataclass(frozen=True)
class ConstantDelaySchedule(Schedule):
    """``@every D``: ``next(t) = t + delay`` with t's sub-second part dropped (robfig's
    ``ConstantDelaySchedule``). ``delay_seconds`` is whole seconds, >= 1."""

    delay_seconds: int

    def next(self, t: datetime.datetime) -> datetime.datetime:
        return t.replace(microsecond=0) + datetime.timedelta(seconds=self.delay_seconds)


@dataclass(frozen=True)
class SpecSchedule(Schedule):
    """A five-field schedule (seconds fixed at 0) in zone ``location`` (bit sets per field,
    ``STAR_BIT`` marking a ``*``)."""

    minute: int
    hour: int
    dom: int
    month: int
    dow: int
    location: datetime.tzinfo = UTC

    def _day_matches(self, w: datetime.datetime) -> bool:
        dom_match = bool(1 << w.day & self.dom)
        dow_match = bool(1 << ((w.weekday() + 1) % 7) & self.dow)
        if self.dom & STAR_BIT or self.dow & STAR_BIT:
            return dom_match and dow_match
        return dom_match or dow_match

    def next(self, t: datetime.datetime) -> datetime.datetime | None:
        """The first activation after ``t`` (an aware datetime), in t's zone; ``None`` when there
        is none within five years. Mirrors robfig's ``SpecSchedule.Next`` (see the module doc)."""
        loc = self.location
        orig = t.tzinfo or UTC
        u = int(t.timestamp() // 1) + 1  # the upcoming whole second
        added = False
        year_limit = _wall(u, loc).year + 5
        while True:  # WRAP
            w = _wall(u, loc)
            if w.year > year_limit:
                return None
            wrapped = False
            while not (1 << w.month & self.month):
                if not added:
                    added = True
                    u = _go_date(w.year, w.month, 1, 0, 0, 0, loc)
                    w = _wall(u, loc)
                u = _go_date(w.year, w.month + 1, w.day, w.hour, w.minute, w.second, loc)
                w = _wall(u, loc)
                if w.month == 1:
                    wrapped = True
                    break
            if wrapped:
                continue
            while not self._day_matches(w):
                if not added:
                    added = True
                    u = _go_date(w.year, w.month, w.day, 0, 0, 0, loc)
                    w = _wall(u, loc)
                u = _go_date(w.year, w.month, w.day + 1, w.hour, w.minute, w.second, loc)
                w = _wall(u, loc)
                if w.hour != 0:
                    u += (24 - w.hour) * 3600 if w.hour > 12 else -w.hour * 3600
                    w = _wall(u, loc)
                if w.day == 1:
                    wrapped = True
                    break
            if wrapped:
                continue
            while not (1 << w.hour & self.hour):
                if not added:
                    added = True
                    u = _go_date(w.year, w.month, w.day, w.hour, 0, 0, loc)
                u += 3600
                w = _wall(u, loc)
                if w.hour == 0:
                    wrapped = True
                    break
            if wrapped:
                continue
            while not (1 << w.minute & self.minute):
                if not added:
                    added = True
                    u -= u % 60
                u += 60
                w = _wall(u, loc)
                if w.minute == 0:
                    wrapped = True
                    break
            if wrapped:
                continue
            while w.second != 0:  # the standard parser's seconds field is "0"
                if not added:
                    added = True
                u += 1
                w = _wall(u, loc)
                if w.second == 0:
                    wrapped = True
                    break
            if wrapped:
                continue
            return datetime.datetime.fromtimestamp(u, orig)


_DESCRIPTORS = {
    "@yearly": "0 0 1 1 *",
    "@annually": "0 0 1 1 *",
    "@monthly": "0 0 1 * *",
    "@weekly": "0 0 * * 0",
    "@daily": "0 0 * * *",
    "@midnight": "0 0 * * *",
    "@hourly": "0 * * * *",
}

_GO_UNITS = {
    "ns": 1,
    "us": 1_000,
    "µs": 1_000,
    "μs": 1_000,
    "ms": 1_000_000,
    "s": 1_000_000_000,
    "m": 60_000_000_000,
    "h": 3_600_000_000_000,
}
_GO_DURATION_PART = re.compile(r"([0-9]*(?:\.[0-9]*)?)([^0-9.]+)")


def parse_go_duration(text: str) -> int:
    """Go's ``time.ParseDuration``: ``[-+]?(<decimal><unit>)+`` or ``0``, units ns, us, µs, ms,
    s, m, h. Returns nanoseconds; raises :class:`CronError` (Go's ``time: invalid duration``
    texts) otherwise."""
    orig = text
    sign = 1
    if text[:1] in "+-" and text:
        sign = -1 if text[0] == "-" else 1
        text = text[1:]
    if text == "0":
        return 0
    if not text:
        raise CronError(f'time: invalid duration "{orig}"')
    total = 0
    pos = 0
    while pos < len(text):
        m = _GO_DURATION_PART.match(text, pos)
        if m is None or m.group(1) in ("", "."):
            raise CronError(f'time: invalid duration "{orig}"')
        unit = m.group(2)
        if unit not in _GO_UNITS:
            raise CronError(f'time: unknown unit "{unit}" in duration "{orig}"')
        num = m.group(1)
        whole, _, frac = num.partition(".")
        scale = _GO_UNITS[unit]
        total += int(whole or "0") * scale
        if frac:
            total += int(frac) * scale // (10 ** len(frac))
        pos = m.end()
    return sign * total


def _zone(name: str) -> datetime.tzinfo:
    if name in ("", "UTC"):
        return UTC
    if name == "Local":
        return UTC
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError) as exc:
        raise CronError(f"provided bad location {name}: unknown time zone {name}") from exc


def parse_standard(spec: str) -> Schedule:
    """Parse ``spec`` as robfig/cron v3's ``ParseStandard`` (grammar in the module doc).

    Returns a :class:`SpecSchedule` or :class:`ConstantDelaySchedule`; raises :class:`CronError`.
    """
    if not spec:
        raise CronError("empty spec string")
    loc: datetime.tzinfo = UTC
    if spec.startswith(("TZ=", "CRON_TZ=")):
        space = spec.find(" ")
        if space < 0:
            raise CronError(f"provided bad location {spec[spec.find('=') + 1 :]}: missing schedule")
        loc = _zone(spec[spec.find("=") + 1 : space])
        spec = spec[space:].strip()
    if spec.startswith("@"):
        if spec.startswith("@every "):
            try:
                nanos = parse_go_duration(spec[len("@every ") :])
            except CronError as exc:
                raise CronError(f"failed to parse duration {spec}: {exc}") from exc
            return ConstantDelaySchedule(max(1, nanos // 1_000_000_000))
        if spec not in _DESCRIPTORS:
            raise CronError(f"unrecognized descriptor: {spec}")
        spec = _DESCRIPTORS[spec]
    fields = spec.split()
    if len(fields) != 5:
        raise CronError(f"expected exactly 5 fields, found {len(fields)}: [{' '.join(fields)}]")
    return SpecSchedule(
        minute=_field(fields[0], _MINUTE),
        hour=_field(fields[1], _HOUR),
        dom=_field(fields[2], _DOM),
        month=_field(fields[3], _MONTH),
        dow=_field(fields[4], _DOW),
        location=loc,
    )
