"""A BatchRelease already terminating (its finalizer running) is waited for, not deleted again:
upstream's ``removeBatchRelease`` returns "wait a moment" for a BatchRelease with a
``deletionTimestamp``. Before, each 1 s round of the release-control step sent another DELETE
until the BatchRelease was gone (two per finished release in an audit log of the scale bench)."""

from __future__ import annotations

from typing import Any, cast

import pytest

from kruise.rollouts.api.common import FinalisingStepType
from kruise.rollouts.rollout import deadline, progressing
from kruise.rollouts.rollout.finalise import FinaliseReason, finalise
from kruise.rollouts.rollout.model import ActionKind, BatchView, Observed, Outcomes, Round
from tests.unit.rollouts_engine.test_finalise_without_workload import ROLLOUT, T0

STEP = FinalisingStepType.RELEASE_WORKLOAD_CONTROL


def round_(deleting: bool, outcomes: Outcomes | None = None) -> Round:
    status = {
        "currentStepIndex": 1,
        "canaryStatus": {"finalisingStep": STEP, "lastUpdateTime": "2026-01-01T00:00:00Z"},
    }
    obs = Observed(now=T0, workload=None, batch=BatchView(exists=True, deleting=deleting))
    return Round(ROLLOUT, cast(Any, status), obs, outcomes)


def deletes(actions: Any) -> int:
    return sum(a.kind == ActionKind.DELETE_BATCH_RELEASE for a in actions)


@pytest.mark.parametrize("deleting", [False, True], ids=["present", "terminating"])
def test_finalising_deletes_a_present_batch_release_and_waits_for_a_terminating_one(deleting: bool) -> None:
    first = finalise(round_(deleting), FinaliseReason.SUCCESS)
    assert deletes(first.actions) == (0 if deleting else 1)
    unchanged = Outcomes.of(first.actions, [False] * len(first.actions))
    second = finalise(round_(deleting, unchanged), FinaliseReason.SUCCESS)
    assert second.status["canaryStatus"]["finalisingStep"] == STEP  # waits until it is gone
    assert second.requeue_after == 1.0


@pytest.mark.parametrize("deleting", [False, True], ids=["present", "terminating"])
def test_reset_and_a_held_abort_wait_for_a_terminating_batch_release(deleting: bool) -> None:
    assert deletes(progressing.reset(round_(deleting)).actions) == (0 if deleting else 1)
    assert deletes(deadline._hold_actions(round_(deleting), STEP)) == (0 if deleting else 1)
