"""The BatchRelease controller shell: observe the BatchRelease, its workload and the workload's
pods, apply :func:`~kruise.rollouts.batchrelease.decide.decide_cloneset`, write the workload patch
(guarded by its resourceVersion), the pod label patches (batch ids, no-need-update marks; a pod
gone meanwhile is skipped) and the status (only when it changed)."""

from __future__ import annotations

import contextlib
import logging
from typing import Any

from kruise.core.errors import ConflictError, NotFoundError
from kruise.core.kube.client import KubeClient
from kruise.core.kube.resources import CLONESETS, PODS
from kruise.core.runtime import ControllerSpec, primary
from kruise.core.workqueue import Result
from kruise.rollouts.batchrelease.decide import decide_cloneset
from kruise.rollouts.batchrelease.executor import WorkloadReleaser, handles
from kruise.rollouts.cache import PODS_BY_OWNER, ROLLOUTS_BY_WORKLOAD, RolloutsCache
from kruise.rollouts.resources import BATCH_RELEASES

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
    ) -> None:
        """``keep_paused_on_cancel``: feature gate ``KeepWorkloadPausedOnRolloutDeletion``."""
        self.kube = kube
        self.cache = cache
        self.workers = workers
        self.keep_paused_on_cancel = keep_paused_on_cancel
        self.releaser = WorkloadReleaser(
            kube, cache, advanced_deployment=advanced_deployment, keep_paused_on_cancel=keep_paused_on_cancel
        )

    def spec(self) -> ControllerSpec:
        """Woken by its BatchReleases and their workloads (through the Rollouts that name them:
        a BatchRelease has its Rollout's name); reads the workloads' pods."""
        return ControllerSpec(
            name=self.name,
            watches=(
                primary(BATCH_RELEASES),
                self.cache.watch_cloneset(),
                self.cache.watch_deployment(),
                self.cache.watch_replicaset(),
            ),
            reads=(ROLLOUTS_BY_WORKLOAD, PODS_BY_OWNER),
            workers=self.workers,
        )

    async def reconcile(self, key: str) -> Result:
        br = self.cache.batch_release(key)
        if br is not None and handles(br):  # Deployments and blue-green (batchrelease/executor.py)
            return await self.releaser.reconcile(key, br)
        if br is None or (br.get("metadata") or {}).get("deletionTimestamp"):
            return Result()
        ns = br["metadata"]["namespace"]
        ref = (br.get("spec") or {}).get("workloadRef") or {}
        if ref.get("kind") != "CloneSet":
            await self._write_status(
                br, {**(br.get("status") or {}), "message": f"unsupported workload {ref.get('kind')}"}
            )
            return Result()
        cloneset = self.cache.cloneset(f"{ns}/{ref.get('name')}")
        pods = self.cache.pods_of(str(cloneset["metadata"].get("uid") or "")) if cloneset else []
        decision = decide_cloneset(br, cloneset, pods, keep_paused_on_cancel=self.keep_paused_on_cancel)
        if decision.workload_patch is not None and cloneset is not None:
            patch = {**decision.workload_patch}
            patch["metadata"] = {
                **(patch.get("metadata") or {}),
                "resourceVersion": cloneset["metadata"]["resourceVersion"],
            }
            try:
                await self.kube.patch(CLONESETS, ref["name"], patch, ns, patch_type="merge")
            except ConflictError:
                return Result(requeue_after=0.2)
            log.info(
                "BatchRelease %s patched CloneSet %s/%s: %s", key, ns, ref["name"], decision.workload_patch
            )
        for pod_patch in decision.pod_patches:
            with contextlib.suppress(NotFoundError):
                await self.kube.patch(
                    PODS, pod_patch.name, {"metadata": {"labels": pod_patch.labels}}, ns, patch_type="merge"
                )
        if decision.pod_patches:
            log.info("BatchRelease %s labelled %d pods", key, len(decision.pod_patches))
        await self._write_status(br, decision.status)
        return Result(requeue_after=decision.requeue_after)

    async def _write_status(self, br: JSON, status: JSON) -> None:
        if status == (br.get("status") or {}):
            return
        with contextlib.suppress(NotFoundError):
            await self.kube.patch(
                BATCH_RELEASES,
                br["metadata"]["name"],
                {"status": status},
                br["metadata"]["namespace"],
                patch_type="merge",
                subresource="status",
            )
