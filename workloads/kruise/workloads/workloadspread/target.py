"""The workload a WorkloadSpread targets: its informer resource and its replicas.

Upstream's ``getWorkloadReplicas``/``getReplicasForWorkload`` (v1.8): a Job's replicas are its
``spec.parallelism``, every other kind's its ``spec.replicas`` (1 when unset, the API default);
a ``targetFilter.replicasPathList`` replaces them (:func:`~.targetfilter.filtered_replicas`).
"""

from __future__ import annotations

from kruise.core.kube.client import KubeClient
from kruise.core.kube.resources import (
    CLONESETS,
    DEPLOYMENTS,
    JOBS,
    NATIVE_STATEFULSETS,
    REPLICASETS,
    STATEFULSETS,
    Resource,
)
from kruise.workloads.api.workloadspread import TargetFilterView, TargetView
from kruise.workloads.objects import KubeObject, spec
from kruise.workloads.workloadspread.targetfilter import filtered_replicas
from kruise.workloads.workloadspread.whitelist import group_of

__all__ = ["WORKLOADS", "read_workload", "target_replicas", "workload_resource"]

WORKLOADS: tuple[Resource, ...] = (
    DEPLOYMENTS,
    CLONESETS,
    REPLICASETS,
    JOBS,
    NATIVE_STATEFULSETS,
    STATEFULSETS,
)
"""The kinds a WorkloadSpread can target."""


def workload_resource(target: TargetView) -> Resource | None:
    """The informer resource of a ``targetRef`` (group and kind), or ``None``."""
    group = group_of(str(target.get("apiVersion") or ""))
    for res in WORKLOADS:
        if res.kind == target.get("kind") and res.group == group:
            return res
    return None


def target_replicas(res: Resource, workload: KubeObject, target_filter: TargetFilterView | None) -> int:
    """The replicas the subsets' percentages resolve against (see the module doc).

    Raises:
        kruise.workloads.workloadspread.targetfilter.TargetFilterError: a path to a non-integer.
    """
    value = spec(workload).get("parallelism" if res is JOBS else "replicas")
    return filtered_replicas(workload, target_filter, 1 if value is None else int(value))


async def read_workload(kube: KubeClient, res: Resource, name: str, namespace: str) -> KubeObject | None:
    """The target read from the API server (``None``: gone); ``res`` is one of :data:`WORKLOADS`.

    Raises:
        kruise.core.errors.ApiError: the read failed.
    """
    return await kube.get_or_none(res, name, namespace)
