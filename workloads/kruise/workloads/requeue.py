"""When a workload controller looks again (pure)."""

from __future__ import annotations

import datetime


def soonest(*delays: float | None) -> float | None:
    """The shortest positive delay in seconds among ``delays`` (``None``: no requeue asked);
    ``None`` when none is positive."""
    found = [d for d in delays if d is not None and d > 0]
    return min(found) if found else None


def seconds_left(
    since: datetime.datetime | None, seconds: int | None, now: datetime.datetime
) -> float | None:
    """Seconds from ``now`` until ``seconds`` have passed since ``since`` (negative once they have;
    ``None`` without a start or a limit): a job's ``activeDeadlineSeconds`` from its
    ``startTime``, its ``ttlSecondsAfterFinished`` from its ``completionTime``."""
    if since is None or seconds is None:
        return None
    return seconds - (now - since).total_seconds()
