"""Surge and unavailability arithmetic, partition and burst, as OpenKruise's DaemonSet computes them."""

from __future__ import annotations

from typing import Any

import pytest

from kruise.workloads.daemonset.strategy import (
    RollingNumbers,
    StrategyError,
    allow_surge,
    burst_replicas,
    partition_count,
    rolling_numbers,
)
from tests.unit.daemonset.builders import daemonset


@pytest.mark.parametrize(
    ("rolling", "desired", "expected"),
    [
        pytest.param({}, 10, RollingNumbers(0, 1), id="defaults: one at a time"),
        pytest.param({"maxUnavailable": "10%"}, 100, RollingNumbers(0, 10), id="10% of 100"),
        pytest.param({"maxUnavailable": "10%"}, 5, RollingNumbers(0, 1), id="10% of 5 rounds up"),
        pytest.param({"maxUnavailable": "34%"}, 3, RollingNumbers(0, 2), id="34% of 3 rounds up to 2"),
        pytest.param(
            {"maxUnavailable": 0, "maxSurge": "30%"}, 10, RollingNumbers(3, 0), id="surge 30% of 10"
        ),
        pytest.param({"maxUnavailable": 0, "maxSurge": "1%"}, 10, RollingNumbers(1, 0), id="surge rounds up"),
        pytest.param(
            {"maxUnavailable": 0, "maxSurge": 0}, 4, RollingNumbers(0, 1), id="both zero: 1 unavailable"
        ),
        pytest.param(
            {"maxUnavailable": "0%", "maxSurge": "0%"}, 0, RollingNumbers(0, 0), id="no nodes: nothing"
        ),
        pytest.param(
            {"maxUnavailable": 5}, 3, RollingNumbers(0, 5), id="an int is not capped by the node count"
        ),
    ],
)
def test_rolling_numbers(rolling: dict[str, Any], desired: int, expected: RollingNumbers) -> None:
    assert rolling_numbers(daemonset(rolling=rolling), desired) == expected


def test_on_delete_has_no_rolling_numbers_but_one_unavailable() -> None:
    assert rolling_numbers(daemonset(strategy_type="OnDelete"), 3) == RollingNumbers(0, 1)


def test_a_malformed_number_is_an_error() -> None:
    with pytest.raises(StrategyError, match="MaxSurge"):
        rolling_numbers(daemonset(rolling={"maxSurge": "five"}), 3)


@pytest.mark.parametrize(
    ("rolling", "expected"),
    [
        ({"maxSurge": 1, "maxUnavailable": 0}, True),
        ({"maxSurge": "1%"}, True),
        ({"maxSurge": 0}, False),
        ({}, False),
    ],
)
def test_allow_surge_is_surge_of_one_node(rolling: dict[str, Any], expected: bool) -> None:
    assert allow_surge(daemonset(rolling={"maxSurge": 0, **rolling})) is expected


@pytest.mark.parametrize(
    ("partition", "desired", "expected"),
    [
        pytest.param(None, 5, 0, id="unset"),
        pytest.param(3, 5, 3, id="an int"),
        pytest.param("50%", 5, 2, id="50% of 5 rounds down"),
        pytest.param("100%", 5, 5, id="all"),
        pytest.param("x", 5, 0, id="malformed counts as none"),
        pytest.param(9, 5, 9, id="above the nodes (nothing to update)"),
    ],
)
def test_partition(partition: Any, desired: int, expected: int) -> None:
    ds = daemonset(rolling={} if partition is None else {"partition": partition})
    assert partition_count(ds, desired) == expected


@pytest.mark.parametrize(("burst", "desired", "expected"), [(None, 10, 250), (2, 10, 2), ("50%", 9, 4)])
def test_burst_replicas(burst: Any, desired: int, expected: int) -> None:
    assert burst_replicas(daemonset(burst=burst), desired) == expected
