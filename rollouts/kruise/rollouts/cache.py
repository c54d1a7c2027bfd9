"""The Rollout-side view of the shared informer cache, and the indices and event routes the
Rollout, BatchRelease and advanced Deployment controllers share.

Indices (named, shared with every controller that declares them):

- :data:`WORKLOAD_ROLLOUTS` on Rollouts: ``namespace/Kind/name`` of ``spec.workloadRef``, so a
  workload event wakes the Rollouts (and BatchReleases, which have their Rollout's name) that
  steer it;
- :data:`RUNS_OF_ROLLOUT` on AnalysisRuns: ``namespace/<rollout>`` from the
  ``rollouts.kruise.io/rollout`` label;
- :data:`~kruise.core.runtime.OWNER_UID` on ReplicaSets and pods;
- whatever a registered workload kind reads through (its :class:`~kruise.rollouts.workloads.port.Route`
  indexers, e.g. a Deployment's canary Deployments).

Event routes come from the workload registry (:meth:`RolloutsCache.workload_watches`): every
kind's routes, merged per resource, so a new kind brings its own informer and route.

:class:`RolloutsCache` gives the controllers typed reads over a
:class:`~kruise.core.runtime.CacheReader` (the controller's scoped view).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from kruise.analysis.resources import ANALYSIS_RUNS
from kruise.core.informer import object_key
from kruise.core.kube.resources import DEPLOYMENTS, PODS, REPLICASETS, Resource
from kruise.core.runtime import OWNER_UID, CacheReader, Read, Watch, index_by_owner_uid
from kruise.rollouts.release.constants import ROLLOUT_LABEL
from kruise.rollouts.resources import BATCH_RELEASES, ROLLOUTS
from kruise.rollouts.workloads.port import Route
from kruise.rollouts.workloads.registry import routes

JSON = dict[str, Any]
WORKLOAD_ROLLOUTS = "workload-rollouts"
RUNS_OF_ROLLOUT = "runs-of-rollout"


def _namespace(obj: JSON) -> str:
    return str((obj.get("metadata") or {}).get("namespace"))


def index_workload(rollout: JSON) -> tuple[str, ...]:
    ref = (rollout.get("spec") or {}).get("workloadRef") or {}
    if not ref.get("name"):
        return ()
    return (f"{_namespace(rollout)}/{ref.get('kind')}/{ref.get('name')}",)


def index_run_rollout(run: JSON) -> tuple[str, ...]:
    rollout = ((run.get("metadata") or {}).get("labels") or {}).get(ROLLOUT_LABEL)
    return (f"{_namespace(run)}/{rollout}",) if rollout else ()


ROLLOUTS_BY_WORKLOAD = Read(ROLLOUTS, {WORKLOAD_ROLLOUTS: index_workload})
PODS_BY_OWNER = Read(PODS, {OWNER_UID: index_by_owner_uid})
RUNS_READ = Read(ANALYSIS_RUNS, {RUNS_OF_ROLLOUT: index_run_rollout})


class RolloutsCache:
    """Typed reads for the Rollout-side controllers (objects are shared: never mutate them)."""

    def __init__(self, reader: CacheReader) -> None:
        self.reader = reader

    def rollout(self, key: str) -> JSON | None:
        return self.reader.get(ROLLOUTS, key)

    def batch_release(self, key: str) -> JSON | None:
        return self.reader.get(BATCH_RELEASES, key)

    def deployment(self, key: str) -> JSON | None:
        return self.reader.get(DEPLOYMENTS, key)

    def replicasets_of(self, namespace: str, owner_uid: str) -> list[JSON]:
        """ReplicaSets whose controller is the object with ``owner_uid``."""
        return self.reader.by_index(REPLICASETS, OWNER_UID, owner_uid)

    def analysis_runs(self, key: str) -> list[JSON]:
        """AnalysisRuns labelled ``rollouts.kruise.io/rollout=<name>`` in the Rollout's namespace."""
        return self.reader.by_index(ANALYSIS_RUNS, RUNS_OF_ROLLOUT, key)

    def rollouts_of_workload(self, namespace: str, kind: str, name: str) -> list[str]:
        """Keys of the Rollouts whose ``workloadRef`` names this workload."""
        found = self.reader.by_index(ROLLOUTS, WORKLOAD_ROLLOUTS, f"{namespace}/{kind}/{name}")
        return [object_key(r) for r in found]

    def workload_watches(self) -> tuple[Watch, ...]:
        """One :class:`Watch` per resource the registered kinds route: an event wakes the Rollouts
        (and BatchReleases) of every workload it concerns."""
        by_resource: dict[Resource, list[Route]] = {}
        for route in routes():
            by_resource.setdefault(route.resource, []).append(route)
        return tuple(self._watch(resource, found) for resource, found in by_resource.items())

    def _watch(self, resource: Resource, found: list[Route]) -> Watch:
        indexers: dict[str, Callable[[JSON], Iterable[str]]] = {}
        for route in found:
            indexers.update(route.indexers)

        def keys(obj: JSON) -> list[str]:
            return [
                key
                for route in found
                for namespace, kind, name in route.workloads(obj)
                for key in self.rollouts_of_workload(namespace, kind, name)
            ]

        return Watch(resource, keys, indexers)
