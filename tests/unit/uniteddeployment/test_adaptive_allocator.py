"""The Adaptive allocators: upstream's default-mode and reservation-mode tables, as data.

Columns follow upstream's tests: pods per subset, ``minReplicas``/``maxReplicas`` (``NONE``: unset),
pending pods (default mode; -1: no pod pending but the subset is still unschedulable) or reserved
pods (reservation mode; -1: none reserved but the subset is still marked unschedulable)."""

from __future__ import annotations

from typing import Any

import pytest

from kruise.workloads.uniteddeployment.allocator import SubsetState, allocator_kind, next_replicas
from tests.unit.uniteddeployment.test_allocator import NONE, bounded, in_order, spec

ADAPTIVE = {"type": "Adaptive"}
RESERVING = {"type": "Adaptive", "adaptive": {"reserveUnschedulablePods": True}}

DEFAULT_CASES = [
    # name, replicas, pods, min, max, pending, expected
    ("5 pending pods = maxReplicas", 10, [5, 5], [3, NONE], [5, NONE], [5, 0], [3, 7]),
    ("4 pending pods < maxReplicas", 10, [5, 5], [3, NONE], [5, NONE], [4, 0], [3, 7]),
    ("3 pending pods = minReplicas", 10, [5, 5], [3, NONE], [5, NONE], [3, 0], [3, 7]),
    ("2 pending pods < minReplicas", 10, [5, 5], [3, NONE], [5, NONE], [2, 0], [3, 7]),
    ("no pending pods", 10, [5, 5], [3, NONE], [5, NONE], [0, 0], [5, 5]),
    ("normal scale up 2 -> 4", 4, [1, 1], [1, NONE], [2, NONE], [0, 0], [2, 2]),
    ("normal scale down 4 -> 3", 3, [2, 2], [1, NONE], [2, NONE], [0, 0], [2, 1]),
    ("normal scale down 3 -> 1", 1, [2, 1], [1, NONE], [2, NONE], [0, 0], [1, 0]),
    ("scale down with min and pending", 3, [1, 3], [1, NONE], [2, NONE], [1, 0], [1, 2]),
    ("scale down with only pending", 3, [1, 3], [0, NONE], [2, NONE], [1, 0], [0, 3]),
    ("complex: start", 4, [0, 0, 0, 0], [0, 0, 0, 0], [2, NONE, NONE, NONE], [0, 0, 0, 0], [2, 2, 0, 0]),
    (
        "complex: subset-1 unschedulable",
        4,
        [2, 2, 0, 0],
        [0, 0, 0, 0],
        [2, NONE, NONE, NONE],
        [0, 2, 0, 0],
        [2, 0, 2, 0],
    ),
    (
        "complex: subset-2 unschedulable",
        4,
        [2, 0, 2, 0],
        [0, 0, 0, 0],
        [2, NONE, NONE, NONE],
        [0, -1, 2, 0],
        [2, 0, 0, 2],
    ),
    (
        "complex: scale up 4 -> 8 when unschedulable",
        8,
        [2, 0, 0, 2],
        [0, 0, 0, 0],
        [2, NONE, NONE, NONE],
        [0, -1, -1, 0],
        [2, 0, 0, 6],
    ),
    (
        "complex: scale up 4 -> 8 after recovered",
        8,
        [2, 0, 0, 2],
        [0, 0, 0, 0],
        [2, NONE, NONE, NONE],
        [0, 0, 0, 0],
        [2, 4, 0, 2],
    ),
    (
        "complex: scale down 8 -> 4",
        4,
        [2, 0, 0, 6],
        [0, 0, 0, 0],
        [NONE, NONE, NONE, NONE],
        [0, 0, 0, 0],
        [2, 0, 0, 2],
    ),
]


@pytest.mark.parametrize(
    ("replicas", "pods", "low", "high", "pending", "expected"),
    [pytest.param(*row[1:], id=row[0]) for row in DEFAULT_CASES],
)
def test_default_adaptive_allocator(
    replicas: int, pods: list[int], low: list[int], high: list[int], pending: list[int], expected: list[int]
) -> None:
    ud = spec(replicas, bounded(low, high), ADAPTIVE)
    assert allocator_kind(ud) == "adaptive"
    states = {
        f"subset-{i}": SubsetState(replicas=n, ready_replicas=n - max(0, p), unschedulable=p != 0)
        for i, (n, p) in enumerate(zip(pods, pending, strict=True))
    }
    assert in_order(next_replicas(ud, states)) == expected


RESERVED_CASES: list[tuple[Any, ...]] = [
    # name, replicas, min, max, current, reserved, expected
    ("4 subsets, start", 8, [1, 1, 1, 1], [2, 2, 2, NONE], [0, 0, 0, 0], [0, 0, 0, 0], [2, 2, 2, 2]),
    (
        "4 subsets, 1 and 2 unschedulable",
        8,
        [1, 1, 1, 1],
        [2, 2, 2, NONE],
        [2, 2, 2, 2],
        [0, 2, 2, 0],
        [2, 2, 2, 6],
    ),
    (
        "4 subsets, 1 and 2 start a pod each",
        8,
        [1, 1, 1, 1],
        [2, 2, 2, NONE],
        [2, 2, 2, 6],
        [0, 1, 1, 0],
        [2, 2, 2, 4],
    ),
    ("4 subsets, 1 recovered", 8, [1, 1, 1, 1], [2, 2, 2, NONE], [2, 2, 2, 4], [0, -1, 1, 0], [2, 2, 2, 3]),
    ("4 subsets, all recovered", 8, [1, 1, 1, 1], [2, 2, 2, NONE], [2, 2, 2, 3], [0, 0, -1, 0], [2, 2, 2, 2]),
    (
        "4 subsets, part started, scaled to 16",
        16,
        [2, 2, 2, 2],
        [4, 4, 4, NONE],
        [2, 2, 2, 6],
        [0, 1, 1, 0],
        [4, 2, 2, 10],
    ),
    (
        "4 subsets, part started, back to 8",
        8,
        [1, 1, 1, 1],
        [2, 2, 2, NONE],
        [4, 2, 2, 10],
        [0, 1, 1, 0],
        [2, 2, 2, 4],
    ),
    (
        "4 subsets, 1 and 2 started, at 16",
        16,
        [2, 2, 2, 2],
        [4, 4, 4, NONE],
        [4, 2, 2, 10],
        [0, -1, -1, 0],
        [4, 4, 4, 8],
    ),
    (
        "4 subsets, at 16, verifying new pods",
        16,
        [2, 2, 2, 2],
        [4, 4, 4, NONE],
        [4, 4, 4, 8],
        [0, 2, 2, 0],
        [4, 4, 4, 8],
    ),
    (
        "4 subsets, at 16, new pods started",
        16,
        [2, 2, 2, 2],
        [4, 4, 4, NONE],
        [4, 4, 4, 8],
        [0, -1, -1, 0],
        [4, 4, 4, 4],
    ),
    ("3 unbounded, start", 2, None, None, [0, 0, 0], [0, 0, 0], [2, 0, 0]),
    ("3 unbounded, subset-0 unschedulable", 2, None, None, [2, 0, 0], [2, 0, 0], [2, 2, 0]),
    ("3 unbounded, subset-1 unschedulable", 2, None, None, [2, 2, 0], [2, 2, 0], [2, 2, 2]),
    ("3 unbounded, 2 unschedulable, scale to 4", 4, None, None, [2, 2, 2], [2, 2, 0], [2, 2, 4]),
    ("3 unbounded, subset-1 recovered", 4, None, None, [2, 2, 4], [4, -1, 0], [2, 4, 2]),
    ("3 unbounded, subset-1 started, verifying", 4, None, None, [2, 4, 2], [4, 2, 0], [2, 4, 2]),
    ("3 unbounded, subset-1 started after recovery", 4, None, None, [2, 4, 2], [4, -1, 0], [2, 4, 0]),
    ("3 unbounded, one of subset-1 started", 2, None, None, [2, 2, 2], [2, 1, 0], [2, 2, 1]),
    ("3 unbounded, subset-0 recovered", 2, None, None, [2, 2, 1], [0, 1, 0], [2, 0, 0]),
    ("3 unbounded, scale 4 -> 2", 2, None, None, [2, 2, 0], [0, 0, 0], [2, 0, 0]),
    ("3 unbounded, scaled 2 -> 4, subset-1 recovered", 4, None, None, [2, 2, 4], [-1, 2, 0], [4, 2, 2]),
    ("3 subsets with min, start", 2, [1, 1, 0], None, [0, 0, 0], [0, 0, 0], [1, 1, 0]),
    ("3 subsets with min, two unschedulable", 2, [1, 1, 0], None, [1, 1, 0], [1, 1, 0], [1, 1, 2]),
    ("3 subsets with min, subset-0 recovered", 2, [1, 1, 0], None, [1, 1, 2], [-1, 1, 0], [2, 1, 1]),
    ("3 subsets with min, subset-0 verifying", 2, [1, 1, 0], None, [2, 1, 1], [1, 1, 0], [2, 1, 1]),
    ("3 subsets with min, subset-0 new pod started", 2, [1, 1, 0], None, [2, 1, 1], [0, 1, 0], [2, 1, 0]),
    ("3 subsets with min, subset-1 recovered", 2, [1, 1, 0], None, [2, 1, 0], [0, -1, 0], [1, 1, 0]),
]


@pytest.mark.parametrize(
    ("replicas", "low", "high", "current", "reserved", "expected"),
    [pytest.param(*row[1:], id=row[0]) for row in RESERVED_CASES],
)
def test_reservation_allocator(
    replicas: int,
    low: list[int] | None,
    high: list[int] | None,
    current: list[int],
    reserved: list[int],
    expected: list[int],
) -> None:
    count = len(current)
    subsets = bounded(low or [NONE] * count, high or [NONE] * count)
    subsets[-1].pop("maxReplicas", None)  # as upstream's harness: the last subset is unbounded
    ud = spec(replicas, subsets, RESERVING)
    assert allocator_kind(ud) == "reservation"
    states = {
        f"subset-{i}": SubsetState(
            replicas=cur,
            ready_replicas=cur - max(0, res),
            unschedulable=res > 0,
            marked_unschedulable=res != 0,
            reserved_pods=max(0, res),
        )
        for i, (cur, res) in enumerate(zip(current, reserved, strict=True))
    }
    assert in_order(next_replicas(ud, states)) == expected
