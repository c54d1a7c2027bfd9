"""Opt-in memory diagnostics for a long-running process (the manager; issue 28).

Off unless ``KRUISE_MEMTRACE`` names a report file. Then each ``SIGUSR2`` appends to that file
one report: the RSS, the live objects per type (``gc.get_objects``) with their change since the
previous report, and, when ``KRUISE_TRACEMALLOC`` is a positive number of frames,
:mod:`tracemalloc`'s allocations grouped by source line with their change since the previous
report (tracemalloc starts when :func:`install_from_env` runs, so it costs CPU and memory for
the whole run: a diagnostic, never for production). A report stops the event loop while it
walks the objects and takes the snapshot (seconds with tracemalloc on a loaded machine): long
enough, the leader lease is not renewed and the manager exits. The first report is the
baseline; the diffs of later ones show what grew in between::

    KRUISE_MEMTRACE=/tmp/mem.txt KRUISE_TRACEMALLOC=1 kruise manager ...
    kill -USR2 <pid>   # after warm-up, then again later

Nothing in upstream OpenKruise corresponds (Go uses pprof's heap profile).
"""

from __future__ import annotations

import asyncio
import gc
import logging
import os
import signal
import time
import tracemalloc
from collections import Counter
from collections.abc import Mapping
from pathlib import Path
from typing import NamedTuple

log = logging.getLogger(__name__)

TOP = 25
"""Rows of each table in a report."""


class CountChange(NamedTuple):
    """Live objects of one type now, and the change since the previous report."""

    type_name: str
    live: int
    change: int


def type_counts() -> Counter[str]:
    """Live objects tracked by the garbage collector, per type name (``dict``, ``Task``...)."""
    return Counter(type(o).__name__ for o in gc.get_objects())


def count_changes(before: Mapping[str, int], after: Mapping[str, int], top: int = TOP) -> list[CountChange]:
    """The ``top`` types whose count changed most (growth first, by absolute change), with the
    count in ``after``; types absent from one side count 0 there. Unchanged types are left out."""
    changes = [
        CountChange(name, after.get(name, 0), after.get(name, 0) - before.get(name, 0))
        for name in set(before) | set(after)
    ]
    changed = [c for c in changes if c.change]
    changed.sort(key=lambda c: (-abs(c.change), c.type_name))
    return changed[:top]


def _rss_kib() -> int:
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


class MemTrace:
    """Writes the reports to ``path``; keeps the previous counts and snapshot for the diffs."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._counts: Counter[str] = Counter()
        self._snapshot: tracemalloc.Snapshot | None = None
        self._reports = 0

    def report(self) -> str:
        """Take one report, append it to the file and return it."""
        gc.collect()
        counts = type_counts()
        lines = [
            f"=== report {self._reports} at {time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime())}: "
            f"RSS {_rss_kib() / 1024:.1f} MiB, {sum(counts.values())} gc objects",
            "-- objects per type (count, change since the previous report)",
        ]
        lines += [f"{c.live:>10} {c.change:>+9} {c.type_name}" for c in count_changes(self._counts, counts)]
        self._counts = counts
        if tracemalloc.is_tracing():
            snapshot = tracemalloc.take_snapshot().filter_traces(
                (tracemalloc.Filter(False, tracemalloc.__file__),)
            )
            current, _ = tracemalloc.get_traced_memory()
            lines.append(f"-- tracemalloc: {current / 2**20:.1f} MiB traced; by line (size, change, blocks)")
            if self._snapshot is None:
                stats = snapshot.statistics("lineno")[:TOP]
                lines += [f"{s.size / 1024:>10.0f} KiB {'':>10} {s.count:>8} {s.traceback}" for s in stats]
            else:
                diffs = snapshot.compare_to(self._snapshot, "lineno")[:TOP]
                lines += [
                    f"{d.size / 1024:>10.0f} KiB {d.size_diff / 1024:>+9.0f}K {d.count:>8} {d.traceback}"
                    for d in diffs
                ]
            self._snapshot = snapshot
        text = "\n".join(lines) + "\n"
        with self.path.open("a") as out:
            out.write(text)
        self._reports += 1
        return text


def install_from_env(loop: asyncio.AbstractEventLoop, env: Mapping[str, str] = os.environ) -> MemTrace | None:
    """Start the diagnostics if ``KRUISE_MEMTRACE`` is set: tracemalloc with
    ``KRUISE_TRACEMALLOC`` frames (when positive), and a ``SIGUSR2`` handler on ``loop`` that
    writes a report. Returns the tracer, or None when off. Raises ValueError for a
    ``KRUISE_TRACEMALLOC`` that is not an integer."""
    target = env.get("KRUISE_MEMTRACE")
    if not target:
        return None
    frames = int(env.get("KRUISE_TRACEMALLOC") or 0)
    if frames > 0 and not tracemalloc.is_tracing():
        tracemalloc.start(frames)
    trace = MemTrace(Path(target))
    loop.add_signal_handler(signal.SIGUSR2, trace.report)
    log.warning(
        "memory diagnostics on: SIGUSR2 appends a report to %s (tracemalloc frames: %d)", target, frames
    )
    return trace
