"""Upstream's replica allocators, table by table (the cases of upstream's ``allocator_test.go``,
carried over as data), plus the percentage rounding and the error texts."""

from __future__ import annotations

from typing import Any

import pytest

from kruise.workloads.api.uniteddeployment import UnitedDeploymentSpec
from kruise.workloads.uniteddeployment.allocator import (
    AllocationError,
    SubsetState,
    allocator_kind,
    next_replicas,
    parse_subset_replicas,
)

NONE = -1
"""In the tables: this bound is unset."""


def spec(
    replicas: int | None, subsets: list[dict[str, Any]], strategy: dict[str, Any] | None = None
) -> UnitedDeploymentSpec:
    topology: dict[str, Any] = {"subsets": subsets}
    if strategy is not None:
        topology["scheduleStrategy"] = strategy
    body: dict[str, Any] = {"selector": {"matchLabels": {"app": "x"}}, "topology": topology}
    if replicas is not None:
        body["replicas"] = replicas
    return UnitedDeploymentSpec.model_validate(body)


# --- specific allocator: (current replicas per subset, ud replicas, specified, expected) ------

SPECIFIC = [
    (
        "spread 5 over 1/4/2/2: the fullest takes the remainder",
        {"t1": 1, "t2": 4, "t3": 2, "t4": 2},
        5,
        {},
        {"t1": 1, "t2": 2, "t3": 1, "t4": 1},
    ),
    ("scale to 0", {"t1": 2}, 0, {}, {"t1": 0}),
    ("spread 17", {"t1": 1, "t2": 4, "t3": 2, "t4": 2}, 17, {}, {"t1": 4, "t2": 5, "t3": 4, "t4": 4}),
    ("spread 9", {"t1": 2, "t2": 4, "t3": 2, "t4": 2}, 9, {}, {"t1": 2, "t2": 3, "t3": 2, "t4": 2}),
    ("spread 19 over 0/10", {"t1": 0, "t2": 10}, 19, {}, {"t1": 9, "t2": 10}),
    ("spread 21 over 0/10", {"t1": 0, "t2": 10}, 21, {}, {"t1": 10, "t2": 11}),
    (
        "two specified, the rest spread",
        {"t1": 1, "t2": 4, "t3": 2, "t4": 2},
        27,
        {"t1": 4, "t3": 4},
        {"t1": 4, "t2": 10, "t3": 4, "t4": 9},
    ),
    (
        "specified take all, the others get 0",
        {"t1": 2, "t2": 4, "t3": 2, "t4": 2},
        8,
        {"t1": 4, "t3": 4},
        {"t1": 4, "t2": 0, "t3": 4, "t4": 0},
    ),
    (
        "all specified, sum matches",
        {"t1": 2, "t2": 4, "t3": 2, "t4": 2},
        16,
        {"t1": 4, "t2": 4, "t3": 4, "t4": 4},
        {"t1": 4, "t2": 4, "t3": 4, "t4": 4},
    ),
    (
        "three specified, one takes the rest",
        {"t1": 4, "t2": 2, "t3": 2, "t4": 2},
        10,
        {"t1": 1, "t2": 2, "t3": 3},
        {"t1": 1, "t2": 2, "t3": 3, "t4": 4},
    ),
    (
        "all specified",
        {"t1": 4, "t2": 2, "t3": 2, "t4": 2},
        10,
        {"t1": 1, "t2": 2, "t3": 3, "t4": 4},
        {"t1": 1, "t2": 2, "t3": 3, "t4": 4},
    ),
    (
        "no ud replicas, all specified",
        {"t1": 4, "t2": 2, "t3": 2, "t4": 2},
        None,
        {"t1": 1, "t2": 2, "t3": 3, "t4": 4},
        {"t1": 1, "t2": 2, "t3": 3, "t4": 4},
    ),
]


@pytest.mark.parametrize(
    ("current", "replicas", "specified", "expected"), [pytest.param(*row[1:], id=row[0]) for row in SPECIFIC]
)
def test_specific_allocator(
    current: dict[str, int], replicas: int | None, specified: dict[str, int], expected: dict[str, int]
) -> None:
    subsets = [{"name": n, **({"replicas": specified[n]} if n in specified else {})} for n in current]
    ud = spec(replicas, subsets)
    assert allocator_kind(ud) == "specific"
    assert next_replicas(ud, {n: SubsetState(replicas=r) for n, r in current.items()}) == expected


@pytest.mark.parametrize(
    ("replicas", "specified", "message"),
    [
        pytest.param(
            14,
            {"t1": 6, "t2": 6},
            "specified subsets' replica (12) is less than UnitedDeployment replica (14)",
            id="all specified, too few",
        ),
        pytest.param(
            14,
            {"t1": 10, "t2": 11},
            "specified subsets' replica (21) is greater than UnitedDeployment replica (14)",
            id="too many",
        ),
        pytest.param(
            None,
            {"t1": 1},
            "all subsets must be specified when UnitedDeployment replica is unspecified",
            id="no ud replicas, one unspecified",
        ),
    ],
)
def test_specific_allocator_refuses_what_does_not_fit(
    replicas: int | None, specified: dict[str, int], message: str
) -> None:
    subsets = [{"name": n, **({"replicas": specified[n]} if n in specified else {})} for n in ("t1", "t2")]
    with pytest.raises(AllocationError) as err:
        next_replicas(spec(replicas, subsets), {"t1": SubsetState(10), "t2": SubsetState(4)})
    assert str(err.value) == message


def test_percentages_round_half_up_against_ud_replicas() -> None:
    # upstream's sample: replicas 6, subset-a 1, subset-b 50%, subset-c the rest
    ud = spec(
        6,
        [{"name": "subset-a", "replicas": 1}, {"name": "subset-b", "replicas": "50%"}, {"name": "subset-c"}],
    )
    assert next_replicas(ud, {}) == {"subset-a": 1, "subset-b": 3, "subset-c": 2}
    assert parse_subset_replicas(5, "50%") == 3  # 2.5 rounds up
    assert parse_subset_replicas(5, "30%") == 2  # 1.5 rounds up
    assert parse_subset_replicas(5, "29%") == 1  # 1.45 rounds down
    assert parse_subset_replicas(7, "0%") == 0
    assert parse_subset_replicas(None, 3) == 3


@pytest.mark.parametrize(
    ("ud_replicas", "value", "message"),
    [
        (5, -1, "subset replicas (-1) should not be less than 0"),
        (None, "50%", "subsetReplicas (50%) should not be string when unitedDeployment replicas is empty"),
        (5, "5", "subset replicas (5) only support integer value or percentage value with a suffix '%'"),
        (5, "101%", "subset replicas (101%) should be in range [0, 100]"),
    ],
)
def test_parse_subset_replicas_errors(ud_replicas: int | None, value: int | str, message: str) -> None:
    with pytest.raises(AllocationError) as err:
        parse_subset_replicas(ud_replicas, value)
    assert str(err.value) == message


# --- min/max ("elastic") allocator ---------------------------------------------------------


def bounded(minimums: list[int], maximums: list[int]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for index, (low, high) in enumerate(zip(minimums, maximums, strict=True)):
        subset: dict[str, Any] = {"name": f"subset-{index}"}
        if low != NONE:
            subset["minReplicas"] = low
        if high != NONE:
            subset["maxReplicas"] = high
        out.append(subset)
    return out


def in_order(result: dict[str, int]) -> list[int]:
    return [result[f"subset-{i}"] for i in range(len(result))]


@pytest.mark.parametrize(
    ("replicas", "minimums", "maximums", "expected"),
    [
        pytest.param(
            10, [2, 2, 2, 2, 2], [5, 5, 5, 5, NONE], [2, 2, 2, 2, 2], id="sum of minimums == replicas"
        ),
        pytest.param(
            14, [2, 2, 2, 2, 2], [5, 5, 5, 5, NONE], [5, 3, 2, 2, 2], id="sum of minimums < replicas"
        ),
        pytest.param(
            5, [2, 2, 2, 2, 2], [5, 5, 5, 5, NONE], [2, 2, 1, 0, 0], id="sum of minimums > replicas"
        ),
        pytest.param(5, [2, 2], [4, NONE], [3, 2], id="upstream's doc example"),
    ],
)
def test_min_max_allocator(
    replicas: int, minimums: list[int], maximums: list[int], expected: list[int]
) -> None:
    ud = spec(replicas, bounded(minimums, maximums))
    assert allocator_kind(ud) == "minmax"
    assert in_order(next_replicas(ud, {})) == expected


def test_min_max_allocator_refuses_min_above_max() -> None:
    ud = spec(10, [{"name": "a", "minReplicas": "50%", "maxReplicas": 3}, {"name": "b"}])
    with pytest.raises(AllocationError) as err:
        next_replicas(ud, {})
    assert str(err.value) == "subset[0].maxReplicas(3) must be more than or equal to minReplicas(5)"
