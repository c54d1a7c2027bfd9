"""Field ownership from managedFields (core/ownership.py): leaves, paths, nearest owned ancestor."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kruise.core.ownership import Path, dotted, leaves, owns, value_at, writer

ROUTE: dict[str, Any] = {
    "spec": {
        "rules": [
            {
                "backendRefs": [
                    {"group": "", "kind": "Service", "name": "web", "port": 80, "weight": 95},
                    {"group": "", "kind": "Service", "name": "web-canary", "port": 80, "weight": 5},
                ]
            }
        ]
    },
    "metadata": {"annotations": {"nginx.ingress.kubernetes.io/canary-weight": "5"}},
}
CANARY_WEIGHT: Path = ("spec", "rules", 0, "backendRefs", 1, "weight")
ANNOTATION: Path = ("metadata", "annotations", "nginx.ingress.kubernetes.io/canary-weight")
ATOMIC_RULES = {"f:spec": {"f:parentRefs": {}, "f:rules": {}}}
POD = {"spec": {"containers": [{"name": "web", "image": "v1"}, {"name": "log", "image": "v2"}]}}


def test_leaves_name_scalars_and_empty_containers_by_path() -> None:
    found = leaves({"a": {"b": [1, {"c": None}], "d": {}, "e": []}})
    assert found == {("a", "b", 0): 1, ("a", "b", 1, "c"): None, ("a", "d"): {}, ("a", "e"): []}
    assert leaves(7, ("x",)) == {("x",): 7}


def test_value_at_reads_keys_and_indices_and_misses_as_none() -> None:
    assert value_at(ROUTE, CANARY_WEIGHT) == 5
    assert value_at(ROUTE, ("spec", "rules", 3, "x")) is None
    assert value_at(ROUTE, ("spec", "rules", "0")) is None  # a key where a list is
    assert value_at(ROUTE, ("spec", "rules", 0, "backendRefs", 0, "weight", "x")) is None


def test_dotted_brackets_indices_and_keys_with_dots() -> None:
    assert dotted(CANARY_WEIGHT) == "spec.rules[0].backendRefs[1].weight"
    assert dotted(ANNOTATION) == "metadata.annotations[nginx.ingress.kubernetes.io/canary-weight]"


@pytest.mark.parametrize(
    ("fields", "path", "owned"),
    [
        pytest.param(ATOMIC_RULES, CANARY_WEIGHT, True, id="atomic-list-owned-whole-by-its-field"),
        pytest.param(ATOMIC_RULES, ("spec", "hostnames"), False, id="a-sibling-field-not-owned"),
        pytest.param({"f:spec": {"f:rules": {".": {}, "i:0": {}}}}, CANARY_WEIGHT, True, id="indexed-item"),
        pytest.param({"f:metadata": {"f:annotations": {}}}, ANNOTATION, True, id="whole-map-leaf"),
        pytest.param(
            {"f:metadata": {"f:annotations": {".": {}, "f:other": {}}}}, ANNOTATION, False, id="other-key"
        ),
        pytest.param(
            {"f:metadata": {"f:annotations": {"f:nginx.ingress.kubernetes.io/canary-weight": {}}}},
            ANNOTATION,
            True,
            id="granular-map-key",
        ),
        pytest.param({}, CANARY_WEIGHT, False, id="empty-set-owns-nothing"),
        pytest.param(None, CANARY_WEIGHT, False, id="no-set"),
    ],
)
def test_owns_by_the_nearest_owned_ancestor(fields: Any, path: Path, owned: bool) -> None:
    assert owns(fields, ROUTE, path) is owned


def test_associative_list_items_are_matched_by_their_key_fields() -> None:
    web = {"f:spec": {"f:containers": {'k:{"name":"web"}': {".": {}, "f:image": {}}}}}
    assert owns(web, POD, ("spec", "containers", 0, "image"))
    assert not owns(web, POD, ("spec", "containers", 1, "image"))  # the "log" container is not theirs
    values = {"f:spec": {"f:finalizers": {'v:"a"': {}}}}
    assert owns(values, {"spec": {"finalizers": ["b", "a"]}}, ("spec", "finalizers", 1))
    assert not owns(values, {"spec": {"finalizers": ["b", "a"]}}, ("spec", "finalizers", 0))


def test_a_removed_item_belongs_to_whoever_manages_items_of_its_list() -> None:
    web = {"f:spec": {"f:containers": {'k:{"name":"web"}': {".": {}}}}}
    assert owns(web, POD, ("spec", "containers", 5, "image"))
    assert not owns({"f:spec": {"f:containers": {".": {}}}}, POD, ("spec", "containers", 5, "image"))


def entry(manager: str, time: str, fields: Any) -> dict[str, Any]:
    return {"manager": manager, "operation": "Apply", "time": time, "fieldsV1": fields}


def test_writer_is_the_latest_other_manager_owning_the_path() -> None:
    managed = [
        entry("kruise-manager", "2026-01-01T00:00:09Z", ATOMIC_RULES),
        entry("kubectl-edit", "2026-01-01T00:00:01Z", ATOMIC_RULES),
        entry("argocd-controller", "2026-01-01T00:00:05Z", ATOMIC_RULES),
    ]
    assert writer(managed, ROUTE, CANARY_WEIGHT, "kruise-manager") == "argocd-controller"
    assert writer(managed[:1], ROUTE, CANARY_WEIGHT, "kruise-manager") is None


JSONS = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=3),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text("abc./", max_size=3), inner, max_size=3)
    ),
    max_leaves=12,
)


def fields_of(value: Any) -> Any:
    """The ``fieldsV1`` a manager applying all of ``value`` would own (lists by index)."""
    if isinstance(value, dict) and value:
        return {f"f:{k}": fields_of(v) for k, v in value.items()}
    if isinstance(value, list) and value:
        return {f"i:{i}": fields_of(v) for i, v in enumerate(value)}
    return {}


@given(JSONS)
def test_every_leaf_reads_back_and_is_owned_by_who_applied_everything(value: Any) -> None:
    obj = {"spec": value}
    applied = fields_of(obj)
    for path, leaf in leaves(obj).items():
        assert value_at(obj, path) == leaf
        assert owns(applied, obj, path), (path, json.dumps(applied))
