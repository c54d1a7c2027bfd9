"""RFC 3339 timestamps as the API server writes them (``metav1.Time``)."""

from __future__ import annotations

import datetime


def fmt_time(moment: datetime.datetime) -> str:
    return moment.astimezone(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def parse_time(value: str | None) -> datetime.datetime | None:
    if not value:
        return None
    return datetime.datetime.fromisoformat(value.replace("Z", "+00:00"))


def seconds_since(value: str | None, now: datetime.datetime) -> float:
    """Seconds from ``value`` to ``now`` (infinite when unset)."""
    then = parse_time(value)
    return float("inf") if then is None else (now - then).total_seconds()
