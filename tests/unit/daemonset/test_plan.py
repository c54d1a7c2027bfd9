"""The DaemonSet's decision, scenario by scenario (upstream's ``syncDaemonSet`` rules)."""

from __future__ import annotations

import copy
from datetime import timedelta
from typing import Any

import pytest

from kruise.workloads.daemonset.daemonpods import canonical, new_pod
from kruise.workloads.daemonset.plan import DeleteReason, FailedBackoff, Phase, Plan, nodes_to_update
from kruise.workloads.daemonset.status import DaemonSetCounts
from tests.unit.daemonset.builders import (
    NOW,
    World,
    daemonset,
    hash_of,
    node,
    nodes,
    pod_on,
    revision,
    with_image,
)

JSON = dict[str, Any]


def rolled(world: World, rounds: int = 50) -> World:
    """Plan and apply until nothing is left to do."""
    for _ in range(rounds):
        if world.step().phase == Phase.IDLE:
            return world
    raise AssertionError("the plan did not settle")


def updating(count: int, *, old: JSON | None = None, new_image: str = "nginx:2", **ds_kw: Any) -> World:
    """``count`` nodes running revision 1 of ``old``, the DaemonSet now at ``new_image``."""
    before = old or daemonset(**ds_kw)
    after = with_image(before, new_image)
    r1, r2 = revision(before, 1), revision(after, 2)
    world = World(ds=after, nodes=nodes(count), revisions=[r1, r2])
    world.pods = [pod_on(before, r1, n["metadata"]["name"]) for n in world.nodes]
    return world


def deleted(decided: Plan) -> list[tuple[str, DeleteReason]]:
    return [(d.pod, d.reason) for d in decided.delete]


# ------------------------------------------------------------------------------ manage
def test_a_new_daemonset_creates_one_pod_per_node_in_name_order() -> None:
    ds = daemonset()
    world = World(ds=ds, nodes=[node("b"), node("a"), node("c")], revisions=[revision(ds, 1)])
    decided = world.plan()
    assert decided.phase == Phase.MANAGE
    assert decided.create == ("a", "b", "c")
    assert decided.counts == DaemonSetCounts(desired=3, unavailable=3)


def test_creations_are_capped_by_burst_replicas() -> None:
    ds = daemonset(burst=2)
    assert World(ds=ds, nodes=nodes(5), revisions=[revision(ds, 1)]).plan().create == ("n00", "n01")


def test_progressive_creation_leaves_partition_nodes_without_a_pod() -> None:
    ds = daemonset(
        rolling={"partition": 2}, annotations={"daemonset.kruise.io/progressive-create-pod": "true"}
    )
    assert World(ds=ds, nodes=nodes(5), revisions=[revision(ds, 1)]).plan().create == ("n00", "n01", "n02")
    plain = daemonset(rolling={"partition": 2})
    assert len(World(ds=plain, nodes=nodes(5), revisions=[revision(plain, 1)]).plan().create) == 5


def test_a_pod_on_a_node_that_stops_matching_is_deleted() -> None:
    ds = daemonset(node_selector={"color": "blue"})
    rev = revision(ds, 1)
    world = World(ds=ds, nodes=[node("a", {"color": "green"})], revisions=[rev], pods=[pod_on(ds, rev, "a")])
    decided = world.plan()
    assert deleted(decided) == [(world.pods[0]["metadata"]["name"], DeleteReason.MISSCHEDULED)]
    assert decided.counts == DaemonSetCounts(misscheduled=1)


def test_tainted_nodes_are_skipped_unless_tolerated() -> None:
    taint = {"key": "dedicated", "value": "infra", "effect": "NoSchedule"}
    plain = daemonset()
    tolerating = daemonset(tolerations=[{"key": "dedicated", "operator": "Equal", "value": "infra"}])
    for ds, expected in ((plain, ("a",)), (tolerating, ("a", "b"))):
        world = World(ds=ds, nodes=[node("a"), node("b", taints=[taint])], revisions=[revision(ds, 1)])
        assert world.plan().create == expected


def test_a_second_pod_on_a_node_is_deleted_without_surge() -> None:
    ds = daemonset()
    rev = revision(ds, 1)
    first = pod_on(ds, rev, "a", name="first", created=NOW - timedelta(minutes=5))
    second = pod_on(ds, rev, "a", name="second", created=NOW - timedelta(minutes=1))
    world = World(ds=ds, nodes=[node("a")], revisions=[rev], pods=[second, first])
    assert deleted(world.plan()) == [("second", DeleteReason.EXCESS)]


def test_an_unscheduled_pod_of_a_vanished_node_is_deleted_and_a_bound_one_left_to_pod_gc() -> None:
    ds = daemonset()
    rev = revision(ds, 1)
    pending = pod_on(ds, rev, "gone", name="pending", bound=False)
    bound = pod_on(ds, rev, "gone-too", name="bound")
    world = World(ds=ds, nodes=[node("a")], revisions=[rev], pods=[pending, bound, pod_on(ds, rev, "a")])
    decided = world.plan()
    assert deleted(decided) == [("pending", DeleteReason.NODE_GONE)]
    assert decided.counts.desired == decided.counts.current == 1


def test_a_failed_pod_is_deleted_then_held_by_its_backoff() -> None:
    ds = daemonset()
    rev = revision(ds, 1)
    failed = pod_on(ds, rev, "a", name="failed", phase="Failed", ready=False)
    world = World(ds=ds, nodes=[node("a")], revisions=[rev], pods=[failed])
    decided = world.plan()
    assert deleted(decided) == [("failed", DeleteReason.FAILED)]
    assert decided.backoff_next == ("a",)
    assert decided.warnings[0].reason == "FailedDaemonPod"
    assert decided.warnings[0].message == "Found failed daemon pod ns/failed on node a, will try to kill it"
    world.backoff = {"a": FailedBackoff(since=NOW - timedelta(seconds=1), delay=4)}
    held = world.plan()
    assert held.phase == Phase.IDLE and not held.delete
    assert held.requeue_after == pytest.approx(3)


def test_no_pod_is_created_beside_a_terminating_one_without_surge() -> None:
    ds = daemonset()
    rev = revision(ds, 1)
    leaving = pod_on(ds, rev, "a")
    leaving["metadata"]["deletionTimestamp"] = "2025-01-01T11:59:59Z"
    assert World(ds=ds, nodes=[node("a")], revisions=[rev], pods=[leaving]).plan().phase == Phase.IDLE


# ------------------------------------------------------------------------- rolling update
def test_standard_update_replaces_one_pod_at_a_time_from_the_last_node() -> None:
    world = updating(3)
    decided = world.plan()
    assert decided.phase == Phase.UPDATE
    assert [(d.pod.split("-")[1], d.reason) for d in decided.delete] == [("n02", DeleteReason.UPDATE)]
    world.apply(decided)
    assert world.plan().create == ("n02",), "the core loop refills the emptied node next"


def test_an_unavailable_old_pod_is_replaced_beyond_max_unavailable() -> None:
    """Upstream does not charge an old pod that is already unavailable to the budget."""
    world = updating(3)
    world.pods[0]["status"]["conditions"][0]["status"] = "False"
    assert {d.pod.split("-")[1] for d in world.plan().delete} == {"n00", "n02"}
    world.pods[1]["status"]["conditions"][0]["status"] = "False"
    assert {d.pod.split("-")[1] for d in world.plan().delete} == {"n00", "n01", "n02"}


def test_an_unavailable_new_pod_spends_the_budget() -> None:
    world = updating(3)
    world.step()
    world.step()  # n02 recreated at the new revision, not Ready
    fresh = world.live_on("n02")[0]
    fresh["status"]["conditions"][0]["status"] = "False"
    assert world.plan().phase == Phase.IDLE


def test_ten_percent_of_twenty_nodes_go_two_at_a_time() -> None:
    world = updating(20, rolling={"maxUnavailable": "10%"})
    assert len(world.plan().delete) == 2
    assert rolled(world).updated() == 20


@pytest.mark.parametrize(("partition", "left_old"), [(0, 0), (2, 2), ("40%", 2), (9, 5)])
def test_partition_keeps_that_many_pods_old(partition: Any, left_old: int) -> None:
    world = rolled(updating(5, rolling={"partition": partition}))
    assert world.updated() == 5 - left_old
    assert all(len(world.live_on(f"n{i:02d}")) == 1 for i in range(5))


def test_partition_with_a_node_selector_updates_only_matching_nodes() -> None:
    world = updating(5, rolling={"selector": {"matchLabels": {"canary": "true"}}, "partition": 1})
    for i in (1, 3, 4):
        world.nodes[i]["metadata"]["labels"]["canary"] = "true"
    rolled(world)
    wanted = hash_of(world.revisions[-1])
    updated_nodes = {
        p["spec"]["nodeName"]
        for p in world.pods
        if p["metadata"]["labels"]["controller-revision-hash"] == wanted
    }
    assert updated_nodes == {"n01", "n03", "n04"}, "partition 1 of 5 allows 4; the selector allows 3"


@pytest.mark.parametrize(
    ("candidates", "partition", "selector_nodes", "expected"),
    [
        pytest.param(["a", "b", "c"], 0, None, ["c", "b", "a"], id="descending by name"),
        pytest.param(["a", "b", "c"], 1, None, ["c", "b"], id="partition cuts the tail"),
        pytest.param(["a", "b", "c"], 3, None, [], id="partition of every node"),
        pytest.param(["a", "b", "c"], 0, {"a"}, ["a"], id="selector keeps matching nodes only"),
        pytest.param(
            ["a", "b", "c"], 2, {"a", "b"}, ["b"], id="partition counts all nodes, selector filters"
        ),
    ],
)
def test_nodes_to_update(
    candidates: list[str], partition: int, selector_nodes: set[str] | None, expected: list[str]
) -> None:
    ds = daemonset(rolling={"selector": {"matchLabels": {"pick": "1"}}} if selector_nodes is not None else {})
    old = revision(daemonset(image="nginx:0"), 1)
    pods = {n: [pod_on(ds, old, n)] for n in candidates}
    labels = {n: ({"pick": "1"} if selector_nodes and n in selector_nodes else {}) for n in candidates}
    assert nodes_to_update(ds, pods, labels, "new-hash", None, partition) == expected


def test_updated_and_emptied_nodes_count_against_the_partition_first() -> None:
    ds = daemonset()
    old, new = revision(daemonset(image="nginx:0"), 1), revision(ds, 2)
    pods = {"a": [pod_on(ds, old, "a")], "b": [pod_on(ds, new, "b")], "c": [], "d": [pod_on(ds, old, "d")]}
    assert nodes_to_update(ds, pods, {}, hash_of(new), None, 1) == ["b", "c", "d"]


def test_in_place_if_possible_updates_an_image_change_in_place() -> None:
    world = updating(3, rolling={"rollingUpdateType": "InPlaceIfPossible", "maxUnavailable": 3})
    decided = world.plan()
    assert not decided.delete
    assert [(c.spec.container_images, c.spec.revision) for c in decided.in_place] == [
        ({"main": "nginx:2"}, hash_of(world.revisions[-1]))
    ] * 3


def test_in_place_if_possible_recreates_anything_else() -> None:
    before = daemonset(rolling={"rollingUpdateType": "InPlaceIfPossible", "maxUnavailable": 3})
    after = copy.deepcopy(before)
    after["spec"]["template"]["spec"]["containers"][0]["env"] = [{"name": "foo", "value": "bar"}]
    r1, r2 = revision(before, 1), revision(after, 2)
    world = World(
        ds=after,
        nodes=nodes(2),
        revisions=[r1, r2],
        pods=[pod_on(before, r1, "n00"), pod_on(before, r1, "n01")],
    )
    decided = world.plan()
    assert not decided.in_place and len(decided.delete) == 2


def test_a_pod_without_the_in_place_gate_is_recreated() -> None:
    world = updating(1, old=daemonset(), rolling={})
    world.ds["spec"]["updateStrategy"]["rollingUpdate"]["rollingUpdateType"] = "InPlaceIfPossible"
    decided = world.plan()
    assert not decided.in_place and len(decided.delete) == 1


def test_surge_creates_beside_old_pods_then_deletes_them_once_available() -> None:
    world = updating(3, rolling={"maxSurge": 1, "maxUnavailable": 0}, min_ready=10)
    first = world.plan()
    assert first.create == ("n02",) and not first.delete
    world.apply(first)
    assert world.plan().phase == Phase.IDLE, "the new pod is not available for 10 s yet"
    assert 0 < (world.plan().requeue_after or 0) <= 10.1
    world.now += timedelta(seconds=11)
    second = world.plan()
    assert [d.reason for d in second.delete] == [DeleteReason.SURGE_REPLACED]
    assert second.phase == Phase.MANAGE


def test_surge_replaces_an_unavailable_old_pod_beyond_max_surge() -> None:
    world = updating(3, rolling={"maxSurge": 1, "maxUnavailable": 0})
    world.pods[0]["status"]["conditions"][0]["status"] = "False"
    assert set(world.plan().create) == {"n00", "n02"}


def test_pre_delete_hook_holds_a_pod_in_preparing_delete_until_released() -> None:
    hook = {"preDelete": {"labelsHandler": {"hold": "true"}}}
    before = daemonset(lifecycle=hook)
    before["spec"]["template"]["metadata"]["labels"]["hold"] = "true"
    world = updating(2, old=before)
    world.ds["spec"]["lifecycle"] = hook
    decided = world.plan()
    assert not decided.delete and [d.reason for d in decided.pre_delete] == [DeleteReason.UPDATE]
    world.apply(decided)
    assert world.plan().phase == Phase.IDLE, "held, and it counts as unavailable"
    held = next(p for p in world.pods if p["metadata"]["labels"].get("lifecycle.apps.kruise.io/state"))
    del held["metadata"]["labels"]["hold"]
    assert deleted(world.plan()) == [(held["metadata"]["name"], DeleteReason.HOOK_RELEASED)]


def test_paused_stops_updates_but_not_creations() -> None:
    world = updating(2, rolling={"paused": True})
    assert world.plan().phase == Phase.IDLE
    world.nodes.append(node("n99"))
    decided = world.plan()
    assert decided.create == ("n99",)
    world.apply(decided)
    added = world.live_on("n99")[0]
    assert added["metadata"]["labels"]["controller-revision-hash"] == hash_of(world.revisions[-1])


def test_on_delete_never_replaces_old_pods() -> None:
    world = updating(2, strategy_type="OnDelete")
    assert world.plan().phase == Phase.IDLE
    world.pods.pop()
    assert world.plan().create == ("n01",)


def test_a_node_added_mid_rollout_gets_the_new_revision_and_a_removed_one_does_not_stall() -> None:
    world = updating(4)
    world.step()
    world.nodes.append(node("n10"))
    world.nodes = [n for n in world.nodes if n["metadata"]["name"] != "n00"]
    rolled(world)
    wanted = hash_of(world.revisions[-1])
    live = {p["spec"]["nodeName"]: p["metadata"]["labels"]["controller-revision-hash"] for p in world.pods}
    assert {n: h for n, h in live.items() if n != "n00"} == {n: wanted for n in ("n01", "n02", "n03", "n10")}


def test_status_counts_ready_available_and_updated() -> None:
    world = updating(4, min_ready=30)
    world.pods[0]["status"]["conditions"][0]["status"] = "False"
    world.pods[1]["status"]["conditions"][0]["lastTransitionTime"] = (NOW - timedelta(seconds=5)).strftime(
        "%Y-%m-%dT%H:%M:%SZ"
    )
    new = new_pod(world.ds, hash_of(world.revisions[-1]), "n03", "fresh", NOW)
    assert new["metadata"]["labels"]["controller-revision-hash"] == hash_of(world.revisions[-1])
    counts = world.plan().counts
    assert counts == DaemonSetCounts(
        desired=4, current=4, misscheduled=0, ready=3, updated=0, available=2, unavailable=2
    )


def test_a_template_written_without_resources_still_updates_in_place() -> None:
    """The webhook stores templates as written: ``resources: {}`` on one revision and nothing on the
    next is no change, since revisions hold the template as Go encodes it
    (:func:`~kruise.workloads.revisions.go_encoded_template`), as upstream's ``getPatch``."""
    before = canonical(daemonset(rolling={"rollingUpdateType": "InPlaceIfPossible", "maxUnavailable": 2}))
    after = with_image(before, "nginx:2")
    del after["spec"]["template"]["spec"]["containers"][0]["resources"]
    after["spec"]["template"]["metadata"].pop("creationTimestamp")
    raw = World(ds=after, nodes=nodes(1), revisions=[revision(before, 1), revision(after, 2)])
    raw.pods = [pod_on(before, raw.revisions[0], "n00")]
    assert [c.spec.container_images for c in raw.plan().in_place] == [{"main": "nginx:2"}]
    assert hash_of(revision(after, 2)) == hash_of(revision(canonical(after), 2))
