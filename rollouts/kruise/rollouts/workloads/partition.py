"""Partition-style releases of any :class:`~kruise.rollouts.workloads.port.PartitionWorkload` (pure).

Mirrors Kruise Rollouts' partition control plane (``pkg/controller/batchrelease/control/
partitionstyle/control_plane.go``) with one implementation per kind behind it, as its
``partitionstyle.Interface`` (CloneSet, StatefulSet, Advanced StatefulSet, Advanced DaemonSet):

- **take control** on the first round: the control annotation
  ``batchrelease.rollouts.kruise.io/control-info`` (the BatchRelease as owner reference JSON),
  the kind's pause written ``false`` whether or not it was set (upstream's ``Initialize`` writes
  ``paused: false`` with the annotation, so a workload under release always has the field: an
  Advanced DaemonSet's ``rollingUpdate.paused``, a CloneSet's ``updateStrategy.paused``); a pause
  set again later is lifted on the next round;
- **upgrade the batch**: the partition for ``releasePlan.batches[canaryStatus.currentBatch]``
  (:meth:`~kruise.rollouts.workloads.port.PartitionWorkload.partition_for`); once the release has
  started the partition only moves down (it never keeps more pods back than it does);
- **which batch**: a new BatchRelease starts at ``batchPartition``; when the plan changes
  (``signalRecalculate``) it moves there too, unless ``releasePlan.rolloutID`` differs from
  ``status.observedRolloutID``: then it starts over at batch 0 so the pods are labelled again
  batch by batch; below ``batchPartition`` a Ready batch moves to the next one
  (``moveToNextBatch``);
- **batch labels** (``releasePlan.rolloutID`` set): the upgraded pods get
  ``rollouts.kruise.io/rollout-id``/``rollout-batch-id`` (:mod:`.podlabels`) and the batch is not
  Ready before the planned pods carry the rollout-id;
- **report**: ``canaryStatus.currentBatch``, ``batchState`` (``Upgrading`` until the
  batch-ready rule holds on a status that observed its generation, then ``Ready``),
  ``updatedReplicas``/``updatedReadyReplicas``, ``noNeedUpdateReplicas``,
  ``observedReleasePlanHash``, ``observedRolloutID``, ``observedGeneration``, revisions and
  ``observedWorkloadReplicas``;
- **a status behind its spec** (``isWorkloadUnstable``): touch nothing, look again (its update
  revision is recorded only once the status caught up);
- **a new update revision** while progressing (a continuous release, ``isWorkloadRevisionChanged``:
  "workload revision was changed, then abort"): touch nothing until the Rollout resets the
  release (it deletes this BatchRelease and starts over on the new revision). Upstream records
  the new revision and stops only that round, so its next round could upgrade the old batch's
  share of pods to the new revision before the reset lands (a race its own e2e assumes it wins:
  "DaemonSet canary rollout > continuous release v3" expects one updated pod after the restart at
  step 1); here the revision is left unrecorded, as while a rollback waits for the Rollout, so
  every round stops until then;
- **rolled back to the stable revision** while progressing: with the Rollout's
  ``rollouts.kruise.io/rollback-in-batch`` annotation copied onto the BatchRelease, mark the pods
  already there ``rollouts.kruise.io/no-need-update`` and roll the others back batch by batch
  (``noNeedUpdateReplicas`` left out of each batch's share; an ordered workload keeps them inside
  its partition); without it, wait for the Rollout to cancel;
- **finalise** (``batchPartition`` unset): partition cleared, pause lifted (or, for a kind that
  :class:`~kruise.rollouts.workloads.port.HandsBack`, its own hand-back), control annotation
  removed, a recorded stable revision dropped
  (:class:`~kruise.rollouts.workloads.port.RecordsStableRevision`); ``Completed`` at once
  (``Immediate``) or once every pod runs the new revision (``WaitResume``). With
  ``KeepWorkloadPausedOnRolloutDeletion`` a release finalised without ``WaitResume`` keeps its
  partition (only the pause is lifted), so a cancelled release leaves the pods where they are.

What else a partition kind gets for free (the hold, the info, the resume, its registry entry) is in
:mod:`kruise.rollouts.workloads.partitionkind`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, cast

from kruise.core.jsoncopy import json_copy
from kruise.rollouts.api.common import (
    ROLLBACK_IN_BATCH_ANNOTATION,
    BatchReleaseBatchState,
    RolloutPhase,
)
from kruise.rollouts.release.batchplan import IntOrStr, batch_ready, planned_canary
from kruise.rollouts.release.constants import BATCH_RELEASE_CONTROL_ANNOTATION, DEFAULT_DURATION_SECONDS
from kruise.rollouts.release.hashing import release_plan_hash
from kruise.rollouts.release.objects import meta
from kruise.rollouts.release.views import BatchCanaryStatusView, BatchReleaseStatusView
from kruise.rollouts.workloads.ops import control_info
from kruise.rollouts.workloads.podlabels import (
    PodLabelPatch,
    batch_label_patches,
    label_candidates,
    labels_satisfied,
    no_need_update,
)
from kruise.rollouts.workloads.port import (
    HandsBack,
    PartitionState,
    PartitionWorkload,
    RecordsStableRevision,
)

JSON = dict[str, Any]


@dataclass(frozen=True)
class PartitionDecision:
    """A merge patch for the workload (None: leave it), pod label patches and the BatchRelease's new
    status."""

    workload_patch: JSON | None
    status: BatchReleaseStatusView
    requeue_after: float | None = None
    pod_patches: tuple[PodLabelPatch, ...] = ()  # labels merged onto pods (batch ids, no-need-update)


def merged(*patches: Mapping[str, Any] | None) -> JSON:
    """Deep merge of merge patches (later ones win on conflicting leaves)."""
    out: JSON = {}
    for one in patches:
        for key, value in (one or {}).items():
            if isinstance(value, Mapping) and isinstance(out.get(key), dict):
                out[key] = merged(out[key], value)
            else:
                out[key] = json_copy(value)
    return out


def decide_partition(
    w: PartitionWorkload,
    br: Mapping[str, Any],
    workload: Mapping[str, Any] | None,
    pods: Sequence[Mapping[str, Any]] = (),
    *,
    keep_paused_on_cancel: bool = False,
) -> PartitionDecision:
    """One round of the partition control for ``br`` over ``workload`` (of the kind ``w``);
    ``pods`` are the workload's pods (batch labels, no-need-update marks, counts the status lacks).

    ``keep_paused_on_cancel`` (feature gate ``KeepWorkloadPausedOnRolloutDeletion``): finalizing
    without ``WaitResume`` only lifts the pause and keeps the partition."""
    status = cast(BatchReleaseStatusView, json_copy(dict(br.get("status") or {})))
    plan = (br.get("spec") or {}).get("releasePlan") or {}
    previous_hash = status.get("observedReleasePlanHash")
    previous_id = str(status.get("observedRolloutID") or "")
    rollout_id = str(plan.get("rolloutID") or "")
    status["observedGeneration"] = int(meta(br).get("generation") or 0)
    status["observedReleasePlanHash"] = release_plan_hash(plan)
    if workload is None:
        status["message"] = "workload not found"
        return PartitionDecision(None, status, requeue_after=2.0)
    state = w.state(workload, pods)
    replicas = state.replicas
    observed_revision = str(status.get("updateRevision") or "")
    observed_stable = str(status.get("stableRevision") or "")
    status["stableRevision"] = state.stable_revision
    # a status behind its spec may still name the previous revision: recorded once it caught up
    # (else a stale first record would read as a continuous release and stop the release for good)
    status["updateRevision"] = state.update_revision if state.consistent else observed_revision
    status["observedWorkloadReplicas"] = replicas
    canary: BatchCanaryStatusView = status.setdefault("canaryStatus", {"currentBatch": 0})
    canary.setdefault("currentBatch", 0)
    canary["updatedReplicas"] = state.updated
    canary["updatedReadyReplicas"] = state.updated_ready
    index = plan.get("batchPartition")
    batches = [b.get("canaryReplicas", "100%") for b in plan.get("batches") or []] or ["100%"]
    target = 0 if index is None else max(0, min(int(index), len(batches) - 1))
    progressing = index is not None and status.get("phase") == RolloutPhase.PROGRESSING
    if progressing and previous_hash != status["observedReleasePlanHash"]:
        # signalRecalculate: the plan in force moved; a new rollout-id relabels from the first batch
        canary["currentBatch"] = target if rollout_id == previous_id else 0
        canary["batchState"] = BatchReleaseBatchState.UPGRADING
        status["observedRolloutID"] = rollout_id
    if progressing and state.consistent and observed_revision not in ("", state.update_revision):
        if state.update_revision == observed_stable:  # rolled back to the stable revision
            return _prepare_rollback(br, status, observed_revision, state.updated, pods)
        # isWorkloadRevisionChanged (continuous release): abort; wait for the Rollout's reset
        status["updateRevision"] = observed_revision
        status["observedRolloutID"] = rollout_id
        return PartitionDecision(None, status, requeue_after=2.0)
    status["observedRolloutID"] = rollout_id

    if index is None:  # finalise: hand the workload back
        return _finalise(w, workload, plan, status, state.consistent, keep_paused_on_cancel)

    if not state.consistent:  # isWorkloadUnstable: its status may still show the old revision; wait
        return PartitionDecision(None, status, requeue_after=1.0)
    return _upgrade_batch(w, br, workload, pods, status, state, batches=batches, target=target)


def _upgrade_batch(
    w: PartitionWorkload,
    br: Mapping[str, Any],
    workload: Mapping[str, Any],
    pods: Sequence[Mapping[str, Any]],
    status: BatchReleaseStatusView,
    state: PartitionState,
    *,
    batches: Sequence[IntOrStr],
    target: int,
) -> PartitionDecision:
    """``UpgradeBatch`` and the batch context: the current batch's partition (moved down only),
    control taken, pods labelled, the batch Ready once its pods are, then the next batch up to
    ``target`` (``batchPartition``)."""
    plan = (br.get("spec") or {}).get("releasePlan") or {}
    rollout_id = str(plan.get("rolloutID") or "")
    replicas = state.replicas
    canary = status["canaryStatus"]
    starting = status.get("phase") in (None, "", RolloutPhase.PREPARING)
    current_batch = (
        target if starting else max(0, min(int(canary.get("currentBatch") or 0), len(batches) - 1))
    )
    batch_replicas = batches[current_batch]
    no_need = canary.get("noNeedUpdateReplicas")
    if no_need is not None and rollout_id:  # countAndUpdateNoNeedUpdateReplicas
        no_need, _ = no_need_update(pods, rollout_id, state.update_revision)
        canary["noNeedUpdateReplicas"] = no_need
    ordered = w.ordered(workload)
    desired = w.partition_for(workload, batch_replicas, replicas, int(no_need or 0))
    planned = planned_canary(batch_replicas, replicas)
    goal = replicas - w.kept(desired, replicas) + (int(no_need or 0) if ordered else 0)
    workload_patch = _workload_patch(w, br, workload, desired, replicas, starting=starting)
    status["phase"] = RolloutPhase.PROGRESSING
    if canary.get("currentBatch") != current_batch:
        canary["currentBatch"] = current_batch
        canary["batchState"] = BatchReleaseBatchState.UPGRADING
    candidates = label_candidates(
        pods,
        rollout_id=rollout_id,
        update_revision=state.update_revision,
        planned=planned,
        desired_updated=goal,
        rolling_back=no_need is not None,
        ordered_partition=w.kept(desired, replicas) if ordered else None,
        replicas=replicas,
    )
    labels = batch_label_patches(
        candidates, rollout_id=rollout_id, batches=batches, replicas=replicas, current_batch=current_batch
    )
    ready = (
        not workload_patch
        and not labels
        and batch_ready(
            goal, state.updated, state.updated_ready, failure_threshold=plan.get("failureThreshold")
        )
        and labels_satisfied(pods, rollout_id, planned)
    )
    canary["batchState"] = BatchReleaseBatchState.READY if ready else BatchReleaseBatchState.UPGRADING
    if ready and current_batch < target:  # moveToNextBatch: one batch at a time up to the partition
        canary["currentBatch"] = current_batch + 1
        canary["batchState"] = BatchReleaseBatchState.UPGRADING
        return PartitionDecision(None, status, requeue_after=0.2)
    return PartitionDecision(
        workload_patch or None,
        status,
        requeue_after=None if ready else DEFAULT_DURATION_SECONDS,
        pod_patches=tuple(labels),
    )


def _workload_patch(
    w: PartitionWorkload,
    br: Mapping[str, Any],
    workload: Mapping[str, Any],
    desired: IntOrStr,
    replicas: int,
    *,
    starting: bool,
) -> JSON:
    """The batch's write to the workload (``{}`` when it is as wanted): control taken (the
    annotation, the pause written false), the pause lifted, and the ``desired`` partition when the
    release starts or it moves down."""
    current = w.partition(workload)
    moves_down = current is not None and w.kept(desired, replicas) < w.kept(current, replicas)
    taking_control = (meta(workload).get("annotations") or {}).get(
        BATCH_RELEASE_CONTROL_ANNOTATION
    ) != control_info(br)
    patch_ = merged(
        # Initialize writes the pause explicitly false (not only when it was true): upstream's
        # e2e dereferences ``rollingUpdate.paused`` of an Advanced DaemonSet under release
        w.unpause_patch() if w.paused(workload) or taking_control else None,
        w.partition_patch(desired) if (starting and current != desired) or moves_down else None,
    )
    if taking_control:  # merged: a kind's partition patch may carry annotations of its own
        control = {"metadata": {"annotations": {BATCH_RELEASE_CONTROL_ANNOTATION: control_info(br)}}}
        patch_ = merged(patch_, control)
    return patch_


def _finalise(
    w: PartitionWorkload,
    workload: Mapping[str, Any],
    plan: Mapping[str, Any],
    status: BatchReleaseStatusView,
    consistent: bool,
    keep_paused_on_cancel: bool,
) -> PartitionDecision:
    """Hand the workload back (see the module docstring); ``Completed`` once nothing is left to
    write and, with ``WaitResume``, every pod runs the update revision."""
    paused = w.paused(workload)
    patch_: JSON = {}
    keep = keep_paused_on_cancel and plan.get("finalizingPolicy") != "WaitResume"
    if isinstance(w, HandsBack):
        patch_ = merged(w.hand_back(workload, keep=keep))
    elif keep:
        if paused:
            patch_ = merged(w.unpause_patch())
    elif w.partition(workload) not in (None, 0) or paused:
        # a defaulting webhook (CloneSet) or the API server (StatefulSet) turns a null partition
        # into 0: both mean "released"
        patch_ = merged(w.partition_patch(None), w.unpause_patch())
    if BATCH_RELEASE_CONTROL_ANNOTATION in (meta(workload).get("annotations") or {}):
        patch_ = merged(patch_, {"metadata": {"annotations": {BATCH_RELEASE_CONTROL_ANNOTATION: None}}})
    if isinstance(w, RecordsStableRevision):
        patch_ = merged(patch_, w.stable_forget(workload))
    status["phase"] = RolloutPhase.FINALIZING
    state = w.state(workload, ())
    done = not patch_ and (
        plan.get("finalizingPolicy") != "WaitResume"
        or (consistent and state.updated == state.replicas == state.current)
    )
    if done:
        status["phase"] = RolloutPhase.COMPLETED
    return PartitionDecision(patch_ or None, status, requeue_after=None if done else 1.0)


def _prepare_rollback(
    br: Mapping[str, Any],
    status: BatchReleaseStatusView,
    observed_revision: str,
    updated: int,
    pods: Sequence[Mapping[str, Any]],
) -> PartitionDecision:
    """The workload went back to its stable revision mid-release. Rolling back in batches (the
    Rollout put ``rollouts.kruise.io/rollback-in-batch`` on the BatchRelease): mark the pods already
    at that revision no-need-update, then record their count and the new update revision and go
    on batch by batch. Otherwise (or before the annotation arrives) wait: the Rollout cancels."""
    annotations = meta(br).get("annotations") or {}
    canary: BatchCanaryStatusView = status["canaryStatus"]
    new_revision = status["updateRevision"]
    if not annotations.get(ROLLBACK_IN_BATCH_ANNOTATION) or canary.get("noNeedUpdateReplicas") is not None:
        status["updateRevision"] = observed_revision  # isRollbackInBatchSatisfied not yet: wait
        return PartitionDecision(None, status, requeue_after=2.0)
    rollout_id = str(((br.get("spec") or {}).get("releasePlan") or {}).get("rolloutID") or "")
    if rollout_id:
        marked, marks = no_need_update(pods, rollout_id, new_revision)
        if marks:
            status["updateRevision"] = observed_revision
            return PartitionDecision(None, status, requeue_after=0.5, pod_patches=tuple(marks))
    else:  # no rollout-id: the pods updated so far are the ones that need nothing
        marked = updated
    canary["noNeedUpdateReplicas"] = marked
    canary["batchState"] = BatchReleaseBatchState.UPGRADING
    status["observedRolloutID"] = rollout_id
    return PartitionDecision(None, status, requeue_after=0.2)
