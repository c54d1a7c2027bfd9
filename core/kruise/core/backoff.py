"""Exponential backoff, and retrying a call through an API server outage.

:class:`Backoff` is client-go's reflector backoff (800 ms doubling to 30 s, with jitter);
:func:`retry_transient` runs one setup step (a webhook configuration, a certificate Secret)
until it gets through, so a manager that starts while the API server is down waits for it,
logging one warning per attempt, instead of crashing and being restarted.
"""

from __future__ import annotations

import asyncio
import logging
import random
from collections.abc import Awaitable, Callable
from typing import TypeVar

from kruise.core.errors import TransientError

T = TypeVar("T")

log = logging.getLogger(__name__)


class Backoff:
    """Exponential backoff with jitter: ``initial`` seconds doubling up to ``cap`` (client-go's
    reflector: 800 ms to 30 s), reset after an attempt that worked."""

    def __init__(self, initial: float = 0.8, cap: float = 30.0) -> None:
        self.initial = initial
        self.cap = cap
        self._next = initial

    def next(self) -> float:
        """The next delay in seconds: the current step times a jitter in [1.0, 1.2)."""
        delay = self._next
        self._next = min(self.cap, self._next * 2)
        return delay * random.uniform(1.0, 1.2)

    def reset(self) -> None:
        self._next = self.initial


async def retry_transient(
    step: Callable[[], Awaitable[T]], what: str, *, backoff: Backoff | None = None
) -> T:
    """``await step()`` until it does not raise :class:`TransientError` (connection refused,
    timeouts, 429, 5xx); each failure logs a warning naming ``what`` and sleeps
    ``backoff.next()`` seconds. Any other error propagates at once; there is no attempt limit
    (cancel the caller to give up)."""
    backoff = backoff or Backoff()
    while True:
        try:
            return await step()
        except TransientError as err:
            delay = backoff.next()
            log.warning("%s failed: %s; retrying in %.1fs", what, err, delay)
            await asyncio.sleep(delay)
