"""The opt-in memory diagnostics: type-count diffs, the report file, and off by default."""

from __future__ import annotations

import asyncio
import os
import signal
import tracemalloc
from pathlib import Path

from kruise.core import memtrace
from kruise.core.memtrace import CountChange, MemTrace, count_changes


def test_count_changes_lists_growth_and_shrinkage_by_size_and_skips_unchanged() -> None:
    before = {"dict": 100, "Task": 10, "list": 5}
    after = {"dict": 130, "Task": 2, "list": 5, "Future": 1}
    assert count_changes(before, after) == [
        CountChange("dict", 130, 30),
        CountChange("Task", 2, -8),
        CountChange("Future", 1, 1),
    ]
    assert count_changes(before, after, top=1) == [CountChange("dict", 130, 30)]


class Held:
    pass


def test_a_second_report_shows_what_grew_in_between(tmp_path: Path) -> None:
    out = tmp_path / "mem.txt"
    trace = MemTrace(out)
    tracemalloc.start(1)
    try:
        trace.report()
        held = [Held() for _ in range(5000)]
        text = trace.report()
    finally:
        tracemalloc.stop()
    assert len(held) == 5000
    assert "=== report 1" in text
    row = next(line for line in text.splitlines() if line.endswith(" Held"))
    assert row.split()[:2] == [str(5000), "+5000"]
    assert "test_memtrace.py" in text.split("-- tracemalloc")[1], "the allocating line is named"
    assert out.read_text().count("=== report") == 2


async def test_off_without_the_variable_and_sigusr2_reports_with_it(tmp_path: Path) -> None:
    loop = asyncio.get_running_loop()
    assert memtrace.install_from_env(loop, {}) is None
    out = tmp_path / "mem.txt"
    trace = memtrace.install_from_env(loop, {"KRUISE_MEMTRACE": str(out)})
    try:
        assert trace is not None
        os.kill(os.getpid(), signal.SIGUSR2)
        for _ in range(50):
            await asyncio.sleep(0.02)
            if out.exists():
                break
        assert "objects per type" in out.read_text()
        assert "tracemalloc" not in out.read_text(), "no tracemalloc without KRUISE_TRACEMALLOC"
    finally:
        loop.remove_signal_handler(signal.SIGUSR2)
