"""Batch pacing (upstream's BatchRelease executor: Upgrading -> Verifying -> Ready, 2 s apart
unless the workload or its pods change)."""

from __future__ import annotations

from typing import Any

from kruise.rollouts.api.batchrelease import BatchReleaseBatchState as State
from kruise.rollouts.batchrelease.pacing import VERIFY_SECONDS, BatchPacer, fingerprint
from kruise.rollouts.workloads.port import Observation


def _br(generation: int, batch: int | None = None, state: str | None = None) -> dict[str, Any]:
    status = {} if batch is None else {"canaryStatus": {"currentBatch": batch, "batchState": state}}
    return {"metadata": {"generation": generation}, "status": status}


def _status(batch: int, state: str) -> dict[str, Any]:
    return {"phase": "Progressing", "canaryStatus": {"currentBatch": batch, "batchState": state}}


def _pod(uid: str, ready: bool, revision: str = "r1", **labels: str) -> dict[str, Any]:
    return {
        "metadata": {"uid": uid, "labels": {"pod-template-hash": revision, **labels}},
        "status": {"conditions": [{"type": "Ready", "status": "True" if ready else "False"}]},
    }


def test_a_batch_that_moves_nothing_verifies_for_two_seconds_then_is_ready() -> None:
    pacer = BatchPacer()
    br = _br(5, 3, State.READY)  # step 4 was Ready; the Rollout jumped back to batch 2
    first = pacer.pace("ns/r", br, _status(2, State.READY), "same", now=100.0)
    assert first.status["canaryStatus"]["batchState"] == State.VERIFYING
    assert first.requeue_after == VERIFY_SECONDS
    echo = pacer.pace("ns/r", _br(5, 2, State.VERIFYING), _status(2, State.READY), "same", now=100.4)
    assert echo.status["canaryStatus"]["batchState"] == State.VERIFYING  # our own write: no wake
    assert echo.requeue_after is not None and abs(echo.requeue_after - 1.6) < 1e-9
    later = pacer.pace("ns/r", _br(5, 2, State.VERIFYING), _status(2, State.READY), "same", now=102.0)
    assert later.status["canaryStatus"]["batchState"] == State.READY
    assert later.requeue_after is None


def test_a_batch_whose_pods_moved_since_it_was_entered_is_ready_at_once() -> None:
    pacer = BatchPacer()
    entered = pacer.pace("k", _br(2, 0, State.READY), _status(1, State.UPGRADING), "before", now=10.0)
    assert entered.status["canaryStatus"]["batchState"] == State.UPGRADING
    assert entered.requeue_after is None
    ready = pacer.pace("k", _br(2, 1, State.UPGRADING), _status(1, State.READY), "after", now=10.3)
    assert ready.status["canaryStatus"]["batchState"] == State.READY
    assert ready.requeue_after is None


def test_a_ready_batch_stays_ready_and_other_statuses_pass_through() -> None:
    pacer = BatchPacer()
    ready = _status(1, State.READY)
    assert pacer.pace("k", _br(2, 1, State.READY), ready, "x", now=1.0).status is ready
    finalizing = {"phase": "Finalizing"}
    assert pacer.pace("k", _br(2, 1, State.READY), finalizing, "x", now=1.0).status is finalizing


def test_a_spec_change_at_the_same_batch_index_is_a_new_batch() -> None:
    pacer = BatchPacer()
    pacer.pace("k", _br(3, 1, State.UPGRADING), _status(1, State.UPGRADING), "x", now=0.0)
    old = pacer.pace("k", _br(3, 1, State.UPGRADING), _status(1, State.READY), "x", now=5.0)
    assert old.status["canaryStatus"]["batchState"] == State.READY
    # the same batch index under a new generation (a Rollout that restarted its batches)
    new = pacer.pace("k", _br(4, 0, State.READY), _status(1, State.READY), "x", now=5.1)
    assert new.status["canaryStatus"]["batchState"] == State.VERIFYING


def test_forget_and_restart_verify_again() -> None:
    pacer = BatchPacer()
    pacer.pace("k", _br(1, 0, State.UPGRADING), _status(0, State.UPGRADING), "x", now=0.0)
    pacer.forget("k")
    again = pacer.pace("k", _br(1, 0, State.UPGRADING), _status(0, State.READY), "x", now=50.0)
    assert again.status["canaryStatus"]["batchState"] == State.VERIFYING


def test_the_fingerprint_follows_revisions_and_readiness_not_our_labels() -> None:
    workload = {"metadata": {"generation": 2}, "status": {"replicas": 2}}
    base = fingerprint(Observation(workload, pods=(_pod("a", True), _pod("b", False))))
    relabelled = fingerprint(
        Observation(
            workload, pods=(_pod("b", False), _pod("a", True, **{"rollouts.kruise.io/rollout-batch-id": "1"}))
        )
    )
    assert relabelled == base  # order and batch labels do not count
    assert fingerprint(Observation(workload, pods=(_pod("a", True), _pod("b", True)))) != base
    assert fingerprint(Observation(workload, pods=(_pod("a", True), _pod("b", False, "r2")))) != base
    moved = {"metadata": {"generation": 3}, "status": {"replicas": 2}}
    assert fingerprint(Observation(moved, pods=(_pod("a", True), _pod("b", False)))) != base
    assert fingerprint(None) == ""
