"""Find a Rollout's workload in the cache and read it into :class:`WorkloadInfo`.

CloneSets are read alone (:func:`~kruise.rollouts.workloads.cloneset.cloneset_info`); a native
Deployment with its ReplicaSets and canary Deployments
(:func:`~kruise.rollouts.workloads.deployment.info.deployment_info`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

from kruise.rollouts.workloads.cloneset import workload_info
from kruise.rollouts.workloads.deployment.info import deployment_info
from kruise.rollouts.workloads.info import WorkloadInfo

JSON = dict[str, Any]


class WorkloadCache(Protocol):
    def cloneset(self, key: str) -> JSON | None: ...

    def deployment(self, key: str) -> JSON | None: ...

    def canary_deployments(self, namespace: str, stable_name: str) -> list[JSON]: ...

    def replicasets_of(self, namespace: str, owner_uid: str) -> list[JSON]: ...


def is_native_deployment(ref: Mapping[str, Any]) -> bool:
    return ref.get("kind") == "Deployment" and ref.get("apiVersion") == "apps/v1"


def deployment_family(cache: WorkloadCache, deployment: Mapping[str, Any]) -> tuple[list[JSON], list[JSON]]:
    """The canary Deployments of ``deployment`` and the ReplicaSets of all of them."""
    meta = deployment.get("metadata") or {}
    ns, name = str(meta.get("namespace")), str(meta.get("name"))
    canaries = cache.canary_deployments(ns, name)
    replicasets = list(cache.replicasets_of(ns, str(meta.get("uid") or "")))
    for canary in canaries:
        replicasets.extend(cache.replicasets_of(ns, str((canary.get("metadata") or {}).get("uid") or "")))
    return canaries, replicasets


def observe_workload(
    rollout: Mapping[str, Any], cache: WorkloadCache
) -> tuple[JSON | None, WorkloadInfo | None]:
    """The workload object ``spec.workloadRef`` names and what the engine knows of it."""
    ref = (rollout.get("spec") or {}).get("workloadRef") or {}
    ns = (rollout.get("metadata") or {}).get("namespace")
    key = f"{ns}/{ref.get('name')}"
    if is_native_deployment(ref):
        deployment = cache.deployment(key)
        if deployment is None:
            return None, None
        canaries, replicasets = deployment_family(cache, deployment)
        return deployment, deployment_info(rollout, deployment, replicasets, canaries)
    if ref.get("kind") == "CloneSet":
        cloneset = cache.cloneset(key)
        return cloneset, workload_info(ref, cloneset)
    return None, None
