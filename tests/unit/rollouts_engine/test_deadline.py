"""Progress deadline, abort and retry (rollout/deadline.py) driven through the state machine
against the simulated world of test_machine: a step whose pods never become ready."""

from __future__ import annotations

import datetime
from dataclasses import dataclass
from typing import Any

import pytest

from kruise.rollouts.admission import validate_rollout
from kruise.rollouts.api.common import CanaryStepState, ProgressingReason
from kruise.rollouts.rollout.deadline import abort_request, retry_request
from kruise.rollouts.rollout.machine import decide
from kruise.rollouts.rollout.model import Action, ActionKind, BatchView, Event, Observed, Outcomes
from kruise.rollouts.rollout.outcome import Outcome, release_outcome
from tests.unit.rollouts.helpers import v1beta1_rollout
from tests.unit.rollouts_engine.test_machine import STEPS, World, approve, reason, rollout, state

STUCK_STEPS = [{"replicas": "20%", "traffic": "5%", "pause": {}}, *STEPS[1:]]


@dataclass
class StuckWorld(World):
    """The new revision's pods never become ready while ``stuck``; a held abort recreates them
    at the stable revision."""

    stuck: bool = True

    def batch_view(self) -> BatchView:
        view = super().batch_view()
        if self.stuck and view.exists:
            return BatchView(**{**view.__dict__, "batch_state": "Upgrading", "updated_ready_replicas": 0})
        return view

    def apply(self, action: Action) -> bool:
        if action.kind == ActionKind.HOLD_STABLE_PODS:
            changed = self.partition != self.replicas or self.updated != 0
            self.log.append(action.kind)
            self.partition, self.updated = self.replicas, 0
            return changed
        return super().apply(action)


def run(
    ro: dict[str, Any], world: World, rounds: int, events: list[Event], until: Any = None
) -> dict[str, Any]:
    """Reconcile like the shell (decide, act, decide again) ``rounds`` times or until ``until``."""
    for _ in range(rounds):
        obs = Observed(now=world.now, workload=world.info(), batch=world.batch_view())
        first = decide(ro, obs)
        outcomes = Outcomes.of(first.actions, [world.apply(a) for a in first.actions])
        second = decide(
            ro, Observed(now=world.now, workload=world.info(), batch=world.batch_view()), outcomes
        )
        events.extend(second.events)
        ro = {**ro, "status": second.status}
        world.now += datetime.timedelta(seconds=1)
        if until is not None and until(ro):
            return ro
    if until is not None:
        raise AssertionError(f"not reached; status={ro['status']}")
    return ro


def cond(ro: dict[str, Any], ctype: str) -> dict[str, Any]:
    return next((x for x in ro["status"].get("conditions", []) if x["type"] == ctype), {})


def released(
    deadline: int | None = 30, abort: bool = False, steps: list[Any] = STUCK_STEPS
) -> tuple[Any, World]:
    world = StuckWorld()
    ro = rollout(steps)
    if deadline is not None:
        ro["spec"]["progressDeadlineSeconds"] = deadline
    if abort:
        ro["spec"]["progressDeadlineAbort"] = True
    ro = run(ro, world, 1, [])
    world.release("v2")
    return ro, world


def test_without_a_deadline_a_stuck_step_waits_forever() -> None:
    ro, world = released(None)
    events: list[Event] = []
    ro = run(ro, world, 200, events)
    assert state(ro) == (1, CanaryStepState.STEP_UPGRADE) and reason(ro) == ProgressingReason.IN_ROLLING
    assert not cond(ro, "ProgressDeadline") and all(e.type == "Normal" for e in events)


def test_deadline_passed_warns_once_and_clears_when_the_release_moves_again() -> None:
    ro, world = released(30)
    events: list[Event] = []
    ro = run(ro, world, 50, events, until=lambda r: state(r) == (1, CanaryStepState.STEP_UPGRADE))
    upgrading = world.now
    ro = run(ro, world, 200, events, until=lambda r: cond(r, "ProgressDeadline"))
    assert 30 <= (world.now - upgrading).total_seconds() <= 32
    assert cond(ro, "ProgressDeadline")["reason"] == "ProgressDeadlineExceeded"
    assert "step 1/3 (StepUpgrade)" in cond(ro, "ProgressDeadline")["message"]
    assert release_outcome(ro) is Outcome.STALLED and release_outcome(ro).exit_code == 1
    ro = run(ro, world, 20, events)
    assert [e.reason for e in events if e.type == "Warning"] == ["ProgressDeadlineExceeded"]
    assert reason(ro) == ProgressingReason.IN_ROLLING and world.update == "v2", (
        "no abort without progressDeadlineAbort"
    )

    world.stuck = False
    ro = run(ro, world, 50, events, until=lambda r: state(r) == (1, CanaryStepState.STEP_PAUSED))
    assert not cond(ro, "ProgressDeadline")
    assert release_outcome(ro) is Outcome.AWAITING_APPROVAL


def test_pauses_do_not_count() -> None:
    ro, world = released(10)
    world.stuck = False
    events: list[Event] = []
    ro = run(ro, world, 50, events, until=lambda r: state(r) == (1, CanaryStepState.STEP_PAUSED))
    ro = run(ro, world, 100, events)  # waiting for approval ten times the deadline
    assert not cond(ro, "ProgressDeadline")
    paused = rollout(STUCK_STEPS, paused=True)
    paused["spec"]["progressDeadlineSeconds"] = 10
    world = StuckWorld()
    ro = run(paused, world, 1, [])
    world.release("v2")
    ro = run(ro, world, 100, events)
    assert reason(ro) == ProgressingReason.PAUSED and not cond(ro, "ProgressDeadline")


def held_abort(ro: dict[str, Any], world: World, events: list[Event]) -> dict[str, Any]:
    return run(
        ro,
        world,
        200,
        events,
        until=lambda r: r["status"].get("canaryStatus", {}).get("finalisingStep") == "Held",
    )


def test_deadline_with_abort_routes_traffic_to_stable_first_then_pods_and_holds_the_template() -> None:
    ro, world = released(30, abort=True)
    events: list[Event] = []
    ro = run(
        ro,
        world,
        100,
        events,
        until=lambda r: state(r)[1] == CanaryStepState.STEP_UPGRADE and world.weight == 0,
    )
    world.log.clear()
    ro = held_abort(ro, world, events)
    assert cond(ro, "Aborted")["reason"] == "ProgressDeadlineExceeded"
    assert [e.reason for e in events if e.type == "Warning"] == ["ProgressDeadlineExceeded"]
    hold = [k for k in world.log if k in ("RestoreRoutes", "DeleteBatchRelease", "HoldStablePods")]
    assert hold.index("RestoreRoutes") < hold.index("DeleteBatchRelease") < hold.index("HoldStablePods")
    assert (world.weight, world.batch, world.updated, world.partition) == (0, None, 0, world.replicas)
    assert world.update == "v2", "the new template stays in the workload"
    assert ro["status"]["phase"] == "Progressing" and release_outcome(ro) is Outcome.FAILED
    before = dict(ro["status"])
    ro = run(ro, world, 30, events)
    assert ro["status"]["canaryStatus"] == before["canaryStatus"], "held: nothing moves"


def test_retry_restarts_an_aborted_release_at_step_one() -> None:
    ro, world = released(30, abort=True)
    events: list[Event] = []
    ro = held_abort(ro, world, events)
    world.stuck = False
    ro = {**ro, "status": {**ro["status"], "conditions": retry_request(ro["status"], world.now)}}
    ro = run(ro, world, 100, events, until=lambda r: state(r) == (1, CanaryStepState.STEP_PAUSED))
    assert not cond(ro, "Aborted") and "Retried" in [e.reason for e in events]
    assert world.weight == 5 and world.updated == 2
    ro = run(approve(ro), world, 100, events, until=lambda r: state(r) == (2, CanaryStepState.STEP_PAUSED))
    ro = run(approve(ro), world, 100, events, until=lambda r: r["status"]["phase"] == "Healthy")
    assert release_outcome(ro) is Outcome.SUCCEEDED


def test_user_abort_holds_and_a_fix_pushed_starts_a_new_release() -> None:
    world = StuckWorld(stuck=False)
    ro = run(rollout(STUCK_STEPS), world, 1, [])
    world.release("v2")
    events: list[Event] = []
    ro = run(ro, world, 100, events, until=lambda r: state(r) == (1, CanaryStepState.STEP_PAUSED))
    with pytest.raises(ValueError, match="not aborted"):
        retry_request(ro["status"], world.now)
    ro = {**ro, "status": {**ro["status"], "conditions": abort_request(ro["status"], world.now)}}
    with pytest.raises(ValueError, match="already aborted"):
        abort_request(ro["status"], world.now)
    ro = held_abort(ro, world, events)
    assert cond(ro, "Aborted")["reason"] == "AbortedByUser" and world.weight == 0
    world.release("v3")
    ro = run(
        ro,
        world,
        100,
        events,
        until=lambda r: (
            (r["status"].get("canaryStatus") or {}).get("canaryRevision") == "v3"
            and state(r) == (1, CanaryStepState.STEP_PAUSED)
        ),
    )
    assert not cond(ro, "Aborted") and world.weight == 5 and reason(ro) == ProgressingReason.IN_ROLLING


def test_abort_is_refused_outside_a_release() -> None:
    world = World()
    ro = run(rollout(STEPS), world, 2, [])
    with pytest.raises(ValueError, match="not rolling out"):
        abort_request(ro["status"], world.now)


@pytest.mark.parametrize(
    ("spec", "errors"),
    [
        ({"progressDeadlineSeconds": 60, "progressDeadlineAbort": True}, []),
        ({"progressDeadlineSeconds": 60}, []),
        (
            {"progressDeadlineAbort": True},
            [("spec.progressDeadlineAbort", "requires spec.progressDeadlineSeconds to be set")],
        ),
    ],
)
def test_the_webhook_refuses_an_abort_without_a_deadline(spec: dict[str, Any], errors: list[Any]) -> None:
    doc = v1beta1_rollout()
    doc["spec"].update(spec)
    assert [(e.field, e.detail) for e in validate_rollout(doc, workload_lookup=[])] == errors
