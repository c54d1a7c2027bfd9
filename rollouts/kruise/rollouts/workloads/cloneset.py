"""CloneSets (``apps.kruise.io/v1alpha1``) as a release sees them (pure): partition and blue-green.

As Kruise Rollouts' ``ControllerFinder`` and ``control/partitionstyle/cloneset``:

- revisions are the short hashes (the last ``-`` segment) of ``status.currentRevision`` (stable)
  and ``status.updateRevision`` (canary, also ``podTemplateHash``); the pods carry them as
  ``pod-template-hash``, the key the canary Services select on;
- ``updateStrategy.partition`` counts the pods kept at the stable revision: an integer batch is
  written as ``replicas - planned``, a percentage batch as the percentage of stable pods
  (:func:`~kruise.rollouts.release.batchplan.cloneset_partition`); rolling back in batches, the
  pods already at the target are left out of the plan; the hold writes ``"100%"``;
- ``updateStrategy.paused`` is lifted when the BatchRelease takes control and when it finalises;
- with traffic routing a CloneSet enters a release only while single-version
  (``status.replicas == status.updatedReplicas``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from kruise.core.kube.resources import CLONESETS
from kruise.rollouts.release.batchplan import (
    IntOrStr,
    cloneset_partition,
    cloneset_partition_pods,
    planned_canary,
    stable_partition_percent,
)
from kruise.rollouts.release.objects import observed_current, spec_replicas
from kruise.rollouts.workloads.bluegreen import BlueGreenRelease
from kruise.rollouts.workloads.info import WorkloadInfo
from kruise.rollouts.workloads.partition import PartitionDecision, decide_partition
from kruise.rollouts.workloads.partitionkind import partition_hold, partition_info, partition_kind
from kruise.rollouts.workloads.port import Observation, PartitionState
from kruise.workloads.pods import short_hash

JSON = dict[str, Any]


def _strategy(cloneset: Mapping[str, Any]) -> Mapping[str, Any]:
    return (cloneset.get("spec") or {}).get("updateStrategy") or {}


@dataclass(frozen=True)
class CloneSetPartition:
    """:class:`~kruise.rollouts.workloads.port.PartitionWorkload` of a CloneSet."""

    revision_label_key: str = "pod-template-hash"
    held_partition: IntOrStr = "100%"

    def ordered(self, workload: Mapping[str, Any]) -> bool:
        return False

    def state(self, workload: Mapping[str, Any], pods: Sequence[Mapping[str, Any]]) -> PartitionState:
        status = workload.get("status") or {}
        return PartitionState(
            replicas=spec_replicas(workload),
            current=int(status.get("replicas") or 0),
            stable_revision=short_hash(str(status.get("currentRevision") or "")),
            update_revision=short_hash(str(status.get("updateRevision") or "")),
            updated=int(status.get("updatedReplicas") or 0),
            updated_ready=int(status.get("updatedReadyReplicas") or 0),
            consistent=observed_current(workload),
        )

    def partition(self, workload: Mapping[str, Any]) -> IntOrStr | None:
        value = _strategy(workload).get("partition")
        return value if isinstance(value, int | str) and not isinstance(value, bool) else None

    def kept(self, partition: IntOrStr | None, replicas: int) -> int:
        return cloneset_partition_pods(partition, replicas)

    def partition_for(
        self, workload: Mapping[str, Any], batch_replicas: IntOrStr, replicas: int, no_need: int
    ) -> IntOrStr:
        """The partition for a batch; rolling back in batches, the ``no_need`` pods already at the
        target are left out of the plan and only the others are released by its percentages."""
        if no_need <= 0:
            return cloneset_partition(batch_replicas, replicas)
        released = planned_canary(batch_replicas, replicas - no_need)
        stable = max(0, replicas - no_need - released)
        if isinstance(batch_replicas, int):
            return stable
        return stable_partition_percent(stable, replicas, batch_replicas)

    def partition_patch(self, partition: IntOrStr | None) -> JSON:
        return {"spec": {"updateStrategy": {"partition": partition}}}

    def paused(self, workload: Mapping[str, Any]) -> bool:
        return bool(_strategy(workload).get("paused"))

    def unpause_patch(self) -> JSON | None:
        return {"spec": {"updateStrategy": {"paused": False}}}

    def holdable(self, workload: Mapping[str, Any]) -> bool:
        return True

    def single_version(self, workload: Mapping[str, Any]) -> bool | None:
        status = workload.get("status") or {}
        return int(status.get("replicas") or 0) == int(status.get("updatedReplicas") or 0)


PARTITION = CloneSetPartition()


def decide_cloneset(
    br: Mapping[str, Any],
    cloneset: Mapping[str, Any] | None,
    pods: Sequence[Mapping[str, Any]] = (),
    *,
    keep_paused_on_cancel: bool = False,
) -> PartitionDecision:
    """One round of the partition control over a CloneSet
    (:func:`~kruise.rollouts.workloads.partition.decide_partition`)."""
    return decide_partition(PARTITION, br, cloneset, pods, keep_paused_on_cancel=keep_paused_on_cancel)


def hold_cloneset(
    new: Mapping[str, Any], old: Mapping[str, Any], rollouts: Sequence[Mapping[str, Any]]
) -> JSON | None:
    """The CloneSet to admit instead of ``new`` (None: admit ``new`` unchanged); see
    :func:`~kruise.rollouts.workloads.partition.partition_hold` (blue-green Rollouts hold too)."""
    return partition_hold(PARTITION, new, old, rollouts, blue_green=True)


def cloneset_info(cloneset: Mapping[str, Any]) -> WorkloadInfo:
    """What the Rollout engine knows of ``cloneset``."""
    return partition_info(PARTITION, CLONESETS, Observation(dict(cloneset)))


CLONESET = partition_kind(
    PARTITION,
    CLONESETS,
    webhook="mcloneset-rollout.kruise.io",
    path="/mutate-rollouts-kruise-io-workload-cloneset",
    versions=("v1alpha1",),
    blue_green=BlueGreenRelease(
        lambda _rollout, obs: cloneset_info(obs.workload), finalise_when_deleted=False
    ),
)
"""The CloneSet registry entry. Its hold is ``mcloneset-rollout.kruise.io`` at
``/mutate-rollouts-kruise-io-workload-cloneset``: upstream's ``mcloneset.kb.io`` and its path are
OpenKruise's own CloneSet webhook's in this one manager."""
