"""Argo Rollouts' analysis manifests port by changing only their apiVersion (issue #5, DESIGN §6).

Every ``AnalysisTemplate``, ``ClusterAnalysisTemplate`` and ``AnalysisRun`` that Argo Rollouts
ships in its docs and examples (``shared/upstream-examples/argo-rollouts``) is sent to the real
API server as a server-side dry-run create with ``apiVersion: rollouts.kruise.io/v1alpha1`` and
nothing else changed. Our CRDs must accept it and keep every field it sets, except where the
corpus README's static check shows that Argo's own CRD rejects it too (Kayenta examples missing
required fields, an integer where an argument value must be a string): those are rejected by ours
for the same fields.

The two generated ``AnalysisRun`` examples are named ``guestbook-CurrentPodHash-...``: upper-case
letters are not a valid object name on any Kubernetes API server (Argo's included), so the name
alone is rejected, and the same document with the name lower-cased is accepted.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from kruise.core.errors import InvalidError
from kruise.core.kube import KubeClient, Resource
from kruise.rollouts.crds import ALL_CRDS
from tests.conformance.upstream_readme import static_findings, without
from tests.support.compare import missing
from tests.support.corpus import UPSTREAM_EXAMPLES

CORPUS = UPSTREAM_EXAMPLES
ARGO = CORPUS / "argo-rollouts"
OURS = "rollouts.kruise.io/v1alpha1"
KINDS = ("AnalysisTemplate", "ClusterAnalysisTemplate", "AnalysisRun")
FINDINGS = static_findings(CORPUS / "README.md")
RESOURCES: dict[str, Resource] = {
    spec.kind: Resource(spec.group, "v1alpha1", spec.plural, spec.kind, spec.scope == "Namespaced")
    for spec in ALL_CRDS
    if spec.kind in KINDS
}


def _examples() -> list[Any]:
    if not ARGO.is_dir():
        return [pytest.param(None, id="corpus-missing", marks=pytest.mark.skip(reason=f"{ARGO} not found"))]
    return [
        pytest.param(path, id=str(path.relative_to(CORPUS)))
        for path in sorted(ARGO.rglob("*.yaml"))
        if yaml.safe_load(path.read_text()).get("kind") in KINDS
    ]


def ported(path: Path) -> dict[str, Any]:
    """The example with only its apiVersion changed (and no namespace: the test picks one)."""
    doc: dict[str, Any] = yaml.safe_load(path.read_text())
    assert doc["apiVersion"] == "argoproj.io/v1alpha1"
    doc["apiVersion"] = OURS
    doc["metadata"].pop("namespace", None)
    return doc


def test_every_analysis_kind_is_served() -> None:
    assert set(RESOURCES) == set(KINDS)
    assert not RESOURCES["ClusterAnalysisTemplate"].namespaced


def test_the_corpus_has_argo_analysis_examples() -> None:
    if not ARGO.is_dir():
        pytest.skip(f"{ARGO} not found")
    assert len(_examples()) == 33


@pytest.mark.parametrize("path", _examples())
async def test_argo_example_is_accepted_with_only_the_api_version_changed(
    kube: KubeClient, namespace: str, path: Path
) -> None:
    doc = ported(path)
    res = RESOURCES[doc["kind"]]
    ns = namespace if res.namespaced else None
    findings = FINDINGS.get(str(path.relative_to(CORPUS)))
    if findings is not None and findings.schema:
        # Argo's own CRD rejects this example; ours does too, for the same fields
        with pytest.raises(InvalidError) as err:
            await kube.create(res, doc, ns, dry_run=True)
        for message in findings.required_errors():
            assert message in str(err.value)
        return
    name = doc["metadata"]["name"]
    if name != name.lower():
        with pytest.raises(InvalidError) as err:
            await kube.create(res, doc, ns, dry_run=True)
        assert "metadata.name" in str(err.value)
        doc["metadata"]["name"] = name.lower()
    created = await kube.create(res, doc, ns, dry_run=True)
    assert created["apiVersion"] == OURS
    assert created["metadata"]["name"] == doc["metadata"]["name"]
    unknown = findings.unknown if findings is not None else ()
    assert missing(without(doc, unknown)["spec"], created["spec"]) == [], "a field was pruned"
