"""The BatchRelease controller shell: one path for every workload kind and release style.

Per reconcile: read the BatchRelease from the cache; find the kind and style serving it in the
workload registry (:func:`~kruise.rollouts.workloads.registry.release_style`; a kind not served
gets ``status.message: unsupported workload <kind>``); read the workload with what its kind needs
(its pods included) from the cache; ask the style for the round
(:meth:`~kruise.rollouts.workloads.port.ReleaseStyle.control`, pure), pace a newly Ready batch
as upstream's executor does (:mod:`~kruise.rollouts.batchrelease.pacing`) and run it
(:class:`~kruise.rollouts.batchrelease.executor.ReleaseExecutor`).
"""

from __future__ import annotations

import dataclasses
import logging
import time
from typing import Any

from kruise.core.events import EventRecorder
from kruise.core.kube.client import KubeClient
from kruise.core.runtime import ControllerSpec, primary
from kruise.core.workqueue import Result
from kruise.rollouts.batchrelease.executor import ReleaseExecutor
from kruise.rollouts.batchrelease.fights import FightGuard
from kruise.rollouts.batchrelease.pacing import BatchPacer, fingerprint
from kruise.rollouts.cache import PODS_BY_OWNER, ROLLOUTS_BY_WORKLOAD, RolloutsCache
from kruise.rollouts.resources import BATCH_RELEASES
from kruise.rollouts.workloads.ops import Op
from kruise.rollouts.workloads.port import Gates
from kruise.rollouts.workloads.registry import observe, release_style
from kruise.workloads.requeue import soonest

log = logging.getLogger(__name__)
JSON = dict[str, Any]


class BatchReleaseController:
    name = "batchrelease-controller"

    def __init__(
        self,
        kube: KubeClient,
        cache: RolloutsCache,
        *,
        workers: int = 3,
        advanced_deployment: bool = True,
        keep_paused_on_cancel: bool = False,
        recorder: EventRecorder | None = None,
    ) -> None:
        """``advanced_deployment``, ``keep_paused_on_cancel``: feature gates ``AdvancedDeployment``
        and ``KeepWorkloadPausedOnRolloutDeletion``; ``recorder`` posts the GitOps fight events
        (:mod:`~kruise.rollouts.batchrelease.fights`)."""
        self.kube = kube
        self.cache = cache
        self.workers = workers
        self.gates = Gates(
            advanced_deployment=advanced_deployment, keep_paused_on_cancel=keep_paused_on_cancel
        )
        self.executor = ReleaseExecutor(kube)
        self.fights = FightGuard(kube, recorder)
        self.pacer = BatchPacer()

    def spec(self) -> ControllerSpec:
        """Woken by its BatchReleases and the workloads they release (every registered kind's
        routes, through the Rollouts that name them: a BatchRelease has its Rollout's name);
        reads the workloads' pods."""
        return ControllerSpec(
            name=self.name,
            watches=(primary(BATCH_RELEASES), *self.cache.workload_watches()),
            reads=(ROLLOUTS_BY_WORKLOAD, PODS_BY_OWNER),
            workers=self.workers,
        )

    async def reconcile(self, key: str) -> Result:
        br = self.cache.batch_release(key)
        if br is None:
            self.pacer.forget(key)
            await self.fights.forget(key, self.cache.rollout(key))
            return Result()
        ref = (br.get("spec") or {}).get("workloadRef") or {}
        served = release_style(br)
        if served is None:
            if not (br.get("metadata") or {}).get("deletionTimestamp"):
                message = f"unsupported workload {ref.get('kind')}"
                await self.executor.write_status(br, {**(br.get("status") or {}), "message": message})
            return Result()
        kind, style = served
        obs = observe(kind, self.cache.reader, br["metadata"]["namespace"], str(ref.get("name")), pods=True)
        if self.executor.waiting(key, obs) or self.executor.stale(br, obs):
            return Result(requeue_after=0.5)
        if obs is not None and style.needs_hpas(br, obs):
            obs = dataclasses.replace(obs, hpas=await self.executor.hpas(br["metadata"]["namespace"]))
        workload = None if obs is None else obs.workload
        decision = style.control(br, obs, self.gates)
        kind_name = str(ref.get("kind") or "")
        decision = await self.fights.guard(key, kind_name, self.cache.rollout(key), workload, decision)
        paced = self.pacer.pace(key, br, decision.status, fingerprint(obs), time.monotonic())
        if paced.requeue_after is not None:  # a newly Ready batch verifies first, as upstream's
            wait = soonest(paced.requeue_after, decision.requeue_after)
            decision = dataclasses.replace(decision, status=paced.status, requeue_after=wait)
        applied: list[Op] = []
        result = await self.executor.apply(key, br, decision, applied)
        self.fights.applied(key, kind_name, workload, applied)
        return result
