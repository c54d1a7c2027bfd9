"""The manager's ``/metrics``: the default registry plus the scrape-time state collectors.

The state collectors (kruise-state-metrics' CloneSet gauges, Argo Rollouts' Rollout and
AnalysisRun gauges) read objects through :class:`StateSources`, which the manager points at its
caches once it leads (before that, and on replicas that do not lead, they export no series).
The sources are plain callables, so moving the controllers onto another cache only changes the
few lines that assign them.

The endpoint serves the classic text format, ``text/plain; version=0.0.4`` as the Go client does
(every Prometheus parses it), and generates it on the event loop, so collectors read the caches
between two events, never during one.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import prometheus_client
from aiohttp import web
from prometheus_client.exposition import CONTENT_TYPE_PLAIN_0_0_4
from prometheus_client.registry import Collector

from kruise.analysis.metrics import AnalysisRunCollector
from kruise.core.metrics import ObjectProvider
from kruise.rollouts.rollout.metrics import RolloutCollector, WorkloadLookup
from kruise.workloads.cloneset.metrics import CloneSetStateCollector

JSON = dict[str, Any]


def _nothing() -> list[JSON]:
    return []


@dataclass
class StateSources:
    """Where the state collectors read at scrape time (assigned when the caches exist)."""

    clonesets: ObjectProvider = _nothing
    rollouts: ObjectProvider = _nothing
    analysis_runs: ObjectProvider = _nothing
    workload: WorkloadLookup | None = None

    def collectors(self) -> list[Collector]:
        """One collector per kind, reading these sources late (they may be reassigned)."""
        return [
            CloneSetStateCollector(lambda: self.clonesets()),
            RolloutCollector(lambda: self.rollouts(), self._workload),
            AnalysisRunCollector(lambda: self.analysis_runs()),
        ]

    def _workload(self, namespace: str, ref: Mapping[str, Any]) -> Mapping[str, Any] | None:
        return None if self.workload is None else self.workload(namespace, ref)


def index_objects(view: object) -> list[Mapping[str, Any]]:
    """Every object held by a kopf index view (key -> store of objects); none while unbound.

    A stop-gap over ``kruise.core.cache.IndexView`` until the informer's store replaces it.
    """
    index = getattr(view, "_index", None)
    if index is None:
        return []
    stores: Iterable[Iterable[Any]] = index.values()
    return [obj for store in stores for obj in store if isinstance(obj, Mapping)]


def register(collectors: Iterable[Collector]) -> None:
    for collector in collectors:
        prometheus_client.REGISTRY.register(collector)


def unregister(collectors: Iterable[Collector]) -> None:
    for collector in collectors:
        prometheus_client.REGISTRY.unregister(collector)


async def serve_metrics(_: web.Request) -> web.Response:
    """``GET /metrics``: the default registry in Prometheus' text format."""
    return web.Response(
        body=prometheus_client.generate_latest(),
        headers={"Content-Type": CONTENT_TYPE_PLAIN_0_0_4},
    )
