from __future__ import annotations

import pytest
from cloneset_builders import cloneset
from hypothesis import given
from hypothesis import strategies as st

from kruise.workloads.cloneset.arith import (
    MAX_INT32,
    IntOrPercentError,
    StrategyNumbers,
    calculate_partition,
    legacy_scaled_value,
    max_surge,
    max_unavailable,
    scale_max_unavailable,
    scaled_value,
    strategy_numbers,
)


@pytest.mark.parametrize(
    ("partition", "replicas", "expected"),
    [
        pytest.param(None, 5, 0, id="no partition updates everything"),
        pytest.param(3, 5, 3, id="integer partition is used as is"),
        pytest.param("99%", 4, 3, id="partition 99% of 4 keeps 3 old"),
        pytest.param("99%", 5, 4, id="partition 99% of 5 keeps 4 old"),
        pytest.param("100%", 4, 4, id="exactly 100% keeps every pod old"),
        pytest.param("50%", 5, 3, id="50% of 5 rounds up to 3"),
        pytest.param("1%", 10, 1, id="any positive percent keeps at least one old pod"),
        pytest.param("0%", 10, 0, id="0% keeps nothing"),
        pytest.param("99%", 1, 1, id="a single replica is not forced to update"),
        pytest.param(10, 5, 5, id="integer above replicas is clamped"),
        pytest.param(-1, 5, 0, id="negative integer is clamped to 0"),
        pytest.param("12.5%", 8, 1, id="percent is parsed as a float"),
        pytest.param("150%", 4, 4, id="percent above 100 is clamped to replicas"),
        pytest.param("50%", None, 1, id="unset replicas count as 1"),
        pytest.param(2, 0, 0, id="zero replicas clamp everything to 0"),
    ],
)
def test_calculate_partition(partition: int | str | None, replicas: int | None, expected: int) -> None:
    assert calculate_partition(partition, replicas) == expected


@pytest.mark.parametrize(
    "partition",
    [
        pytest.param("50", id="string without percent sign"),
        pytest.param("abc%", id="non numeric percent"),
        pytest.param("%", id="empty percent"),
        pytest.param("1e2%", id="exponent notation"),
        pytest.param(True, id="boolean is not an int"),
    ],
)
def test_calculate_partition_rejects_malformed(partition: object) -> None:
    with pytest.raises(IntOrPercentError):
        calculate_partition(partition, 4)  # type: ignore[arg-type]


def test_int_or_percent_error_is_a_value_error() -> None:
    assert issubclass(IntOrPercentError, ValueError)


@pytest.mark.parametrize(
    ("value", "total", "round_up", "expected"),
    [
        pytest.param("20%", 10, True, 2, id="20% of 10 is 2"),
        pytest.param("25%", 10, True, 3, id="25% of 10 rounds up to 3"),
        pytest.param("25%", 10, False, 2, id="25% of 10 rounds down to 2"),
        pytest.param(7, 10, True, 7, id="an int is returned unchanged"),
        pytest.param("-10%", 10, True, -1, id="a signed percent follows Go Atoi"),
    ],
)
def test_scaled_value(value: int | str, total: int, round_up: bool, expected: int) -> None:
    assert scaled_value(value, total, round_up=round_up) == expected


@pytest.mark.parametrize(
    "value",
    [
        pytest.param("20", id="missing percent sign is rejected by the strict scaler"),
        pytest.param("1.5%", id="fractional percent is rejected like Atoi"),
        pytest.param(" 5%", id="whitespace is rejected like Atoi"),
    ],
)
def test_scaled_value_rejects(value: str) -> None:
    with pytest.raises(IntOrPercentError):
        scaled_value(value, 10, round_up=True)


def test_legacy_scaler_treats_any_string_as_percent() -> None:
    assert legacy_scaled_value("20", 10, round_up=True) == 2
    assert legacy_scaled_value("20%", 10, round_up=True) == 2
    with pytest.raises(IntOrPercentError):
        legacy_scaled_value("x%", 10, round_up=True)


@pytest.mark.parametrize(
    ("value", "replicas", "surge", "expected"),
    [
        pytest.param(None, 10, 0, 2, id="default 20% of 10 is 2"),
        pytest.param(None, 9, 0, 2, id="default 20% of 9 rounds up to 2 without surge"),
        pytest.param(None, 9, 1, 1, id="default 20% of 9 rounds down to 1 with surge"),
        pytest.param("20%", 10, 3, 2, id="20% of 10 with surge is still 2"),
        pytest.param(3, 10, 1, 3, id="an integer maxUnavailable is used as is"),
        pytest.param(None, 1, 0, 1, id="default on one replica rounds up to 1"),
        pytest.param(None, 1, 1, 0, id="default on one replica with surge rounds down to 0"),
    ],
)
def test_max_unavailable(value: int | str | None, replicas: int, surge: int, expected: int) -> None:
    assert max_unavailable(value, replicas, max_surge=surge) == expected


@pytest.mark.parametrize(
    ("value", "replicas", "paused", "expected"),
    [
        pytest.param(None, 10, False, 0, id="maxSurge defaults to 0"),
        pytest.param("50%", 3, False, 2, id="maxSurge rounds up"),
        pytest.param(2, 10, False, 2, id="integer maxSurge is used as is"),
        pytest.param("50%", 10, True, 0, id="maxSurge while paused is 0"),
        pytest.param(3, 10, True, 0, id="integer maxSurge while paused is 0"),
    ],
)
def test_max_surge(value: int | str | None, replicas: int, paused: bool, expected: int) -> None:
    assert max_surge(value, replicas, paused=paused) == expected


def test_scale_max_unavailable_defaults_to_max_int32_and_rounds_up() -> None:
    assert scale_max_unavailable(None, 5) == MAX_INT32
    assert scale_max_unavailable("10%", 5) == 1


def test_strategy_numbers_resolve_a_cloneset() -> None:
    cs = cloneset(10, partition="30%", max_surge="10%", max_unavailable="25%", scale_max_unavailable=2)
    assert strategy_numbers(cs) == StrategyNumbers(
        replicas=10, partition=3, max_surge=1, max_unavailable=2, scale_max_unavailable=2
    )


def test_strategy_numbers_treat_malformed_values_as_zero_like_upstream() -> None:
    cs = cloneset(10, partition="oops", max_surge="x%", max_unavailable="y%")
    numbers = strategy_numbers(cs)
    assert (numbers.partition, numbers.max_surge, numbers.max_unavailable) == (0, 0, 0)


def test_strategy_numbers_paused_forces_surge_to_zero() -> None:
    cs = cloneset(10, max_surge=3, paused=True)
    numbers = strategy_numbers(cs)
    assert numbers.max_surge == 0
    assert numbers.max_unavailable == 2  # rounds up again once the surge is gone


@given(
    replicas=st.integers(min_value=0, max_value=5000),
    partition=st.one_of(
        st.integers(min_value=-100, max_value=10_000),
        st.integers(min_value=0, max_value=300).map(lambda p: f"{p}%"),
        st.floats(min_value=0, max_value=300, allow_nan=False).map(lambda p: f"{p:.3f}%"),
    ),
)
def test_partition_stays_within_replicas(replicas: int, partition: int | str) -> None:
    assert 0 <= calculate_partition(partition, replicas) <= replicas


@given(
    replicas=st.integers(min_value=0, max_value=5000),
    low=st.integers(min_value=0, max_value=200),
    high=st.integers(min_value=0, max_value=200),
)
def test_partition_is_monotone_in_the_percentage(replicas: int, low: int, high: int) -> None:
    low, high = min(low, high), max(low, high)
    assert calculate_partition(f"{low}%", replicas) <= calculate_partition(f"{high}%", replicas)


@given(replicas=st.integers(min_value=2, max_value=5000), percent=st.integers(min_value=0, max_value=99))
def test_partition_below_100_percent_always_updates_one_pod(replicas: int, percent: int) -> None:
    assert calculate_partition(f"{percent}%", replicas) <= replicas - 1


@given(replicas=st.integers(min_value=0, max_value=5000), percent=st.integers(min_value=0, max_value=100))
def test_surge_rounding_never_makes_max_unavailable_larger(replicas: int, percent: int) -> None:
    value = f"{percent}%"
    assert max_unavailable(value, replicas, max_surge=1) <= max_unavailable(value, replicas, max_surge=0)
