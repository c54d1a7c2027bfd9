"""Hypothesis properties of one StatefulSet round over random worlds."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from sts_builders import NOW, running, statefulset, with_image

from kruise.workloads.admission.intstr import get_value
from kruise.workloads.objects import is_being_deleted, name
from kruise.workloads.pods import is_ready
from kruise.workloads.revisions import new_revision
from kruise.workloads.statefulset.actions import CreatePod, DeletePod, DeleteReason, UpdateInPlace
from kruise.workloads.statefulset.identity import STATEFULSET_KIND, new_pod, ordinal_of, replica_range
from kruise.workloads.statefulset.plan import Plan, plan
from kruise.workloads.statefulset.round import Options, World


@st.composite
def worlds(draw: st.DrawFn) -> tuple[World, Options]:
    replicas = draw(st.integers(0, 6))
    parallel = draw(st.booleans())
    reserve = draw(st.lists(st.integers(0, 9), max_size=3, unique=True))
    partition = draw(st.integers(0, replicas + 1))
    max_unavailable = draw(st.one_of(st.integers(1, 4), st.sampled_from(["25%", "50%"]))) if parallel else 1
    in_place = draw(st.booleans())
    spec: dict[str, Any] = {"reserveOrdinals": reserve}
    gate = draw(st.booleans())
    if gate:
        spec["ordinals"] = {"start": draw(st.integers(0, 3))}
    rolling = {"partition": partition, "maxUnavailable": max_unavailable}
    if parallel and draw(st.booleans()):
        rolling["unorderedUpdate"] = {}
    old_sts = statefulset(replicas, parallel=parallel, in_place=in_place, rolling=rolling, **spec)
    new_sts = with_image(old_sts, "nginx:2")
    old = new_revision(old_sts, 1, 0, controller=STATEFULSET_KIND)
    new = new_revision(new_sts, 2, 0, controller=STATEFULSET_KIND)
    # One draw per ordinal from 0 to a few past the range, so most worlds hold pods in the range
    # and updates (not only scaling) get exercised: 0-1 no pod, 2-6 ready, 7-8 unready,
    # 9 terminating; each at the update revision or not.
    top = (spec["ordinals"]["start"] if gate else 0) + replicas + 3
    pods = []
    for ordinal in range(top):
        state, at_update = draw(st.integers(0, 9)), draw(st.booleans())
        if state < 2:
            continue
        pod = running(new_pod(new_sts, new if at_update else old, ordinal, NOW), ready=state < 7)
        if state == 9:
            pod["metadata"]["deletionTimestamp"] = "2024-05-01T11:59:00Z"
        pods.append(pod)
    world = World(new_sts, pods, {}, old, new, [old, new], 0, NOW)
    return world, Options(start_ordinal=gate)


def _moved(p: Plan) -> list[str]:
    return [
        name(a.pod)
        for a in p.update
        if isinstance(a, UpdateInPlace) or (isinstance(a, DeletePod) and a.reason == DeleteReason.UPDATE)
    ]


@settings(max_examples=300, deadline=None)
@given(worlds())
def test_never_creates_outside_the_range_a_reserved_ordinal_or_beyond_replicas(
    case: tuple[World, Options],
) -> None:
    world, options = case
    p = plan(world, options)
    ordinals = replica_range(world.statefulset, start_ordinal_gate=options.start_ordinal)
    existing = {ordinal_of(pod) for pod in world.pods}
    created = [ordinal_of(a.pod) for a in p.scale if isinstance(a, CreatePod)]
    assert all(ordinals.holds(o) and o not in existing for o in created)
    assert len(set(created)) == len(created)
    in_range = sum(1 for o in existing if ordinals.holds(o))
    replicas = int(world.statefulset["spec"]["replicas"])
    assert in_range + len(created) <= replicas
    if world.statefulset["spec"]["podManagementPolicy"] != "Parallel":
        assert len(created) <= 1


@settings(max_examples=300, deadline=None)
@given(worlds())
def test_deciding_twice_gives_the_same_plan(case: tuple[World, Options]) -> None:
    world, options = case
    assert repr(plan(world, options)) == repr(plan(world, options))


@settings(max_examples=300, deadline=None)
@given(worlds())
def test_updates_respect_partition_and_max_unavailable(case: tuple[World, Options]) -> None:
    world, options = case
    p = plan(world, options)
    moved = _moved(p)
    spec = world.statefulset["spec"]
    rolling = spec["updateStrategy"]["rollingUpdate"]
    replicas, partition = int(spec["replicas"]), int(rolling["partition"])
    assert len(moved) <= max(0, replicas - partition)
    # rollingUpdateStatefulsetPods seeds its unavailable set with the replicas already unavailable
    # and refuses only *available* pods once the set holds maxUnavailable: unavailable pods always
    # go, so only the available ones moved are bounded by what the budget has left.
    limit = max(1, get_value(rolling["maxUnavailable"], replicas, False))
    ordinals = replica_range(world.statefulset, start_ordinal_gate=options.start_ordinal)
    slots = [pod for pod in world.pods if ordinals.holds(ordinal_of(pod))]
    unavailable = {name(pod) for pod in slots if not is_ready(pod) or is_being_deleted(pod)}
    available_moved = [n for n in moved if n not in unavailable]
    assert len(available_moved) <= max(0, limit - len(unavailable))
    if "unorderedUpdate" not in rolling:
        start = replica_range(world.statefulset, start_ordinal_gate=options.start_ordinal).start
        assert all(int(n.rsplit("-", 1)[1]) - start >= partition for n in moved)


@settings(max_examples=100, deadline=None)
@given(worlds())
def test_a_settled_world_asks_for_nothing(case: tuple[World, Options]) -> None:
    world, options = case
    ordinals = replica_range(world.statefulset, start_ordinal_gate=options.start_ordinal).ordinals()
    settled = [running(new_pod(world.statefulset, world.update_revision, o, NOW)) for o in ordinals]
    calm = World(
        world.statefulset,
        settled,
        {},
        world.update_revision,
        world.update_revision,
        [world.update_revision],
        0,
        NOW,
    )
    p = plan(calm, options)
    assert p.scale == () and p.update == () and not p.errors
    assert p.status["readyReplicas"] == p.status["updatedReplicas"] == len(ordinals)
