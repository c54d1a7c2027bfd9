"""The CloneSet webhooks' pure rules never raise, whatever JSON arrives.

The mutating webhook sees objects before the API server checks them against the schema, so any
field can hold any JSON value; a crash would answer "internal error" (and log a traceback)
instead of letting the schema name the field. Property: defaulting and the validators return,
and a wrongly typed object is left exactly as it came.
"""

from __future__ import annotations

import copy
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from kruise.workloads.admission import default_cloneset, validate_cloneset_create, validate_cloneset_update
from kruise.workloads.admission.cloneset import is_well_typed

from .builders import raw_cloneset

JSON_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**40), 2**40)
    | st.floats(allow_nan=False)
    | st.text(max_size=6),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=8,
)
PATHS = [
    ("spec",),
    ("spec", "replicas"),
    ("spec", "selector"),
    ("spec", "template"),
    ("spec", "template", "metadata"),
    ("spec", "template", "spec"),
    ("spec", "template", "spec", "containers"),
    ("spec", "template", "spec", "volumes"),
    ("spec", "updateStrategy"),
    ("spec", "updateStrategy", "type"),
    ("spec", "updateStrategy", "partition"),
    ("spec", "updateStrategy", "maxUnavailable"),
    ("spec", "scaleStrategy"),
    ("spec", "scaleStrategy", "podsToDelete"),
    ("spec", "volumeClaimTemplates"),
    ("spec", "lifecycle"),
]


def put(obj: dict[str, Any], path: tuple[str, ...], value: Any) -> dict[str, Any]:
    out = copy.deepcopy(obj)
    target = out
    for key in path[:-1]:
        if not isinstance(target.get(key), dict):
            target[key] = {}
        target = target[key]
    target[path[-1]] = value
    return out


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(PATHS), JSON_VALUES)
def test_no_input_makes_the_cloneset_rules_raise(path: tuple[str, ...], value: Any) -> None:
    obj = put(raw_cloneset(), path, value)
    if is_well_typed(obj):
        defaulted = default_cloneset(obj, old=None)
        validate_cloneset_create(defaulted)
        validate_cloneset_update(defaulted, raw_cloneset())
    else:
        before = copy.deepcopy(obj)
        default_cloneset(obj, old=None)  # the webhook skips it; still no crash
        assert obj == before, "input untouched"


def test_a_wrong_type_anywhere_is_seen() -> None:
    assert is_well_typed(raw_cloneset())
    assert not is_well_typed(put(raw_cloneset(), ("spec", "updateStrategy"), "x"))
    assert not is_well_typed(put(raw_cloneset(), ("spec", "template", "spec", "containers"), "x"))
    bad_image = raw_cloneset()
    bad_image["spec"]["template"]["spec"]["containers"][0]["image"] = 5
    assert not is_well_typed(bad_image)
    assert not is_well_typed(put(raw_cloneset(), ("spec", "volumeClaimTemplates"), [{"metadata": "x"}]))
