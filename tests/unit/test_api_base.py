"""The API model kernel: int-or-percent arithmetic, camelCase aliases, strict scalars, round trips."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import Field, ValidationError

from kruise.core.api import (
    Int32,
    IntOrPercentError,
    IntOrString,
    KubeModel,
    LabelSelector,
    ObjectMeta,
    Time,
    WorkloadCondition,
    format_time,
    int_or_percent_value,
    scaled_value_from_int_or_percent,
)

# --- int-or-percent (intstr.GetScaledValueFromIntOrPercent) ---------------------------------


@pytest.mark.parametrize(
    ("value", "total", "round_up", "expected"),
    [
        pytest.param(5, 10, True, 5, id="an int is returned unchanged"),
        pytest.param(5, 10, False, 5, id="an int ignores the rounding direction"),
        pytest.param(0, 10, True, 0, id="zero int"),
        pytest.param(-3, 10, True, -3, id="a negative int passes through like Go"),
        pytest.param("20%", 10, True, 2, id="exact percentage"),
        pytest.param("25%", 10, True, 3, id="2.5 rounds up"),
        pytest.param("25%", 10, False, 2, id="2.5 rounds down"),
        pytest.param("1%", 10, True, 1, id="a tiny share rounds up to one"),
        pytest.param("1%", 10, False, 0, id="a tiny share rounds down to zero"),
        pytest.param("0%", 10, True, 0, id="zero percent"),
        pytest.param("100%", 7, False, 7, id="all of them"),
        pytest.param("150%", 10, True, 15, id="over one hundred percent scales past total"),
        pytest.param("20%", 0, True, 0, id="percentage of nothing"),
        pytest.param("80%", 10, True, 8, id="cloneset partition 80% of 10"),
    ],
)
def test_scaled_value(value: int | str, total: int, round_up: bool, expected: int) -> None:
    assert scaled_value_from_int_or_percent(value, total, round_up) == expected


@pytest.mark.parametrize(
    ("value", "message"),
    [
        pytest.param("5", "string is not a percentage", id="a quoted number is not a percentage"),
        pytest.param("abc", "string is not a percentage", id="a word"),
        pytest.param("", "string is not a percentage", id="empty string"),
        pytest.param("abc%", "invalid value", id="letters before the percent sign"),
        pytest.param("-10%", "invalid value", id="negative percentage"),
        pytest.param("1.5%", "invalid value", id="fractional percentage"),
        pytest.param(" 5%", "invalid value", id="leading space"),
        pytest.param("%", "invalid value", id="percent sign alone"),
    ],
)
def test_malformed_int_or_percent_is_an_error(value: str, message: str) -> None:
    with pytest.raises(IntOrPercentError, match=message) as err:
        scaled_value_from_int_or_percent(value, 10, True)
    assert str(err.value).startswith("invalid value for IntOrString: ")


def test_nil_int_or_percent_is_an_error() -> None:
    with pytest.raises(IntOrPercentError, match="nil value for IntOrString"):
        scaled_value_from_int_or_percent(None, 10, True)


def test_bool_is_neither_int_nor_percentage() -> None:
    with pytest.raises(IntOrPercentError):
        int_or_percent_value(True)


@given(st.integers(min_value=0, max_value=1000), st.integers(min_value=0, max_value=100_000))
def test_percent_rounding_brackets_the_exact_share(percent: int, total: int) -> None:
    up = scaled_value_from_int_or_percent(f"{percent}%", total, True)
    down = scaled_value_from_int_or_percent(f"{percent}%", total, False)
    exact = percent * total / 100
    assert down <= exact <= up
    assert up - down in (0, 1)
    assert (up == down) == ((percent * total) % 100 == 0)


# --- aliases, strict scalars and round trips ---------------------------------------------


class _Sample(KubeModel):
    """Sample model for the tests."""

    pods_to_delete: list[str] | None = None
    disable_pvc_reuse: bool | None = Field(default=None, alias="disablePVCReuse")
    replicas: Int32 | None = None
    max_unavailable: IntOrString | None = None
    since: Time | None = None
    free: dict[str, Any] | None = None


def test_camel_case_aliases_on_input_and_output() -> None:
    model = _Sample.from_dict({"podsToDelete": ["a"], "disablePVCReuse": True})
    assert model.pods_to_delete == ["a"]
    assert model.disable_pvc_reuse is True
    assert model.to_dict() == {"podsToDelete": ["a"], "disablePVCReuse": True}


def test_snake_case_names_are_accepted_too() -> None:
    assert _Sample(pods_to_delete=["x"]).to_dict() == {"podsToDelete": ["x"]}
    assert _Sample.from_dict({"pods_to_delete": ["x"]}).pods_to_delete == ["x"]


def test_unset_fields_are_omitted_like_go_omitempty() -> None:
    assert _Sample().to_dict() == {}


@pytest.mark.parametrize(
    "data",
    [
        pytest.param({"replicas": "10"}, id="int32 from a numeric string"),
        pytest.param({"replicas": "ten"}, id="int32 from a word"),
        pytest.param({"replicas": True}, id="int32 from a bool"),
        pytest.param({"replicas": 1.5}, id="int32 from a float"),
        pytest.param({"maxUnavailable": 2.5}, id="int-or-string from a float"),
        pytest.param({"maxUnavailable": False}, id="int-or-string from a bool"),
        pytest.param({"podsToDelete": "pod-a"}, id="list from a string"),
    ],
)
def test_wrong_scalar_types_are_rejected(data: dict[str, Any]) -> None:
    with pytest.raises(ValidationError):
        _Sample.from_dict(data)


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        pytest.param(3, 3, id="int stays int"),
        pytest.param("20%", "20%", id="percentage stays a string"),
        pytest.param("3", "3", id="a quoted number stays a string as in Go"),
    ],
)
def test_int_or_string_keeps_its_wire_type(raw: int | str, expected: int | str) -> None:
    model = _Sample.from_dict({"maxUnavailable": raw})
    assert model.max_unavailable == expected
    assert type(model.max_unavailable) is type(expected)
    assert model.to_dict() == {"maxUnavailable": raw}


def test_unknown_fields_and_free_form_nulls_survive_a_round_trip() -> None:
    data = {
        "podsToDelete": ["a"],
        "futureField": {"nested": [1, 2]},
        "free": {"metadata": {"creationTimestamp": None}, "spec": {}},
    }
    assert _Sample.from_dict(data).to_dict() == data


def test_times_are_rfc3339_utc_seconds() -> None:
    model = _Sample.from_dict({"since": "2024-05-01T14:00:00+02:00"})
    assert model.since == datetime(2024, 5, 1, 12, 0, tzinfo=UTC)
    assert model.to_dict() == {"since": "2024-05-01T12:00:00Z"}
    assert format_time(datetime(2024, 5, 1, 12, 0, 0, 123456)) == "2024-05-01T12:00:00Z"
    assert (
        format_time(datetime(2024, 5, 1, 9, 0, tzinfo=timezone(timedelta(hours=-3))))
        == "2024-05-01T12:00:00Z"
    )


def test_object_meta_round_trip_keeps_server_fields() -> None:
    data = {
        "name": "web",
        "namespace": "shop",
        "uid": "1f0c",
        "resourceVersion": "42",
        "generation": 3,
        "creationTimestamp": "2024-05-01T12:00:00Z",
        "labels": {"app": "web"},
        "annotations": {"a": "b"},
        "ownerReferences": [
            {
                "apiVersion": "apps.kruise.io/v1alpha1",
                "kind": "CloneSet",
                "name": "web",
                "uid": "u1",
                "controller": True,
            }
        ],
        "finalizers": ["x/y"],
        "managedFields": [{"manager": "kubectl", "operation": "Apply", "fieldsV1": {"f:spec": {}}}],
        "selfLink": "/legacy",
    }
    meta = ObjectMeta.from_dict(data)
    assert meta.owner_references is not None and meta.owner_references[0].controller is True
    assert meta.to_dict() == data


def test_label_selector_and_condition_round_trip() -> None:
    selector = {
        "matchLabels": {"app": "web"},
        "matchExpressions": [{"key": "tier", "operator": "In", "values": ["a"]}],
    }
    assert LabelSelector.from_dict(selector).to_dict() == selector
    condition = {
        "type": "FailedScale",
        "status": "True",
        "lastTransitionTime": "2024-05-01T12:00:00Z",
        "message": "boom",
    }
    assert WorkloadCondition.from_dict(condition).to_dict() == condition
