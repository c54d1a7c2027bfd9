"""Field errors print exactly like apimachinery's ``field.Error.Error()`` and ``ToAggregate()``."""

from __future__ import annotations

import pytest

from kruise.workloads.admission.fielderrors import (
    ErrorType,
    FieldError,
    GoSyntax,
    aggregate,
    duplicate,
    forbidden,
    go_int_or_string,
    go_label_selector,
    go_quote,
    go_string_map,
    go_string_slice,
    go_value_list,
    internal_error,
    invalid,
    not_found,
    not_supported,
    required,
    too_long,
)

CASES = [
    pytest.param(
        invalid("spec.updateStrategy.maxSurge", "50%", "can not use maxSurge with strategy type InPlaceOnly"),
        'spec.updateStrategy.maxSurge: Invalid value: "50%": '
        "can not use maxSurge with strategy type InPlaceOnly",
        id="a Go string value is quoted",
    ),
    pytest.param(
        invalid("spec.replicas", -1, "must be greater than or equal to 0"),
        "spec.replicas: Invalid value: -1: must be greater than or equal to 0",
        id="a number prints bare",
    ),
    pytest.param(
        invalid("spec.paused", True, "nope"),
        "spec.paused: Invalid value: true: nope",
        id="a bool prints bare",
    ),
    pytest.param(
        invalid("spec.maxUnavailable", None, "x"),
        'spec.maxUnavailable: Invalid value: "null": x',
        id="a nil pointer prints as the quoted word null",
    ),
    pytest.param(
        invalid("spec.selector", GoSyntax("v1.LabelSelector{}"), ""),
        "spec.selector: Invalid value: v1.LabelSelector{}",
        id="an empty detail adds nothing",
    ),
    pytest.param(
        required("spec.selector"),
        "spec.selector: Required value",
        id="required prints no value",
    ),
    pytest.param(
        required("spec.updateStrategy.scatterStrategy", "key should not be empty"),
        "spec.updateStrategy.scatterStrategy: Required value: key should not be empty",
        id="required with a detail",
    ),
    pytest.param(
        forbidden("spec", "updates are forbidden"),
        "spec: Forbidden: updates are forbidden",
        id="forbidden prints no value",
    ),
    pytest.param(
        not_supported("spec.template.spec.restartPolicy", "Never", ["Always"]),
        'spec.template.spec.restartPolicy: Unsupported value: "Never": supported values: "Always"',
        id="not supported lists the quoted valid values",
    ),
    pytest.param(
        duplicate("spec.template.spec.containers[1].name", "app"),
        'spec.template.spec.containers[1].name: Duplicate value: "app"',
        id="duplicate has no detail",
    ),
    pytest.param(
        not_found("spec.template.spec.containers[0].volumeMounts[0].name", "data"),
        'spec.template.spec.containers[0].volumeMounts[0].name: Not found: "data"',
        id="not found",
    ),
    pytest.param(
        too_long("metadata.annotations", 262144),
        "metadata.annotations: Too long: must have at most 262144 bytes",
        id="too long hides the value",
    ),
    pytest.param(
        internal_error("spec", "boom"),
        "spec: Internal error: boom",
        id="internal error",
    ),
]


@pytest.mark.parametrize(("error", "text"), CASES)
def test_error_text(error: FieldError, text: str) -> None:
    assert error.error() == text
    assert str(error) == text


def test_error_types_are_the_status_cause_reasons() -> None:
    assert invalid("a", 1, "").type is ErrorType.INVALID
    assert ErrorType.INVALID.value == "FieldValueInvalid"
    assert ErrorType.NOT_SUPPORTED.text == "Unsupported value"


@pytest.mark.parametrize(
    ("errors", "text"),
    [
        pytest.param([], "", id="no error is the empty string"),
        pytest.param([required("a")], "a: Required value", id="one error prints as is"),
        pytest.param(
            [required("a"), forbidden("b", "no")],
            "[a: Required value, b: Forbidden: no]",
            id="several are bracketed and comma separated",
        ),
        pytest.param(
            [required("a"), required("a"), forbidden("b", "no")],
            "[a: Required value, b: Forbidden: no]",
            id="identical messages are reported once",
        ),
        pytest.param([required("a"), required("a")], "a: Required value", id="duplicates of one collapse"),
        pytest.param(["plain error"], "plain error", id="plain strings are accepted"),
    ],
)
def test_aggregate(errors: list[FieldError | str], text: str) -> None:
    assert aggregate(errors) == text


@pytest.mark.parametrize(
    ("raw", "quoted"),
    [
        pytest.param("abc", '"abc"', id="plain"),
        pytest.param('say "hi"\\', '"say \\"hi\\"\\\\"', id="quotes and backslashes are escaped"),
        pytest.param("a\nb\t", '"a\\nb\\t"', id="control characters use Go escapes"),
        pytest.param("\x01", '"\\x01"', id="other control bytes use hex"),
        pytest.param("héllo", '"héllo"', id="printable unicode is kept"),
    ],
)
def test_go_quote(raw: str, quoted: str) -> None:
    assert go_quote(raw) == quoted


def test_go_syntax_renderings() -> None:
    assert go_string_map({"b": "2", "a": "1"}).text == 'map[string]string{"a":"1", "b":"2"}'
    assert go_string_map(None).text == "map[string]string(nil)"
    assert go_string_map({}).text == "map[string]string{}"
    assert go_string_slice(["x", "x"]).text == '[]string{"x", "x"}'
    assert go_string_slice(None).text == "[]string(nil)"
    assert go_value_list(["a", "b"]) == "[a b]"
    assert go_int_or_string("20%").text == 'intstr.IntOrString{Type:1, IntVal:0, StrVal:"20%"}'
    assert go_int_or_string(0).text == 'intstr.IntOrString{Type:0, IntVal:0, StrVal:""}'
    assert go_label_selector({}).text == (
        "v1.LabelSelector{MatchLabels:map[string]string(nil), "
        "MatchExpressions:[]v1.LabelSelectorRequirement(nil)}"
    )
    assert go_label_selector(
        {"matchExpressions": [{"key": "app", "operator": "In", "values": ["a"]}]}
    ).text == (
        "v1.LabelSelector{MatchLabels:map[string]string(nil), MatchExpressions:[]v1.LabelSelectorRequirement{"
        'v1.LabelSelectorRequirement{Key:"app", Operator:"In", Values:[]string{"a"}}}}'
    )


def test_plain_python_containers_render_like_go_maps_and_slices() -> None:
    assert invalid("x", {"k": "v"}, "d").error() == 'x: Invalid value: map[string]string{"k":"v"}: d'
    assert invalid("x", ["a"], "d").error() == 'x: Invalid value: []string{"a"}: d'
    assert invalid("x", {"k": 1}, "d").error() == 'x: Invalid value: {"k":1}: d'
