"""Which pods of a release carry which batch labels (pure).

Mirrors Kruise Rollouts' label patcher and batch context
(``pkg/controller/batchrelease/labelpatch/patcher.go``, ``labelpatch/filter.go``,
``context/context.go``, ``control/partitionstyle/control_plane.go``):

- with ``releasePlan.rolloutID`` set, every pod upgraded by the release is labelled
  ``rollouts.kruise.io/rollout-id=<id>`` and ``rollouts.kruise.io/rollout-batch-id=<n>``, ``n``
  **1-based** (batch index + 1);
- each batch up to the current one is owed its *increment* of pods (planned pods of that batch
  minus those of the one before, planned = ``canaryReplicas`` scaled against the replicas,
  rounded up, clamped to ``[0, replicas]``); pods already carrying this rollout-id and a valid
  batch id pay their batch's debt, the other pods at the update revision (new, recreated,
  labelled by an older rollout-id or with a batch id that is not a number of this plan) are
  labelled, latest batch first;
- a batch is not ready until at least the planned pods (not being deleted) carry the rollout-id
  (``batchLabelSatisfied``);
- every style labels (partition, canary: the canary Deployment's pods, blue-green); the canary
  style does not wait for them (its batch context plans no count), the others do;
- rolling back in batches, the pods already at the rollback target when the rollback started
  are marked ``rollouts.kruise.io/no-need-update=<id>`` and counted as ``noNeedUpdateReplicas``;
  they are labelled only as far as the planned counts exceed the pods really rolled back
  (``FilterPodsForUnorderedUpdate``), and those really rolled back are labelled first.

A pod is "at the update revision" when its ``pod-template-hash`` or ``controller-revision-hash``
label names that revision (``IsConsistentWithRevision``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from kruise.rollouts.api.common import ROLLOUT_BATCH_ID_LABEL, ROLLOUT_ID_LABEL
from kruise.rollouts.release.batchplan import IntOrStr, planned_canary
from kruise.workloads.pods import short_hash

NO_NEED_UPDATE_LABEL = "rollouts.kruise.io/no-need-update"
"""Pod label: at the rollback target before a rollback in batches started (``NoNeedUpdatePodLabel``)."""
_REVISION_LABELS = ("pod-template-hash", "controller-revision-hash")

Pod = Mapping[str, Any]


@dataclass(frozen=True)
class PodLabelPatch:
    """Labels to merge onto one pod (by name)."""

    name: str
    labels: dict[str, str]


def _labels(pod: Pod) -> Mapping[str, str]:
    return (pod.get("metadata") or {}).get("labels") or {}


def _name(pod: Pod) -> str:
    return str((pod.get("metadata") or {}).get("name"))


def deleting(pod: Pod) -> bool:
    return bool((pod.get("metadata") or {}).get("deletionTimestamp"))


def at_revision(pod: Pod, revision: str) -> bool:
    """``IsConsistentWithRevision``: the pod's ``pod-template-hash`` or ``controller-revision-hash``
    names ``revision`` (compared by short hash, the last ``-`` segment, as revisions are kept short)."""
    if not revision:
        return False
    labels = _labels(pod)
    return any(
        labels.get(key) and short_hash(str(labels[key])) == short_hash(revision) for key in _REVISION_LABELS
    )


def planned_increments(batches: Sequence[IntOrStr], replicas: int, current_batch: int) -> list[int]:
    """Pods each batch adds up to ``current_batch`` (0-based; later batches owe 0).

    ``[planned(0), planned(1) - planned(0), ...]``; an increment can be negative when a plan
    shrinks, which then simply owes nothing."""
    owed = [0] * len(batches)
    planned = [planned_canary(batches[i], replicas) for i in range(min(current_batch + 1, len(batches)))]
    for i, value in enumerate(planned):
        owed[i] = value - (planned[i - 1] if i else 0)
    return owed


def ordinal(pod: Pod) -> int:
    """A StatefulSet pod's ordinal: the number after the last ``-`` of its name (-1 if none)."""
    tail = _name(pod).rpartition("-")[2]
    return int(tail) if tail.isdigit() else -1


def label_candidates(
    pods: Sequence[Pod],
    *,
    rollout_id: str,
    update_revision: str,
    planned: int,
    desired_updated: int,
    rolling_back: bool,
    ordered_partition: int | None = None,
    replicas: int = 0,
) -> list[Pod]:
    """The live pods at the update revision that may carry this release's batch labels.

    Rolling back in batches, only as many of the pods that did not really roll back as the planned
    counts exceed those that did qualify, after every other pod:

    - unordered (``FilterPodsForUnorderedUpdate``), the pods marked no-need-update and not yet
      labelled are the low-priority ones: ``planned - (desired_updated - low)`` of them qualify;
    - ordered (``FilterPodsForOrderedUpdate``, ``ordered_partition`` set: a StatefulSet's
      partition), the pods below the partition are, by ordinal: ``planned - (replicas -
      partition)`` of them qualify.

    Otherwise every live pod at the update revision qualifies."""
    live = [p for p in pods if not deleting(p) and at_revision(p, update_revision)]
    if not rolling_back:
        return live
    if ordered_partition is not None:
        live.sort(key=ordinal)
        low = [p for p in live if ordinal(p) < ordered_partition]
        need_update = replicas - ordered_partition
    else:
        low = [
            p
            for p in live
            if _labels(p).get(NO_NEED_UPDATE_LABEL) == rollout_id
            and _labels(p).get(ROLLOUT_ID_LABEL) != rollout_id
        ]
        need_update = desired_updated - len(low)
    low_ids = {id(p) for p in low}
    high = [p for p in live if id(p) not in low_ids]
    if need_update <= 0:
        return live
    extra = max(0, planned - need_update)
    return high + low[:extra]


def batch_label_patches(
    candidates: Sequence[Pod],
    *,
    rollout_id: str,
    batches: Sequence[IntOrStr],
    replicas: int,
    current_batch: int,
) -> list[PodLabelPatch]:
    """``patchPodBatchLabel``: the labels to write so each batch up to ``current_batch`` has its
    increment of pods with ``rollout-id=<rollout_id>`` (none when ``rollout_id`` is empty).

    Pods are taken in ``candidates`` order, the latest batch served first; when the candidates run
    out the rest stays owed (a later round, with more pods upgraded, pays it)."""
    if not rollout_id or not batches:
        return []
    owed = planned_increments(batches, replicas, current_batch)
    unlabelled: list[Pod] = []
    for pod in candidates:
        labels = _labels(pod)
        if labels.get(ROLLOUT_ID_LABEL) != rollout_id:
            unlabelled.append(pod)
            continue
        raw = str(labels.get(ROLLOUT_BATCH_ID_LABEL, ""))
        batch_id = int(raw) if raw.isdigit() else 0
        if 0 < batch_id <= len(owed):
            owed[batch_id - 1] -= 1
        else:  # not a batch of this plan: overwrite it
            unlabelled.append(pod)
    patches: list[PodLabelPatch] = []
    taken = 0
    for index in range(len(owed) - 1, -1, -1):
        while owed[index] > 0 and taken < len(unlabelled):
            wanted = {ROLLOUT_ID_LABEL: rollout_id, ROLLOUT_BATCH_ID_LABEL: str(index + 1)}
            patches.append(PodLabelPatch(_name(unlabelled[taken]), wanted))
            taken += 1
            owed[index] -= 1
    return patches


def release_label_patches(
    pods: Sequence[Pod],
    plan: Mapping[str, Any],
    *,
    update_revision: str,
    replicas: int,
    current_batch: int,
) -> list[PodLabelPatch]:
    """The batch labels a release that never rolls back in batches owes its pods: the canary
    style (``pods``: the canary Deployment's), blue-green and a Deployment's partition style
    (``pods``: the workload's). Upstream's canary and blue-green control planes and the
    Deployment's partition control run the same ``PatchPodBatchLabel`` as the other kinds, with no
    filter: every live pod at ``update_revision`` may be labelled with ``plan``'s ``rolloutID``,
    and each batch up to ``current_batch`` owes its increment of ``replicas``."""
    live = [p for p in pods if not deleting(p) and at_revision(p, update_revision)]
    batches = [b.get("canaryReplicas", "100%") for b in plan.get("batches") or []]
    return batch_label_patches(
        live,
        rollout_id=str(plan.get("rolloutID") or ""),
        batches=batches,
        replicas=replicas,
        current_batch=current_batch,
    )


def labels_satisfied(pods: Sequence[Pod], rollout_id: str, planned: int) -> bool:
    """``batchLabelSatisfied``: at least ``planned`` live pods carry ``rollout-id=<rollout_id>``
    (always true without a rollout-id or without pods)."""
    if not rollout_id or not pods:
        return True
    labelled = sum(1 for p in pods if not deleting(p) and _labels(p).get(ROLLOUT_ID_LABEL) == rollout_id)
    return labelled >= planned


def no_need_update(
    pods: Sequence[Pod], rollout_id: str, update_revision: str
) -> tuple[int, list[PodLabelPatch]]:
    """``markNoNeedUpdatePodsIfNeeds``: (live pods at ``update_revision`` already marked
    ``no-need-update=<rollout_id>``, the marks still to write on the others)."""
    marked = 0
    patches: list[PodLabelPatch] = []
    for pod in pods:
        if deleting(pod) or not at_revision(pod, update_revision):
            continue
        if _labels(pod).get(NO_NEED_UPDATE_LABEL) == rollout_id:
            marked += 1
        else:
            patches.append(PodLabelPatch(_name(pod), {NO_NEED_UPDATE_LABEL: rollout_id}))
    return marked, patches


def batch_summary(pods: Sequence[Pod], rollout_id: str) -> str:
    """``"rollout-id <id>: batch 1=2, 2=2"``: live pods carrying ``rollout_id`` by batch id, for
    ``kruise rollout status`` ("" when none does)."""
    counts: dict[str, int] = {}
    for pod in pods:
        labels = _labels(pod)
        if not deleting(pod) and rollout_id and labels.get(ROLLOUT_ID_LABEL) == rollout_id:
            batch = str(labels.get(ROLLOUT_BATCH_ID_LABEL, "?"))
            counts[batch] = counts.get(batch, 0) + 1
    if not counts:
        return ""
    order = sorted(counts, key=lambda b: (not b.isdigit(), int(b) if b.isdigit() else 0, b))
    return f"rollout-id {rollout_id}: batch " + ", ".join(f"{b}={counts[b]}" for b in order)
