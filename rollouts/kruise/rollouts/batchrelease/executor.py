"""BatchRelease controls for native Deployments and blue-green releases (I/O shell).

Observes the BatchRelease and its workload from the cache (plus the namespace's HPAs from the
API server when a blue-green release takes or gives back control), asks the pure control for
the round (:mod:`~kruise.rollouts.batchrelease.deployment`,
:mod:`~kruise.rollouts.batchrelease.bluegreen`), runs its :class:`~kruise.rollouts.batchrelease.ops.Op`
list in order and writes the status once.

- A canary Deployment is created at most once per observation: after a create the
  BatchRelease waits (expectations) until the cache shows it.
- ``rollingStyle: Partition`` on a Deployment (:mod:`~kruise.rollouts.batchrelease.partition_deployment`)
  writes the partition into the Deployment's strategy annotation; the advanced Deployment
  controller (:mod:`kruise.rollouts.advanceddeployment`, feature gate ``AdvancedDeployment``)
  moves the pods. With that gate off the BatchRelease reports
  :data:`PARTITION_DEPLOYMENT_MESSAGE` and changes nothing.
"""

from __future__ import annotations

import contextlib
import logging
from typing import Any, Protocol

from kruise.core.errors import ConflictError, NotFoundError
from kruise.core.expectations import ScaleAction, ScaleExpectations
from kruise.core.kube.client import KubeClient
from kruise.core.kube.resources import CLONESETS, DEPLOYMENTS, REPLICASETS, Resource
from kruise.core.patches import merge_patch
from kruise.core.workqueue import Result
from kruise.rollouts.batchrelease.bluegreen import decide_blue_green, needs_hpas
from kruise.rollouts.batchrelease.deployment import decide_deployment_canary
from kruise.rollouts.batchrelease.ops import ControlDecision, Op, OpKind, Target
from kruise.rollouts.batchrelease.partition_deployment import decide_deployment_partition
from kruise.rollouts.resources import BATCH_RELEASES, HPAS_V1, HPAS_V2
from kruise.rollouts.rollout.observe import WorkloadCache, deployment_family

log = logging.getLogger(__name__)
JSON = dict[str, Any]

PARTITION_DEPLOYMENT_MESSAGE = (
    "partition-style release of an apps/v1 Deployment needs the advanced deployment controller: "
    "enable the feature gate AdvancedDeployment, or set enableExtraWorkloadForCanary: true "
    "(canary style) or use strategy.blueGreen"
)
RESOURCES: dict[Target, Resource] = {
    Target.DEPLOYMENT: DEPLOYMENTS,
    Target.REPLICASET: REPLICASETS,
    Target.CLONESET: CLONESETS,
    Target.BATCH_RELEASE: BATCH_RELEASES,
    Target.HPA_V2: HPAS_V2,
    Target.HPA_V1: HPAS_V1,
}


class ReleaseCache(WorkloadCache, Protocol):
    def batch_release(self, key: str) -> JSON | None: ...


def handles(br: JSON) -> bool:
    """Whether this executor (rather than the CloneSet partition control) serves ``br``."""
    ref = (br.get("spec") or {}).get("workloadRef") or {}
    style = ((br.get("spec") or {}).get("releasePlan") or {}).get("rollingStyle")
    return (ref.get("kind") == "Deployment" and ref.get("apiVersion") == "apps/v1") or style == "BlueGreen"


class WorkloadReleaser:
    """Runs the Deployment and blue-green controls for BatchReleases."""

    def __init__(
        self,
        kube: KubeClient,
        cache: ReleaseCache,
        *,
        expectation_timeout: float = 30.0,
        advanced_deployment: bool = True,
        keep_paused_on_cancel: bool = False,
    ) -> None:
        self.kube = kube
        self.cache = cache
        self.advanced_deployment = advanced_deployment
        self.keep_paused_on_cancel = keep_paused_on_cancel
        self.expectations = ScaleExpectations(timeout=expectation_timeout)

    async def reconcile(self, key: str, br: JSON) -> Result:
        ns = br["metadata"]["namespace"]
        spec = br.get("spec") or {}
        ref = spec.get("workloadRef") or {}
        style = (spec.get("releasePlan") or {}).get("rollingStyle") or (
            "Canary" if (spec.get("releasePlan") or {}).get("enableExtraWorkloadForCanary") else "Partition"
        )
        name = str(ref.get("name"))
        if ref.get("kind") == "Deployment":
            workload = self.cache.deployment(f"{ns}/{name}")
            canaries, replicasets = deployment_family(self.cache, workload) if workload else ([], [])
            if style == "Canary":
                canary_names = {str((d.get("metadata") or {}).get("name")) for d in canaries}
                waiting = self.expectations.check(key, lambda n: n in canary_names)
                if not waiting.satisfied and not self.expectations.timed_out(waiting):
                    return Result(requeue_after=0.5)
                if not waiting.satisfied:
                    self.expectations.delete(key)
                decision = decide_deployment_canary(br, workload, canaries, replicasets)
            elif style == "BlueGreen":
                hpas = await self._hpas(ns) if needs_hpas(br, workload) else []
                decision = decide_blue_green(br, workload, replicasets, hpas)
            elif self.advanced_deployment:
                if (br.get("metadata") or {}).get("deletionTimestamp"):
                    return Result()
                decision = decide_deployment_partition(
                    br, workload, replicasets, keep_paused_on_cancel=self.keep_paused_on_cancel
                )
            else:
                await self._write_status(
                    br, {**(br.get("status") or {}), "message": PARTITION_DEPLOYMENT_MESSAGE}
                )
                return Result()
        else:
            if (br.get("metadata") or {}).get("deletionTimestamp"):
                return Result()
            workload = self.cache.cloneset(f"{ns}/{name}")
            hpas = await self._hpas(ns) if needs_hpas(br, workload) else []
            decision = decide_blue_green(br, workload, (), hpas)
        return await self._apply(key, br, decision)

    async def _apply(self, key: str, br: JSON, decision: ControlDecision) -> Result:
        ns = br["metadata"]["namespace"]
        for op in decision.ops:
            try:
                await self._run(key, ns, op)
            except ConflictError:
                return Result(requeue_after=0.2)
            except NotFoundError:
                continue
            log.info("BatchRelease %s: %s %s %s", key, op.kind, op.target, op.name or "(new)")
        if not any(
            op.kind == OpKind.REMOVE_FINALIZER and op.target == Target.BATCH_RELEASE for op in decision.ops
        ):
            await self._write_status(br, decision.status)
        return Result(requeue_after=decision.requeue_after)

    async def _run(self, key: str, ns: str, op: Op) -> None:
        res = RESOURCES[op.target]
        if op.kind == OpKind.PATCH:
            await self.kube.patch(res, op.name, op.body, ns, patch_type="merge")
        elif op.kind == OpKind.CREATE:
            created = await self.kube.create(res, op.body, ns)
            self.expectations.expect(key, ScaleAction.CREATE, str(created["metadata"]["name"]))
        else:
            current = await self.kube.get(res, op.name, ns)
            finalizers = list((current.get("metadata") or {}).get("finalizers") or [])
            wanted = op.body["finalizer"]
            if op.kind == OpKind.ADD_FINALIZER and wanted not in finalizers:
                finalizers.append(wanted)
            elif op.kind == OpKind.REMOVE_FINALIZER and wanted in finalizers:
                finalizers.remove(wanted)
            else:
                return
            body = {
                "metadata": {
                    "resourceVersion": current["metadata"]["resourceVersion"],
                    "finalizers": finalizers,
                }
            }
            await self.kube.patch(res, op.name, body, ns, patch_type="merge")

    async def _hpas(self, ns: str) -> list[tuple[Target, JSON]]:
        for target, res in ((Target.HPA_V2, HPAS_V2), (Target.HPA_V1, HPAS_V1)):
            try:
                items = (await self.kube.list(res, ns))["items"]
            except NotFoundError:
                continue
            return [(target, item) for item in items]
        return []

    async def _write_status(self, br: JSON, status: JSON) -> None:
        if status == (br.get("status") or {}):
            return
        with contextlib.suppress(NotFoundError):
            await self.kube.patch(
                BATCH_RELEASES,
                br["metadata"]["name"],
                {"status": merge_patch(br.get("status") or {}, status)},
                br["metadata"]["namespace"],
                patch_type="merge",
                subresource="status",
            )
