"""The manager's ``/metrics``: the default registry plus the scrape-time state collectors.

The state collectors (kruise-state-metrics' CloneSet, StatefulSet, DaemonSet and BroadcastJob gauges, Argo
Rollouts' Rollout and AnalysisRun gauges) read objects through :class:`StateSources`, which the
manager points at the runtime's shared informers (:func:`read_informers`) while it leads.
Standby replicas keep warm informers too, but export no state series, so a Prometheus scraping
every replica sees each object once.

The endpoint serves the classic text format, ``text/plain; version=0.0.4`` as the Go client does
(every Prometheus parses it), from a snapshot of the sources taken on the event loop and
formatted in a worker thread (see :func:`metrics_handler`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import prometheus_client
from aiohttp import web
from prometheus_client.exposition import CONTENT_TYPE_PLAIN_0_0_4
from prometheus_client.registry import Collector

from kruise.analysis.metrics import AnalysisRunCollector
from kruise.analysis.resources import ANALYSIS_RUNS
from kruise.core.kube.resources import (
    BROADCASTJOBS,
    CLONESETS,
    DAEMONSETS,
    SIDECARSETS,
    STATEFULSETS,
    Resource,
)
from kruise.core.metrics import ObjectProvider, object_key, read_objects
from kruise.core.runtime import Informers
from kruise.rollouts.resources import ROLLOUTS
from kruise.rollouts.rollout.metrics import RolloutCollector, WorkloadLookup
from kruise.rollouts.workloads.registry import kind_for
from kruise.workloads.broadcastjob.metrics import BroadcastJobStateCollector
from kruise.workloads.cloneset.metrics import CloneSetStateCollector
from kruise.workloads.daemonset.metrics import DaemonSetStateCollector
from kruise.workloads.sidecarset.metrics import SidecarSetStateCollector
from kruise.workloads.statefulset.metrics import StatefulSetStateCollector

JSON = dict[str, Any]
WorkloadKey = tuple[str, str, str]
"""(namespace, kind, name) of a Rollout's workload."""


def _nothing() -> list[JSON]:
    return []


@dataclass(frozen=True)
class _Snapshot:
    clonesets: list[Mapping[str, Any]]
    statefulsets: list[Mapping[str, Any]]
    daemonsets: list[Mapping[str, Any]]
    broadcastjobs: list[Mapping[str, Any]]
    sidecarsets: list[Mapping[str, Any]]
    rollouts: list[Mapping[str, Any]]
    analysis_runs: list[Mapping[str, Any]]
    workloads: dict[WorkloadKey, Mapping[str, Any] | None]


def _workload_key(namespace: str, ref: Mapping[str, Any]) -> WorkloadKey:
    return namespace, str(ref.get("kind")), str(ref.get("name"))


@dataclass
class StateSources:
    """Where the state collectors read at scrape time (assigned when the caches exist).

    :meth:`freeze` reads every source once, on the event loop; until :meth:`thaw` the collectors
    read that snapshot, so the scrape can be formatted in a worker thread without touching the
    live caches (which the loop keeps changing). Unfrozen, they read the sources directly.
    """

    clonesets: ObjectProvider = _nothing
    statefulsets: ObjectProvider = _nothing
    daemonsets: ObjectProvider = _nothing
    broadcastjobs: ObjectProvider = _nothing
    sidecarsets: ObjectProvider = _nothing
    rollouts: ObjectProvider = _nothing
    analysis_runs: ObjectProvider = _nothing
    workload: WorkloadLookup | None = None
    _snapshot: _Snapshot | None = None

    def collectors(self) -> list[Collector]:
        """One collector per kind, reading these sources late (they may be reassigned)."""
        return [
            CloneSetStateCollector(lambda: self._read("clonesets")),
            StatefulSetStateCollector(lambda: self._read("statefulsets")),
            DaemonSetStateCollector(lambda: self._read("daemonsets")),
            BroadcastJobStateCollector(lambda: self._read("broadcastjobs")),
            SidecarSetStateCollector(lambda: self._read("sidecarsets")),
            RolloutCollector(lambda: self._read("rollouts"), self._workload),
            AnalysisRunCollector(lambda: self._read("analysis_runs")),
        ]

    def freeze(self) -> None:
        rollouts = read_objects(self.rollouts, "Rollouts")
        workloads: dict[WorkloadKey, Mapping[str, Any] | None] = {}
        for rollout in rollouts:
            ref = (rollout.get("spec") or {}).get("workloadRef")
            if isinstance(ref, Mapping):
                namespace = object_key(rollout)[0]
                workloads[_workload_key(namespace, ref)] = self._live_workload(namespace, ref)
        self._snapshot = _Snapshot(
            read_objects(self.clonesets, "CloneSets"),
            read_objects(self.statefulsets, "StatefulSets"),
            read_objects(self.daemonsets, "DaemonSets"),
            read_objects(self.broadcastjobs, "BroadcastJobs"),
            read_objects(self.sidecarsets, "SidecarSets"),
            rollouts,
            read_objects(self.analysis_runs, "AnalysisRuns"),
            workloads,
        )

    def thaw(self) -> None:
        self._snapshot = None

    def clear(self) -> None:
        """Read nothing again (the caches are going away)."""
        self.clonesets = self.statefulsets = self.daemonsets = self.broadcastjobs = self.sidecarsets = (
            _nothing
        )
        self.rollouts = self.analysis_runs = _nothing
        self.workload = None

    def _read(self, kind: str) -> list[Mapping[str, Any]]:
        snapshot = self._snapshot
        if snapshot is not None:
            objects: list[Mapping[str, Any]] = getattr(snapshot, kind)
            return objects
        provider: ObjectProvider = getattr(self, kind)
        return list(provider())

    def _workload(self, namespace: str, ref: Mapping[str, Any]) -> Mapping[str, Any] | None:
        snapshot = self._snapshot
        if snapshot is not None:
            return snapshot.workloads.get(_workload_key(namespace, ref))
        return self._live_workload(namespace, ref)

    def _live_workload(self, namespace: str, ref: Mapping[str, Any]) -> Mapping[str, Any] | None:
        try:
            return None if self.workload is None else self.workload(namespace, ref)
        except Exception:
            return None  # a broken lookup costs the replica gauges, not the scrape


def read_informers(sources: StateSources, informers: Informers) -> None:
    """Point ``sources`` at the runtime's shared informers (CloneSets, StatefulSets, DaemonSets,
    SidecarSets, Rollouts, AnalysisRuns; a Rollout's workload, of any registered kind). A kind no
    informer serves reads as none."""

    def listing(resource: Resource) -> ObjectProvider:
        return lambda: informers.list(resource) if resource in informers else []

    sources.clonesets = listing(CLONESETS)
    sources.statefulsets = listing(STATEFULSETS)
    sources.daemonsets = listing(DAEMONSETS)
    sources.broadcastjobs = listing(BROADCASTJOBS)
    sources.sidecarsets = listing(SIDECARSETS)
    sources.rollouts = listing(ROLLOUTS)
    sources.analysis_runs = listing(ANALYSIS_RUNS)

    def workload(namespace: str, ref: Mapping[str, Any]) -> Mapping[str, Any] | None:
        kind = kind_for(ref)
        if kind is None or kind.resource not in informers:
            return None
        return informers.get(kind.resource, f"{namespace}/{ref.get('name')}")

    sources.workload = workload


def register(collectors: Iterable[Collector]) -> None:
    for collector in collectors:
        prometheus_client.REGISTRY.register(collector)


def unregister(collectors: Iterable[Collector]) -> None:
    for collector in collectors:
        prometheus_client.REGISTRY.unregister(collector)


def metrics_handler(sources: StateSources) -> Callable[[web.Request], Awaitable[web.Response]]:
    """``GET /metrics``: the default registry in Prometheus' text format.

    The state sources are frozen on the loop, then the text is generated in a worker thread:
    formatting ~20,000 series (1,000 CloneSets) takes a few hundred milliseconds, which would
    otherwise stall every reconcile for that long. One scrape at a time.
    """
    lock = asyncio.Lock()

    async def serve(_: web.Request) -> web.Response:
        async with lock:
            sources.freeze()
            try:
                body = await asyncio.to_thread(prometheus_client.generate_latest)
            finally:
                sources.thaw()
        return web.Response(body=body, headers={"Content-Type": CONTENT_TYPE_PLAIN_0_0_4})

    return serve
