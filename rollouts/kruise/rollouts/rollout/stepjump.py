"""Moving a release between steps outside their order (pure): ``nextStepIndex`` jumps and plan
changes, as upstream's ``doStepJump``, ``CheckNextBatchIndexWithCorrect`` and
``handleRolloutPlanChanged``/``recalculateCanaryStep``."""

from __future__ import annotations

import datetime
from collections.abc import Mapping, Sequence
from typing import Any

from kruise.rollouts.api.common import CanaryStepState
from kruise.rollouts.release.batchplan import scaled
from kruise.rollouts.release.hashing import rollout_hash
from kruise.rollouts.release.timefmt import fmt_time
from kruise.rollouts.release.views import CanaryStatusView
from kruise.rollouts.rollout.model import BatchView, Round
from kruise.rollouts.rollout.steps import steps_of


def recalculate_step(
    steps: Sequence[Mapping[str, Any]], current_index: int, batch: BatchView, replicas: int
) -> int:
    """``recalculateCanaryStep``: the first step (the current one tried first) asking for at least
    as many pods as the BatchRelease's current batch; step 1 without a BatchRelease."""
    if not batch.exists or batch.partition_replicas is None:
        return 1
    released = scaled(batch.partition_replicas, replicas, round_up=True)
    order = [current_index - 1] if 0 <= current_index - 1 < len(steps) else []
    order += [i for i in range(len(steps)) if i != current_index - 1]
    target = 0
    for i in order:
        target = i + 1
        if released <= scaled(steps[i].get("replicas"), replicas, round_up=True):
            break
    return target


def plan_changed(rnd: Round) -> None:
    """Steps edited mid-rollout (``handleRolloutPlanChanged``): find the step the pods released so
    far belong to; run it from its start, or go on to the next step if that is where it lands."""
    cs, workload = rnd.cs, rnd.obs.workload
    assert workload is not None
    steps = steps_of(rnd.rollout)
    target = recalculate_step(steps, int(cs.get("currentStepIndex") or 1), rnd.obs.batch, workload.replicas)
    cs["lastUpdateTime"] = fmt_time(rnd.now)
    cs["rolloutHash"] = rollout_hash(rnd.rollout)
    if cs.get("nextStepIndex") == target:
        cs["currentStepState"] = CanaryStepState.STEP_READY
        return
    cs["nextStepIndex"] = target
    jump(cs, steps, workload.replicas, rnd.now)


def correct_next_step_index(cs: CanaryStatusView, step_count: int) -> None:
    """``CheckNextBatchIndexWithCorrect``: a ``nextStepIndex`` outside ``1..steps`` is reset."""
    nxt = int(cs.get("nextStepIndex") or 0)
    if nxt <= 0 or nxt > step_count:
        cs["nextStepIndex"] = next_index(int(cs.get("currentStepIndex") or 1), step_count)


def next_index(current: int, step_count: int) -> int:
    """``NextBatchIndex``: ``current + 1``, or ``-1`` on the last step."""
    return -1 if current >= step_count else current + 1


def jump(
    cs: CanaryStatusView, steps: Sequence[Mapping[str, Any]], replicas: int, now: datetime.datetime
) -> bool:
    """``doStepJump``: ``nextStepIndex`` patched to another step (by a user, or a plan change) moves
    the release there, in any state. A step that wants the pods already released goes straight to
    StepTrafficRouting, any other starts over at BeforeStepUpgrade (the partition never moves back
    up, so a jump back keeps its pods)."""
    current = int(cs.get("currentStepIndex") or 1)
    nxt = int(cs.get("nextStepIndex") or 0)
    if nxt == next_index(current, len(steps)) or not 0 < nxt <= len(steps):
        return False
    cs["currentStepIndex"] = nxt
    cs["nextStepIndex"] = next_index(nxt, len(steps))
    wanted = scaled(steps[nxt - 1].get("replicas"), replicas, round_up=True)
    same = wanted == int(cs.get("canaryReplicas") or 0)
    cs["currentStepState"] = (
        CanaryStepState.STEP_TRAFFIC_ROUTING if same else CanaryStepState.BEFORE_STEP_UPGRADE
    )
    cs["lastUpdateTime"] = fmt_time(now)
    return True
