"""Properties of ``plan()`` over generated worlds, round after round, with pods finishing and nodes
joining, leaving and changing: never two pods for one node, active pods within parallelism, a
finished node never runs again, and a plan applied once asks for nothing more."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from kruise.workloads.broadcastjob.jobpods import assigned_node, new_pod
from kruise.workloads.broadcastjob.plan import plan
from tests.unit.broadcastjob.builders import NOW, job, node

JSON = dict[str, Any]
NODE_KINDS = ("plain", "plain", "plain", "cordoned", "tainted", "labelled")


def make_node(name: str, kind: str) -> JSON:
    if kind == "cordoned":
        return node(name, unschedulable=True)
    if kind == "tainted":
        return node(name, taints=[{"key": "dedicated", "value": "x", "effect": "NoSchedule"}])
    if kind == "labelled":
        return node(name, labels={"pool": "b"})
    return node(name)


@dataclass
class World:
    job: JSON
    nodes: dict[str, JSON]
    pods: dict[str, JSON] = field(default_factory=dict)
    finished_nodes: set[str] = field(default_factory=set)
    serial: int = 0

    def apply(self, created: tuple[str, ...], deleted: tuple[str, ...]) -> None:
        for pod_name in deleted:
            self.pods.pop(pod_name, None)
        for node_name in created:
            self.serial += 1
            p = new_pod(self.job, node_name)
            p["metadata"]["name"] = f"job1-{self.serial}"
            p["status"] = {"phase": "Pending"}
            self.pods[p["metadata"]["name"]] = p


@st.composite
def worlds(draw: st.DrawFn) -> World:
    count = draw(st.integers(0, 8))
    kinds = [draw(st.sampled_from(NODE_KINDS)) for _ in range(count)]
    pod_spec: JSON = {"nodeSelector": {"pool": "b"}} if draw(st.booleans()) and "labelled" in kinds else {}
    j = job(
        parallelism=draw(
            st.one_of(st.none(), st.integers(0, 5), st.sampled_from(["0%", "30%", "50%", "100%"]))
        ),
        completion={"type": draw(st.sampled_from(["Always", "Never"]))},
        failure={"type": draw(st.sampled_from(["FailFast", "Continue", "Pause"]))},
        pod_spec=pod_spec,
    )
    return World(j, {f"node{i}": make_node(f"node{i}", k) for i, k in enumerate(kinds)})


ACTIONS = st.lists(
    st.tuples(
        st.sampled_from(["succeed", "fail", "run", "add-node", "remove-node", "cordon"]), st.integers(0, 50)
    ),
    max_size=12,
)


def _mutate(world: World, action: str, index: int) -> None:
    pods = sorted(world.pods)
    names = sorted(world.nodes)
    if action in ("succeed", "fail", "run") and pods:
        p = world.pods[pods[index % len(pods)]]
        phase = {"succeed": "Succeeded", "fail": "Failed", "run": "Running"}[action]
        if p["status"]["phase"] not in ("Succeeded", "Failed"):
            p["status"]["phase"] = phase
            if phase != "Running":
                world.finished_nodes.add(assigned_node(p))
    elif action == "add-node":
        name = f"late{index}"
        world.nodes.setdefault(name, make_node(name, NODE_KINDS[index % len(NODE_KINDS)]))
    elif action == "remove-node" and names:
        world.nodes.pop(names[index % len(names)])
    elif action == "cordon" and names:
        world.nodes[names[index % len(names)]]["spec"]["unschedulable"] = True


@settings(max_examples=150, deadline=None)
@given(worlds(), ACTIONS)
def test_rounds_keep_the_invariants(world: World, actions: list[tuple[str, int]]) -> None:
    for action in [("noop", 0), *actions]:
        _mutate(world, *action)
        before = [p for p in world.pods.values() if p["status"]["phase"] not in ("Succeeded", "Failed")]
        decided = plan(world.job, list(world.nodes.values()), list(world.pods.values()), NOW)
        occupied = {assigned_node(p) for p in world.pods.values()}
        before = [p for p in before if p["metadata"]["name"] not in decided.delete]  # misfits go first
        assert len(set(decided.create_on)) == len(decided.create_on), "two pods for one node in one round"
        assert not occupied & set(decided.create_on), "a node that has a pod gets another"
        assert not world.finished_nodes & set(decided.create_on), "a finished node runs again"
        assert set(decided.create_on) <= decided.desired_nodes <= set(world.nodes), (
            "a pod off the desired nodes"
        )
        if decided.status is not None and decided.status.phase in ("running", "completed"):
            assert decided.status.active <= max(len(before), decided.parallelism), "over parallelism"
            assert len(decided.create_on) <= max(0, decided.parallelism - len(before))
        world.apply(decided.create_on, decided.delete)
        if decided.status is not None:
            world.job["status"] = decided.status.to_dict()
        per_node: dict[str, int] = {}
        for p in world.pods.values():
            per_node[assigned_node(p)] = per_node.get(assigned_node(p), 0) + 1
        assert all(n == 1 for n in per_node.values()), per_node


@settings(max_examples=100, deadline=None)
@given(worlds())
def test_applied_plan_asks_for_nothing_more(world: World) -> None:
    first = plan(world.job, list(world.nodes.values()), [], NOW)
    world.apply(first.create_on, first.delete)
    assert first.status is not None
    world.job["status"] = first.status.to_dict()
    again = plan(world.job, list(world.nodes.values()), list(world.pods.values()), NOW)
    assert again.create_on == () and again.delete == ()
    assert again.status is not None and again.status.active == first.status.active
    assert first.status.active == min(first.parallelism, first.status.desired)
