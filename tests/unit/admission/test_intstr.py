"""The three int-or-percent parsers of the webhooks: values, rounding and Go's error texts."""

from __future__ import annotations

from typing import Any

import pytest

from kruise.workloads.admission.intstr import (
    IntOrStringError,
    get_scaled_float_percent,
    get_scaled_int_percent,
    get_scaled_value,
)

MIN_INT64 = -(2**63)


@pytest.mark.parametrize(
    ("value", "total", "round_up", "expected"),
    [
        pytest.param("33.5%", 10, True, 4, id="33.5% of 10 rounds up to 4 (ceil 3.35)"),
        pytest.param("33.5%", 10, False, 3, id="and down to 3"),
        pytest.param("33.3%", 3, True, 1, id="33.3% of 3 is just under one pod, so 1"),
        pytest.param("100%", 7, True, 7, id="a whole percentage"),
        pytest.param("0.1%", 1000, True, 1, id="a tenth of a percent of 1000"),
        pytest.param(".5%", 400, True, 2, id="a leading dot"),
        pytest.param("5.%", 100, True, 5, id="a trailing dot"),
        pytest.param("2.5e1%", 8, True, 2, id="an exponent"),
        pytest.param("0x1p4%", 100, True, 16, id="a hexadecimal float, as ParseFloat reads it"),
        pytest.param("-10%", 10, True, -1, id="a negative percentage (refused by the caller)"),
        pytest.param("NaN%", 10, True, MIN_INT64, id="NaN converts to MinInt64 like Go on amd64"),
        pytest.param("+Inf%", 10, True, MIN_INT64, id="infinity too"),
        pytest.param("1e300%", 10, True, MIN_INT64, id="so does a float beyond int64"),
        pytest.param(7, 10, True, 7, id="an int is returned unchanged"),
    ],
)
def test_float_percentages_scale_like_kruise_util(
    value: Any, total: int, round_up: bool, expected: int
) -> None:
    assert get_scaled_float_percent(value, total, round_up) == expected


@pytest.mark.parametrize(
    ("value", "message"),
    [
        pytest.param(None, "nil value for IntOrString", id="nil"),
        pytest.param("5", "invalid type: string is not a percentage", id="no percent sign"),
        pytest.param("5%%", 'strconv.ParseFloat: parsing "5%": invalid syntax', id="two percent signs"),
        pytest.param(" 5%", 'strconv.ParseFloat: parsing " 5": invalid syntax', id="whitespace"),
        pytest.param("1_0%", 'strconv.ParseFloat: parsing "1_0": invalid syntax', id="underscores"),
        pytest.param("0x10%", 'strconv.ParseFloat: parsing "0x10": invalid syntax', id="hex needs p"),
        pytest.param("1e400%", 'strconv.ParseFloat: parsing "1e400": value out of range', id="too large"),
        pytest.param(1.5, "invalid type: neither int nor percentage", id="a JSON float"),
        pytest.param(True, "invalid type: neither int nor percentage", id="a boolean"),
    ],
)
def test_float_percentage_errors_carry_no_int_or_string_prefix(value: Any, message: str) -> None:
    with pytest.raises(IntOrStringError) as err:
        get_scaled_float_percent(value, 10, True)
    assert str(err.value) == message


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        pytest.param("20%", 2, id="an integer percentage"),
        pytest.param("25%", 3, id="rounded up"),
        pytest.param(4, 4, id="an int"),
    ],
)
def test_integer_percentages(value: Any, expected: int) -> None:
    assert get_scaled_int_percent(value, 10, True) == expected
    assert get_scaled_value(value, 10, True) == expected


@pytest.mark.parametrize(
    ("value", "mine", "apimachinery"),
    [
        pytest.param(
            "12.5%",
            'strconv.Atoi: parsing "12.5": invalid syntax',
            'invalid value for IntOrString: invalid value "12.5%": '
            'strconv.Atoi: parsing "12.5": invalid syntax',
            id="a fraction",
        ),
        pytest.param(
            "5%%",
            'strconv.Atoi: parsing "5%": invalid syntax',
            'invalid value for IntOrString: invalid value "5%%": strconv.Atoi: parsing "5%": invalid syntax',
            id="two percent signs",
        ),
        pytest.param(
            "5",
            "invalid type: string is not a percentage",
            "invalid value for IntOrString: invalid type: string is not a percentage",
            id="no percent sign",
        ),
    ],
)
def test_integer_percentage_errors_with_and_without_the_apimachinery_prefix(
    value: str, mine: str, apimachinery: str
) -> None:
    with pytest.raises(IntOrStringError) as err:
        get_scaled_int_percent(value, 10, True)
    assert str(err.value) == mine
    with pytest.raises(IntOrStringError) as err:
        get_scaled_value(value, 10, True)
    assert str(err.value) == apimachinery
