"""Native StatefulSets (``apps/v1``) as a release sees them (pure): partition style.

As Kruise Rollouts' ``ControllerFinder`` (``getStatefulSetLikeWorkload``),
``control/partitionstyle/statefulset`` and the workload webhook's ``handleStatefulSetLikeWorkload``:

- revisions are the ControllerRevision names in ``status.currentRevision`` (stable) and
  ``status.updateRevision`` (canary, also ``podTemplateHash``); the pods carry them as
  ``controller-revision-hash``, the key the canary Services select on. kube's StatefulSet
  controller moves ``currentRevision`` to the update revision only once every pod is updated and
  ready, so during a release it names the stable pods;
- ``spec.updateStrategy.rollingUpdate.partition`` is an ordinal: the pods at or above it are
  updated, highest first. A batch of ``n`` pods is ``replicas - n``. Rolling back in batches, the
  pods already at the target are the highest ordinals, so the partition counts only the others
  released (``replicas - released``); the pods they label follow the ordinals
  (``FilterPodsForOrderedUpdate``). The hold writes ``32767`` (``math.MaxInt16``); finalising sets
  it to null, which the API server defaults to ``0``;
- a native StatefulSet has no pause and no ``updatedReadyReplicas``: those are the pods at the
  update revision that are Ready (``BuildController`` counts them the same way);
- only a ``RollingUpdate`` StatefulSet enters a release, whatever its pods run (upstream checks no
  single version here); blue-green is not served (the Rollout webhook refuses it).

The hold is served at upstream's ``/mutate-apps-v1-statefulset`` as ``mstatefulset-rollout.kruise.io``
(upstream's name ``mstatefulset.kb.io`` is the Advanced StatefulSet webhook's in this manager).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from kruise.core.kube.resources import NATIVE_STATEFULSETS
from kruise.rollouts.release.batchplan import IntOrStr, planned_canary
from kruise.rollouts.release.objects import observed_current, spec_replicas
from kruise.rollouts.workloads.partitionkind import partition_kind
from kruise.rollouts.workloads.podlabels import at_revision, deleting
from kruise.rollouts.workloads.port import PartitionState

JSON = dict[str, Any]
MAX_PARTITION = 32767
"""The hold's partition (``math.MaxInt16``): no ordinal reaches it."""


def _strategy(workload: Mapping[str, Any]) -> Mapping[str, Any]:
    return (workload.get("spec") or {}).get("updateStrategy") or {}


def pod_ready(pod: Mapping[str, Any]) -> bool:
    """The pod's ``Ready`` condition is True."""
    conditions = (pod.get("status") or {}).get("conditions") or []
    return any(c.get("type") == "Ready" and c.get("status") == "True" for c in conditions)


@dataclass(frozen=True)
class StatefulSetPartition:
    """:class:`~kruise.rollouts.workloads.port.PartitionWorkload` of a native StatefulSet."""

    revision_label_key: str = "controller-revision-hash"
    held_partition: IntOrStr = MAX_PARTITION

    def ordered(self, workload: Mapping[str, Any]) -> bool:
        return True

    def state(self, workload: Mapping[str, Any], pods: Sequence[Mapping[str, Any]]) -> PartitionState:
        status = workload.get("status") or {}
        update = str(status.get("updateRevision") or "")
        ready = sum(1 for p in pods if not deleting(p) and at_revision(p, update) and pod_ready(p))
        return PartitionState(
            replicas=spec_replicas(workload),
            current=int(status.get("replicas") or 0),
            stable_revision=str(status.get("currentRevision") or ""),
            update_revision=update,
            updated=int(status.get("updatedReplicas") or 0),
            updated_ready=ready,
            consistent=observed_current(workload),
        )

    def partition(self, workload: Mapping[str, Any]) -> IntOrStr | None:
        value = (_strategy(workload).get("rollingUpdate") or {}).get("partition")
        return value if isinstance(value, int) and not isinstance(value, bool) else None

    def kept(self, partition: IntOrStr | None, replicas: int) -> int:
        if not isinstance(partition, int):
            return 0
        return max(0, min(replicas, partition))

    def partition_for(
        self, workload: Mapping[str, Any], batch_replicas: IntOrStr, replicas: int, no_need: int
    ) -> IntOrStr:
        return replicas - planned_canary(batch_replicas, replicas - max(0, no_need))

    def partition_patch(self, partition: IntOrStr | None) -> JSON:
        return {"spec": {"updateStrategy": {"rollingUpdate": {"partition": partition}}}}

    def paused(self, workload: Mapping[str, Any]) -> bool:
        return False

    def unpause_patch(self) -> JSON | None:
        return None

    def holdable(self, workload: Mapping[str, Any]) -> bool:
        """``IsStatefulSetRollingUpdate``: ``RollingUpdate`` (the default), not ``OnDelete``."""
        return _strategy(workload).get("type") in (None, "", "RollingUpdate")

    def single_version(self, workload: Mapping[str, Any]) -> bool | None:
        return None  # not checked for StatefulSets (upstream enters them whatever their pods run)


PARTITION = StatefulSetPartition()

STATEFULSET = partition_kind(
    PARTITION,
    NATIVE_STATEFULSETS,
    webhook="mstatefulset-rollout.kruise.io",
    path="/mutate-apps-v1-statefulset",
    versions=("v1",),
)
"""The native StatefulSet registry entry."""
