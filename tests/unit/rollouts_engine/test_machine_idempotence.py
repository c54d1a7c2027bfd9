"""The machine's idempotence, honestly (issue 13, deliverable 4): deciding again on the world that
a decision's own actions produced yields no new actions.

A round is what the controller does: decide on an observation, run the actions against the
simulated world (:class:`DirectWorld`: the objects the Rollout writes, its BatchRelease spec,
Services, route and the workload's in-progressing mark), stopping after the first change of a
sequential decision, then decide again on the *same* observation with the outcomes matched by
action, and feed the status back. Whenever a round's actions changed the world, the next round
decides on the world they produced: its actions that change anything must be ones the previous
decision already asked for and did not get to run (the rest of a sequential teardown). Anything
else (an action running again with a different payload, an action that undoes the previous one, a
state that advanced although its actions had just changed the world) is a new action and fails.

What the other controllers do in reply (the BatchRelease moving the partition and finalising, the
workload moving pods) is a separate event, ``settle``, between rounds: the property is about the
machine's own actions, and a world that moves by itself may rightly ask for new ones.

Random releases: steps (shares, traffic or not, pauses), replicas, and an event history of
rounds, settling, approvals, a continuous release, a rollback to the stable revision and scaling.
"""

from __future__ import annotations

import copy
import datetime
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from kruise.rollouts.api.common import CanaryStepState
from kruise.rollouts.release.batchplan import cloneset_partition, cloneset_partition_pods
from kruise.rollouts.rollout.machine import decide
from kruise.rollouts.rollout.model import Action, ActionKind, Decision, Observed, Outcomes
from tests.unit.rollouts_engine.test_machine import World, rollout

JSON = dict[str, Any]


class DirectWorld(World):
    """:class:`World` where an action writes only what the Rollout writes; :meth:`settle` is the
    BatchRelease and the workload controller catching up with it."""

    def apply(self, action: Action) -> bool:
        kind = action.kind
        if kind in (ActionKind.ENSURE_BATCH_RELEASE, ActionKind.FINALIZE_BATCH_RELEASE):
            spec = action.payload["spec"]
            if kind == ActionKind.FINALIZE_BATCH_RELEASE and not action.payload.get("exists"):
                changed = self.partition is not None  # no BatchRelease left: the hold is lifted directly
                self.partition = None
                return changed
            changed = self.batch != spec
            self.batch = spec
            return changed
        if kind == ActionKind.RELEASE_WORKLOAD:
            changed = self.in_progressing
            self.in_progressing = False
            return changed
        return World.apply(self, action)

    def settle(self) -> None:
        """The BatchRelease controls the workload for its spec; the workload moves its pods."""
        if self.batch is not None:
            index = self.batch["releasePlan"].get("batchPartition")
            if index is None:
                self.partition, self.batch_phase = None, "Completed"
            else:
                self.batch_phase = "Progressing"
                want = cloneset_partition(
                    self.batch["releasePlan"]["batches"][index]["canaryReplicas"], self.replicas
                )
                if cloneset_partition_pods(want, self.replicas) < cloneset_partition_pods(
                    self.partition, self.replicas
                ):
                    self.partition = want
        self.converge_pods()


def observe(world: World) -> Observed:
    return Observed(now=world.now, workload=world.info(), batch=world.batch_view())


def run(world: World, decision: Decision) -> list[tuple[Action, bool]]:
    """Run ``decision``'s actions as the controller does (a sequential one stops at a change)."""
    reports = []
    for action in decision.actions:
        changed = world.apply(action)
        reports.append((action, changed))
        if decision.sequential and changed:
            break
    return reports


def changes(world: World, actions: tuple[Action, ...]) -> list[Action]:
    """The actions that would change (a copy of) ``world``, applied in order."""
    scratch = copy.deepcopy(world)
    return [a for a in actions if scratch.apply(a)]


def check_round(ro: JSON, world: World) -> JSON:
    """One controller round, then the property on the world it produced."""
    obs = observe(world)
    first = decide(ro, obs)
    reports = run(world, first)
    second = decide(ro, obs, Outcomes(reports))
    ro = {**ro, "status": second.status}
    world.now += datetime.timedelta(seconds=1)
    if any(changed for _, changed in reports):
        ran = {action.key for action, _ in reports}
        proposed_not_run = {a.key for a in first.actions} - ran
        again = decide(ro, observe(world))
        new = [a for a in changes(world, again.actions) if a.key not in proposed_not_run]
        assert new == [], (
            f"new actions {[(a.kind, a.payload) for a in new]} after {[(a.kind, c) for a, c in reports]}; "
            f"status {ro['status']}"
        )
    return ro


def steps_strategy() -> st.SearchStrategy[list[JSON]]:
    def build(shares: list[int], traffic: list[bool], timed: list[bool]) -> list[JSON]:
        steps = []
        for share, routed, timer in zip(sorted(shares), traffic, timed, strict=False):
            step: JSON = {"replicas": f"{share}%", "pause": {"duration": 1} if timer else {}}
            if routed:
                step["traffic"] = f"{max(1, share // 2)}%"
            steps.append(step)
        return steps

    return st.builds(
        build,
        st.lists(st.integers(1, 100), min_size=1, max_size=4),
        st.lists(st.booleans(), min_size=4, max_size=4),
        st.lists(st.booleans(), min_size=4, max_size=4),
    )


EVENTS = st.lists(
    st.sampled_from(["round"] * 5 + ["settle"] * 3 + ["approve", "release_v3", "rollback", "scale"]),
    min_size=10,
    max_size=80,
)


@settings(max_examples=80, deadline=None)
@given(steps_strategy(), st.booleans(), st.integers(1, 12), EVENTS)
def test_deciding_again_on_the_world_its_actions_produced_yields_no_new_actions(
    steps: list[JSON], routing: bool, replicas: int, events: list[str]
) -> None:
    world = DirectWorld(replicas=replicas, updated=replicas)
    ro = rollout(steps, routing=routing)
    for _ in range(2):
        ro = check_round(ro, world)
    world.release("v2")
    for event in events:
        cs = ro["status"].get("canaryStatus") or {}
        if event == "approve" and cs.get("currentStepState") == CanaryStepState.STEP_PAUSED:
            ro = {**ro, "status": {**ro["status"], "canaryStatus": {**cs, "currentStepState": "StepReady"}}}
        elif event == "release_v3" and world.in_progressing and world.update == "v2":
            world.release("v3")
        elif event == "rollback" and world.in_progressing and world.update != world.stable:
            world.release(world.stable)
        elif event == "scale":
            world.replicas = max(1, world.replicas + (2 if world.replicas < 6 else -2))
        elif event == "settle":
            world.settle()
            continue
        ro = check_round(ro, world)
