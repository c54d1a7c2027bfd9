"""The analysis API models and CRDs: Argo's examples load and round-trip; CRD identity."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from pydantic import ValidationError

from kruise.analysis.api import (
    ANALYSIS_CRDS,
    ANALYSISRUN_CRD,
    AnalysisRun,
    AnalysisTemplate,
    ClusterAnalysisTemplate,
)
from kruise.core.api import KubeObject
from kruise.core.crdgen import render_crd, structural_violations
from kruise.rollouts.crds import ALL_CRDS
from tests.conformance.upstream_readme import static_findings
from tests.support.corpus import UPSTREAM_EXAMPLES

ARGO = UPSTREAM_EXAMPLES / "argo-rollouts"
MODELS: dict[str, type[KubeObject]] = {
    "AnalysisTemplate": AnalysisTemplate,
    "ClusterAnalysisTemplate": ClusterAnalysisTemplate,
    "AnalysisRun": AnalysisRun,
}
FINDINGS = static_findings(ARGO.parent / "README.md")
"""Argo's own CRD rejects some examples (corpus README): Kayenta without required fields, value: 9090."""


def _examples() -> list[Any]:
    if not ARGO.is_dir():
        return [pytest.param(None, marks=pytest.mark.skip(reason="corpus missing"))]
    return [pytest.param(p, id=f"{p.parent.name}/{p.name}") for p in sorted(ARGO.rglob("*.yaml"))]


@pytest.mark.parametrize("path", _examples())
def test_argo_example_loads_into_our_models(path: Path) -> None:
    doc = yaml.safe_load(path.read_text())
    doc["apiVersion"] = "rollouts.kruise.io/v1alpha1"
    model = MODELS[doc["kind"]]
    findings = FINDINGS.get(f"argo-rollouts/{path.parent.name}/{path.name}")
    if findings is not None and findings.schema:
        with pytest.raises(ValidationError):
            model.from_dict(doc)
        return
    obj = model.from_dict(doc)
    assert obj.to_dict() == doc, "the model must round-trip the manifest losslessly"


def test_the_crds_are_listed_and_structural() -> None:
    assert [s.kind for s in ANALYSIS_CRDS] == ["AnalysisTemplate", "ClusterAnalysisTemplate", "AnalysisRun"]
    for spec in ANALYSIS_CRDS:
        assert spec in ALL_CRDS
        crd = render_crd(spec)
        assert crd["metadata"]["name"] == f"{spec.plural}.rollouts.kruise.io"
        (version,) = crd["spec"]["versions"]
        assert version["name"] == "v1alpha1" and version["served"] and version["storage"]
        assert structural_violations(version["schema"]["openAPIV3Schema"]) == []
    scopes = {s.kind: s.scope for s in ANALYSIS_CRDS}
    assert scopes == {
        "AnalysisTemplate": "Namespaced",
        "ClusterAnalysisTemplate": "Cluster",
        "AnalysisRun": "Namespaced",
    }


def test_analysisrun_crd_has_status_and_a_status_column() -> None:
    (version,) = render_crd(ANALYSISRUN_CRD)["spec"]["versions"]
    assert version["subresources"] == {"status": {}}
    assert [c["jsonPath"] for c in version["additionalPrinterColumns"]] == [
        ".status.phase",
        ".metadata.creationTimestamp",
    ]
    schema = version["schema"]["openAPIV3Schema"]
    status = schema["properties"]["status"]["properties"]
    result = status["metricResults"]["items"]["properties"]
    assert {
        "name",
        "phase",
        "measurements",
        "count",
        "successful",
        "failed",
        "inconclusive",
        "error",
        "consecutiveError",
        "dryRun",
    } <= set(result)
    measurement = result["measurements"]["items"]["properties"]
    assert {"phase", "value", "startedAt", "finishedAt", "message", "resumeAt"} <= set(measurement)
    assert {"phase", "message", "metricResults", "startedAt", "runSummary"} <= set(status)
    assert schema["properties"]["spec"]["required"] == ["metrics"]


def test_provider_schema_keeps_other_providers_verbatim() -> None:
    (version,) = render_crd(ANALYSIS_CRDS[0])["spec"]["versions"]
    metric = version["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]["metrics"]["items"]
    provider = metric["properties"]["provider"]["properties"]
    for name in (
        "datadog",
        "wavefront",
        "newRelic",
        "job",
        "cloudWatch",
        "graphite",
        "influxdb",
        "skywalking",
        "plugin",
    ):
        assert provider[name] == {
            **provider[name],
            "type": "object",
            "x-kubernetes-preserve-unknown-fields": True,
        }
    assert set(provider["prometheus"]["properties"]) >= {
        "address",
        "query",
        "timeout",
        "headers",
        "authentication",
        "insecure",
    }
    assert set(provider["web"]["properties"]) >= {
        "url",
        "method",
        "headers",
        "body",
        "jsonPath",
        "timeoutSeconds",
        "insecure",
    }
    for limit in ("count", "failureLimit", "inconclusiveLimit", "consecutiveErrorLimit"):
        assert metric["properties"][limit]["x-kubernetes-int-or-string"] is True
