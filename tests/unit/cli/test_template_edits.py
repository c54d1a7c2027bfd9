"""``set image|env|resources``: the JSON patch of exactly the changed fields."""

from __future__ import annotations

from typing import Any

import pytest

from kruise.rollouts.cli.edits import EditError
from kruise.rollouts.cli.template_edits import (
    apply_ops,
    env_listing,
    env_patch,
    image_patch,
    parse_env,
    parse_pairs,
    parse_quantities,
    resources_patch,
)


def workload() -> dict[str, Any]:
    return {
        "kind": "CloneSet",
        "metadata": {"name": "web"},
        "spec": {
            "template": {
                "spec": {
                    "initContainers": [{"name": "init", "image": "busybox:1"}],
                    "containers": [
                        {"name": "main", "image": "web:1", "env": [{"name": "A", "value": "1"}]},
                        {"name": "sidecar", "image": "envoy:1"},
                    ],
                }
            }
        },
    }


def test_set_image_patches_only_the_images() -> None:
    ops = image_patch(workload(), {"main": "web:2"})
    assert ops == [{"op": "replace", "path": "/spec/template/spec/containers/0/image", "value": "web:2"}]
    every = apply_ops(workload(), image_patch(workload(), {"*": "x:9"}) or [])
    spec = every["spec"]["template"]["spec"]
    assert {c["image"] for c in spec["containers"] + spec["initContainers"]} == {"x:9"}
    assert image_patch(workload(), {"main": "web:1"}) is None, "no change, no patch"
    with pytest.raises(EditError, match='unable to find container named "nope"'):
        image_patch(workload(), {"nope": "x"})


def test_arguments_split_into_resources_and_pairs() -> None:
    assert parse_pairs(["cloneset/web", "main=web:2", "*=x"]) == (
        ["cloneset/web"],
        {"main": "web:2", "*": "x"},
    )
    assert parse_env(["A=2", "B-", "C="]) == ({"A": "2", "C": ""}, ["B"])


def test_set_env_adds_replaces_and_removes() -> None:
    ops = env_patch(workload(), {"A": "2", "B": "3"}, containers="main")
    assert ops is not None
    main = apply_ops(workload(), ops)["spec"]["template"]["spec"]["containers"][0]
    assert main["env"] == [{"name": "A", "value": "2"}, {"name": "B", "value": "3"}]
    removed = apply_ops(workload(), env_patch(workload(), {}, ["A"], containers="main") or [])
    assert removed["spec"]["template"]["spec"]["containers"][0]["env"] == []
    with pytest.raises(EditError, match=r"'A' already has a value \(1\), and --overwrite is false"):
        env_patch(workload(), {"A": "2"}, containers="main", overwrite=False)
    with pytest.raises(EditError, match="unable to find any container"):
        env_patch(workload(), {"A": "2"}, containers="db*")
    secret_ref = {"valueFrom": {"secretKeyRef": {"name": "s", "key": "k"}}}
    listed = env_listing(
        apply_ops(workload(), env_patch(workload(), {"K": secret_ref}, containers="main") or []), "main"
    )
    assert listed == "# cloneset web, container main\nA=1\n# K from secretKeyRef\n"


def test_set_resources_merges_requirements() -> None:
    ops = resources_patch(
        workload(), parse_quantities("cpu=200m,memory=512Mi"), {"cpu": "100m"}, containers="sidecar"
    )
    sidecar = apply_ops(workload(), ops or [])["spec"]["template"]["spec"]["containers"][1]
    assert sidecar["resources"] == {"limits": {"cpu": "200m", "memory": "512Mi"}, "requests": {"cpu": "100m"}}
    with pytest.raises(EditError, match="you must specify an update to requests or limits"):
        resources_patch(workload(), {}, {})
    with pytest.raises(EditError, match="invalid resource specification"):
        parse_quantities("cpu")
