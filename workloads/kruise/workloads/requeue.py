"""When a workload controller looks again (pure)."""

from __future__ import annotations


def soonest(*delays: float | None) -> float | None:
    """The shortest positive delay in seconds among ``delays`` (``None``: no requeue asked);
    ``None`` when none is positive."""
    found = [d for d in delays if d is not None and d > 0]
    return min(found) if found else None
