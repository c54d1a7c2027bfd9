"""The Rollout, BatchRelease and TrafficRouting CRDs: structural, and shaped like upstream's."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

import pytest

from kruise.core.crdgen import CRDSpec, render_crd, structural_violations
from kruise.rollouts.api import BATCHRELEASE_CRD, ROLLOUT_CRD, TRAFFICROUTING_CRD
from kruise.rollouts.crds import ALL_CRDS, generated_crds

CRDS = (ROLLOUT_CRD, BATCHRELEASE_CRD, TRAFFICROUTING_CRD)


def versions(spec: CRDSpec) -> dict[str, dict[str, Any]]:
    return {v["name"]: v for v in render_crd(spec)["spec"]["versions"]}


def schema(spec: CRDSpec, version: str) -> dict[str, Any]:
    node = versions(spec)[version]["schema"]["openAPIV3Schema"]
    assert isinstance(node, dict)
    return node


def at(node: Mapping[str, Any], dotted: str) -> Mapping[str, Any]:
    """The schema node at ``a.b[].c`` (``[]`` steps into array items)."""
    for part in dotted.split("."):
        name = part.removesuffix("[]")
        node = node["properties"][name]["items"] if part.endswith("[]") else node["properties"][name]
    return node


def walk(node: Mapping[str, Any], path: str = "") -> Iterator[tuple[str, Mapping[str, Any]]]:
    yield path, node
    for key, child in node.get("properties", {}).items():
        yield from walk(child, f"{path}.{key}")
    if isinstance(node.get("items"), Mapping):
        yield from walk(node["items"], f"{path}[]")
    if isinstance(node.get("additionalProperties"), Mapping):
        yield from walk(node["additionalProperties"], f"{path}{{}}")


def test_all_crds_lists_the_rollouts_kinds_once() -> None:
    names = [spec.name for spec in ALL_CRDS]
    for spec in CRDS:
        assert names.count(spec.name) == 1
        assert spec.filename in generated_crds()


@pytest.mark.parametrize(
    ("spec", "version"),
    [(spec, v.name) for spec in CRDS for v in spec.versions],
    ids=lambda x: x if isinstance(x, str) else x.kind,
)
def test_schema_is_structural_without_defaults(spec: CRDSpec, version: str) -> None:
    node = schema(spec, version)
    assert structural_violations(node) == []
    for path, child in walk(node):
        assert "default" not in child, path
    assert node["properties"]["metadata"] == {"type": "object"}


def test_identity_versions_and_subresources() -> None:
    for spec, names in (
        (ROLLOUT_CRD, ("rollouts", "rollout", "Rollout")),
        (BATCHRELEASE_CRD, ("batchreleases", "batchrelease", "BatchRelease")),
        (TRAFFICROUTING_CRD, ("trafficroutings", "trafficrouting", "TrafficRouting")),
    ):
        crd = render_crd(spec)
        assert crd["metadata"]["name"] == f"{names[0]}.rollouts.kruise.io"
        assert crd["spec"]["scope"] == "Namespaced"
        assert crd["spec"]["names"] == {
            "plural": names[0],
            "singular": names[1],
            "kind": names[2],
            "listKind": f"{names[2]}List",
        }  # upstream declares no short names
        assert "conversion" not in crd["spec"]  # the API server's default: strategy None
        for version in crd["spec"]["versions"]:
            assert version["subresources"] == {"status": {}}
    served = {s.kind: [(v.name, v.served, v.storage) for v in s.versions] for s in CRDS}
    assert served == {
        "Rollout": [("v1alpha1", True, False), ("v1beta1", True, True)],
        "BatchRelease": [("v1alpha1", True, False), ("v1beta1", True, True)],
        "TrafficRouting": [("v1alpha1", True, True)],
    }


def columns(spec: CRDSpec, version: str) -> list[tuple[str, str, str]]:
    return [
        (c["name"], c["type"], c["jsonPath"]) for c in versions(spec)[version]["additionalPrinterColumns"]
    ]


def test_rollout_printer_columns_differ_per_version_as_upstream() -> None:
    assert columns(ROLLOUT_CRD, "v1beta1") == [
        ("STATUS", "string", ".status.phase"),
        ("CANARY_STEP", "integer", ".status.currentStepIndex"),
        ("CANARY_STATE", "string", ".status.currentStepState"),
        ("MESSAGE", "string", ".status.message"),
        ("AGE", "date", ".metadata.creationTimestamp"),
    ]
    assert columns(ROLLOUT_CRD, "v1alpha1")[1:3] == [
        ("CANARY_STEP", "integer", ".status.canaryStatus.currentStepIndex"),
        ("CANARY_STATE", "string", ".status.canaryStatus.currentStepState"),
    ]
    age = versions(
        ROLLOUT_CRD,
    )["v1beta1"]["additionalPrinterColumns"][-1]
    assert "description" not in age


def test_batchrelease_and_trafficrouting_printer_columns() -> None:
    expected = [
        ("KIND", "string", ".spec.targetReference.workloadRef.kind"),
        ("PHASE", "string", ".status.phase"),
        ("BATCH", "integer", ".status.canaryStatus.currentBatch"),
        ("BATCH-STATE", "string", ".status.canaryStatus.batchState"),
        ("AGE", "date", ".metadata.creationTimestamp"),
    ]
    assert columns(BATCHRELEASE_CRD, "v1beta1") == expected
    assert columns(BATCHRELEASE_CRD, "v1alpha1") == expected
    assert columns(TRAFFICROUTING_CRD, "v1alpha1") == [
        ("STATUS", "string", ".status.phase"),
        ("MESSAGE", "string", ".status.message"),
        ("AGE", "date", ".metadata.creationTimestamp"),
    ]


# (version, node path, required list) as in upstream's config/crd/bases
REQUIRED = [
    (ROLLOUT_CRD, "v1beta1", "spec", ["strategy", "workloadRef"]),
    (ROLLOUT_CRD, "v1beta1", "spec.workloadRef", ["apiVersion", "kind", "name"]),
    (ROLLOUT_CRD, "v1beta1", "spec.strategy.canary.trafficRoutings[]", ["service"]),
    (ROLLOUT_CRD, "v1beta1", "spec.strategy.canary.trafficRoutings[].ingress", ["name"]),
    (ROLLOUT_CRD, "v1beta1", "spec.strategy.blueGreen.steps[].matches[].headers[]", ["name", "value"]),
    (ROLLOUT_CRD, "v1beta1", "spec.strategy.canary.steps[].requestHeaderModifier.set[]", ["name", "value"]),
    (ROLLOUT_CRD, "v1beta1", "status", ["currentStepIndex", "currentStepState"]),
    (
        ROLLOUT_CRD,
        "v1beta1",
        "status.canaryStatus",
        [
            "canaryReadyReplicas",
            "canaryReplicas",
            "canaryRevision",
            "currentStepState",
            "finalisingStep",
            "nextStepIndex",
            "podTemplateHash",
        ],
    ),
    (
        ROLLOUT_CRD,
        "v1beta1",
        "status.blueGreenStatus",
        [
            "currentStepState",
            "finalisingStep",
            "nextStepIndex",
            "podTemplateHash",
            "updatedReadyReplicas",
            "updatedReplicas",
            "updatedRevision",
        ],
    ),
    (ROLLOUT_CRD, "v1beta1", "status.conditions[]", ["message", "reason", "status", "type"]),
    (ROLLOUT_CRD, "v1alpha1", "spec", ["objectRef", "strategy"]),
    (ROLLOUT_CRD, "v1alpha1", "spec.objectRef.workloadRef", ["apiVersion", "kind", "name"]),
    (BATCHRELEASE_CRD, "v1beta1", "spec", ["releasePlan"]),
    (BATCHRELEASE_CRD, "v1beta1", "spec.releasePlan", ["enableExtraWorkloadForCanary"]),
    (BATCHRELEASE_CRD, "v1beta1", "spec.releasePlan.batches[]", ["canaryReplicas"]),
    (BATCHRELEASE_CRD, "v1beta1", "status.canaryStatus", ["currentBatch"]),
    (BATCHRELEASE_CRD, "v1alpha1", "spec", ["releasePlan", "targetReference"]),
    (TRAFFICROUTING_CRD, "v1alpha1", "spec", ["objectRef", "strategy"]),
    (TRAFFICROUTING_CRD, "v1alpha1", "spec.objectRef[]", ["service"]),
]


@pytest.mark.parametrize(
    ("spec", "version", "path", "required"), REQUIRED, ids=[f"{r[0].kind}/{r[1]}/{r[2]}" for r in REQUIRED]
)
def test_required_fields_match_upstream(spec: CRDSpec, version: str, path: str, required: list[str]) -> None:
    assert at(schema(spec, version), path).get("required") == required


def test_no_required_at_the_root_or_in_optional_objects() -> None:
    for spec in CRDS:
        for v in spec.versions:
            root = schema(spec, v.name)
            assert "required" not in root
    assert "required" not in at(schema(ROLLOUT_CRD, "v1beta1"), "spec.strategy.canary.steps[]")
    assert "required" not in at(schema(BATCHRELEASE_CRD, "v1beta1"), "status")


def test_field_sets_per_version() -> None:
    beta, alpha = schema(ROLLOUT_CRD, "v1beta1"), schema(ROLLOUT_CRD, "v1alpha1")
    assert set(at(beta, "spec")["properties"]) == {
        "workloadRef",
        "strategy",
        "disabled",
        "progressDeadlineSeconds",  # kruise's additive progress deadline (Argo Rollouts' fields)
        "progressDeadlineAbort",
    }
    assert at(beta, "spec.progressDeadlineSeconds")["minimum"] == 1
    assert set(at(alpha, "spec")["properties"]) == {"objectRef", "strategy", "disabled", "rolloutID"}
    assert set(at(beta, "spec.strategy.canary")["properties"]) == {
        "steps",
        "trafficRoutings",
        "failureThreshold",
        "patchPodTemplateMetadata",
        "enableExtraWorkloadForCanary",
        "trafficRoutingRef",
        "disableGenerateCanaryService",
        "analysis",  # kruise's additive background metric analysis (Argo-style)
    }
    assert set(at(beta, "spec.strategy.blueGreen")["properties"]) == {
        "steps",
        "trafficRoutings",
        "failureThreshold",
        "trafficRoutingRef",
        "disableGenerateCanaryService",
    }
    assert set(at(beta, "spec.strategy.canary.steps[]")["properties"]) == {
        "traffic",
        "requestHeaderModifier",
        "matches",
        "replicas",
        "pause",
        "analysis",  # kruise's additive step analysis gate
    }
    assert set(at(alpha, "spec.strategy.canary.steps[]")["properties"]) == {
        "weight",
        "requestHeaderModifier",
        "matches",
        "replicas",
        "pause",
    }
    assert set(at(alpha, "spec.strategy.canary.steps[].matches[]")["properties"]) == {"headers"}
    assert set(at(beta, "spec.strategy.canary.steps[].matches[]")["properties"]) == {
        "path",
        "headers",
        "queryParams",
    }
    assert set(at(beta, "status")["properties"]) == {
        "observedGeneration",
        "canaryStatus",
        "blueGreenStatus",
        "conditions",
        "phase",
        "message",
        "currentStepIndex",
        "currentStepState",
    }
    assert set(at(schema(BATCHRELEASE_CRD, "v1beta1"), "spec")["properties"]) == {
        "workloadRef",
        "releasePlan",
    }
    assert "message" in at(schema(BATCHRELEASE_CRD, "v1beta1"), "status")["properties"]
    assert "message" not in at(schema(BATCHRELEASE_CRD, "v1alpha1"), "status")["properties"]


def test_gateway_api_validation_is_carried() -> None:
    beta = schema(ROLLOUT_CRD, "v1beta1")
    steps = at(beta, "spec.strategy.canary.steps")
    assert steps["maxItems"] == 50
    headers = at(beta, "spec.strategy.canary.steps[].matches[].headers")
    assert headers["maxItems"] == 16
    assert headers["x-kubernetes-list-type"] == "map"
    assert headers["x-kubernetes-list-map-keys"] == ["name"]
    header = headers["items"]["properties"]
    assert header["type"]["enum"] == ["Exact", "RegularExpression"]
    assert header["name"]["pattern"] == r"^[A-Za-z0-9!#$%&'*+\-.^_\x60|~]+$"
    assert (header["name"]["minLength"], header["name"]["maxLength"]) == (1, 256)
    path = at(beta, "spec.strategy.canary.steps[].matches[].path")["properties"]
    assert path["type"]["enum"] == ["Exact", "PathPrefix", "RegularExpression"]
    for node in (
        at(beta, "spec.strategy.canary.steps[].replicas"),
        at(beta, "spec.strategy.canary.failureThreshold"),
        at(schema(BATCHRELEASE_CRD, "v1beta1"), "spec.releasePlan.batches[].canaryReplicas"),
    ):
        assert node["x-kubernetes-int-or-string"] is True
    # v1alpha1 header lists are not list-type maps upstream
    alpha_headers = at(schema(ROLLOUT_CRD, "v1alpha1"), "spec.strategy.canary.steps[].matches[].headers")
    assert "x-kubernetes-list-type" not in alpha_headers
