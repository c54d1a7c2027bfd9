"""A controller work queue: deduplicated keys, delayed requeues, per-item backoff.

Semantics follow client-go's ``workqueue`` as controller-runtime uses it:

- a key is queued at most once however often it is added;
- a key being processed is never handed to a second worker; adding it meanwhile
  marks it dirty and it is queued again when the first worker is done;
- ``add_after`` schedules a key (the earliest of several schedules wins);
- ``add_rate_limited`` backs off per key exponentially (``base_delay * 2**failures``
  capped at ``max_delay``; kruise-manager's defaults are 5 ms and 1000 s), and
  ``forget`` resets the count after a success.

One addition, ``pace`` (off by default): after a reconcile of a key that took ``d`` seconds,
the key is not handed out again for ``pace * d`` seconds; adds meanwhile are coalesced into
one delayed run. A key whose reconcile is cheap is unaffected; one whose reconcile walks
hundreds of pods on every pod event stops starving the event loop (with ``pace=1`` it gets at
most about half of it), at the cost of reacting at most ``pace * d`` later. The hold is capped
at ``max_pace`` seconds (``d`` is wall time, which a busy loop inflates).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from kruise.core.errors import KruiseError, ReportedError

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Result:
    """What a reconcile asks for: ``requeue_after`` seconds (None = only on events)."""

    requeue_after: float | None = None


Reconcile = Callable[[str], Awaitable[Result | None]]


class WorkQueue:
    """An asyncio work queue of string keys (``namespace/name``)."""

    def __init__(
        self,
        *,
        base_delay: float = 0.005,
        max_delay: float = 1000.0,
        pace: float = 0.0,
        max_pace: float = 1.0,
    ) -> None:
        self._queue: asyncio.Queue[str] = asyncio.Queue()
        self._queued: set[str] = set()
        self._processing: set[str] = set()
        self._dirty: set[str] = set()
        self._timers: dict[str, tuple[float, asyncio.TimerHandle]] = {}
        self._failures: dict[str, int] = {}
        self._not_before: dict[str, float] = {}
        self.base_delay = base_delay
        self.max_delay = max_delay
        self.pace = pace
        self.max_pace = max_pace

    def __len__(self) -> int:
        return len(self._queued)

    def add(self, key: str) -> None:
        """Queue ``key`` now (no-op if already queued; deferred if being processed)."""
        if key in self._processing:
            self._dirty.add(key)
            return
        if key in self._queued:
            return
        not_before = self._not_before.get(key)
        if not_before is not None:
            wait = not_before - time.monotonic()
            if wait > 0:
                self.add_after(key, wait)
                return
            del self._not_before[key]
        self._queued.add(key)
        self._queue.put_nowait(key)

    def add_after(self, key: str, delay: float) -> None:
        """Queue ``key`` after ``delay`` seconds; an earlier pending schedule is kept."""
        if delay <= 0:
            self.add(key)
            return
        due = time.monotonic() + delay
        pending = self._timers.get(key)
        if pending is not None:
            if pending[0] <= due:
                return
            pending[1].cancel()
        handle = asyncio.get_running_loop().call_later(delay, self._fire, key)
        self._timers[key] = (due, handle)

    def _fire(self, key: str) -> None:
        self._timers.pop(key, None)
        self.add(key)

    def add_rate_limited(self, key: str) -> float:
        """Requeue after this key's exponential backoff; returns the delay used."""
        failures = self._failures.get(key, 0)
        self._failures[key] = failures + 1
        delay = float(min(self.base_delay * (2.0**failures), self.max_delay))
        self.add_after(key, delay)
        return delay

    def forget(self, key: str) -> None:
        """Reset the backoff of ``key``."""
        self._failures.pop(key, None)

    async def get(self) -> str:
        key = await self._queue.get()
        self._queued.discard(key)
        self._processing.add(key)
        return key

    def done(self, key: str, elapsed: float = 0.0) -> None:
        """Mark ``key`` processed (its reconcile took ``elapsed`` seconds, for ``pace``)."""
        self._processing.discard(key)
        if self.pace > 0 and elapsed > 0:
            self._not_before[key] = time.monotonic() + min(self.pace * elapsed, self.max_pace)
        if key in self._dirty:
            self._dirty.discard(key)
            self.add(key)

    async def run(self, reconcile: Reconcile, *, workers: int, name: str) -> None:
        """Run ``workers`` loops calling ``reconcile(key)`` until cancelled.

        An exception backs the key off (``add_rate_limited``); a result with
        ``requeue_after`` schedules it again; success resets the backoff. Logging: a
        :class:`~kruise.core.errors.ReportedError` (already an Event and a log line) at DEBUG,
        another :class:`~kruise.core.errors.KruiseError` (an API error, a known failure) as one
        WARNING line, anything else with its traceback (a bug).
        """

        async def worker(index: int) -> None:
            while True:
                key = await self.get()
                started = time.monotonic()
                try:
                    result = await reconcile(key)
                except asyncio.CancelledError:
                    raise
                except ReportedError as err:
                    delay = self.add_rate_limited(key)
                    log.debug("%s: reconcile %s failed: %s; retrying in %.3fs", name, key, err, delay)
                except KruiseError as err:
                    delay = self.add_rate_limited(key)
                    log.warning("%s: reconcile %s failed: %s; retrying in %.3fs", name, key, err, delay)
                except Exception:
                    delay = self.add_rate_limited(key)
                    log.exception("%s: reconcile %s failed; retrying in %.3fs", name, key, delay)
                else:
                    self.forget(key)
                    if result is not None and result.requeue_after is not None:
                        self.add_after(key, result.requeue_after)
                finally:
                    self.done(key, time.monotonic() - started)

        tasks = [asyncio.create_task(worker(i), name=f"{name}-worker-{i}") for i in range(workers)]
        try:
            await asyncio.gather(*tasks)
        finally:
            for task in tasks:
                task.cancel()
            for task in tasks:
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await task
            for _, handle in self._timers.values():
                handle.cancel()
