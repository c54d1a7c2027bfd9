"""The manager's /metrics handler: sources read once on the loop, text formatted off the loop."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Mapping
from typing import Any

from kruise.rollouts.manager import metrics

JSON = dict[str, Any]


def cloneset(i: int) -> JSON:
    return {
        "metadata": {"namespace": "endpoint-test", "name": f"cs{i}", "generation": 1},
        "spec": {"replicas": 10, "updateStrategy": {"type": "InPlaceIfPossible", "maxUnavailable": "20%"}},
        "status": {"replicas": 10, "updatedReadyReplicas": 10, "expectedUpdatedReplicas": 10},
    }


async def test_sources_are_read_on_the_loop_thread_once_per_scrape() -> None:
    loop_thread = threading.get_ident()
    reads: list[tuple[str, int]] = []
    objects = [cloneset(i) for i in range(3)]
    rollout = {
        "metadata": {"namespace": "endpoint-test", "name": "web"},
        "spec": {"workloadRef": {"kind": "CloneSet", "name": "cs0"}, "strategy": {"canary": {}}},
        "status": {"phase": "Healthy"},
    }

    def clonesets() -> list[JSON]:
        reads.append(("clonesets", threading.get_ident()))
        return objects

    def rollouts() -> list[JSON]:
        reads.append(("rollouts", threading.get_ident()))
        return [rollout]

    def workload(namespace: str, ref: Mapping[str, Any]) -> JSON | None:
        reads.append(("workload", threading.get_ident()))
        return objects[0] if ref["name"] == "cs0" else None

    sources = metrics.StateSources(clonesets=clonesets, rollouts=rollouts, workload=workload)
    collectors = sources.collectors()
    metrics.register(collectors)
    try:
        serve = metrics.metrics_handler(sources)
        response = await serve(None)  # type: ignore[arg-type]
    finally:
        metrics.unregister(collectors)
    assert sorted(kind for kind, _ in reads) == ["clonesets", "rollouts", "workload"]
    assert {thread for _, thread in reads} == {loop_thread}
    assert response.headers["Content-Type"] == "text/plain; version=0.0.4; charset=utf-8"
    body = response.body.decode()  # type: ignore[union-attr]
    assert 'kruise_cloneset_spec_replicas{cloneset="cs2",namespace="endpoint-test"} 10.0' in body
    assert 'rollout_info_replicas_desired{name="web",namespace="endpoint-test"} 10.0' in body
    assert sources._snapshot is None, "thawed after the scrape"


async def test_a_large_scrape_does_not_stall_the_event_loop() -> None:
    """1,000 CloneSets (~20,000 series): the loop keeps ticking while the text is formatted."""
    objects = [cloneset(i) for i in range(1000)]
    sources = metrics.StateSources(clonesets=lambda: objects)
    collectors = sources.collectors()
    metrics.register(collectors)
    ticks: list[float] = []
    stop = asyncio.Event()

    async def ticker() -> None:
        while not stop.is_set():
            await asyncio.sleep(0.001)
            ticks.append(time.perf_counter())

    task = asyncio.create_task(ticker())
    await asyncio.sleep(0.01)  # the ticker is sleeping when the scrape starts
    try:
        started = time.perf_counter()
        response = await metrics.metrics_handler(sources)(None)  # type: ignore[arg-type]
        ended = time.perf_counter()
    finally:
        stop.set()
        await task
        metrics.unregister(collectors)
    assert response.body.count(b"kruise_cloneset_spec_replicas{") == 1000  # type: ignore[union-attr]
    # formatted on the loop, the scrape would leave the ticker no turn at all until it ended; off
    # the loop the ticker runs all along (counted, not timed: a loaded machine may pause the
    # whole process, which says nothing about the loop)
    during = [t for t in ticks if started < t < ended]
    assert len(during) >= 5, (
        f"the loop ticked {len(during)} times in a {(ended - started) * 1000:.0f} ms scrape"
    )
