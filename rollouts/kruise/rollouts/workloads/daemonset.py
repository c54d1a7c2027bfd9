"""Advanced DaemonSets (``apps.kruise.io/v1alpha1``) as a release sees them (pure): partition style.

As Kruise Rollouts' ``ControllerFinder.getKruiseDaemonSet``, ``control/partitionstyle/daemonset``
and the workload webhook's ``handleDaemonSet``:

- the pods are the nodes': ``replicas`` is ``status.desiredNumberScheduled``, the updated pods
  ``status.updatedNumberScheduled``; the update (canary) revision is ``status.daemonSetHash``, also
  the ``podTemplateHash``. An Advanced DaemonSet has no ``updatedReadyReplicas``: those are the
  live pods at the update revision that are Ready, counted from the pods as upstream does;
- ``rollingUpdate.partition`` counts the pods kept at the old revision: a batch of ``n`` pods is
  ``replicas - n``; rolling back in batches, the ``no_need`` pods already at the target are left
  out (``replicas - no_need - planned(replicas - no_need)``, as upstream's batch context). The hold
  writes ``32767`` (``math.MaxInt16``); taking control lifts ``rollingUpdate.paused``; finalising
  clears the partition and the pause;
- only a ``RollingUpdate`` DaemonSet enters a release.

Two deliberate differences, both where upstream's Advanced DaemonSet support is incomplete:

- canary Services select on ``controller-revision-hash``, the label the Advanced DaemonSet's pods
  carry (upstream's finder names ``pod-template-hash``, which those pods never have, so its canary
  Service selects nothing);
- rollback detection: upstream has no stable revision for an Advanced DaemonSet (its status has no
  ``currentRevision``) and never sees a rollback. Here the hold records the revision the DaemonSet
  ran before the release (``status.daemonSetHash`` of the object being replaced) in the label
  ``rollouts.kruise.io/stable-revision`` (as the partition-style Deployment does) when a release
  starts; while a release is in progress that label is the stable revision, so a template reverted
  mid-release (update revision == stable, not every pod updated) is a rollback, as for CloneSets.
  A continuous release keeps it (the release it restarts is still from that stable revision); the
  BatchRelease's finalisation drops it once ``in-progressing`` is gone (success, rollback, disabled
  or deleted Rollout), as the Deployment's drops its own.

The hold is served at ``/mutate-rollouts-kruise-io-workload-daemonset`` as
``mdaemonset-rollout.kruise.io`` (upstream's workload webhook path for ``apps.kruise.io`` kinds is
the Advanced DaemonSet's own mutating webhook's in this manager).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from kruise.core.kube.resources import DAEMONSETS
from kruise.rollouts.release.batchplan import IntOrStr, planned_canary, scaled
from kruise.rollouts.release.constants import IN_PROGRESSING_ANNOTATION, STABLE_REVISION_LABEL
from kruise.rollouts.release.objects import meta, observed_current
from kruise.rollouts.workloads.partitionkind import partition_kind
from kruise.rollouts.workloads.podlabels import at_revision, deleting
from kruise.rollouts.workloads.port import PartitionState
from kruise.rollouts.workloads.statefulset import MAX_PARTITION, pod_ready

JSON = dict[str, Any]


def _rolling(workload: Mapping[str, Any]) -> Mapping[str, Any]:
    return (((workload.get("spec") or {}).get("updateStrategy") or {}).get("rollingUpdate")) or {}


def _in_progress(workload: Mapping[str, Any]) -> bool:
    return IN_PROGRESSING_ANNOTATION in (meta(workload).get("annotations") or {})


@dataclass(frozen=True)
class DaemonSetPartition:
    """:class:`~kruise.rollouts.workloads.port.PartitionWorkload` of an Advanced DaemonSet."""

    revision_label_key: str = "controller-revision-hash"
    held_partition: IntOrStr = MAX_PARTITION

    def ordered(self, workload: Mapping[str, Any]) -> bool:
        return False

    def state(self, workload: Mapping[str, Any], pods: Sequence[Mapping[str, Any]]) -> PartitionState:
        status = workload.get("status") or {}
        update = str(status.get("daemonSetHash") or "")
        recorded = (meta(workload).get("labels") or {}).get(STABLE_REVISION_LABEL)
        stable = str(recorded) if recorded and _in_progress(workload) else update
        ready = sum(1 for p in pods if not deleting(p) and at_revision(p, update) and pod_ready(p))
        return PartitionState(
            replicas=int(status.get("desiredNumberScheduled") or 0),
            current=int(status.get("currentNumberScheduled") or 0),
            stable_revision=stable,
            update_revision=update,
            updated=int(status.get("updatedNumberScheduled") or 0),
            updated_ready=ready,
            consistent=observed_current(workload),
        )

    def partition(self, workload: Mapping[str, Any]) -> IntOrStr | None:
        value = _rolling(workload).get("partition")
        return value if isinstance(value, int | str) and not isinstance(value, bool) else None

    def kept(self, partition: IntOrStr | None, replicas: int) -> int:
        """Pods the partition keeps old: an int as is, a percentage of the desired pods rounded
        down (the controller's reading), clamped to ``[0, replicas]``."""
        if partition is None:
            return 0
        try:
            kept = scaled(partition, replicas, round_up=False)
        except ValueError:
            return 0
        return max(0, min(replicas, kept))

    def partition_for(
        self, workload: Mapping[str, Any], batch_replicas: IntOrStr, replicas: int, no_need: int
    ) -> IntOrStr:
        others = replicas - max(0, no_need)
        return max(0, others - planned_canary(batch_replicas, others))

    def partition_patch(self, partition: IntOrStr | None) -> JSON:
        return {"spec": {"updateStrategy": {"rollingUpdate": {"partition": partition}}}}

    def paused(self, workload: Mapping[str, Any]) -> bool:
        return bool(_rolling(workload).get("paused"))

    def unpause_patch(self) -> JSON | None:
        return {"spec": {"updateStrategy": {"rollingUpdate": {"paused": False}}}}

    def holdable(self, workload: Mapping[str, Any]) -> bool:
        """``RollingUpdate`` (the default), not ``OnDelete``."""
        strategy = (workload.get("spec") or {}).get("updateStrategy") or {}
        return strategy.get("type") in (None, "", "RollingUpdate")

    def single_version(self, workload: Mapping[str, Any]) -> bool | None:
        return None  # upstream's handleDaemonSet checks no single version

    def stable_record(self, old: Mapping[str, Any]) -> JSON | None:
        """The stable revision label: the revision ``old`` runs (its ``status.daemonSetHash``)."""
        stable = str((old.get("status") or {}).get("daemonSetHash") or "")
        return {"metadata": {"labels": {STABLE_REVISION_LABEL: stable}}} if stable else None

    def stable_forget(self, workload: Mapping[str, Any]) -> JSON | None:
        """Drop the label once the release is over (``in-progressing`` gone: the Rollout removes it
        first in every finalising round), as the partition-style Deployment's finalisation drops
        its own; while in progress it is still the stable revision and stays."""
        recorded = STABLE_REVISION_LABEL in (meta(workload).get("labels") or {})
        return (
            {"metadata": {"labels": {STABLE_REVISION_LABEL: None}}}
            if recorded and not _in_progress(workload)
            else None
        )


PARTITION = DaemonSetPartition()

DAEMONSET = partition_kind(
    PARTITION,
    DAEMONSETS,
    webhook="mdaemonset-rollout.kruise.io",
    path="/mutate-rollouts-kruise-io-workload-daemonset",
    versions=("v1alpha1",),
)
"""The Advanced DaemonSet registry entry."""
