"""What a BatchRelease does to its CloneSet this round (pure).

Mirrors Kruise Rollouts' partition-style CloneSet control
(``pkg/controller/batchrelease/control/partitionstyle/cloneset``):

- **take control** on the first round: the control annotation
  ``batchrelease.rollouts.kruise.io/control-info`` (the BatchRelease as owner
  reference JSON), ``updateStrategy.paused: false``;
- **upgrade the batch**: partition for ``releasePlan.batches[batchPartition]``
  (see :mod:`kruise.rollouts.rollout.batchplan`); once the release has started the
  partition only moves down;
- **report**: ``canaryStatus.currentBatch``, ``batchState`` (``Upgrading`` until the
  batch-ready rule holds on a CloneSet status that observed its generation, then
  ``Ready``), ``updatedReplicas``/``updatedReadyReplicas``,
  ``observedReleasePlanHash``, ``observedGeneration``, revisions and
  ``observedWorkloadReplicas``;
- **a new update revision** while progressing (a continuous release): record it and touch
  nothing this round (``isWorkloadRevisionChanged``), the Rollout is about to reset;
- **finalise** (``batchPartition`` unset): ``partition: null``, ``paused: false``,
  control annotation removed; ``Completed`` at once (``Immediate``) or once every pod
  runs the new revision (``WaitResume``).
"""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from kruise.rollouts.rollout.batchplan import (
    batch_ready,
    cloneset_partition,
    partition_moves_down,
    real_canary_goal,
)
from kruise.rollouts.rollout.constants import BATCH_RELEASE_CONTROL_ANNOTATION
from kruise.rollouts.rollout.hashing import release_plan_hash
from kruise.workloads.cloneset.podstate import short_hash

JSON = dict[str, Any]


@dataclass(frozen=True)
class BatchDecision:
    """A merge patch for the workload (None: leave it) and the BatchRelease's new status."""

    workload_patch: JSON | None
    status: JSON
    requeue_after: float | None = None


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


def decide_cloneset(br: Mapping[str, Any], cloneset: Mapping[str, Any] | None) -> BatchDecision:
    """One round of the CloneSet partition control for ``br``."""
    status: JSON = copy.deepcopy(dict(br.get("status") or {}))
    meta = br.get("metadata") or {}
    plan = (br.get("spec") or {}).get("releasePlan") or {}
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
    status["stableRevision"] = short_hash(str(cs_status.get("currentRevision") or ""))
    status["updateRevision"] = short_hash(str(cs_status.get("updateRevision") or ""))
    status["observedWorkloadReplicas"] = replicas
    canary: JSON = status.setdefault("canaryStatus", {"currentBatch": 0})
    canary.setdefault("currentBatch", 0)
    canary["updatedReplicas"] = int(cs_status.get("updatedReplicas") or 0)
    canary["updatedReadyReplicas"] = int(cs_status.get("updatedReadyReplicas") or 0)
    index = plan.get("batchPartition")
    if (
        index is not None
        and status.get("phase") == "Progressing"
        and consistent
        and observed_revision not in ("", status["updateRevision"])
    ):  # isWorkloadRevisionChanged (continuous release): record the new revision, act next round
        return BatchDecision(None, status, requeue_after=2.0)

    if index is None:  # finalise: hand the workload back
        patch: JSON = {}
        # the CloneSet defaulting webhook turns a null partition into 0: both mean "released"
        if strategy.get("partition") not in (None, 0) or strategy.get("paused"):
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

    batches = plan.get("batches") or []
    index = max(0, min(int(index), len(batches) - 1)) if batches else 0
    batch_replicas = batches[index].get("canaryReplicas", "100%") if batches else "100%"
    desired = cloneset_partition(batch_replicas, replicas)
    starting = status.get("phase") in (None, "", "Preparing")
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
    if canary.get("currentBatch") != index:
        canary["currentBatch"] = index
        canary["batchState"] = "Upgrading"
    goal = real_canary_goal(batch_replicas, replicas)
    ready = (
        not patch
        and consistent
        and batch_ready(
            goal,
            canary["updatedReplicas"],
            canary["updatedReadyReplicas"],
            failure_threshold=plan.get("failureThreshold"),
        )
    )
    canary["batchState"] = "Ready" if ready else "Upgrading"
    return BatchDecision(patch or None, status, requeue_after=None if ready else 1.0)
