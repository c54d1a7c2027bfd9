"""Advanced StatefulSets (``apps.kruise.io`` ``v1beta1``/``v1alpha1``) as a release sees them (pure):
partition style.

The native StatefulSet's rules (:mod:`kruise.rollouts.workloads.statefulset`: ControllerRevision
names as revisions, selected by ``controller-revision-hash``; an ordinal partition, highest
ordinals first; held at ``32767``; finalising writes ``null``, which the Advanced StatefulSet's
defaulting webhook turns into ``0``), with what Kruise Rollouts' ``partitionstyle/statefulset``
control does differently for the Advanced kind:

- ``spec.updateStrategy.rollingUpdate.paused`` is the kind's pause: taking control writes
  ``paused: false`` beside the partition (``Initialize``), and resuming without a BatchRelease
  lifts it;
- ``status.updatedReadyReplicas`` is read from the status; only when it is not positive are the
  updated Ready pods counted (``BuildController``), as for a native StatefulSet;
- with ``rollingUpdate.unorderedUpdate`` set the pods are not updated by ordinal
  (``IsStatefulSetUnorderedUpdate``): the partition counts the pods kept at the stable revision
  as a CloneSet's does, so a rollback in batches leaves the pods already at the target out of it
  (``CalculateBatchContext``) and labels them as unordered (``FilterPodsForUnorderedUpdate``).

The hold is upstream's ``madvancedstatefulset.kb.io`` (``/mutate-apps-kruise-io-statefulset``,
both API versions), served here as ``madvancedstatefulset-rollout.kruise.io`` at
``/mutate-rollouts-kruise-io-workload-advancedstatefulset``: the upstream path is OpenKruise's
own Advanced StatefulSet webhook's in this one manager.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from kruise.core.kube.resources import STATEFULSETS
from kruise.rollouts.release.batchplan import IntOrStr, planned_canary
from kruise.rollouts.workloads.partitionkind import partition_kind
from kruise.rollouts.workloads.port import PartitionState
from kruise.rollouts.workloads.statefulset import StatefulSetPartition

JSON = dict[str, Any]


def _rolling(workload: Mapping[str, Any]) -> Mapping[str, Any]:
    strategy = (workload.get("spec") or {}).get("updateStrategy") or {}
    return strategy.get("rollingUpdate") or {}


@dataclass(frozen=True)
class AdvancedStatefulSetPartition(StatefulSetPartition):
    """:class:`~kruise.rollouts.workloads.port.PartitionWorkload` of an Advanced StatefulSet."""

    def ordered(self, workload: Mapping[str, Any]) -> bool:
        return _rolling(workload).get("unorderedUpdate") is None

    def state(self, workload: Mapping[str, Any], pods: Sequence[Mapping[str, Any]]) -> PartitionState:
        reported = int((workload.get("status") or {}).get("updatedReadyReplicas") or 0)
        state = super().state(workload, pods)
        return state if reported <= 0 else replace(state, updated_ready=reported)

    def partition_for(
        self, workload: Mapping[str, Any], batch_replicas: IntOrStr, replicas: int, no_need: int
    ) -> IntOrStr:
        if self.ordered(workload):
            return super().partition_for(workload, batch_replicas, replicas, no_need)
        no_need = max(0, no_need)
        return max(0, replicas - no_need - planned_canary(batch_replicas, replicas - no_need))

    def paused(self, workload: Mapping[str, Any]) -> bool:
        return bool(_rolling(workload).get("paused"))

    def unpause_patch(self) -> JSON | None:
        return {"spec": {"updateStrategy": {"rollingUpdate": {"paused": False}}}}


PARTITION = AdvancedStatefulSetPartition()

ADVANCED_STATEFULSET = partition_kind(
    PARTITION,
    STATEFULSETS,
    webhook="madvancedstatefulset-rollout.kruise.io",
    path="/mutate-rollouts-kruise-io-workload-advancedstatefulset",
    versions=("v1alpha1", "v1beta1"),
)
"""The Advanced StatefulSet registry entry."""
