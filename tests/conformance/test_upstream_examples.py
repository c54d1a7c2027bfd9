"""Upstream's own example manifests are accepted by our CRDs and webhooks (DESIGN §6).

The corpus is ``shared/upstream-examples`` (manifests written by OpenKruise,
Kruise Rollouts and Argo Rollouts). Each one whose kind this product serves is
sent to the real API server as a server-side dry-run create.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from kruise.core.kube import KubeClient, Resource
from kruise.rollouts.crds import ALL_CRDS
from tests.support.compare import missing

CORPUS = Path(__file__).resolve().parents[3] / "shared" / "upstream-examples"
SERVED: dict[tuple[str, str], Resource] = {
    (f"{spec.group}/{v.name}", spec.kind): Resource(
        spec.group, v.name, spec.plural, spec.kind, spec.scope == "Namespaced"
    )
    for spec in ALL_CRDS
    for v in spec.versions
}


def _examples() -> list[Any]:
    if not CORPUS.is_dir():
        return [pytest.param(None, id="corpus-missing", marks=pytest.mark.skip(reason=f"{CORPUS} not found"))]
    params = []
    for path in sorted(CORPUS.rglob("*.yaml")):
        doc = yaml.safe_load(path.read_text())
        if (doc.get("apiVersion"), doc.get("kind")) in SERVED:
            params.append(pytest.param(path, id=str(path.relative_to(CORPUS))))
    return params


@pytest.mark.parametrize("path", _examples())
async def test_upstream_example_is_accepted(kube: KubeClient, namespace: str, path: Path) -> None:
    doc = yaml.safe_load(path.read_text())
    res = SERVED[(doc["apiVersion"], doc["kind"])]
    doc["metadata"].pop("namespace", None)
    created = await kube.create(res, doc, namespace if res.namespaced else None, dry_run=True)
    assert created["metadata"]["name"] == doc["metadata"]["name"]
    # nothing the example sets is pruned (no field is unknown to our schema)
    assert missing(doc["spec"], created["spec"]) == []
