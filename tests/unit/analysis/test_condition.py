"""The condition language: Argo's documented conditions, expr-lang semantics, and safety."""

from __future__ import annotations

import math
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kruise.analysis.condition import ConditionError, evaluate_condition, parse_condition

NAN, INF = math.nan, math.inf
APDEX = {"service_apdex": {"label": None, "values": {"values": [{"value": "9950"}, {"value": "9910"}]}}}

TRUE_OR_FALSE = [
    # Argo's own docs and examples
    pytest.param("result[0] >= 0.95", [0.99], True, id="vector-first-element-passes"),
    pytest.param("result[0] >= 0.95", [0.5], False, id="vector-first-element-fails"),
    pytest.param("result[0] <= 0.01", [0.001, 0.5], True, id="influx-array-index-zero"),
    pytest.param("result >= 0.95", 0.97, True, id="scalar-threshold"),
    pytest.param("result == true", True, True, id="web-bool"),
    pytest.param("result == 'true'", True, False, id="web-bool-vs-string-is-not-equal"),
    pytest.param("result == 'It worked!'", "It worked!", True, id="web-string"),
    pytest.param("result.successRate >= 0.95", {"successRate": 0.96}, True, id="newrelic-field"),
    pytest.param("result.data.ok", {"data": {"ok": True}}, True, id="nested-field-bool"),
    pytest.param("isNaN(result) || result >= 0.95", NAN, True, id="docs-nan-is-success"),
    pytest.param("result >= 0.95", NAN, False, id="docs-nan-never-passes"),
    pytest.param("result < 0.95", NAN, False, id="nan-not-less-either"),
    pytest.param("isInf(result)", INF, True, id="docs-infinity"),
    pytest.param("result >= 0.95", INF, True, id="docs-infinity-passes-threshold"),
    pytest.param("len(result) == 0 || result[0] >= 0.95", [], True, id="docs-empty-vector-accepted"),
    pytest.param("len(result) > 0 && result[0] >= 0.95", [], False, id="docs-empty-vector-rejected"),
    pytest.param("len(result) > 0", [], False, id="len-of-empty"),
    pytest.param("default(result, 0) < 0.05", None, True, id="docs-datadog-default"),
    pytest.param("default(result, 0) < 0.05", 0.5, False, id="default-keeps-value"),
    pytest.param("isNil(result)", None, True, id="isnil"),
    pytest.param("all(result, # < 1000)", [10.0, 999.0], True, id="range-query-all-bare"),
    pytest.param("all(result, {# <= 0.01})", [0.02], False, id="all-braced"),
    pytest.param(
        "all(result.service_apdex.values.values, {asFloat(.value) >= 9900})", APDEX, True, id="apdex"
    ),
    pytest.param("any(result, # > 5) and none(result, # > 100)", [1, 6], True, id="any-none"),
    pytest.param("one(result, # == 2)", [1, 2, 3], True, id="one"),
    pytest.param("len(filter(result, # > 1)) == 2", [1, 2, 3], True, id="filter"),
    pytest.param("count(result, # > 1) == 2", [1, 2, 3], True, id="count"),
    pytest.param("map(result, # * 2)[1] == 4", [1, 2], True, id="map"),
    # Argo's evaluate_test.go cases
    pytest.param("result == true", True, True, id="argo-result-true"),
    pytest.param("result == false", True, False, id="argo-result-false"),
    pytest.param("2 in result", [2.0, 2.0], True, id="argo-in-operator"),
    pytest.param("result > 1", 5.0, True, id="argo-float64"),
    pytest.param("asInt(result) == 1", "1", True, id="argo-asint-string"),
    pytest.param("asInt(result) == 1", 1, True, id="argo-asint-int"),
    pytest.param("asInt(result) == 1", 1.123, True, id="argo-asint-truncates"),
    pytest.param("asFloat(result) == 1.1", "1.1", True, id="argo-asfloat-string"),
    pytest.param("asFloat(result) >= 1.1", "1.1", True, id="argo-asfloat-ge"),
    pytest.param("asFloat(result) <= 1.1", "1.1", True, id="argo-asfloat-le"),
    pytest.param("asFloat(result) == 1", 1, True, id="argo-asfloat-int"),
    # operators and precedence
    pytest.param("result == 1", 1.0, True, id="json-one-equals-int-one"),
    pytest.param("result != 1", True, True, id="bool-is-not-a-number"),
    pytest.param("not result", False, True, id="not"),
    pytest.param("!(result > 1)", 0.5, True, id="bang"),
    pytest.param("not result == false", True, True, id="not-binds-tighter-than-compare"),
    pytest.param("result > 1 and result < 3 or result == 10", 10, True, id="and-before-or"),
    pytest.param("result not in [1, 2]", 3, True, id="not-in"),
    pytest.param("'ok' in result", {"ok": 1}, True, id="in-map-keys"),
    pytest.param("result matches '^v[0-9]+$'", "v12", True, id="matches"),
    pytest.param("result contains 'err'", "an error", True, id="contains"),
    pytest.param("result startsWith 'a' and result endsWith 'c'", "abc", True, id="starts-ends"),
    pytest.param("1 + 2 * 3 == 7", None, True, id="arith-precedence"),
    pytest.param("2 ** 3 ** 2 == 512", None, True, id="power-right-assoc"),
    pytest.param("-2 ** 2 == -4", None, True, id="unary-minus-below-power"),
    pytest.param("7 / 2 == 3.5", None, True, id="float-division"),
    pytest.param("-7 % 3 == -1", None, True, id="go-remainder-sign"),
    pytest.param("1 / 0 > 1e300", None, True, id="division-by-zero-is-inf"),
    pytest.param("isNaN(0 / 0)", None, True, id="zero-by-zero-is-nan"),
    pytest.param("result ?? 3 == 3", None, True, id="nil-coalescing"),
    pytest.param("result > 1 ? result < 5 : false", 2, True, id="ternary"),
    pytest.param("result[-1] == 3", [1, 2, 3], True, id="negative-index"),
    pytest.param("result['a-b'] == 1", {"a-b": 1}, True, id="bracket-key"),
    pytest.param("result.missing == nil", {"a": 1}, True, id="missing-key-is-nil"),
    pytest.param("'a' + 'b' == \"ab\"", None, True, id="string-concat"),
    pytest.param("'it\\'s' == \"it's\"", None, True, id="escapes"),
    pytest.param("len('héllo') == 5 and upper('a') == 'A'", None, True, id="string-functions"),
    pytest.param("max(result) == 3 and min(1, 2) == 1 and abs(-2) == 2", [1, 3], True, id="min-max-abs"),
    pytest.param("notice == 1 or true", None, None, id="keyword-prefix-is-a-name"),
]


@pytest.mark.parametrize(("expression", "result", "expected"), TRUE_OR_FALSE)
def test_condition(expression: str, result: Any, expected: bool | None) -> None:
    if expected is None:
        with pytest.raises(ConditionError, match="unknown name notice"):
            evaluate_condition(expression, result)
        return
    assert evaluate_condition(expression, result) is expected


ERRORS = [
    pytest.param(
        "result[0] >= 0.95", [], "index out of range: 0 (array length is 0)", id="empty-vector-index"
    ),
    pytest.param("invalidVariable", True, "unknown name invalidVariable", id="argo-invalid-reference"),
    pytest.param("1", True, "expected bool, but got int", id="argo-non-bool"),
    pytest.param("result", 0.5, "expected bool, but got float64", id="non-bool-result"),
    pytest.param("asInt(result) == 1.1", "1.1", 'parsing "1.1": invalid syntax', id="argo-asint-error"),
    pytest.param(
        "asFloat(result) == 1.1", "NotANum", 'parsing "NotANum": invalid syntax', id="argo-asfloat-error"
    ),
    pytest.param("result < 'a'", 1.0, "mismatched types float64 and string", id="order-mismatch"),
    pytest.param("result < 1", None, "mismatched types <nil> and int", id="nil-ordering"),
    pytest.param("result.x", 1.0, "cannot fetch x from float64", id="field-of-number"),
    pytest.param("result >", 1, "unexpected", id="syntax-error"),
    pytest.param("", 1, "empty expression", id="empty"),
    pytest.param("nosuch(result)", 1, "unknown func nosuch", id="unknown-function"),
    pytest.param("result.__class__ == 1", 1, "cannot fetch __class__ from int", id="no-python-attributes"),
    pytest.param("isNaN(result)", [1.0], "isNaN() needs a number", id="isnan-of-vector"),
    pytest.param("result and true", 1, "expected bool", id="and-needs-bools"),
    pytest.param("# > 1", 1, "only allowed inside a closure", id="element-outside-closure"),
    pytest.param("1 % 0 == 0", None, "integer divide by zero", id="modulo-zero"),
    pytest.param("len(result) > 0", 3, "invalid argument for len", id="len-of-number"),
]


@pytest.mark.parametrize(("expression", "result", "message"), ERRORS)
def test_condition_error(expression: str, result: Any, message: str) -> None:
    with pytest.raises(ConditionError) as err:
        evaluate_condition(expression, result)
    assert message in str(err.value)


def test_parse_is_cached() -> None:
    assert parse_condition("result[0] >= 0.95") is parse_condition("result[0] >= 0.95")


def test_deep_nesting_is_an_error_not_a_crash() -> None:
    expression = "(" * 400 + "true" + ")" * 400
    try:
        assert evaluate_condition(expression, None) is True
    except ConditionError as err:
        assert "nested" in str(err) or "unexpected" in str(err)


finite = st.floats(allow_nan=False, allow_infinity=False, width=64)


@given(finite, finite)
def test_comparisons_agree_with_numbers(value: float, threshold: float) -> None:
    assert evaluate_condition(f"result >= {threshold!r}", value) is (value >= threshold)
    assert evaluate_condition(f"result < {threshold!r}", value) is (value < threshold)
    assert evaluate_condition(f"not (result >= {threshold!r})", value) is not (value >= threshold)


@given(finite)
def test_nan_fails_every_threshold(threshold: float) -> None:
    for op in ("<", "<=", ">", ">=", "=="):
        assert evaluate_condition(f"result {op} {threshold!r}", NAN) is False


@given(st.text(max_size=40), st.one_of(st.none(), finite, st.lists(finite, max_size=3), st.text(max_size=5)))
def test_any_text_is_true_false_or_a_condition_error(expression: str, result: Any) -> None:
    try:
        value = evaluate_condition(expression, result)
    except ConditionError:
        return
    assert isinstance(value, bool)
