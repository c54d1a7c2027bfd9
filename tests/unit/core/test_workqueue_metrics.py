"""WorkQueue metrics: client-go's workqueue_* and controller-runtime's reconcile series.

Each test uses its own queue name, so the process-wide default registry does not mix tests.
"""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from collections.abc import Callable

import pytest
from prometheus_client import REGISTRY

from kruise.core.workqueue import Result, WorkQueue

SLOW = 0.3
"""Seconds ns/slow is held: above the 0.25 s bucket every other reconcile stays under."""


async def until(condition: Callable[[], bool], timeout: float = 10.0) -> None:
    """Poll ``condition`` until it holds (AssertionError after ``timeout`` seconds)."""
    deadline = asyncio.get_running_loop().time() + timeout
    while not condition():
        assert asyncio.get_running_loop().time() < deadline, "condition not reached in time"
        await asyncio.sleep(0.005)


def fresh_name() -> str:
    return f"test-{uuid.uuid4().hex[:8]}"


def queue_value(metric: str, name: str) -> float:
    value = REGISTRY.get_sample_value(metric, {"name": name, "controller": name})
    assert value is not None, f"{metric}{{name={name}}} not exported"
    return value


def controller_value(metric: str, name: str, **labels: str) -> float:
    value = REGISTRY.get_sample_value(metric, {"controller": name, **labels})
    assert value is not None, f"{metric}{{controller={name}, {labels}}} not exported"
    return value


async def test_an_add_counts_once_until_the_key_is_handed_out() -> None:
    name = fresh_name()
    q = WorkQueue(name=name)
    q.add("ns/a")
    q.add("ns/a")
    q.add("ns/b")
    assert queue_value("workqueue_adds_total", name) == 2
    assert queue_value("workqueue_depth", name) == 2
    key = await q.get()
    assert queue_value("workqueue_depth", name) == 1
    assert queue_value("workqueue_queue_duration_seconds_count", name) == 1
    q.add(key)  # re-added while processing: waits in the dirty set, counted once
    q.add(key)
    assert queue_value("workqueue_adds_total", name) == 3
    assert queue_value("workqueue_depth", name) == 2
    q.done(key)
    assert queue_value("workqueue_work_duration_seconds_count", name) == 1
    assert queue_value("workqueue_adds_total", name) == 3, "the dirty key's requeue is not a new add"
    assert queue_value("workqueue_depth", name) == 2


async def test_delayed_adds_are_retries_and_count_as_adds_when_they_fire() -> None:
    name = fresh_name()
    q = WorkQueue(name=name)
    q.add_after("ns/a", 0.01)
    q.add_rate_limited("ns/b")
    q.add_after("ns/c", 0)  # no delay: a plain add
    assert queue_value("workqueue_retries_total", name) == 2
    assert queue_value("workqueue_adds_total", name) == 1
    await asyncio.sleep(0.05)
    assert queue_value("workqueue_adds_total", name) == 3
    assert queue_value("workqueue_depth", name) == 3


async def test_the_pacing_hold_is_not_a_retry() -> None:
    name = fresh_name()
    q = WorkQueue(name=name, pace=1.0)
    q.add("ns/a")
    key = await q.get()
    q.done(key, elapsed=0.02)
    q.add(key)  # held for 20 ms, then queued
    assert queue_value("workqueue_retries_total", name) == 0
    assert queue_value("workqueue_depth", name) == 0
    await asyncio.sleep(0.06)
    assert queue_value("workqueue_depth", name) == 1
    assert queue_value("workqueue_adds_total", name) == 2


async def test_run_counts_reconciles_by_result_and_reports_busy_workers() -> None:
    name = fresh_name()
    q = WorkQueue(name=name)
    release = asyncio.Event()
    outcomes = {"ns/ok": [None], "ns/now": [Result(0), None], "ns/later": [Result(60)]}

    async def reconcile(key: str) -> Result | None:
        if key == "ns/slow":
            await release.wait()
            return None
        if key == "ns/boom":
            raise RuntimeError("reconcile failed")
        return outcomes[key].pop(0)

    total = "controller_runtime_reconcile_total"
    runner = asyncio.create_task(q.run(reconcile, workers=3))
    try:
        await asyncio.sleep(0)
        assert controller_value("controller_runtime_max_concurrent_reconciles", name) == 3
        q.add("ns/slow")
        await until(lambda: controller_value("controller_runtime_active_workers", name) == 1)
        await asyncio.sleep(SLOW)
        assert controller_value("controller_runtime_active_workers", name) == 1
        assert queue_value("workqueue_unfinished_work_seconds", name) >= SLOW
        assert queue_value("workqueue_longest_running_processor_seconds", name) >= SLOW
        for key in ("ns/ok", "ns/now", "ns/later", "ns/boom"):
            q.add(key)
        await until(lambda: controller_value(total, name, result="requeue_after") == 1)
        await until(lambda: controller_value(total, name, result="success") == 2)  # ns/ok, ns/now
        release.set()
        await until(lambda: controller_value(total, name, result="success") == 3)
        await until(lambda: controller_value("controller_runtime_active_workers", name) == 0)
    finally:
        runner.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await runner
    assert controller_value(total, name, result="requeue") == 1  # ns/now, then a success
    assert controller_value(total, name, result="requeue_after") == 1
    assert controller_value(total, name, result="error") >= 1  # ns/boom, backing off
    assert controller_value(total, name, result="success") == 3  # ns/ok, ns/now, ns/slow
    errors = controller_value("controller_runtime_reconcile_errors_total", name)
    assert errors == controller_value(total, name, result="error")
    reconciles = sum(
        controller_value(total, name, result=r) for r in ("success", "error", "requeue", "requeue_after")
    )
    assert controller_value("controller_runtime_reconcile_time_seconds_count", name) == reconciles
    assert controller_value("controller_runtime_active_workers", name) == 0
    assert queue_value("workqueue_longest_running_processor_seconds", name) == 0
    slow = REGISTRY.get_sample_value(
        "controller_runtime_reconcile_time_seconds_bucket", {"controller": name, "le": "0.25"}
    )
    assert slow is not None and slow == reconciles - 1, "only ns/slow took longer than 250 ms"


async def test_an_unnamed_queue_exports_nothing_until_run_names_it() -> None:
    q = WorkQueue()
    q.add("ns/a")
    assert q.metrics is None
    assert REGISTRY.get_sample_value("workqueue_adds_total", {"name": "", "controller": ""}) is None
    name = fresh_name()
    done = asyncio.Event()

    async def reconcile(key: str) -> None:
        done.set()

    runner = asyncio.create_task(q.run(reconcile, workers=1, name=name))
    try:
        await asyncio.wait_for(done.wait(), 1)
        await asyncio.sleep(0)
    finally:
        runner.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await runner
    assert q.name == name
    assert controller_value("controller_runtime_reconcile_total", name, result="success") == 1


@pytest.mark.parametrize(
    ("metric", "help_text"),
    [
        ("workqueue_depth", "Current depth of workqueue"),
        ("workqueue_adds", "Total number of adds handled by workqueue"),
        ("controller_runtime_reconcile", "Total number of reconciliations per controller"),
        ("controller_runtime_reconcile_time_seconds", "Length of time per reconciliation per controller"),
    ],
)
def test_help_texts_are_upstreams(metric: str, help_text: str) -> None:
    families = {f.name: f for f in REGISTRY.collect()}
    assert families[metric].documentation == help_text


def test_queue_duration_buckets_print_as_go_prints_them() -> None:
    from prometheus_client import generate_latest

    WorkQueue(name="bucket-probe").add("k")
    text = generate_latest().decode()
    assert 'workqueue_queue_duration_seconds_bucket{controller="bucket-probe",le="1e-08"' in text
    assert (
        'workqueue_queue_duration_seconds_bucket{controller="bucket-probe",le="9.999999999999999e-06"' in text
    )
    assert "_created" not in text
