"""kopf glue for the Rollout and BatchRelease controllers: indices as the cache, events enqueue.

Indices: Rollouts and BatchReleases by ``namespace/name`` (a BatchRelease has its
Rollout's name), CloneSets and Deployments by ``namespace/name`` (the workloads they steer),
canary Deployments by the stable Deployment they copy, ReplicaSets by their controller's uid,
and Rollouts by the workload they reference, so a workload event (or one of its ReplicaSets
or canary Deployments) wakes its Rollout and BatchRelease. AnalysisRuns by the Rollout named in
their ``rollouts.kruise.io/rollout`` label: a run's progress wakes its Rollout, whose analysis
gates read the phases from this index. The BatchRelease reads a CloneSet's
pods from the CloneSet controller's index (``cloneset_pods_by_owner``, same registry).
kopf invokes no handler before every index is listed, so no decision is made on a
half-filled cache. No change-detecting handlers: kopf writes nothing onto objects.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Mapping
from typing import Any

import kopf

from kruise.analysis.api import GROUP as ANALYSIS_GROUP
from kruise.analysis.api import V1ALPHA1 as ANALYSIS_VERSION
from kruise.core.cache import CacheReady, IndexView, controller_ref
from kruise.rollouts.batchrelease.controller import BatchReleaseController
from kruise.rollouts.rollout.analysis_gate import ROLLOUT_LABEL
from kruise.rollouts.rollout.constants import CANARY_DEPLOYMENT_LABEL
from kruise.rollouts.rollout.controller import RolloutController

JSON = dict[str, Any]
GROUP, VERSION = "rollouts.kruise.io", "v1beta1"


class KopfRolloutCache:
    """The Rollout and BatchRelease caches over kopf indices."""

    def __init__(self) -> None:
        self.rollouts = IndexView("rollout_by_key")
        self.batch_releases = IndexView("batchrelease_by_key")
        self.clonesets = IndexView("rollout_cloneset_by_key")
        self.by_workload = IndexView("rollout_by_workload")
        self.deployments = IndexView("rollout_deployment_by_key")
        self.canary_deployments_by_stable = IndexView("rollout_deployment_by_canary_of")
        self.replicasets = IndexView("rollout_replicaset_by_owner")
        # the CloneSet controller's index of pods by owner uid (same registry): no second pod index
        self.pods = IndexView("cloneset_pods_by_owner")
        self.analysis_runs_by_rollout = IndexView("rollout_analysisruns_by_rollout")
        self.ready = CacheReady()

    def views(self) -> list[IndexView]:
        return [
            self.rollouts,
            self.batch_releases,
            self.clonesets,
            self.by_workload,
            self.deployments,
            self.canary_deployments_by_stable,
            self.replicasets,
            self.pods,
            self.analysis_runs_by_rollout,
        ]

    def bind(self, indices: Mapping[str, Any]) -> None:
        for view in self.views():
            if not view.bound and view.name in indices:
                view.bind(indices[view.name])
        if all(v.bound for v in self.views()):
            self.ready.set()

    def rollout(self, key: str) -> JSON | None:
        return self.rollouts.one(key)

    def batch_release(self, key: str) -> JSON | None:
        return self.batch_releases.one(key)

    def cloneset(self, key: str) -> JSON | None:
        return self.clonesets.one(key)

    def deployment(self, key: str) -> JSON | None:
        return self.deployments.one(key)

    def canary_deployments(self, namespace: str, stable_name: str) -> list[JSON]:
        """Deployments labelled ``rollouts.kruise.io/canary-deployment=<stable_name>``."""
        return self.canary_deployments_by_stable.values(f"{namespace}/{stable_name}")

    def replicasets_of(self, namespace: str, owner_uid: str) -> list[JSON]:
        """ReplicaSets whose controller is the object with ``owner_uid``."""
        return self.replicasets.values(f"{namespace}/{owner_uid}")

    def pods_of(self, owner_uid: str) -> list[JSON]:
        """Pods whose controller is the CloneSet with ``owner_uid``."""
        return self.pods.values(owner_uid)

    def analysis_runs(self, key: str) -> list[JSON]:
        """AnalysisRuns labelled ``rollouts.kruise.io/rollout=<name>`` in the Rollout's namespace."""
        return self.analysis_runs_by_rollout.values(key)

    def rollouts_of_workload(self, key: str) -> list[str]:
        return [str(v.get("key")) for v in self.by_workload.values(key)]


def _key(kwargs: Mapping[str, Any]) -> str:
    return f"{kwargs['namespace']}/{kwargs['name']}"


def register(
    registry: kopf.OperatorRegistry,
    rollouts: RolloutController,
    batches: BatchReleaseController,
    cache: KopfRolloutCache,
) -> None:
    """Register indices, event handlers and the worker pools into ``registry``."""

    @kopf.index(GROUP, VERSION, "rollouts", registry=registry, id="rollout_by_key")
    async def rollout_by_key(**kwargs: Any) -> dict[str, JSON]:
        return {_key(kwargs): dict(kwargs["body"])}

    @kopf.index(GROUP, VERSION, "rollouts", registry=registry, id="rollout_by_workload")
    async def rollout_by_workload(**kwargs: Any) -> dict[str, JSON] | None:
        ref = (kwargs["body"].get("spec") or {}).get("workloadRef") or {}
        if not ref.get("name"):
            return None
        return {f"{kwargs['namespace']}/{ref.get('kind')}/{ref.get('name')}": {"key": _key(kwargs)}}

    @kopf.index(GROUP, VERSION, "batchreleases", registry=registry, id="batchrelease_by_key")
    async def batchrelease_by_key(**kwargs: Any) -> dict[str, JSON]:
        return {_key(kwargs): dict(kwargs["body"])}

    @kopf.index("apps.kruise.io", "v1alpha1", "clonesets", registry=registry, id="rollout_cloneset_by_key")
    async def cloneset_by_key(**kwargs: Any) -> dict[str, JSON]:
        return {_key(kwargs): dict(kwargs["body"])}

    @kopf.on.event(GROUP, VERSION, "rollouts", registry=registry, id="rollout_event")
    async def on_rollout(**kwargs: Any) -> None:
        cache.bind(kwargs)
        rollouts.enqueue(_key(kwargs))

    @kopf.on.event(GROUP, VERSION, "batchreleases", registry=registry, id="batchrelease_event")
    async def on_batch(**kwargs: Any) -> None:
        cache.bind(kwargs)
        batches.enqueue(_key(kwargs))
        rollouts.enqueue(_key(kwargs))  # same name as its Rollout

    @kopf.on.event("apps.kruise.io", "v1alpha1", "clonesets", registry=registry, id="rollout_cloneset_event")
    async def on_cloneset(**kwargs: Any) -> None:
        cache.bind(kwargs)
        for key in cache.rollouts_of_workload(f"{kwargs['namespace']}/CloneSet/{kwargs['name']}"):
            rollouts.enqueue(key)
            batches.enqueue(key)

    @kopf.index("apps", "v1", "deployments", registry=registry, id="rollout_deployment_by_key")
    async def deployment_by_key(**kwargs: Any) -> dict[str, JSON]:
        return {_key(kwargs): dict(kwargs["body"])}

    @kopf.index("apps", "v1", "deployments", registry=registry, id="rollout_deployment_by_canary_of")
    async def deployment_by_canary_of(**kwargs: Any) -> dict[str, JSON] | None:
        stable = (kwargs["body"].get("metadata", {}).get("labels") or {}).get(CANARY_DEPLOYMENT_LABEL)
        return {f"{kwargs['namespace']}/{stable}": dict(kwargs["body"])} if stable else None

    @kopf.index("apps", "v1", "replicasets", registry=registry, id="rollout_replicaset_by_owner")
    async def replicaset_by_owner(**kwargs: Any) -> dict[str, JSON] | None:
        owner = controller_ref(kwargs["body"])
        return {f"{kwargs['namespace']}/{owner.get('uid')}": dict(kwargs["body"])} if owner else None

    def wake_deployment(namespace: str, name: str) -> None:
        for key in cache.rollouts_of_workload(f"{namespace}/Deployment/{name}"):
            rollouts.enqueue(key)
            batches.enqueue(key)

    @kopf.on.event("apps", "v1", "deployments", registry=registry, id="rollout_deployment_event")
    async def on_deployment(**kwargs: Any) -> None:
        cache.bind(kwargs)
        wake_deployment(kwargs["namespace"], kwargs["name"])
        stable = (kwargs["body"].get("metadata", {}).get("labels") or {}).get(CANARY_DEPLOYMENT_LABEL)
        if stable:
            wake_deployment(kwargs["namespace"], stable)

    @kopf.on.event("apps", "v1", "replicasets", registry=registry, id="rollout_replicaset_event")
    async def on_replicaset(**kwargs: Any) -> None:
        cache.bind(kwargs)
        owner = controller_ref(kwargs["body"], ("Deployment",))
        if owner is not None:
            wake_deployment(kwargs["namespace"], str(owner.get("name")))

    def _run_owner(body: Mapping[str, Any], namespace: str | None) -> str | None:
        rollout = ((body.get("metadata") or {}).get("labels") or {}).get(ROLLOUT_LABEL)
        return f"{namespace}/{rollout}" if rollout else None

    @kopf.index(
        ANALYSIS_GROUP,
        ANALYSIS_VERSION,
        "analysisruns",
        registry=registry,
        id="rollout_analysisruns_by_rollout",
    )
    async def analysisruns_by_rollout(**kwargs: Any) -> dict[str, JSON] | None:
        owner = _run_owner(kwargs["body"], kwargs["namespace"])
        return {owner: dict(kwargs["body"])} if owner else None

    def is_rollout_run(**kwargs: Any) -> bool:
        return _run_owner(kwargs["body"], kwargs["namespace"]) is not None

    @kopf.on.event(
        ANALYSIS_GROUP,
        ANALYSIS_VERSION,
        "analysisruns",
        registry=registry,
        id="rollout_analysisrun_event",
        when=is_rollout_run,
    )
    async def on_analysis_run(**kwargs: Any) -> None:
        cache.bind(kwargs)
        owner = _run_owner(kwargs["body"], kwargs["namespace"])
        if owner is not None:
            rollouts.enqueue(owner)

    tasks: list[asyncio.Task[None]] = []

    @kopf.on.startup(registry=registry, id="rollout_workers")
    async def start(**_: Any) -> None:
        tasks.append(asyncio.create_task(rollouts.run(cache.ready), name="rollout-controller"))
        tasks.append(asyncio.create_task(batches.run(cache.ready), name="batchrelease-controller"))

    @kopf.on.cleanup(registry=registry, id="rollout_workers_stop")
    async def stop(**_: Any) -> None:
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task
