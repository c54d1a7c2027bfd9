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

Keys wait in one FIFO per namespace (the part of ``namespace/name`` before the slash; keys
without one share a bucket), and workers take from the namespaces in turn: one namespace with
a thousand keys queued (a fleet released at once) delays another namespace's key by at most one
key per busy namespace, not by the thousand. With a single namespace this is client-go's FIFO.
(client-go's queue is one FIFO; the API server's Priority and Fairness shares its own seats
between flows in the same spirit.)

A key whose time has come goes ahead (ours; client-go appends it at the tail): when the delay a
reconcile asked for (``Result.requeue_after``, :meth:`WorkQueue.add_after`) runs out, the key
joins a second lane, and workers take from that lane and from the namespaces' turns alternately.
A Rollout whose pause ends, an analysis interval, a deadline, waits behind at most as many other
due keys, not behind the hundreds of event-driven keys a fleet release queues (one event key is
served between two due keys, so neither lane starves). A key already queued by an event moves to
the due lane when its timer fires; a key being processed is queued in the due lane when done.
Backoff retries (``add_rate_limited``) and pacing holds are not due: they queue as events do.

A queue with a ``name`` exports client-go's ``workqueue_*`` series (labels ``name`` and
``controller`` = the name) and, from :meth:`WorkQueue.run`, controller-runtime's
``controller_runtime_*`` reconcile series (label ``controller``), see :mod:`kruise.core.metrics`.
As in client-go: an add counts once per key until it is handed out (the queue duration runs
from that first add); every ``add_after``/``add_rate_limited`` with a positive delay (a
requeue with ``requeue_after``, a backoff) is a retry; depth counts the keys waiting, including
a key re-added while it is processed. The pacing hold is neither an add nor a retry until the
held key is queued.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from kruise.core.errors import FencedError, KruiseError, ReportedError
from kruise.core.metrics import (
    RESULT_ERROR,
    RESULT_REQUEUE,
    RESULT_REQUEUE_AFTER,
    RESULT_SUCCESS,
    QueueMetrics,
)

log = logging.getLogger(__name__)


def namespace_of(key: str) -> str:
    """The namespace of a ``namespace/name`` key; ``""`` for a key without a slash."""
    namespace, slash, _ = key.partition("/")
    return namespace if slash else ""


@dataclass(frozen=True)
class Result:
    """What a reconcile asks for: ``requeue_after`` seconds (None = only on events)."""

    requeue_after: float | None = None


Reconcile = Callable[[str], Awaitable[Result | None]]


class WorkQueue:
    """An asyncio work queue of string keys (``namespace/name``).

    ``name`` (the controller's, e.g. ``cloneset-controller``) labels the queue's metrics; without
    one the queue exports none (as client-go's unnamed queues).
    """

    PRUNE_MIN = 1024
    """Paced keys (``pace`` > 0) held before the expired ones are swept: a key never added again
    (its object was deleted) would otherwise keep its entry for the life of the process."""

    def __init__(
        self,
        *,
        name: str = "",
        base_delay: float = 0.005,
        max_delay: float = 1000.0,
        pace: float = 0.0,
        max_pace: float = 1.0,
    ) -> None:
        self._ready: dict[str, deque[str]] = {}  # namespace -> its queued keys; dict order = turn order
        self._due: deque[str] = deque()  # keys whose asked-for delay ran out (ahead of the turns)
        self._due_set: set[str] = set()
        self._due_turn = True  # the next key comes from the due lane (if it has one)
        self._available: asyncio.Queue[None] = asyncio.Queue()  # one token per queued key
        self._queued: set[str] = set()
        self._processing: dict[str, float] = {}  # key -> monotonic time it was handed out
        self._dirty: dict[str, bool] = {}  # key re-added while processed -> to the due lane
        self._timers: dict[str, tuple[float, asyncio.TimerHandle]] = {}
        self._failures: dict[str, int] = {}
        self._not_before: dict[str, float] = {}
        self._prune_not_before_at = self.PRUNE_MIN  # sweep the expired paces past this many entries
        self._added_at: dict[str, float] = {}  # key -> monotonic time of its first add (metrics only)
        self.base_delay = base_delay
        self.max_delay = max_delay
        self.pace = pace
        self.max_pace = max_pace
        self.name = name
        self.metrics: QueueMetrics | None = QueueMetrics(name, self) if name else None

    def __len__(self) -> int:
        return len(self._queued)

    # ------------------------------------------------------------------ scrape-time probes
    def depth(self) -> int:
        """Keys waiting to be handed out (queued, or re-added while being processed)."""
        return len(self._queued) + len(self._dirty)

    def active_workers(self) -> int:
        """Keys being processed right now (one per busy worker)."""
        return len(self._processing)

    # the two below run in the scrape's thread: list() copies the values in one step
    def unfinished_work_seconds(self) -> float:
        """Seconds the keys being processed have been processed, summed."""
        now = time.monotonic()
        return sum(now - started for started in list(self._processing.values()))

    def longest_running_processor_seconds(self) -> float:
        """Seconds the longest-processed key has been processed (0 when idle)."""
        started = list(self._processing.values())
        return time.monotonic() - min(started) if started else 0.0

    # ------------------------------------------------------------------ queue
    def add(self, key: str) -> None:
        """Queue ``key`` now (no-op if already queued; deferred if being processed)."""
        self._add(key, True)

    def _add(self, key: str, fresh: bool, due: bool = False) -> None:
        # ``fresh``: a caller's add (counted); False when done() requeues a dirty key.
        # ``due``: the key's asked-for delay ran out (the due lane)
        if key in self._processing:
            if key not in self._dirty:
                self._dirty[key] = due
                if fresh and self.metrics is not None:
                    self._count_add(key, self.metrics)
            elif due:
                self._dirty[key] = True
            return
        if key in self._queued:
            if due and key not in self._due_set:  # queued by an event: its time has come, move it
                namespace = namespace_of(key)
                bucket = self._ready[namespace]
                bucket.remove(key)
                if not bucket:
                    del self._ready[namespace]
                self._due.append(key)
                self._due_set.add(key)
            return
        not_before = self._not_before.get(key)
        if not_before is not None:
            wait = not_before - time.monotonic()
            if wait > 0:
                self._schedule(key, wait, due)
                return
            del self._not_before[key]
        self._queued.add(key)
        if due:
            self._due.append(key)
            self._due_set.add(key)
        else:
            self._ready.setdefault(namespace_of(key), deque()).append(key)
        self._available.put_nowait(None)
        if fresh and self.metrics is not None:
            self._count_add(key, self.metrics)

    def _count_add(self, key: str, metrics: QueueMetrics) -> None:
        if key not in self._added_at:  # once until handed out
            metrics.adds.inc()
            self._added_at[key] = time.monotonic()

    def add_after(self, key: str, delay: float) -> None:
        """Queue ``key`` after ``delay`` seconds, in the due lane (ahead of the namespaces'
        turns, alternately with them); an earlier pending schedule is kept. ``delay`` <= 0 is
        :meth:`add`."""
        self._retry(key, delay, due=True)

    def _retry(self, key: str, delay: float, due: bool) -> None:
        if delay <= 0:
            self.add(key)
            return
        if self.metrics is not None:
            self.metrics.retries.inc()
        self._schedule(key, delay, due)

    def _schedule(self, key: str, delay: float, due: bool) -> None:
        at = time.monotonic() + delay
        pending = self._timers.get(key)
        if pending is not None:
            if pending[0] <= at:
                return
            pending[1].cancel()
        handle = asyncio.get_running_loop().call_later(delay, self._fire, key, due)
        self._timers[key] = (at, handle)

    def _fire(self, key: str, due: bool) -> None:
        self._timers.pop(key, None)
        self._add(key, True, due)

    def add_rate_limited(self, key: str) -> float:
        """Requeue after this key's exponential backoff (as an event, not in the due lane);
        returns the delay used."""
        failures = self._failures.get(key, 0)
        self._failures[key] = failures + 1
        delay = float(min(self.base_delay * (2.0**failures), self.max_delay))
        self._retry(key, delay, due=False)
        return delay

    def forget(self, key: str) -> None:
        """Reset the backoff of ``key``."""
        self._failures.pop(key, None)

    async def get(self) -> str:
        """The next key: the oldest due key and the oldest of the namespace whose turn it is,
        alternately (that namespace then goes to the back of the turn order if it has more);
        whichever lane has keys when the other has none."""
        await self._available.get()
        if self._due and (self._due_turn or not self._ready):
            key = self._due.popleft()
            self._due_set.discard(key)
            self._due_turn = False
        else:
            namespace = next(iter(self._ready))
            bucket = self._ready.pop(namespace)
            key = bucket.popleft()
            if bucket:
                self._ready[namespace] = bucket
            self._due_turn = True
        self._queued.discard(key)
        now = time.monotonic()
        self._processing[key] = now
        if self.metrics is not None:
            added = self._added_at.pop(key, None)
            if added is not None:
                self.metrics.queue_duration.observe(now - added)
        return key

    def done(self, key: str, elapsed: float = 0.0) -> None:
        """Mark ``key`` processed (its reconcile took ``elapsed`` seconds, for ``pace``)."""
        started = self._processing.pop(key, None)
        if self.metrics is not None and started is not None:
            self.metrics.work_duration.observe(time.monotonic() - started)
        if self.pace > 0 and elapsed > 0:
            self._not_before[key] = time.monotonic() + min(self.pace * elapsed, self.max_pace)
            if len(self._not_before) > self._prune_not_before_at:
                self._prune_not_before()
        if key in self._dirty:
            self._add(key, False, self._dirty.pop(key))

    def _prune_not_before(self) -> None:
        """Drop the paces already past (amortised: the next sweep waits until the map doubles)."""
        now = time.monotonic()
        self._not_before = {k: due for k, due in self._not_before.items() if due > now}
        self._prune_not_before_at = max(self.PRUNE_MIN, 2 * len(self._not_before))

    async def run(self, reconcile: Reconcile, *, workers: int, name: str | None = None) -> None:
        """Run ``workers`` loops calling ``reconcile(key)`` until cancelled.

        An exception backs the key off (``add_rate_limited``); a result with
        ``requeue_after`` schedules it again; success resets the backoff. Each reconcile is
        counted by result as controller-runtime does: ``error`` (an exception), ``requeue``
        (``requeue_after`` <= 0), ``requeue_after`` (> 0) or ``success``. ``name`` (for logs and
        task names) defaults to the queue's; an unnamed queue takes it and starts exporting.
        Logging: a :class:`~kruise.core.errors.ReportedError` (already an Event and a log line)
        at DEBUG, another :class:`~kruise.core.errors.KruiseError` (an API error, a known
        failure) as one WARNING line, anything else with its traceback (a bug).
        """
        if name is None:
            name = self.name or "workqueue"
        elif not self.name:
            self.name, self.metrics = name, QueueMetrics(name, self)
        metrics = self.metrics
        if metrics is not None:
            metrics.set_workers(workers)

        async def worker(index: int) -> None:
            while True:
                key = await self.get()
                started = time.monotonic()
                outcome = RESULT_SUCCESS
                try:
                    result = await reconcile(key)
                except asyncio.CancelledError:
                    outcome = ""  # not a reconcile result
                    raise
                except FencedError as err:  # the lease is gone: the runtime is about to stop us
                    outcome = RESULT_ERROR
                    log.info("%s: reconcile %s not written: %s", name, key, err)
                except ReportedError as err:
                    outcome = RESULT_ERROR
                    delay = self.add_rate_limited(key)
                    log.debug("%s: reconcile %s failed: %s; retrying in %.3fs", name, key, err, delay)
                except KruiseError as err:
                    outcome = RESULT_ERROR
                    delay = self.add_rate_limited(key)
                    log.warning("%s: reconcile %s failed: %s; retrying in %.3fs", name, key, err, delay)
                except Exception:
                    outcome = RESULT_ERROR
                    delay = self.add_rate_limited(key)
                    log.exception("%s: reconcile %s failed; retrying in %.3fs", name, key, delay)
                else:
                    self.forget(key)
                    if result is not None and result.requeue_after is not None:
                        outcome = RESULT_REQUEUE_AFTER if result.requeue_after > 0 else RESULT_REQUEUE
                        self.add_after(key, result.requeue_after)
                finally:
                    elapsed = time.monotonic() - started
                    if metrics is not None and outcome:
                        metrics.reconciled(outcome, elapsed)
                    self.done(key, elapsed)

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
