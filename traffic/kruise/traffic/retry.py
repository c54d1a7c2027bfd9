"""Optimistic concurrency for the routers' writes.

Every write carries the ``resourceVersion`` it was computed from (a replace of the read object,
or a merge patch with ``metadata.resourceVersion``). When someone else wrote in between, the API
server answers 409 Conflict; we re-read, decide again and retry a few times, as upstream's
``retry.RetryOnConflict`` around its HTTPRoute updates, before handing the conflict to the
caller's requeue.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TypeVar

from kruise.core.errors import ConflictError

T = TypeVar("T")

CONFLICT_ATTEMPTS = 3


async def retry_on_conflict(attempt: Callable[[], Awaitable[T]], attempts: int = CONFLICT_ATTEMPTS) -> T:
    """Run ``attempt`` (read, decide, write) again after a ConflictError, up to ``attempts`` times."""
    for remaining in range(attempts - 1, -1, -1):
        try:
            return await attempt()
        except ConflictError:
            if remaining == 0:
                raise
    raise AssertionError("unreachable")  # pragma: no cover
