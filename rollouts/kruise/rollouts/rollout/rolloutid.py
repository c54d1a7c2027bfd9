"""Rollout-ids of releases and rolling back in batches (pure).

**The id** of a release is the workload's ``rollouts.kruise.io/rollout-id`` (label, else
annotation: :mod:`kruise.rollouts.release.rolloutid`); without either, the canary revision
(``rollback-<revision>`` while rolling back), as upstream's ``getRolloutID``.

**Rolling back in batches** (``util.IsRollbackInBatchPolicy``): a Rollout annotated
``rollouts.kruise.io/rollback-in-batch: "true"`` on a workload whose release style supports it
(the workload port says which: partition releases, as upstream's kinds) without traffic routing does not
cancel when the workload goes back to its stable revision; it starts over at step 1 with that
revision as the new canary (``handleRollbackInBatches``), and its BatchRelease carries the same
annotation while the workload is rolling back, which is what makes the BatchRelease leave the
pods already at that revision out of each step (``noNeedUpdateReplicas``). Otherwise a rollback is
immediate: the Rollout cancels and hands the workload back.

**Keeping the BatchRelease's id current** (``syncBatchRelease``): in every rolling round, a
BatchRelease whose ``releasePlan.rolloutID`` differs from the workload's id gets the new id, so a
change of the id alone (same template) relabels the pods, from batch 1, at the current step.
"""

from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any

from kruise.rollouts.api.common import ROLLBACK_IN_BATCH_ANNOTATION, CanaryStepState
from kruise.rollouts.release.hashing import rollout_hash
from kruise.rollouts.release.timefmt import fmt_time
from kruise.rollouts.release.views import CanaryStatusView, RolloutStatusView
from kruise.rollouts.rollout.model import Action, ActionKind, BatchView, Event
from kruise.rollouts.rollout.steps import steps_of, strategy_of
from kruise.rollouts.workloads.info import WorkloadInfo

ROLLBACK_IN_BATCH_MESSAGE = (
    "The workload has been rolled back and the rollout restarts from step 1 in batches"
)


def rollback_in_batch(rollout: Mapping[str, Any], workload: WorkloadInfo) -> bool:
    """``IsRollbackInBatchPolicy``: annotated ``"true"``, a workload whose release style supports
    it (the workload port says so), no traffic routing."""
    annotations = (rollout.get("metadata") or {}).get("annotations") or {}
    return (
        annotations.get(ROLLBACK_IN_BATCH_ANNOTATION) == "true"
        and workload.rollback_in_batches
        and not strategy_of(rollout).get("trafficRoutings")
    )


def batch_release_annotations(rollout: Mapping[str, Any], workload: WorkloadInfo) -> dict[str, str]:
    """The annotations the BatchRelease must carry (``createBatchRelease``): the Rollout's
    rollback-in-batch annotation while the workload is rolling back."""
    value = ((rollout.get("metadata") or {}).get("annotations") or {}).get(ROLLBACK_IN_BATCH_ANNOTATION)
    if workload.in_rollback and value:
        return {ROLLBACK_IN_BATCH_ANNOTATION: str(value)}
    return {}


def restart_in_batches(
    rollout: Mapping[str, Any], status: RolloutStatusView, workload: WorkloadInfo, now: datetime.datetime
) -> Event:
    """``handleRollbackInBatches``: back to step 1 with the rollback target as canary revision."""
    cs: CanaryStatusView = status.setdefault("canaryStatus", {})
    steps = len(steps_of(rollout))
    cs["currentStepIndex"] = 1
    cs["nextStepIndex"] = 2 if steps > 1 else -1
    cs["canaryRevision"] = workload.canary_revision
    cs["currentStepState"] = CanaryStepState.BEFORE_STEP_UPGRADE
    cs["lastUpdateTime"] = fmt_time(now)
    cs["rolloutHash"] = rollout_hash(rollout)
    cs["finalisingStep"] = ""
    cs["message"] = ROLLBACK_IN_BATCH_MESSAGE
    status["message"] = ROLLBACK_IN_BATCH_MESSAGE
    return Event("Normal", "RollbackInBatches", ROLLBACK_IN_BATCH_MESSAGE)


def sync_rollout_id(batch: BatchView, workload: WorkloadInfo) -> list[Action]:
    """The patch that gives the BatchRelease the workload's current rollout-id, if it lacks it."""
    if not batch.exists or batch.deleting or batch.rollout_id in (None, workload.observed_rollout_id):
        return []
    return [Action(ActionKind.SYNC_BATCH_RELEASE_ID, {"rolloutID": workload.observed_rollout_id})]
