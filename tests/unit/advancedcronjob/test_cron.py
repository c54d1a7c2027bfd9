"""The cron grammar against robfig/cron v3's own tables (``parser_test.go``, ``spec_test.go``),
restated for the five-field standard parser (its seconds column, always 0, dropped), plus
Europe/Berlin DST days."""

from __future__ import annotations

import datetime as dt
from zoneinfo import ZoneInfo

import pytest

from kruise.workloads.advancedcronjob.cron import (
    STAR_BIT,
    ConstantDelaySchedule,
    CronError,
    SpecSchedule,
    _Bounds,
    _range,
    parse_go_duration,
    parse_standard,
)

UTC = dt.UTC
NY = "TZ=America/New_York "


def utc(text: str) -> dt.datetime:
    return dt.datetime.strptime(text, "%b %d %H:%M %Y").replace(tzinfo=UTC)


@pytest.mark.parametrize(
    ("expr", "lo", "hi", "bits"),
    [
        ("5", 0, 7, 1 << 5),
        ("0", 0, 7, 1 << 0),
        ("7", 0, 7, 1 << 7),
        ("5-5", 0, 7, 1 << 5),
        ("5-6", 0, 7, 1 << 5 | 1 << 6),
        ("5-7", 0, 7, 1 << 5 | 1 << 6 | 1 << 7),
        ("5-6/2", 0, 7, 1 << 5),
        ("5-7/2", 0, 7, 1 << 5 | 1 << 7),
        ("5-7/1", 0, 7, 1 << 5 | 1 << 6 | 1 << 7),
        ("*", 1, 3, 1 << 1 | 1 << 2 | 1 << 3 | STAR_BIT),
        ("*/2", 1, 3, 1 << 1 | 1 << 3),
    ],
)
def test_range(expr: str, lo: int, hi: int, bits: int) -> None:
    """robfig TestRange, valid rows."""
    assert _range(expr, _Bounds(lo, hi)) == bits


@pytest.mark.parametrize(
    ("expr", "lo", "hi", "err"),
    [
        ("5--5", 0, 0, "too many hyphens"),
        ("jan-x", 0, 0, "failed to parse int from"),
        ("2-x", 1, 5, "failed to parse int from"),
        ("*/-12", 0, 0, "negative number"),
        ("*//2", 0, 0, "too many slashes"),
        ("1", 3, 5, "below minimum"),
        ("6", 3, 5, "above maximum"),
        ("5-3", 3, 5, "beyond end of range"),
        ("*/0", 0, 0, "should be a positive number"),
    ],
)
def test_range_errors(expr: str, lo: int, hi: int, err: str) -> None:
    """robfig TestRange, error rows."""
    with pytest.raises(CronError, match=err):
        _range(expr, _Bounds(lo, hi))


@pytest.mark.parametrize(
    ("spec", "err"),
    [
        ("* 5 j * *", "failed to parse int from"),
        ("@every Xm", "failed to parse duration"),
        ("@unrecognized", "unrecognized descriptor"),
        ("* * * *", "expected exactly 5 fields, found 4: \\[\\* \\* \\* \\*\\]"),
        ("* * * * * *", "expected exactly 5 fields, found 6"),
        ("", "empty spec string"),
        ("0 0 * * 7", "above maximum \\(6\\)"),
        ("TZ=Mars/Olympus * * * * *", "provided bad location Mars/Olympus"),
        ("@Daily", "unrecognized descriptor"),
    ],
)
def test_parse_errors(spec: str, err: str) -> None:
    """robfig TestParseScheduleErrors / TestStandardSpecSchedule error rows (v3: dow 0-6 only,
    descriptors case-sensitive)."""
    with pytest.raises(CronError, match=err):
        parse_standard(spec)


def test_standard_forms() -> None:
    """robfig TestStandardSpecSchedule and the descriptors' expansions."""
    assert parse_standard("5 * * * *") == parse_standard("5 */1 * * ?")
    assert parse_standard("@every 5m") == ConstantDelaySchedule(300)
    assert parse_standard("@every 1.5s") == ConstantDelaySchedule(1)
    assert parse_standard("@every 100ms") == ConstantDelaySchedule(1)
    assert parse_standard("@every 1h2m3s") == ConstantDelaySchedule(3723)
    for descriptor, expanded in (
        ("@yearly", "0 0 1 1 *"),
        ("@annually", "0 0 1 1 *"),
        ("@monthly", "0 0 1 * *"),
        ("@weekly", "0 0 * * 0"),
        ("@daily", "0 0 * * *"),
        ("@midnight", "0 0 * * *"),
        ("@hourly", "0 * * * *"),
    ):
        assert parse_standard(descriptor) == parse_standard(expanded), descriptor
    assert parse_standard("0 0 * jan-MAR Mon-fri") == parse_standard("0 0 * 1-3 1-5")
    berlin = parse_standard("CRON_TZ=Europe/Berlin 0 9 * * *")
    assert isinstance(berlin, SpecSchedule) and berlin.location == ZoneInfo("Europe/Berlin")
    assert parse_standard("TZ=UTC   0 9 * * *") == parse_standard("0 9 * * *")


@pytest.mark.parametrize(
    ("text", "nanos"),
    [("0", 0), ("2s", 2_000_000_000), ("1.5m", 90_000_000_000), ("-1h", -3_600_000_000_000), ("3us", 3000)],
)
def test_go_duration(text: str, nanos: int) -> None:
    assert parse_go_duration(text) == nanos


@pytest.mark.parametrize("text", ["", "1", "1x", ".s", "s"])
def test_go_duration_errors(text: str) -> None:
    with pytest.raises(CronError):
        parse_go_duration(text)


@pytest.mark.parametrize(
    ("when", "spec", "expected"),
    [
        ("Jul 09 15:00 2012", "0/15 * * * *", True),
        ("Jul 09 15:45 2012", "0/15 * * * *", True),
        ("Jul 09 15:40 2012", "0/15 * * * *", False),
        ("Jul 09 15:05 2012", "5/15 * * * *", True),
        ("Jul 09 15:20 2012", "5/15 * * * *", True),
        ("Jul 09 15:50 2012", "5/15 * * * *", True),
        ("Jul 15 15:00 2012", "0/15 * * * *", True),
        ("Jul 15 00:00 2012", "* * 1,15 * Sun", True),
        ("Jun 15 00:00 2012", "* * 1,15 * Sun", True),
        ("Aug 01 00:00 2012", "* * 1,15 * Sun", True),
        ("Jul 15 00:00 2012", "* * * * Mon", False),
        ("Jul 15 00:00 2012", "* * */10 * Sun", True),
        ("Jul 09 00:00 2012", "* * 1,15 * *", False),
        ("Jul 15 00:00 2012", "* * 1,15 * *", True),
        ("Jul 15 00:00 2012", "* * */2 * Sun", True),
    ],
)
def test_activation(when: str, spec: str, expected: bool) -> None:
    """robfig TestActivation: a time is an activation iff next(t - 1s) == t."""
    t = utc(when)
    assert (parse_standard(spec).next(t - dt.timedelta(seconds=1)) == t) is expected


@pytest.mark.parametrize(
    ("start", "spec", "expected"),
    [
        ("Jul 09 14:45 2012", "0/15 * * * *", "Jul 09 15:00 2012"),
        ("Jul 09 14:59 2012", "0/15 * * * *", "Jul 09 15:00 2012"),
        ("Jul 09 15:45 2012", "20-35/15 * * * *", "Jul 09 16:20 2012"),
        ("Jul 09 23:46 2012", "*/15 * * * *", "Jul 10 00:00 2012"),
        ("Jul 09 23:45 2012", "20-35/15 * * * *", "Jul 10 00:20 2012"),
        ("Jul 09 23:35 2012", "0 0 9 Apr-Oct ?", "Aug 09 00:00 2012"),
        ("Jul 09 23:35 2012", "0 0 */5 Apr,Aug,Oct Mon", "Aug 01 00:00 2012"),
        ("Jul 09 23:35 2012", "0 0 */5 Oct Mon", "Oct 01 00:00 2012"),
        ("Jul 09 23:35 2012", "0 0 * Feb Mon", "Feb 04 00:00 2013"),
        ("Jul 09 23:35 2012", "0 0 * Feb Mon/2", "Feb 01 00:00 2013"),
        ("Dec 31 23:59 2012", "* * * * *", "Jan 01 00:00 2013"),
        ("Jul 09 23:35 2012", "0 0 29 Feb ?", "Feb 29 00:00 2016"),
    ],
)
def test_next(start: str, spec: str, expected: str) -> None:
    """robfig TestNext (UTC rows)."""
    assert parse_standard(spec).next(utc(start)) == utc(expected)


@pytest.mark.parametrize("spec", ["0 0 30 Feb ?", "0 0 31 Apr ?"])
def test_unsatisfiable(spec: str) -> None:
    """robfig TestNext: no activation within five years gives the zero time (None)."""
    assert parse_standard(spec).next(utc("Jul 09 23:35 2012")) is None


def iso(text: str) -> dt.datetime:
    return dt.datetime.strptime(text, "%Y-%m-%dT%H:%M:%S%z")


@pytest.mark.parametrize(
    ("start", "spec", "expected"),
    [
        # spring forward 2012-03-11, 2am EST (-5) -> 3am EDT (-4)
        ("2012-03-11T00:00:00-0500", NY + "30 2 11 Mar ?", "2013-03-11T02:30:00-0400"),
        ("2012-03-11T00:00:00-0500", NY + "0 * * * ?", "2012-03-11T01:00:00-0500"),
        ("2012-03-11T01:00:00-0500", NY + "0 * * * ?", "2012-03-11T03:00:00-0400"),
        ("2012-03-11T03:00:00-0400", NY + "0 * * * ?", "2012-03-11T04:00:00-0400"),
        ("2012-03-11T00:00:00-0500", NY + "0 1 * * ?", "2012-03-11T01:00:00-0500"),
        ("2012-03-11T01:00:00-0500", NY + "0 1 * * ?", "2012-03-12T01:00:00-0400"),
        ("2012-03-11T00:00:00-0500", NY + "0 2 * * ?", "2012-03-12T02:00:00-0400"),
        # fall back 2012-11-04, 2am EDT (-4) -> 1am EST (-5)
        ("2012-11-04T00:00:00-0400", NY + "30 2 04 Nov ?", "2012-11-04T02:30:00-0500"),
        ("2012-11-04T01:45:00-0400", NY + "30 1 04 Nov ?", "2012-11-04T01:30:00-0500"),
        ("2012-11-04T00:00:00-0400", NY + "0 * * * ?", "2012-11-04T01:00:00-0400"),
        ("2012-11-04T01:00:00-0400", NY + "0 * * * ?", "2012-11-04T01:00:00-0500"),
        ("2012-11-04T01:00:00-0500", NY + "0 * * * ?", "2012-11-04T02:00:00-0500"),
        ("2012-11-04T00:00:00-0400", NY + "0 1 * * ?", "2012-11-04T01:00:00-0400"),
        ("2012-11-04T01:00:00-0400", NY + "0 1 * * ?", "2012-11-04T01:00:00-0500"),
        ("2012-11-04T01:00:00-0500", NY + "0 1 * * ?", "2012-11-05T01:00:00-0500"),
        ("2012-11-04T00:00:00-0400", NY + "0 2 * * ?", "2012-11-04T02:00:00-0500"),
        ("2012-11-04T02:00:00-0500", NY + "0 2 * * ?", "2012-11-05T02:00:00-0500"),
        ("2012-11-04T00:00:00-0400", NY + "0 3 * * ?", "2012-11-04T03:00:00-0500"),
        ("2012-11-04T03:00:00-0500", NY + "0 3 * * ?", "2012-11-05T03:00:00-0500"),
        ("2012-11-04T00:00:00-0400", NY + "0 3 3 * ?", "2012-12-03T03:00:00-0500"),
        # Europe/Berlin: spring forward 2024-03-31 02:00 CET (+1) -> 03:00 CEST (+2)
        ("2024-03-31T00:00:00+0100", "TZ=Europe/Berlin 30 2 * * *", "2024-04-01T02:30:00+0200"),
        ("2024-03-31T01:00:00+0100", "TZ=Europe/Berlin 0 * * * *", "2024-03-31T03:00:00+0200"),
        ("2024-03-31T00:00:00+0100", "TZ=Europe/Berlin 0 3 * * *", "2024-03-31T03:00:00+0200"),
        # fall back 2024-10-27 03:00 CEST (+2) -> 02:00 CET (+1): 02:30 happens twice
        ("2024-10-27T00:00:00+0200", "TZ=Europe/Berlin 30 2 * * *", "2024-10-27T02:30:00+0200"),
        ("2024-10-27T02:30:00+0200", "TZ=Europe/Berlin 30 2 * * *", "2024-10-27T02:30:00+0100"),
        ("2024-10-27T02:30:00+0100", "TZ=Europe/Berlin 30 2 * * *", "2024-10-28T02:30:00+0100"),
        ("2024-10-27T02:00:00+0200", "TZ=Europe/Berlin 0 * * * *", "2024-10-27T02:00:00+0100"),
    ],
)
def test_next_across_dst(start: str, spec: str, expected: str) -> None:
    """robfig TestNext's DST rows (America/New_York, 2012) and the same rules on Europe/Berlin's
    2024 change days: a wall time in the spring gap is skipped that day, one in the autumn
    overlap runs twice, hourly schedules follow absolute hours."""
    got = parse_standard(spec).next(iso(start))
    assert got is not None
    assert got == iso(expected)


def test_every_ignores_zone_and_drops_subseconds() -> None:
    """``@every``: t + delay with t's sub-second part dropped (robfig ConstantDelaySchedule)."""
    t = dt.datetime(2024, 3, 31, 1, 59, 59, 700_000, tzinfo=ZoneInfo("Europe/Berlin"))
    got = parse_standard("TZ=Europe/Berlin @every 2s").next(t)
    assert got == t.replace(microsecond=0) + dt.timedelta(seconds=2)
