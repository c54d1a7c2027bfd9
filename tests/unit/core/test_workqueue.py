"""WorkQueue semantics (client-go workqueue): dedupe, no concurrent processing of a key, delays."""

from __future__ import annotations

import asyncio
import contextlib
import logging

import pytest

from kruise.core.errors import ReportedError, ServerError
from kruise.core.workqueue import Result, WorkQueue


async def test_key_added_twice_is_queued_once() -> None:
    q = WorkQueue()
    q.add("ns/a")
    q.add("ns/a")
    assert len(q) == 1


async def test_key_added_while_processing_is_requeued_after_done() -> None:
    q = WorkQueue()
    q.add("ns/a")
    key = await q.get()
    q.add("ns/a")
    assert len(q) == 0, "must not be handed to a second worker while processing"
    q.done(key)
    assert len(q) == 1


async def test_add_after_keeps_the_earliest_schedule() -> None:
    q = WorkQueue()
    q.add_after("ns/a", 0.05)
    q.add_after("ns/a", 10)
    await asyncio.sleep(0.1)
    assert len(q) == 1


@pytest.mark.parametrize(("failures", "delay"), [(0, 0.005), (1, 0.01), (3, 0.04), (40, 1000.0)])
async def test_rate_limited_backoff_is_exponential_and_capped(failures: int, delay: float) -> None:
    q = WorkQueue()
    for _ in range(failures):
        q.add_rate_limited("k")
    assert q.add_rate_limited("k") == pytest.approx(delay)
    q.forget("k")
    assert q.add_rate_limited("k") == pytest.approx(0.005)


async def test_run_never_reconciles_one_key_concurrently_and_honours_requeue() -> None:
    q = WorkQueue()
    running: set[str] = set()
    overlaps = 0
    calls: list[str] = []

    async def reconcile(key: str) -> Result:
        nonlocal overlaps
        if key in running:
            overlaps += 1
        running.add(key)
        calls.append(key)
        await asyncio.sleep(0.01)
        running.discard(key)
        return Result(requeue_after=0.02 if calls.count(key) < 3 else None)

    task = asyncio.create_task(q.run(reconcile, workers=4, name="t"))
    for _ in range(20):
        q.add("ns/a")
        await asyncio.sleep(0.001)
    await asyncio.sleep(0.3)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert overlaps == 0
    assert calls.count("ns/a") >= 3


async def test_run_backs_off_after_an_exception() -> None:
    q = WorkQueue()
    attempts = 0

    async def reconcile(key: str) -> None:
        nonlocal attempts
        attempts += 1
        if attempts < 3:
            raise RuntimeError("boom")

    task = asyncio.create_task(q.run(reconcile, workers=1, name="t"))
    q.add("k")
    await asyncio.sleep(0.2)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert attempts == 3


async def test_pace_holds_a_key_back_for_pace_times_its_last_reconcile() -> None:
    q = WorkQueue(pace=2.0)
    q.add("ns/a")
    key = await q.get()
    q.done(key, elapsed=0.05)  # next run not before 0.1 s from now
    for _ in range(5):
        q.add("ns/a")
    assert len(q) == 0, "adds within the paced window are held back"
    await asyncio.sleep(0.06)
    assert len(q) == 0
    await asyncio.sleep(0.08)
    assert len(q) == 1, "and coalesced into one run once the window passed"


async def test_pace_applies_to_a_key_made_dirty_while_processing_but_not_to_others() -> None:
    q = WorkQueue(pace=1.0)
    q.add("ns/a")
    key = await q.get()
    q.add("ns/a")
    q.done(key, elapsed=0.1)
    q.add("ns/b")
    assert len(q) == 1, "ns/b is not paced, ns/a waits"
    await asyncio.sleep(0.15)
    assert len(q) == 2


async def test_without_pace_a_slow_reconcile_does_not_delay_the_next() -> None:
    q = WorkQueue()
    q.add("ns/a")
    key = await q.get()
    q.done(key, elapsed=10.0)
    q.add("ns/a")
    assert len(q) == 1


async def test_pace_is_capped() -> None:
    q = WorkQueue(pace=1.0, max_pace=0.05)
    q.add("ns/a")
    key = await q.get()
    q.done(key, elapsed=60.0)
    q.add("ns/a")
    assert len(q) == 0
    await asyncio.sleep(0.1)
    assert len(q) == 1


@pytest.mark.parametrize(
    ("error", "level", "traceback"),
    [
        pytest.param(ReportedError("FailedCreate already an event"), logging.DEBUG, False, id="reported"),
        pytest.param(ServerError(500, "InternalError", "etcd timeout"), logging.WARNING, False, id="api"),
        pytest.param(TypeError("a bug"), logging.ERROR, True, id="a bug keeps its traceback"),
    ],
)
async def test_a_failed_reconcile_is_logged_once_by_kind(
    error: Exception, level: int, traceback: bool, caplog: pytest.LogCaptureFixture
) -> None:
    q = WorkQueue(base_delay=60)
    calls = 0

    async def reconcile(key: str) -> Result:
        nonlocal calls
        calls += 1
        raise error

    caplog.set_level(logging.DEBUG, logger="kruise.core.workqueue")
    q.add("ns/a")
    runner = asyncio.create_task(q.run(reconcile, workers=1, name="t"))
    while calls == 0:
        await asyncio.sleep(0.001)
    await asyncio.sleep(0.01)
    runner.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await runner
    (record,) = [r for r in caplog.records if r.name == "kruise.core.workqueue"]
    assert record.levelno == level
    assert (record.exc_info is not None) is traceback
    assert calls == 1, "backed off, not retried at once"


async def test_keys_of_one_namespace_come_out_in_the_order_they_were_added() -> None:
    q = WorkQueue()
    for name in ("c", "a", "b"):
        q.add(f"ns/{name}")
    assert [await q.get() for _ in range(3)] == ["ns/c", "ns/a", "ns/b"]


async def test_namespaces_take_turns_so_a_busy_one_does_not_starve_another() -> None:
    q = WorkQueue()
    for i in range(1000):
        q.add(f"fleet/app-{i}")
    q.add("other/bystander")
    q.add("cluster-scoped")
    first = [await q.get() for _ in range(3)]
    assert first == ["fleet/app-0", "other/bystander", "cluster-scoped"]
    assert [await q.get() for _ in range(2)] == ["fleet/app-1", "fleet/app-2"]
    assert len(q) == 997


async def test_a_namespace_that_ran_dry_joins_the_turns_again_at_the_back() -> None:
    q = WorkQueue()
    q.add("a/1")
    assert await q.get() == "a/1"
    q.done("a/1")
    q.add("b/1")
    q.add("b/2")
    q.add("a/2")
    assert [await q.get() for _ in range(3)] == ["b/1", "a/2", "b/2"]


async def test_a_dirty_key_requeued_by_done_waits_its_namespaces_turn() -> None:
    q = WorkQueue()
    q.add("a/1")
    key = await q.get()
    q.add("a/1")  # dirty while processed
    q.add("b/1")
    q.done(key)
    assert [await q.get() for _ in range(2)] == ["b/1", "a/1"]


async def test_paces_of_keys_never_added_again_are_swept(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(WorkQueue, "PRUNE_MIN", 4)
    q = WorkQueue(pace=1.0, max_pace=0.01)
    for i in range(4):  # four objects reconciled once, then deleted (never added again)
        q.add(f"ns/gone-{i}")
        q.done(await q.get(), elapsed=1.0)
    assert len(q._not_before) == 4
    await asyncio.sleep(0.03)  # their paces are past
    q.add("ns/live")
    q.done(await q.get(), elapsed=1.0)  # the fifth entry crosses the threshold: expired ones go
    assert set(q._not_before) == {"ns/live"}, "only the still-paced key is held"
    q.add("ns/live")
    assert len(q) == 0, "and its pace still holds it back"


async def test_a_key_whose_asked_for_delay_ran_out_goes_ahead_of_queued_event_keys() -> None:
    q = WorkQueue()
    for i in range(100):  # a fleet release: a hundred workload events queued
        q.add(f"fleet/app-{i}")
    q.add_after("fleet/paused", 0.01)  # a pause that ends now
    await asyncio.sleep(0.05)
    assert await q.get() == "fleet/paused"
    assert await q.get() == "fleet/app-0"


async def test_due_keys_and_event_keys_alternate_so_neither_lane_starves() -> None:
    q = WorkQueue()
    for name in ("e1", "e2", "e3"):
        q.add(f"ns/{name}")
    for name in ("d1", "d2", "d3"):
        q.add_after(f"ns/{name}", 0.01)
    await asyncio.sleep(0.05)
    assert [await q.get() for _ in range(6)] == ["ns/d1", "ns/e1", "ns/d2", "ns/e2", "ns/d3", "ns/e3"]


async def test_an_event_queued_key_moves_to_the_due_lane_when_its_timer_fires() -> None:
    q = WorkQueue()
    q.add("ns/a")
    q.add("ns/b")
    q.add_after("ns/b", 0.01)
    await asyncio.sleep(0.05)
    assert len(q) == 2, "moved, not queued twice"
    assert [await q.get() for _ in range(2)] == ["ns/b", "ns/a"]
    assert len(q) == 0 and not q._ready and not q._due


async def test_a_key_due_while_processed_is_queued_in_the_due_lane_when_done() -> None:
    q = WorkQueue()
    q.add("ns/a")
    key = await q.get()
    q.add("ns/a")  # an event while processed: dirty
    q.add_after("ns/a", 0.01)  # and its time comes too
    await asyncio.sleep(0.05)
    q.add("ns/b")
    q.add("ns/c")
    q.done(key)
    assert [await q.get() for _ in range(3)] == ["ns/a", "ns/b", "ns/c"]


async def test_backoff_retries_are_not_due_they_queue_behind_events() -> None:
    q = WorkQueue()
    q.add_rate_limited("ns/failing")  # retried in 5 ms, as an event
    q.add("ns/a")
    await asyncio.sleep(0.05)
    q.add("ns/b")
    assert [await q.get() for _ in range(3)] == ["ns/a", "ns/failing", "ns/b"]


async def test_a_requeue_after_result_reaches_the_due_lane() -> None:
    q = WorkQueue()
    order: list[str] = []
    release = asyncio.Event()

    async def reconcile(key: str) -> Result | None:
        order.append(key)
        if key == "ns/paused" and order.count(key) == 1:
            return Result(requeue_after=0.05)
        if key == "ns/gate":
            await release.wait()  # holds the one worker while the others queue up
        return None

    q.add("ns/paused")
    task = asyncio.create_task(q.run(reconcile, workers=1, name="t"))
    await asyncio.sleep(0.01)
    q.add("ns/gate")
    await asyncio.sleep(0.01)
    for i in range(5):  # queued before the pause runs out
        q.add(f"ns/event-{i}")
    await asyncio.sleep(0.1)  # the pause ran out while the worker was held
    release.set()
    await asyncio.sleep(0.05)
    task.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await task
    assert order[:4] == ["ns/paused", "ns/gate", "ns/paused", "ns/event-0"]
