"""The manifests under ``examples/`` can be applied together, as the README has a user do.

The README's walkthrough applies ``examples/demo/*.yaml`` in the namespace ``shop`` (its kubeconfig
context); the Helm section applies ``examples/cloneset-catalog.yaml`` (namespace ``shop`` too). A
top-level example may not name an object of the demo's, nor select its pods (``demo/rollout.yaml``
and ``demo/rollout-approval.yaml`` are alternatives of one Rollout, so the demo's files are not
checked against each other).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
WALKTHROUGH_NAMESPACE = "shop"  # README: kubectl config set-context --current --namespace=shop


def _objects() -> list[tuple[Path, dict[str, Any]]]:
    """The demo's objects first, then the top-level examples'."""
    paths = sorted((EXAMPLES / "demo").glob("*.yaml")) + sorted(EXAMPLES.glob("*.yaml"))
    return [(path, doc) for path in paths for doc in yaml.safe_load_all(path.read_text()) if doc]


def _clash(first: Path, second: Path) -> bool:
    """Two different files that are not both the demo's."""
    return first != second and not first.parent == second.parent == EXAMPLES / "demo"


def _key(doc: dict[str, Any]) -> tuple[str, str, str]:
    meta = doc["metadata"]
    namespace = "" if doc["kind"] == "Namespace" else meta.get("namespace", WALKTHROUGH_NAMESPACE)
    return doc["kind"], namespace, meta["name"]


def test_no_two_examples_name_the_same_object() -> None:
    seen: dict[tuple[str, str, str], Path] = {}
    clashes = []
    for path, doc in _objects():
        key = _key(doc)
        if key in seen and _clash(seen[key], path) and key[0] != "Namespace":
            clashes.append(f"{key} in {seen[key].name} and {path.name}")
        seen.setdefault(key, path)
    assert clashes == []


def test_no_two_example_workloads_select_the_same_pods() -> None:
    selectors: dict[tuple[str, tuple[tuple[str, str], ...]], Path] = {}
    clashes = []
    for path, doc in _objects():
        match = ((doc.get("spec") or {}).get("selector") or {}).get("matchLabels")
        if not match or doc["kind"] in ("Service",):
            continue
        key = (_key(doc)[1], tuple(sorted(match.items())))
        if key in selectors and _clash(selectors[key], path):
            name = f"{doc['kind']} {doc['metadata']['name']}"
            clashes.append(f"{name} in {path.name} and {selectors[key].name}")
        selectors.setdefault(key, path)
    assert clashes == []
