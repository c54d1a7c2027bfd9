"""What a BatchRelease does to its CloneSet this round (pure).

Mirrors Kruise Rollouts' partition-style CloneSet control
(``pkg/controller/batchrelease/control/partitionstyle/cloneset``):

- **take control** on the first round: the control annotation
  ``batchrelease.rollouts.kruise.io/control-info`` (the BatchRelease as owner
  reference JSON), ``updateStrategy.paused: false``;
- **upgrade the batch**: partition for ``releasePlan.batches[canaryStatus.currentBatch]`` (see
  :mod:`kruise.rollouts.rollout.batchplan`); once the release has started the partition only
  moves down;
- **which batch**: a new BatchRelease starts at ``batchPartition``; when the plan changes
  (``signalRecalculate``) it moves there too, unless ``releasePlan.rolloutID`` differs from
  ``status.observedRolloutID``: then it starts over at batch 0 so the pods are labelled again
  batch by batch; below ``batchPartition`` a Ready batch moves to the next one
  (``moveToNextBatch``);
- **batch labels** (``releasePlan.rolloutID`` set): the upgraded pods get
  ``rollouts.kruise.io/rollout-id``/``rollout-batch-id`` (:mod:`.podlabels`) and the batch is not
  Ready before the planned pods carry the rollout-id;
- **report**: ``canaryStatus.currentBatch``, ``batchState`` (``Upgrading`` until the
  batch-ready rule holds on a CloneSet status that observed its generation, then
  ``Ready``), ``updatedReplicas``/``updatedReadyReplicas``, ``noNeedUpdateReplicas``,
  ``observedReleasePlanHash``, ``observedRolloutID``, ``observedGeneration``, revisions and
  ``observedWorkloadReplicas``;
- **a CloneSet status behind its spec** (``isWorkloadUnstable``): touch nothing, look again;
- **a new update revision** while progressing (a continuous release): record it and touch
  nothing this round (``isWorkloadRevisionChanged``), the Rollout is about to reset;
- **rolled back to the stable revision** while progressing: with the Rollout's
  ``rollouts.kruise.io/rollback-in-batch`` annotation copied onto the BatchRelease, mark the pods
  already there ``rollouts.kruise.io/no-need-update`` and roll the others back batch by batch
  (``noNeedUpdateReplicas`` left out of each batch's share); without it, wait for the Rollout to
  cancel;
- **finalise** (``batchPartition`` unset): ``partition: null``, ``paused: false``,
  control annotation removed; ``Completed`` at once (``Immediate``) or once every pod
  runs the new revision (``WaitResume``).
"""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from kruise.rollouts.api.common import ROLLBACK_IN_BATCH_ANNOTATION
from kruise.rollouts.batchrelease.podlabels import (
    PodLabelPatch,
    batch_label_patches,
    label_candidates,
    labels_satisfied,
    no_need_update,
)
from kruise.rollouts.rollout.batchplan import (
    IntOrStr,
    batch_ready,
    cloneset_partition,
    cloneset_partition_pods,
    partition_moves_down,
    planned_canary,
    stable_partition_percent,
)
from kruise.rollouts.rollout.constants import BATCH_RELEASE_CONTROL_ANNOTATION
from kruise.rollouts.rollout.hashing import release_plan_hash
from kruise.workloads.pods import short_hash

JSON = dict[str, Any]


@dataclass(frozen=True)
class BatchDecision:
    """A merge patch for the workload (None: leave it), pod label patches and the BatchRelease's new
    status."""

    workload_patch: JSON | None
    status: JSON
    requeue_after: float | None = None
    pod_patches: tuple[PodLabelPatch, ...] = ()  # labels merged onto pods (batch ids, no-need-update)


def control_info(br: Mapping[str, Any]) -> str:
    meta = br.get("metadata") or {}
    ref = {
        "apiVersion": br.get("apiVersion", "rollouts.kruise.io/v1beta1"),
        "kind": "BatchRelease",
        "name": meta.get("name"),
        "uid": meta.get("uid"),
        "controller": True,
        "blockOwnerDeletion": True,
    }
    return json.dumps(ref, separators=(",", ":"))


def decide_cloneset(
    br: Mapping[str, Any],
    cloneset: Mapping[str, Any] | None,
    pods: Sequence[Mapping[str, Any]] = (),
    *,
    keep_paused_on_cancel: bool = False,
) -> BatchDecision:
    """One round of the CloneSet partition control for ``br``; ``pods`` are the CloneSet's pods
    (needed for the batch labels and the no-need-update marks; see :mod:`.podlabels`).

    ``keep_paused_on_cancel`` (feature gate ``KeepWorkloadPausedOnRolloutDeletion``): finalizing
    without ``WaitResume`` only unpauses the CloneSet and keeps its partition, so a release
    cancelled mid-way leaves the pods where they are."""
    status: JSON = copy.deepcopy(dict(br.get("status") or {}))
    meta = br.get("metadata") or {}
    plan = (br.get("spec") or {}).get("releasePlan") or {}
    previous_hash = status.get("observedReleasePlanHash")
    previous_id = str(status.get("observedRolloutID") or "")
    rollout_id = str(plan.get("rolloutID") or "")
    status["observedGeneration"] = int(meta.get("generation") or 0)
    status["observedReleasePlanHash"] = release_plan_hash(plan)
    if cloneset is None:
        status["message"] = "workload not found"
        return BatchDecision(None, status, requeue_after=2.0)
    cs_meta = cloneset.get("metadata") or {}
    spec = cloneset.get("spec") or {}
    cs_status = cloneset.get("status") or {}
    replicas = int(spec.get("replicas", 1))
    strategy = spec.get("updateStrategy") or {}
    annotations = cs_meta.get("annotations") or {}
    consistent = int(cs_status.get("observedGeneration") or 0) == int(cs_meta.get("generation") or 0)
    observed_revision = str(status.get("updateRevision") or "")
    observed_stable = str(status.get("stableRevision") or "")
    status["stableRevision"] = short_hash(str(cs_status.get("currentRevision") or ""))
    status["updateRevision"] = short_hash(str(cs_status.get("updateRevision") or ""))
    status["observedWorkloadReplicas"] = replicas
    canary: JSON = status.setdefault("canaryStatus", {"currentBatch": 0})
    canary.setdefault("currentBatch", 0)
    canary["updatedReplicas"] = int(cs_status.get("updatedReplicas") or 0)
    canary["updatedReadyReplicas"] = int(cs_status.get("updatedReadyReplicas") or 0)
    index = plan.get("batchPartition")
    batches = [b.get("canaryReplicas", "100%") for b in plan.get("batches") or []] or ["100%"]
    target = 0 if index is None else max(0, min(int(index), len(batches) - 1))
    if (
        index is not None
        and status.get("phase") == "Progressing"
        and previous_hash != status["observedReleasePlanHash"]
    ):
        # signalRecalculate: the plan in force moved; a new rollout-id relabels from the first batch
        canary["currentBatch"] = target if rollout_id == previous_id else 0
        canary["batchState"] = "Upgrading"
        status["observedRolloutID"] = rollout_id
    if (
        index is not None
        and status.get("phase") == "Progressing"
        and consistent
        and observed_revision not in ("", status["updateRevision"])
    ):
        if status["updateRevision"] == observed_stable:  # rolled back to the stable revision
            return _prepare_rollback(br, status, observed_revision, cloneset, pods)
        # isWorkloadRevisionChanged (continuous release): record the new revision, act next round
        status["observedRolloutID"] = rollout_id
        return BatchDecision(None, status, requeue_after=2.0)
    status["observedRolloutID"] = rollout_id

    if index is None:  # finalise: hand the workload back
        patch: JSON = {}
        # the CloneSet defaulting webhook turns a null partition into 0: both mean "released"
        if keep_paused_on_cancel and plan.get("finalizingPolicy") != "WaitResume":
            if strategy.get("paused"):
                patch["spec"] = {"updateStrategy": {"paused": False}}
        elif strategy.get("partition") not in (None, 0) or strategy.get("paused"):
            patch["spec"] = {"updateStrategy": {"partition": None, "paused": False}}
        if BATCH_RELEASE_CONTROL_ANNOTATION in annotations:
            patch["metadata"] = {"annotations": {BATCH_RELEASE_CONTROL_ANNOTATION: None}}
        status["phase"] = "Finalizing"
        done = not patch and (
            plan.get("finalizingPolicy") != "WaitResume"
            or (
                consistent
                and int(cs_status.get("updatedReplicas") or 0)
                == replicas
                == int(cs_status.get("replicas") or 0)
            )
        )
        if done:
            status["phase"] = "Completed"
        return BatchDecision(patch or None, status, requeue_after=None if done else 1.0)

    if not consistent:  # isWorkloadUnstable: its status may still show the old revision; wait
        return BatchDecision(None, status, requeue_after=1.0)
    starting = status.get("phase") in (None, "", "Preparing")
    current_batch = (
        target if starting else max(0, min(int(canary.get("currentBatch") or 0), len(batches) - 1))
    )
    batch_replicas = batches[current_batch]
    no_need = canary.get("noNeedUpdateReplicas")
    if no_need is not None and rollout_id:  # countAndUpdateNoNeedUpdateReplicas
        no_need, _ = no_need_update(pods, rollout_id, status["updateRevision"])
        canary["noNeedUpdateReplicas"] = no_need
    desired = _desired_partition(batch_replicas, replicas, int(no_need or 0))
    planned = planned_canary(batch_replicas, replicas)
    goal = replicas - cloneset_partition_pods(desired, replicas)
    patch = {}
    strategy_patch: JSON = {}
    if strategy.get("paused"):
        strategy_patch["paused"] = False
    current = strategy.get("partition")
    if (starting and current != desired) or partition_moves_down(current, desired, replicas):
        strategy_patch["partition"] = desired
    if strategy_patch:
        patch["spec"] = {"updateStrategy": strategy_patch}
    if annotations.get(BATCH_RELEASE_CONTROL_ANNOTATION) != control_info(br):
        patch["metadata"] = {"annotations": {BATCH_RELEASE_CONTROL_ANNOTATION: control_info(br)}}
    status["phase"] = "Progressing"
    if canary.get("currentBatch") != current_batch:
        canary["currentBatch"] = current_batch
        canary["batchState"] = "Upgrading"
    candidates = label_candidates(
        pods,
        rollout_id=rollout_id,
        update_revision=status["updateRevision"],
        planned=planned,
        desired_updated=goal,
        rolling_back=no_need is not None,
    )
    labels = batch_label_patches(
        candidates, rollout_id=rollout_id, batches=batches, replicas=replicas, current_batch=current_batch
    )
    ready = (
        not patch
        and not labels
        and consistent
        and batch_ready(
            goal,
            canary["updatedReplicas"],
            canary["updatedReadyReplicas"],
            failure_threshold=plan.get("failureThreshold"),
        )
        and labels_satisfied(pods, rollout_id, planned)
    )
    canary["batchState"] = "Ready" if ready else "Upgrading"
    if ready and current_batch < target:  # moveToNextBatch: one batch at a time up to the partition
        canary["currentBatch"] = current_batch + 1
        canary["batchState"] = "Upgrading"
        return BatchDecision(None, status, requeue_after=0.2)
    return BatchDecision(
        patch or None, status, requeue_after=None if ready else 1.0, pod_patches=tuple(labels)
    )


def _desired_partition(batch_replicas: IntOrStr, replicas: int, no_need: int) -> IntOrStr:
    """The partition for a batch; rolling back in batches, the ``no_need`` pods already at the
    target are left out of the plan and only the others are released by its percentages."""
    if no_need <= 0:
        return cloneset_partition(batch_replicas, replicas)
    released = planned_canary(batch_replicas, replicas - no_need)
    stable = max(0, replicas - no_need - released)
    if isinstance(batch_replicas, int):
        return stable
    return stable_partition_percent(stable, replicas, batch_replicas)


def _prepare_rollback(
    br: Mapping[str, Any],
    status: JSON,
    observed_revision: str,
    cloneset: Mapping[str, Any],
    pods: Sequence[Mapping[str, Any]],
) -> BatchDecision:
    """The workload went back to its stable revision mid-release. Rolling back in batches (the
    Rollout put ``rollouts.kruise.io/rollback-in-batch`` on the BatchRelease): mark the pods already
    at that revision no-need-update, then record their count and the new update revision and go
    on batch by batch. Otherwise (or before the annotation arrives) wait: the Rollout cancels."""
    annotations = (br.get("metadata") or {}).get("annotations") or {}
    canary: JSON = status["canaryStatus"]
    new_revision = status["updateRevision"]
    if not annotations.get(ROLLBACK_IN_BATCH_ANNOTATION) or canary.get("noNeedUpdateReplicas") is not None:
        status["updateRevision"] = observed_revision  # isRollbackInBatchSatisfied not yet: wait
        return BatchDecision(None, status, requeue_after=2.0)
    rollout_id = str(((br.get("spec") or {}).get("releasePlan") or {}).get("rolloutID") or "")
    if rollout_id:
        marked, marks = no_need_update(pods, rollout_id, new_revision)
        if marks:
            status["updateRevision"] = observed_revision
            return BatchDecision(None, status, requeue_after=0.5, pod_patches=tuple(marks))
    else:  # no rollout-id: the pods updated so far are the ones that need nothing
        marked = int(((cloneset.get("status") or {}).get("updatedReplicas")) or 0)
    canary["noNeedUpdateReplicas"] = marked
    canary["batchState"] = "Upgrading"
    status["observedRolloutID"] = rollout_id
    return BatchDecision(None, status, requeue_after=0.2)
