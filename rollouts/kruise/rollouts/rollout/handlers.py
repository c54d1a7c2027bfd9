"""kopf glue for the Rollout and BatchRelease controllers: indices as the cache, events enqueue.

Indices: Rollouts and BatchReleases by ``namespace/name`` (a BatchRelease has its
Rollout's name), CloneSets by ``namespace/name`` (the workloads they steer), and
Rollouts by the workload they reference, so a workload event wakes its Rollout.
kopf invokes no handler before every index is listed, so no decision is made on a
half-filled cache. No change-detecting handlers: kopf writes nothing onto objects.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Mapping
from typing import Any

import kopf

from kruise.core.cache import CacheReady, IndexView
from kruise.rollouts.batchrelease.controller import BatchReleaseController
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
        self.ready = CacheReady()

    def views(self) -> list[IndexView]:
        return [self.rollouts, self.batch_releases, self.clonesets, self.by_workload]

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
    def rollout_by_key(**kwargs: Any) -> dict[str, JSON]:
        return {_key(kwargs): dict(kwargs["body"])}

    @kopf.index(GROUP, VERSION, "rollouts", registry=registry, id="rollout_by_workload")
    def rollout_by_workload(**kwargs: Any) -> dict[str, JSON] | None:
        ref = (kwargs["body"].get("spec") or {}).get("workloadRef") or {}
        if not ref.get("name"):
            return None
        return {f"{kwargs['namespace']}/{ref.get('kind')}/{ref.get('name')}": {"key": _key(kwargs)}}

    @kopf.index(GROUP, VERSION, "batchreleases", registry=registry, id="batchrelease_by_key")
    def batchrelease_by_key(**kwargs: Any) -> dict[str, JSON]:
        return {_key(kwargs): dict(kwargs["body"])}

    @kopf.index("apps.kruise.io", "v1alpha1", "clonesets", registry=registry, id="rollout_cloneset_by_key")
    def cloneset_by_key(**kwargs: Any) -> dict[str, JSON]:
        return {_key(kwargs): dict(kwargs["body"])}

    @kopf.on.event(GROUP, VERSION, "rollouts", registry=registry, id="rollout_event")
    def on_rollout(**kwargs: Any) -> None:
        cache.bind(kwargs)
        rollouts.enqueue(_key(kwargs))

    @kopf.on.event(GROUP, VERSION, "batchreleases", registry=registry, id="batchrelease_event")
    def on_batch(**kwargs: Any) -> None:
        cache.bind(kwargs)
        batches.enqueue(_key(kwargs))
        rollouts.enqueue(_key(kwargs))  # same name as its Rollout

    @kopf.on.event("apps.kruise.io", "v1alpha1", "clonesets", registry=registry, id="rollout_cloneset_event")
    def on_cloneset(**kwargs: Any) -> None:
        cache.bind(kwargs)
        for key in cache.rollouts_of_workload(f"{kwargs['namespace']}/CloneSet/{kwargs['name']}"):
            rollouts.enqueue(key)
            batches.enqueue(key)

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
