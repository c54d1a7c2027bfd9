from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from datetime import timedelta
from typing import Any

import pytest
from cloneset_builders import NEW, NOW, OLD, pod
from hypothesis import given, settings
from hypothesis import strategies as st

from kruise.workloads.cloneset.diffs import Diffs
from kruise.workloads.cloneset.sorting import (
    choose_pods_to_delete,
    limit_update_indexes,
    sort_for_scale_in,
    sort_for_update,
)


def names(pods: Sequence[Mapping[str, Any]]) -> list[str]:
    return [p["metadata"]["name"] for p in pods]


HOUR = timedelta(hours=1)

# (deleted first, deleted later): every rung of the ActivePodsWithRanks ladder.
SCALE_IN_PAIRS = [
    pytest.param(pod(name="first", node=None), pod(name="later"), 0, id="unscheduled before scheduled"),
    pytest.param(pod(name="first", phase="Pending"), pod(name="later"), 0, id="Pending before Running"),
    pytest.param(
        pod(name="first", phase="Pending"), pod(name="later", phase="Unknown"), 0, id="Pending before Unknown"
    ),
    pytest.param(pod(name="first", phase="Unknown"), pod(name="later"), 0, id="Unknown before Running"),
    pytest.param(
        pod(name="first", ready_since=NOW - timedelta(seconds=5)),
        pod(name="later", ready_since=NOW - HOUR),
        30,
        id="not yet available before available",
    ),
    pytest.param(
        pod(name="first", state="Updating"), pod(name="later"), 0, id="non-Normal lifecycle is unavailable"
    ),
    pytest.param(pod(name="first", ready=False), pod(name="later"), 0, id="not ready before ready"),
    pytest.param(
        pod(name="first", annotations={"controller.kubernetes.io/pod-deletion-cost": "-1"}),
        pod(name="later"),
        0,
        id="lower pod-deletion-cost first",
    ),
    pytest.param(
        pod(name="first", ready_since=NOW - HOUR),
        pod(name="later", ready_since=NOW - 2 * HOUR),
        0,
        id="more recently ready first",
    ),
    pytest.param(pod(name="first", restarts=3), pod(name="later", restarts=1), 0, id="more restarts first"),
    pytest.param(pod(name="first", created=NOW - HOUR), pod(name="later"), 0, id="newer creation first"),
]


@pytest.mark.parametrize(("first", "later", "min_ready"), SCALE_IN_PAIRS)
def test_scale_in_ranking(first: dict[str, Any], later: dict[str, Any], min_ready: int) -> None:
    # separate nodes, so that the same-node ranker stays out of these pairwise checks
    first, later = copy.deepcopy(first), copy.deepcopy(later)
    if first["spec"].get("nodeName"):
        first["spec"]["nodeName"] = "node-1"
    later["spec"]["nodeName"] = "node-2"
    assert names(sort_for_scale_in([later, first], NOW, min_ready_seconds=min_ready)) == ["first", "later"]
    assert names(sort_for_scale_in([first, later], NOW, min_ready_seconds=min_ready)) == ["first", "later"]


def test_same_node_pods_are_deleted_before_lonely_ones() -> None:
    crowded_new = pod(name="crowded-new", node="node-a", created=NOW - HOUR)
    crowded_old = pod(name="crowded-old", node="node-a", created=NOW - 3 * HOUR)
    alone = pod(name="alone", node="node-b", created=NOW - 2 * HOUR)
    assert names(sort_for_scale_in([alone, crowded_old, crowded_new], NOW)) == [
        "crowded-new",
        "alone",
        "crowded-old",
    ]


def test_spread_constraints_prefer_the_crowded_zone() -> None:
    nodes = {"n1": {"zone": "a"}, "n2": {"zone": "a"}, "n3": {"zone": "b"}}
    a1 = pod(name="a1", node="n1", created=NOW - HOUR)
    a2 = pod(name="a2", node="n2", created=NOW - 3 * HOUR)
    b1 = pod(name="b1", node="n3", created=NOW - 2 * HOUR)
    ordered = sort_for_scale_in([b1, a2, a1], NOW, topology_keys=["zone"], node_labels=nodes)
    assert names(ordered) == ["a1", "b1", "a2"]


def test_choose_pods_to_delete_takes_old_revision_first() -> None:
    old = [pod(OLD, name="old-ready"), pod(OLD, name="old-unready", ready=False)]
    new = [pod(NEW, name="new-a"), pod(NEW, name="new-b", ready=False)]
    assert names(choose_pods_to_delete(1, 1, old, new, NOW)) == ["old-unready"]
    assert names(choose_pods_to_delete(3, 2, old, new, NOW)) == ["old-ready", "old-unready", "new-b"]
    assert names(choose_pods_to_delete(1, 0, old, new, NOW)) == ["new-b"]


def test_update_order_puts_unready_first_and_preparing_update_before_all() -> None:
    pods = [
        pod(OLD, name="ready"),
        pod(OLD, name="unready", ready=False),
        pod(OLD, name="prep", state="PreparingUpdate"),
    ]
    assert [pods[i]["metadata"]["name"] for i in sort_for_update(pods, [0, 1, 2], {})] == [
        "prep",
        "unready",
        "ready",
    ]


def test_weight_priority_then_higher_index_first() -> None:
    pods = [pod(OLD, labels={"tier": "gold"} if i % 2 else {}) for i in range(4)]
    strategy = {
        "priorityStrategy": {
            "weightPriority": [{"weight": 50, "matchSelector": {"matchLabels": {"tier": "gold"}}}]
        }
    }
    assert sort_for_update(pods, [0, 1, 2, 3], strategy) == [3, 1, 2, 0]


def test_order_priority_sorts_by_integer_suffix_and_unlabelled_pods_come_first() -> None:
    values = ["x-1", "x-10", None, "x-5"]
    pods = [pod(OLD, labels={"order": v} if v else {}) for v in values]
    strategy = {"priorityStrategy": {"orderPriority": [{"orderedKey": "order"}]}}
    assert sort_for_update(pods, [0, 1, 2, 3], strategy) == [2, 1, 3, 0]


def test_scatter_strategy_interleaves_matching_pods() -> None:
    pods = [pod(OLD, labels={"zone": "a" if i < 3 else "b"}) for i in range(6)]
    strategy = {"scatterStrategy": [{"key": "zone", "value": "a"}]}
    assert sort_for_update(pods, list(range(6)), strategy) == [0, 3, 4, 1, 5, 2]


def test_limit_update_cuts_to_update_num() -> None:
    pods = [pod(OLD) for _ in range(5)]
    diffs = Diffs(update_num=2, update_max_unavailable=5)
    assert limit_update_indexes(pods, [0, 1, 2, 3, 4], diffs, NEW, NOW) == [0, 1]


def test_limit_update_respects_max_unavailable() -> None:
    pods = [pod(OLD) for _ in range(5)]
    assert limit_update_indexes(
        pods, [0, 1, 2, 3, 4], Diffs(update_num=5, update_max_unavailable=1), NEW, NOW
    ) == [0]


def test_limit_update_lets_unavailable_old_pods_go_for_free() -> None:
    pods = [pod(OLD, ready=False), pod(OLD, ready=False), *[pod(OLD) for _ in range(3)]]
    diffs = Diffs(update_num=5, update_max_unavailable=3)
    assert limit_update_indexes(pods, [0, 1, 2, 3, 4], diffs, NEW, NOW) == [0, 1, 2]


def test_limit_update_waits_for_unavailable_target_revision_pods() -> None:
    pods = [pod(NEW, ready=False), pod(NEW, ready=False), *[pod(OLD) for _ in range(3)]]
    assert (
        limit_update_indexes(pods, [2, 3, 4], Diffs(update_num=3, update_max_unavailable=2), NEW, NOW) == []
    )


@settings(max_examples=100, deadline=None)
@given(
    shapes=st.lists(st.tuples(st.booleans(), st.booleans(), st.integers(0, 3)), min_size=1, max_size=10),
    update_num=st.integers(-10, 10),
    max_unavailable=st.integers(0, 10),
)
def test_limit_update_never_exceeds_its_budgets(
    shapes: list[tuple[bool, bool, int]], update_num: int, max_unavailable: int
) -> None:
    pods = [pod(NEW if new else OLD, ready=ready, restarts=r) for new, ready, r in shapes]
    candidates = sort_for_update(pods, [i for i, p in enumerate(pods) if shapes[i][0] is False], {})
    chosen = limit_update_indexes(
        pods, candidates, Diffs(update_num=update_num, update_max_unavailable=max_unavailable), NEW, NOW
    )
    assert chosen == candidates[: len(chosen)]
    assert len(chosen) <= abs(update_num)
    unavailable_after = sum(1 for i, p in enumerate(pods) if i in chosen or not shapes[i][1])
    assert unavailable_after <= max(max_unavailable, sum(1 for s in shapes if not s[1]))
