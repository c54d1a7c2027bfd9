"""The TrafficRouting controller's pure core: which Rollouts hold it, its finalizers, the strategy
in force (a holding Rollout's step handed over) and the phase machine."""

from __future__ import annotations

from typing import Any

import pytest

from kruise.rollouts.api.trafficrouting import TrafficRoutingPhase as P
from kruise.rollouts.trafficrouting.links import (
    TRAFFIC_ROUTING_FINALIZER,
    Strategy,
    handed_strategy,
    holders,
    holds,
    own_strategy,
    step_in_force,
    traffic_routing_ref,
    wanted_finalizers,
)
from kruise.rollouts.trafficrouting.phases import Outcome, Work, grace_seconds, plan, settle

JSON = dict[str, Any]
HEADER = {"headers": [{"type": "Exact", "name": "user-agent", "value": "pc"}]}
STEPS = [
    {"replicas": 1, "traffic": "20%"},
    {"replicas": 2, "traffic": "50%", "requestHeaderModifier": {"set": [{"name": "x", "value": "1"}]}},
    {"replicas": "100%"},
]


def rollout(
    name: str = "web",
    *,
    ref: str | None = "tr-demo",
    phase: str = "Progressing",
    reason: str = "InRolling",
    step: int = 1,
    state: str = "StepPaused",
    annotation: bool = False,
    deleting: bool = False,
) -> JSON:
    canary: JSON = {"steps": STEPS}
    meta: JSON = {"name": name, "namespace": "ns"}
    if ref and annotation:
        meta["annotations"] = {"rollouts.kruise.io/trafficrouting": ref}
    elif ref:
        canary["trafficRoutingRef"] = ref
    if deleting:
        meta["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    return {
        "metadata": meta,
        "spec": {"strategy": {"canary": canary}},
        "status": {
            "phase": phase,
            "conditions": [{"type": "Progressing", "status": "True", "reason": reason}],
            "canaryStatus": {"currentStepIndex": step, "currentStepState": state},
        },
    }


def traffic_routing(finalizers: list[str] | None = None, deleting: bool = False, **strategy: Any) -> JSON:
    meta: JSON = {"name": "tr-demo", "namespace": "ns", "finalizers": finalizers or []}
    if deleting:
        meta["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    return {
        "metadata": meta,
        "spec": {"objectRef": [{"service": "echoserver", "ingress": {"name": "web"}}], "strategy": strategy},
    }


# ------------------------------------------------------------------------------------------ links
@pytest.mark.parametrize(
    ("obj", "expected"),
    [
        pytest.param(rollout(), "tr-demo", id="v1beta1 canary.trafficRoutingRef"),
        pytest.param(rollout(annotation=True), "tr-demo", id="v1alpha1 annotation"),
        pytest.param(rollout(ref=None), "", id="no reference"),
    ],
)
def test_the_traffic_routing_a_rollout_names(obj: JSON, expected: str) -> None:
    assert traffic_routing_ref(obj) == expected


@pytest.mark.parametrize(
    ("obj", "held"),
    [
        pytest.param(rollout(reason="Initializing", state="BeforeStepUpgrade"), True, id="initializing"),
        pytest.param(rollout(), True, id="in rolling"),
        pytest.param(rollout(reason="Paused"), True, id="paused release"),
        pytest.param(rollout(reason="Finalising"), False, id="finalising lets go (upstream doFinalising)"),
        pytest.param(rollout(reason="Cancelling"), False, id="cancelling lets go"),
        pytest.param(rollout(phase="Healthy", reason="Completed"), False, id="healthy"),
        pytest.param(rollout(deleting=True), False, id="deleted rollout"),
        pytest.param(rollout(ref=None), False, id="names no traffic routing"),
    ],
)
def test_a_release_holds_its_traffic_routing_until_it_finalises(obj: JSON, held: bool) -> None:
    assert holds(obj) is held


def test_holders_are_the_releasing_rollouts_naming_it_in_its_namespace() -> None:
    other_ns = rollout("b")
    other_ns["metadata"]["namespace"] = "elsewhere"
    found = [rollout("c"), rollout("a"), other_ns, rollout("d", ref="other"), rollout("e", phase="Healthy")]
    assert holders(traffic_routing(), found) == ["a", "c"]


@pytest.mark.parametrize(
    ("have", "holding", "deleting", "want"),
    [
        pytest.param([], [], False, [TRAFFIC_ROUTING_FINALIZER], id="own finalizer first"),
        pytest.param(
            ["example.com/keep"],
            ["web"],
            False,
            ["example.com/keep", TRAFFIC_ROUTING_FINALIZER, "progressing.rollouts.kruise.io/web"],
            id="one progressing finalizer per holder, others' finalizers kept",
        ),
        pytest.param(
            [TRAFFIC_ROUTING_FINALIZER, "progressing.rollouts.kruise.io/gone"],
            [],
            False,
            [TRAFFIC_ROUTING_FINALIZER],
            id="a finalizer of a rollout that no longer holds it goes",
        ),
        pytest.param(
            [TRAFFIC_ROUTING_FINALIZER, "progressing.rollouts.kruise.io/web"],
            ["web", "late"],
            True,
            [TRAFFIC_ROUTING_FINALIZER, "progressing.rollouts.kruise.io/web"],
            id="deleted: nothing added, the controller removes its own once restored",
        ),
    ],
)
def test_finalizers_follow_the_holders(
    have: list[str], holding: list[str], deleting: bool, want: list[str]
) -> None:
    assert wanted_finalizers(traffic_routing(have, deleting), holding) == want


@pytest.mark.parametrize(
    ("state", "step", "expected"),
    [
        pytest.param("BeforeStepUpgrade", 1, 0, id="step 1 upgrading: no step in force"),
        pytest.param("StepUpgrade", 2, 1, id="step 2 upgrading: step 1's traffic holds"),
        pytest.param("StepTrafficRouting", 2, 2, id="step 2's pods ready: its traffic"),
        pytest.param("StepPaused", 2, 2, id="paused at step 2"),
        pytest.param("Completed", 3, 3, id="completed"),
    ],
)
def test_the_step_in_force_waits_for_its_pods(state: str, step: int, expected: int) -> None:
    assert step_in_force(rollout(step=step, state=state)) == expected


MSE = {"matches": [HEADER], "requestHeaderModifier": {"set": [{"name": "x-mse-tag", "value": "gray"}]}}


@pytest.mark.parametrize(
    ("holder", "expected"),
    [
        pytest.param(
            None, Strategy(None, (HEADER,), MSE["requestHeaderModifier"]), id="no single holder: own"
        ),
        pytest.param(
            rollout(step=1, state="StepUpgrade"),
            Strategy(None, (HEADER,), MSE["requestHeaderModifier"]),
            id="no step in force yet: own",
        ),
        pytest.param(
            rollout(step=1),
            Strategy(20, (HEADER,), MSE["requestHeaderModifier"], "Rollout web step 1"),
            id="step traffic becomes the weight, own matches and headers stay",
        ),
        pytest.param(
            rollout(step=2),
            Strategy(50, (HEADER,), {"set": [{"name": "x", "value": "1"}]}, "Rollout web step 2"),
            id="a step's request header modifier overrides",
        ),
        pytest.param(
            rollout(step=3),
            Strategy(None, (HEADER,), MSE["requestHeaderModifier"]),
            id="a step without traffic leaves the traffic routing's own strategy",
        ),
    ],
)
def test_a_holding_rollout_hands_over_its_step_traffic(holder: JSON | None, expected: Strategy) -> None:
    assert handed_strategy(own_strategy(traffic_routing(**MSE)), holder) == expected


def test_own_strategy_reads_the_v1alpha1_weight() -> None:
    assert own_strategy(traffic_routing(weight=30)) == Strategy(weight=30)
    assert not Strategy().routes_traffic and Strategy(weight=0).routes_traffic


# ----------------------------------------------------------------------------------------- phases
@pytest.mark.parametrize(
    ("phase", "deleting", "holding", "now", "work", "done"),
    [
        pytest.param("", False, [], P.INITIAL, Work.CHECK, P.HEALTHY, id="new: initial, checked, healthy"),
        pytest.param("Healthy", False, [], P.HEALTHY, Work.NONE, P.HEALTHY, id="healthy stays"),
        pytest.param(
            "Healthy", False, ["web"], P.PROGRESSING, Work.NONE, P.PROGRESSING, id="held: progressing"
        ),
        pytest.param("Progressing", False, ["web"], P.PROGRESSING, Work.ENSURE, P.PROGRESSING, id="routes"),
        pytest.param(
            "Progressing", False, [], P.FINALIZING, Work.NONE, P.FINALIZING, id="let go: finalizing"
        ),
        pytest.param("Finalizing", False, [], P.FINALIZING, Work.RESTORE, P.HEALTHY, id="restored: healthy"),
        pytest.param("Progressing", True, ["web"], P.TERMINATING, Work.RESTORE, P.TERMINATING, id="deleted"),
    ],
)
def test_phase_plan(phase: str, deleting: bool, holding: list[str], now: P, work: Work, done: P) -> None:
    round_ = plan({"phase": phase}, deleting, holding)
    assert (round_.phase, round_.work, round_.done_phase) == (now, work, done)
    assert round_.release_finalizer is deleting


def test_pending_work_keeps_the_phase_and_says_why() -> None:
    round_ = plan({"phase": "Finalizing"}, False, [])
    pending = settle(round_, Outcome(done=False, note="Ingress web-canary deleted", grace=1), None)
    assert (pending.phase, pending.requeue_after) == (P.FINALIZING, 1)
    assert pending.message == "TrafficRouting is Finalizing (Ingress web-canary deleted)"
    finished = settle(round_, Outcome(done=True), None)
    assert (finished.phase, finished.message, finished.requeue_after) == (
        P.HEALTHY,
        "TrafficRouting is Healthy",
        None,
    )


def test_progressing_message_names_the_strategy_in_force() -> None:
    round_ = plan({"phase": "Progressing"}, False, ["web"])
    settled = settle(round_, Outcome(done=True), Strategy(20, (HEADER,), None, "Rollout web step 1"))
    assert settled.message == "TrafficRouting is Progressing: weight 20%, 1 match(es) (Rollout web step 1)"


def test_terminating_releases_the_finalizer_only_once_restored() -> None:
    round_ = plan({"phase": "Healthy"}, True, [])
    assert not settle(round_, Outcome(done=False), None).release_finalizer
    assert settle(round_, Outcome(done=True), None).release_finalizer


@pytest.mark.parametrize(
    ("refs", "expected"),
    [
        pytest.param([], 3, id="none: default"),
        pytest.param([{"gracePeriodSeconds": 0}], 0, id="zero"),
        pytest.param([{"gracePeriodSeconds": 1}, {}], 3, id="an unset entry counts as 3"),
        pytest.param([{"gracePeriodSeconds": -2}, {"gracePeriodSeconds": 5}], 5, id="negative is default"),
    ],
)
def test_grace_is_the_longest_of_the_entries(refs: list[JSON], expected: int) -> None:
    assert grace_seconds(refs) == expected
