"""kruise.core.webhook.patch: the webhook answer's JSON patch applies to the old document and
gives the new one, for any pair of JSON documents."""

from __future__ import annotations

import json
from typing import Any

import jsonpatch
from hypothesis import given, settings
from hypothesis import strategies as st

from kruise.core.webhook.patch import json_patch, pointer_token

KEYS = st.sampled_from(["a", "b", "a/b", "~c", "kruise.io/x", ""])
JSONS = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-3, 3)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=3),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(KEYS, inner, max_size=4),
    max_leaves=12,
)


def canonical(doc: Any) -> str:
    return json.dumps(doc, sort_keys=True)


@settings(max_examples=300, deadline=None)
@given(JSONS, JSONS)
def test_the_patch_turns_old_into_new(old: Any, new: Any) -> None:
    patched = jsonpatch.apply_patch(old, json_patch(old, new))
    assert canonical(patched) == canonical(new)


@given(JSONS)
def test_equal_documents_need_no_operation(doc: Any) -> None:
    assert json_patch(doc, json.loads(json.dumps(doc))) == []


def test_a_pod_injection_patch() -> None:
    old = {
        "metadata": {"name": "p", "annotations": {"x": "1"}},
        "spec": {"containers": [{"name": "app"}]},
    }
    new = {
        "metadata": {"name": "p", "annotations": {"x": "1", "kruise.io/sidecarset-hash": "{}"}},
        "spec": {"containers": [{"name": "sidecar"}, {"name": "app"}], "volumes": []},
    }
    assert json_patch(old, new) == [
        {"op": "add", "path": "/metadata/annotations/kruise.io~1sidecarset-hash", "value": "{}"},
        {"op": "replace", "path": "/spec/containers", "value": [{"name": "sidecar"}, {"name": "app"}]},
        {"op": "add", "path": "/spec/volumes", "value": []},
    ]


def test_a_number_of_another_type_is_replaced() -> None:
    assert json_patch({"a": 1}, {"a": 1.0}) == [{"op": "replace", "path": "/a", "value": 1.0}]
    assert json_patch({"a": 1}, {"a": True}) == [{"op": "replace", "path": "/a", "value": True}]


def test_pointer_tokens_escape_tilde_before_slash() -> None:
    assert pointer_token("~/") == "~0~1"


def test_arrays_keep_types_apart_and_compare_beyond_64_bit_ints() -> None:
    assert json_patch({"a": [False]}, {"a": [0]}) == [{"op": "replace", "path": "/a", "value": [0]}]
    assert json_patch({"a": [{"b": 1}]}, {"a": [{"b": 1.0}]}) == [
        {"op": "replace", "path": "/a", "value": [{"b": 1.0}]}
    ]
    assert json_patch({"a": [2**70, {"b": True}]}, {"a": [2**70, {"b": True}]}) == []
    assert json_patch({"a": [2**70]}, {"a": [2**70 + 1]}) == [
        {"op": "replace", "path": "/a", "value": [2**70 + 1]}
    ]
