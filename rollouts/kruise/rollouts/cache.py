"""The Rollout-side view of the shared informer cache, and the indices and event routes the
Rollout, BatchRelease and advanced Deployment controllers share.

Indices (named, shared with every controller that declares them):

- :data:`WORKLOAD_ROLLOUTS` on Rollouts: ``namespace/Kind/name`` of ``spec.workloadRef``, so a
  workload event wakes the Rollouts (and BatchReleases, which have their Rollout's name) that
  steer it;
- :data:`CANARY_OF` on Deployments: ``namespace/<stable name>`` from the
  ``rollouts.kruise.io/canary-deployment`` label, the canary Deployments of a stable one;
- :data:`RUNS_OF_ROLLOUT` on AnalysisRuns: ``namespace/<rollout>`` from the
  ``rollouts.kruise.io/rollout`` label;
- :data:`~kruise.core.runtime.OWNER_UID` on ReplicaSets and pods.

:class:`RolloutsCache` gives the controllers typed reads over a
:class:`~kruise.core.runtime.CacheReader` (the controller's scoped view).
"""

from __future__ import annotations

from typing import Any

from kruise.analysis.resources import ANALYSIS_RUNS
from kruise.core.informer import object_key
from kruise.core.kube.resources import CLONESETS, DEPLOYMENTS, PODS, REPLICASETS
from kruise.core.runtime import OWNER_UID, CacheReader, Read, Watch, controller_ref, index_by_owner_uid
from kruise.rollouts.release.constants import CANARY_DEPLOYMENT_LABEL, ROLLOUT_LABEL
from kruise.rollouts.resources import BATCH_RELEASES, ROLLOUTS

JSON = dict[str, Any]
WORKLOAD_ROLLOUTS = "workload-rollouts"
CANARY_OF = "canary-of"
RUNS_OF_ROLLOUT = "runs-of-rollout"


def _labels(obj: JSON) -> dict[str, str]:
    return (obj.get("metadata") or {}).get("labels") or {}


def _namespace(obj: JSON) -> str:
    return str((obj.get("metadata") or {}).get("namespace"))


def index_workload(rollout: JSON) -> tuple[str, ...]:
    ref = (rollout.get("spec") or {}).get("workloadRef") or {}
    if not ref.get("name"):
        return ()
    return (f"{_namespace(rollout)}/{ref.get('kind')}/{ref.get('name')}",)


def index_canary_of(deployment: JSON) -> tuple[str, ...]:
    stable = _labels(deployment).get(CANARY_DEPLOYMENT_LABEL)
    return (f"{_namespace(deployment)}/{stable}",) if stable else ()


def index_run_rollout(run: JSON) -> tuple[str, ...]:
    rollout = _labels(run).get(ROLLOUT_LABEL)
    return (f"{_namespace(run)}/{rollout}",) if rollout else ()


ROLLOUTS_BY_WORKLOAD = Read(ROLLOUTS, {WORKLOAD_ROLLOUTS: index_workload})
DEPLOYMENTS_READ = Read(DEPLOYMENTS, {CANARY_OF: index_canary_of})
REPLICASETS_READ = Read(REPLICASETS, {OWNER_UID: index_by_owner_uid})
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

    def cloneset(self, key: str) -> JSON | None:
        return self.reader.get(CLONESETS, key)

    def deployment(self, key: str) -> JSON | None:
        return self.reader.get(DEPLOYMENTS, key)

    def canary_deployments(self, namespace: str, stable_name: str) -> list[JSON]:
        """Deployments labelled ``rollouts.kruise.io/canary-deployment=<stable_name>``."""
        return self.reader.by_index(DEPLOYMENTS, CANARY_OF, f"{namespace}/{stable_name}")

    def replicasets_of(self, namespace: str, owner_uid: str) -> list[JSON]:
        """ReplicaSets whose controller is the object with ``owner_uid``."""
        return self.reader.by_index(REPLICASETS, OWNER_UID, owner_uid)

    def pods_of(self, owner_uid: str) -> list[JSON]:
        """Pods whose controller is the object with ``owner_uid``."""
        return self.reader.by_index(PODS, OWNER_UID, owner_uid)

    def analysis_runs(self, key: str) -> list[JSON]:
        """AnalysisRuns labelled ``rollouts.kruise.io/rollout=<name>`` in the Rollout's namespace."""
        return self.reader.by_index(ANALYSIS_RUNS, RUNS_OF_ROLLOUT, key)

    def rollouts_of_workload(self, namespace: str, kind: str, name: str) -> list[str]:
        """Keys of the Rollouts whose ``workloadRef`` names this workload."""
        found = self.reader.by_index(ROLLOUTS, WORKLOAD_ROLLOUTS, f"{namespace}/{kind}/{name}")
        return [object_key(r) for r in found]

    # ------------------------------------------------------------------ event routes
    def watch_cloneset(self) -> Watch:
        """A CloneSet event wakes the Rollouts (and BatchReleases) that steer it."""

        def keys(cs: JSON) -> list[str]:
            meta = cs.get("metadata") or {}
            return self.rollouts_of_workload(str(meta.get("namespace")), "CloneSet", str(meta.get("name")))

        return Watch(CLONESETS, keys)

    def watch_deployment(self) -> Watch:
        """A Deployment event wakes the Rollouts of it, and of the stable one it is a canary of."""

        def keys(deployment: JSON) -> list[str]:
            ns = _namespace(deployment)
            found = self.rollouts_of_workload(ns, "Deployment", str(deployment["metadata"].get("name")))
            stable = _labels(deployment).get(CANARY_DEPLOYMENT_LABEL)
            if stable:
                found += self.rollouts_of_workload(ns, "Deployment", stable)
            return found

        return Watch(DEPLOYMENTS, keys, DEPLOYMENTS_READ.indexers)

    def watch_replicaset(self) -> Watch:
        """A ReplicaSet event wakes the Rollouts of the Deployment that controls it."""

        def keys(rs: JSON) -> list[str]:
            owner = controller_ref(rs, ("Deployment",))
            if owner is None:
                return []
            return self.rollouts_of_workload(_namespace(rs), "Deployment", str(owner.get("name")))

        return Watch(REPLICASETS, keys, REPLICASETS_READ.indexers)
