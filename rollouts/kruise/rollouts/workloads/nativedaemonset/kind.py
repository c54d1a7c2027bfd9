"""Native DaemonSets (``apps/v1``) as a release sees them (pure): partition style through ``OnDelete``.

As Kruise Rollouts' ``ControllerFinder.getNativeDaemonSet``, ``control/partitionstyle/
nativedaemonset`` and the workload webhook's ``handleNativeDaemonSet``:

- **hold** (:func:`hold`, webhook ``mdaemonset-native.kb.io`` at ``/mutate-apps-v1-daemonset``): an
  UPDATE changing the pod template (or the rollout-id) of a DaemonSet an enabled Rollout references
  is admitted with ``spec.updateStrategy.type: OnDelete`` and ``rollouts.kruise.io/in-progressing``;
  the strategy type it had is recorded in ``rollouts.kruise.io/daemonset-original-update-strategy``.
  Whatever the strategy was, kube's DaemonSet controller now replaces no pod by itself;
- **revisions** from the DaemonSet's ControllerRevisions (:mod:`.revisions`); the pods carry them
  as ``controller-revision-hash``. ``replicas`` is ``status.desiredNumberScheduled``, the updated
  pods ``status.updatedNumberScheduled``; the Ready ones at the canary revision are counted from
  the pods (the status has no such count);
- **a batch** keeps ``partition`` pods on the old revision: ``replicas - n`` for a batch of ``n``
  (as the Advanced DaemonSet's). It is written, with the revision it releases, into
  ``rollouts.kruise.io/daemonset-advanced-control`` (with ``OnDelete`` again and the release's
  revisions in ``rollouts.kruise.io/daemonset-revision``); the native DaemonSet controller
  (:mod:`kruise.rollouts.nativedaemonset`) deletes old pods until that many are left, and kube's
  controller recreates them at the new revision. A batch written for another revision (the
  release before a continuous release) releases nothing of this one: it reads as held;
- **hand-back** (finalising, or a Rollout gone without its BatchRelease): the three annotations
  dropped and the recorded strategy type restored (upstream restores ``RollingUpdate`` when none
  was recorded; here nothing is restored then, so a DaemonSet the hold never touched keeps its
  strategy). Under ``KeepWorkloadPausedOnRolloutDeletion`` a release ended without ``WaitResume``
  keeps ``OnDelete``: the pods stay where they are (upstream's e2e "release 1 and delete rollout
  cr" expects one updated pod 5 s after the deletion);
- no pause, no traffic routing need (rolling back in batches does not apply, as upstream's
  ``IsRollbackInBatchPolicy``); a rollback is seen only while one ControllerRevision exists (stable
  and canary the same), as upstream: a template reverted to an older one brings that one's
  ControllerRevision back as the newest, so it is released like a new template.

Deliberate differences, where upstream's code contradicts its own proposal or loses state: the
original strategy is recorded only by the hold that starts a release (upstream records it on every
held update, so a continuous release records ``OnDelete`` and its hand-back restores that); a
continuous release's first batch is written for the new revision even when its partition equals
the old one's (upstream compares the partition only and relies on the reset's hand-back).
"""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from kruise.core.kube.resources import CONTROLLER_REVISIONS, NATIVE_DAEMONSETS
from kruise.core.runtime.spec import OWNER_UID, index_by_owner_uid, owner_key
from kruise.rollouts.api.common import RollingStyle
from kruise.rollouts.release.batchplan import IntOrStr, planned_canary
from kruise.rollouts.release.constants import IN_PROGRESSING_ANNOTATION
from kruise.rollouts.release.objects import meta, observed_current
from kruise.rollouts.workloads.hold import rollout_for
from kruise.rollouts.workloads.info import WorkloadInfo
from kruise.rollouts.workloads.nativedaemonset.marks import (
    ADVANCED_CONTROL,
    ON_DELETE,
    ORIGINAL_STRATEGY,
    RELEASE_ANNOTATIONS,
    REVISION,
    advanced_control,
    original_strategy,
    parse_advanced_control,
    revision_info,
    strategy_type,
)
from kruise.rollouts.workloads.nativedaemonset.revisions import HASH_LABEL, Revisions, daemonset_revisions
from kruise.rollouts.workloads.ops import ControlDecision
from kruise.rollouts.workloads.partitionkind import (
    PartitionRelease,
    partition_info,
    partition_resume,
    template_or_id_changed,
)
from kruise.rollouts.workloads.podlabels import at_revision, deleting
from kruise.rollouts.workloads.port import (
    CacheView,
    Gates,
    Observation,
    PartitionState,
    Route,
    WorkloadHold,
    WorkloadKey,
    WorkloadKind,
    self_route,
)
from kruise.rollouts.workloads.statefulset import MAX_PARTITION, pod_ready

JSON = dict[str, Any]


@dataclass(frozen=True)
class NativeDaemonSetPartition:
    """:class:`~kruise.rollouts.workloads.port.PartitionWorkload` (and
    :class:`~kruise.rollouts.workloads.port.HandsBack`) of a native DaemonSet whose ControllerRevisions
    gave ``revisions`` (one instance per round: the object alone names no revision)."""

    revisions: Revisions = field(default_factory=Revisions)
    revision_label_key: str = HASH_LABEL
    held_partition: IntOrStr = MAX_PARTITION

    def ordered(self, workload: Mapping[str, Any]) -> bool:
        return False

    def state(self, workload: Mapping[str, Any], pods: Sequence[Mapping[str, Any]]) -> PartitionState:
        """Counts from the status; consistent once it observed its generation and the current
        template's ControllerRevision is known."""
        status = workload.get("status") or {}
        update = self.revisions.canary
        ready = sum(1 for p in pods if not deleting(p) and at_revision(p, update) and pod_ready(p))
        return PartitionState(
            replicas=int(status.get("desiredNumberScheduled") or 0),
            current=int(status.get("currentNumberScheduled") or 0),
            stable_revision=self.revisions.stable,
            update_revision=update,
            updated=int(status.get("updatedNumberScheduled") or 0),
            updated_ready=ready,
            consistent=observed_current(workload) and self.revisions.known,
        )

    def partition(self, workload: Mapping[str, Any]) -> IntOrStr | None:
        """The batch written for the canary revision; else, while the hold's ``OnDelete`` is in
        force, the held maximum (every pod kept); else None (not held)."""
        control = parse_advanced_control(workload)
        if control is not None and control[1] == self.revisions.canary:
            return control[0]
        held = strategy_type(workload) == ON_DELETE and original_strategy(workload) is not None
        return self.held_partition if held else None

    def kept(self, partition: IntOrStr | None, replicas: int) -> int:
        return max(0, min(replicas, partition)) if isinstance(partition, int) else 0

    def partition_for(
        self, workload: Mapping[str, Any], batch_replicas: IntOrStr, replicas: int, no_need: int
    ) -> IntOrStr:
        others = replicas - max(0, no_need)
        return max(0, others - planned_canary(batch_replicas, others))

    def partition_patch(self, partition: IntOrStr | None) -> JSON:
        """A batch: ``OnDelete``, the advanced-control and revision annotations; None: the batch
        annotation dropped (the full hand-back is :meth:`hand_back`)."""
        if partition is None:
            return {"metadata": {"annotations": {ADVANCED_CONTROL: None}}}
        kept = max(0, int(str(partition)))
        canary, stable = self.revisions.canary, self.revisions.stable
        annotations = {
            ADVANCED_CONTROL: advanced_control(kept, canary),
            REVISION: revision_info(canary, stable),
        }
        return {"metadata": {"annotations": annotations}, "spec": {"updateStrategy": {"type": ON_DELETE}}}

    def paused(self, workload: Mapping[str, Any]) -> bool:
        return False

    def unpause_patch(self) -> JSON | None:
        return None

    def holdable(self, workload: Mapping[str, Any]) -> bool:
        return True  # any strategy: the hold replaces it with OnDelete

    def single_version(self, workload: Mapping[str, Any]) -> bool | None:
        return None

    def hand_back(self, workload: Mapping[str, Any], *, keep: bool) -> JSON | None:
        """Drop the release's annotations; restore the recorded strategy type unless ``keep``."""
        annotations = meta(workload).get("annotations") or {}
        patch: JSON = {}
        original = original_strategy(workload)
        if original and not keep and strategy_type(workload) != original:
            patch["spec"] = {"updateStrategy": {"type": original}}
        dropped = {key: None for key in RELEASE_ANNOTATIONS if key in annotations}
        if dropped:
            patch["metadata"] = {"annotations": dropped}
        return patch or None


def hold(
    new: Mapping[str, Any], old: Mapping[str, Any], rollouts: Sequence[Mapping[str, Any]]
) -> JSON | None:
    """The workload webhook's hold (see the module docstring); None: admit ``new`` unchanged (no
    enabled Rollout references it, its strategy is empty or blue-green, which this kind does not
    serve, or neither the template nor the rollout-id changed)."""
    ro = rollout_for(new, rollouts)
    if ro is None or not template_or_id_changed(new, old):
        return None
    strategy = (ro.get("spec") or {}).get("strategy") or {}
    if strategy.get("blueGreen") or not strategy.get("canary"):
        return None
    held: JSON = copy.deepcopy(dict(new))
    metadata = held.setdefault("metadata", {})
    annotations = metadata["annotations"] = dict(metadata.get("annotations") or {})
    annotations.setdefault(ORIGINAL_STRATEGY, strategy_type(new))
    annotations[IN_PROGRESSING_ANNOTATION] = json.dumps(
        {"rolloutName": meta(ro).get("name")}, separators=(",", ":")
    )
    held.setdefault("spec", {}).setdefault("updateStrategy", {})["type"] = ON_DELETE
    return held


def observe(view: CacheView, daemonset: JSON) -> Observation:
    """The DaemonSet with the ControllerRevisions it controls."""
    uid = str(meta(daemonset).get("uid") or "")
    return Observation(daemonset, revisions=view.by_index(CONTROLLER_REVISIONS, OWNER_UID, uid))


def bound(obs: Observation | None) -> NativeDaemonSetPartition:
    """The partition view of the observed DaemonSet, with its revisions."""
    if obs is None:
        return NativeDaemonSetPartition()
    return NativeDaemonSetPartition(daemonset_revisions(obs.workload, obs.revisions))


@dataclass(frozen=True)
class NativeDaemonSetRelease:
    """The partition :class:`~kruise.rollouts.workloads.port.ReleaseStyle` of a native DaemonSet:
    the generic partition round (:mod:`kruise.rollouts.workloads.partition`) over :func:`bound`."""

    style: RollingStyle = RollingStyle.PARTITION
    rollback_in_batches: bool = False

    def info(self, rollout: Mapping[str, Any], obs: Observation) -> WorkloadInfo:
        return partition_info(bound(obs), NATIVE_DAEMONSETS, obs)

    def control(self, br: Mapping[str, Any], obs: Observation | None, gates: Gates) -> ControlDecision:
        return PartitionRelease(bound(obs), NATIVE_DAEMONSETS, rollback_in_batches=False).control(
            br, obs, gates
        )

    def needs_hpas(self, br: Mapping[str, Any], obs: Observation | None) -> bool:
        return False


def _revision_owner(revision: JSON) -> tuple[WorkloadKey, ...]:
    key = owner_key(revision, NATIVE_DAEMONSETS)
    if key is None:
        return ()
    namespace, _, name = key.partition("/")
    return ((namespace, NATIVE_DAEMONSETS.kind, name),)


NATIVE_DAEMONSET = WorkloadKind(
    resource=NATIVE_DAEMONSETS,
    styles={RollingStyle.PARTITION: NativeDaemonSetRelease()},
    hold=WorkloadHold(
        name="mdaemonset-native.kb.io",
        path="/mutate-apps-v1-daemonset",
        group=NATIVE_DAEMONSETS.group,
        versions=("v1",),
        plural=NATIVE_DAEMONSETS.plural,
        decide=lambda new, old, rollouts, _related: hold(new, old, rollouts),
        worth_a_look=template_or_id_changed,
    ),
    routes=(
        self_route(NATIVE_DAEMONSETS),
        Route(CONTROLLER_REVISIONS, _revision_owner, {OWNER_UID: index_by_owner_uid}),
    ),
    resume=lambda workload: partition_resume(NativeDaemonSetPartition(), workload),
    observe=observe,
)
"""The native DaemonSet registry entry."""
