"""Running a round of independent API writes concurrently, a bounded number at a time."""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine, Iterable
from typing import Any, TypeVar

__all__ = ["bounded_gather"]

T = TypeVar("T")


async def bounded_gather(jobs: Iterable[Coroutine[Any, Any, T]], limit: int) -> list[T]:
    """Await ``jobs`` with at most ``limit`` in flight; results in ``jobs``' order.

    The first exception propagates (as ``asyncio.gather``); jobs already started keep running.
    """
    semaphore = asyncio.Semaphore(limit)

    async def run(job: Coroutine[Any, Any, T]) -> T:
        async with semaphore:
            return await job

    return await asyncio.gather(*(run(job) for job in jobs))
