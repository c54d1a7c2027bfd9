"""The template diff has the shape of appscode/jsonpatch's CreatePatch (what InPlaceOnly quotes)."""

from __future__ import annotations

from typing import Any

import pytest

from kruise.workloads.admission.jsondiff import Operation, create_patch, normalize_for_diff

CONTAINER = {"name": "app", "image": "nginx:1", "env": [{"name": "A", "value": "1"}]}


def spec(**container: Any) -> dict[str, Any]:
    return {"containers": [{**CONTAINER, **container}], "dnsPolicy": "ClusterFirst"}


@pytest.mark.parametrize(
    ("old", "new", "patch"),
    [
        pytest.param(spec(), spec(), [], id="identical documents need nothing"),
        pytest.param(
            spec(),
            spec(image="nginx:2"),
            [("replace", "/containers/0/image", "nginx:2")],
            id="an image change is a replace at the container index",
        ),
        pytest.param(
            spec(),
            spec(env=[{"name": "A", "value": "2"}]),
            [("replace", "/containers/0/env/0/value", "2")],
            id="a changed env value inside a flat object array",
        ),
        pytest.param(
            spec(),
            spec(env=[{"name": "A", "value": "1"}, {"name": "B", "value": "2"}]),
            [("add", "/containers/0/env/1", {"name": "B", "value": "2"})],
            id="an appended env entry is an add at its index",
        ),
        pytest.param(
            spec(),
            {**spec(), "nodeName": "n1"},
            [("add", "/nodeName", "n1")],
            id="a new key is an add",
        ),
        pytest.param(
            spec(),
            {"containers": spec()["containers"]},
            [("remove", "/dnsPolicy", None)],
            id="a dropped key is a remove",
        ),
        pytest.param(
            {"a": 1},
            {"a": "1"},
            [("replace", "/a", "1")],
            id="a type change is a replace",
        ),
        pytest.param(
            {"a/b": 1, "c~d": 1},
            {"a/b": 2, "c~d": 2},
            [("replace", "/a~1b", 2), ("replace", "/c~0d", 2)],
            id="keys are escaped as JSON pointers",
        ),
        pytest.param(
            {"args": ["a", "b"]},
            {"args": ["a", "c", "b"]},
            [("add", "/args/1", "c")],
            id="scalar arrays use an edit script",
        ),
    ],
)
def test_create_patch(old: Any, new: Any, patch: list[Operation]) -> None:
    assert create_patch(old, new) == patch


def test_normalisation_hides_absent_versus_empty() -> None:
    old = normalize_for_diff({"containers": [{"name": "a", "env": []}], "nodeSelector": None})
    new = normalize_for_diff({"containers": [{"name": "a"}]})
    assert create_patch(old, new) == []
