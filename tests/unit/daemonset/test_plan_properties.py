"""Properties of ``plan`` over generated worlds: one pod per node, budgets kept, partition reached."""

from __future__ import annotations

import copy
import math
from datetime import timedelta
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from kruise.workloads.daemonset.plan import Phase
from tests.unit.daemonset.builders import NOW, World, daemonset, hash_of, nodes, pod_on, revision, with_image

JSON = dict[str, Any]
POD_STATES = ("old", "new", "old-unready", "new-unready", "failed", "terminating", "pre-deleting", "none")


@st.composite
def worlds(draw: st.DrawFn, *, surge: bool | None = None) -> World:
    count = draw(st.integers(0, 8))
    use_surge = draw(st.booleans()) if surge is None else surge
    rolling: JSON = {
        "partition": draw(st.one_of(st.integers(0, 9), st.sampled_from(["0%", "30%", "50%", "100%"])))
    }
    if use_surge:
        rolling |= {"maxSurge": draw(st.sampled_from([1, 2, "50%"])), "maxUnavailable": 0}
    else:
        rolling |= {"maxUnavailable": draw(st.sampled_from([1, 2, "25%", "100%"]))}
        if draw(st.booleans()):
            rolling["rollingUpdateType"] = "InPlaceIfPossible"
    before = daemonset(rolling=rolling, min_ready=draw(st.sampled_from([0, 5])))
    after = with_image(before, "nginx:2")
    r1, r2 = revision(before, 1), revision(after, 2)
    world = World(ds=after, nodes=nodes(count), revisions=[r1, r2])
    for i, target in enumerate(world.nodes):
        name = target["metadata"]["name"]
        for j, state in enumerate(draw(st.lists(st.sampled_from(POD_STATES), min_size=1, max_size=2))):
            if state == "none":
                continue
            pod = pod_on(
                before if state.startswith(("old", "failed", "terminating", "pre")) else after,
                r1 if state.startswith(("old", "failed", "terminating", "pre")) else r2,
                name,
                name=f"p{i}-{j}",
                ready=not state.endswith("unready"),
                phase="Failed" if state == "failed" else "Running",
                created=NOW - timedelta(minutes=10 - j),
                state="PreparingDelete" if state == "pre-deleting" else None,
            )
            if state == "terminating":
                pod["metadata"]["deletionTimestamp"] = "2025-01-01T11:59:00Z"
            world.pods.append(pod)
    return world


def live(world: World, node: str) -> list[JSON]:
    return [p for p in world.live_on(node) if p["status"]["phase"] != "Failed"]


@settings(max_examples=150, deadline=None)
@given(worlds(surge=False))
def test_without_surge_a_pod_is_only_created_on_a_node_without_pods(world: World) -> None:
    occupied = {p["spec"]["nodeName"] for p in world.pods}
    decided = world.plan()
    assert not set(decided.create) & occupied
    assert len(decided.create) == len(set(decided.create))


@settings(max_examples=150, deadline=None)
@given(worlds())
def test_planning_is_pure(world: World) -> None:
    before = copy.deepcopy((world.ds, world.nodes, world.pods, world.revisions))
    assert world.plan() == world.plan()
    assert (world.ds, world.nodes, world.pods, world.revisions) == before


@st.composite
def settled_worlds(draw: st.DrawFn) -> tuple[World, int]:
    """Every node runs one available old pod; returns the world and its maxSurge (0 without)."""
    count = draw(st.integers(1, 12))
    surge = draw(st.sampled_from([0, 1, 2, "30%"]))
    rolling: JSON = (
        {"maxSurge": surge, "maxUnavailable": 0}
        if surge
        else {"maxUnavailable": draw(st.sampled_from([1, 3, "20%"]))}
    )
    if not surge and draw(st.booleans()):
        rolling["rollingUpdateType"] = "InPlaceIfPossible"
    rolling["partition"] = draw(st.integers(0, 4))
    before = daemonset(rolling=rolling)
    r1, r2 = revision(before, 1), revision(with_image(before, "nginx:2"), 2)
    world = World(ds=with_image(before, "nginx:2"), nodes=nodes(count), revisions=[r1, r2])
    world.pods = [pod_on(before, r1, n["metadata"]["name"]) for n in world.nodes]
    max_surge = (
        0 if not surge else (surge if isinstance(surge, int) else math.ceil(int(surge[:-1]) * count / 100))
    )
    return world, max_surge


@settings(max_examples=150, deadline=None)
@given(settled_worlds())
def test_one_round_keeps_within_max_surge_or_max_unavailable(case: tuple[World, int]) -> None:
    world, max_surge = case
    rolling = world.ds["spec"]["updateStrategy"]["rollingUpdate"]
    world.ready_on_create = False
    world.step()
    doubled = sum(1 for n in world.nodes if len(live(world, n["metadata"]["name"])) > 1)
    down = sum(
        1
        for n in world.nodes
        if not any(
            p["status"]["conditions"][0]["status"] == "True" for p in live(world, n["metadata"]["name"])
        )
    )
    changed_in_place = sum(
        1
        for p in world.pods
        if p["metadata"]["labels"]["controller-revision-hash"] == hash_of(world.revisions[-1])
    )
    if max_surge:
        assert doubled <= max_surge and down == 0
    else:
        value = rolling["maxUnavailable"]
        budget = value if isinstance(value, int) else math.ceil(int(value[:-1]) * len(world.nodes) / 100)
        assert doubled == 0 and down + changed_in_place <= max(budget, 1)


@settings(max_examples=100, deadline=None)
@given(settled_worlds(), st.sets(st.integers(0, 11)))
def test_the_rollout_settles_with_partition_and_selector(case: tuple[World, int], picked: set[int]) -> None:
    world, _ = case
    rolling = world.ds["spec"]["updateStrategy"]["rollingUpdate"]
    use_selector = bool(picked)
    if use_selector:
        rolling["selector"] = {"matchLabels": {"pick": "yes"}}
        for i in picked & set(range(len(world.nodes))):
            world.nodes[i]["metadata"]["labels"]["pick"] = "yes"
    for _ in range(60):
        if world.step().phase == Phase.IDLE:
            break
        world.now += timedelta(seconds=1)
    else:
        raise AssertionError("did not settle")
    count = len(world.nodes)
    allowed = max(count - rolling["partition"], 0)
    if use_selector:
        allowed = min(allowed, len(picked & set(range(count))))
    assert world.updated() == allowed
    assert all(len(live(world, n["metadata"]["name"])) == 1 for n in world.nodes)
