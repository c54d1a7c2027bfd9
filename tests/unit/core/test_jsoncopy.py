"""json_copy: an equal, independent copy of decoded JSON, and deepcopy's answer outside what
orjson encodes."""

from __future__ import annotations

import copy
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from kruise.core.jsoncopy import json_copy

JSON_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**63), 2**64 - 1)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=30,
)


@given(JSON_VALUES)
def test_the_copy_equals_the_original_with_its_key_order(value: Any) -> None:
    copied = json_copy(value)
    assert copied == value
    assert repr(copied) == repr(value)  # same key order, same scalar types (1.0 stays a float)


def test_changing_the_copy_leaves_the_original_alone() -> None:
    pod = {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [{"name": "app", "env": []}]}}
    before = copy.deepcopy(pod)
    copied = json_copy(pod)
    copied["metadata"]["labels"]["app"] = "other"
    copied["spec"]["containers"][0]["env"].append({"name": "X"})
    copied["spec"]["containers"].append({"name": "sidecar"})
    assert pod == before


def test_what_orjson_cannot_encode_is_deep_copied() -> None:
    big = {"value": 2**70, "nested": [{"n": 2**70}]}
    non_str_key = {1: {"a": [1]}}
    for value in (big, non_str_key):
        copied = json_copy(value)
        assert copied == value and copied is not value
    copied_key = json_copy(non_str_key)
    copied_key[1]["a"].append(2)
    assert non_str_key == {1: {"a": [1]}}
