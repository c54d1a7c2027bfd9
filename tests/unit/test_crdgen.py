"""CRD generation: structural schemas, the CloneSet CRD's shape, and no drift in charts/kruise/files/crds."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from enum import StrEnum
from pathlib import Path
from typing import Any, Literal

import pytest
import yaml

from kruise.core.api import IntOrString, KubeModel
from kruise.core.api.pod import QUANTITY_PATTERN
from kruise.core.crdgen import (
    CRDSchemaError,
    CRDSpec,
    CRDVersion,
    model_schema,
    render_crd,
    structural_violations,
)
from kruise.rollouts.crds import ALL_CRDS, generated_crds, write_crds
from kruise.workloads.api.cloneset import CLONESET_CRD

REPO = Path(__file__).resolve().parents[2]
CRD_DIR = REPO / "charts" / "kruise" / "files" / "crds"


def walk(node: Mapping[str, Any], path: str = "") -> Iterator[tuple[str, Mapping[str, Any]]]:
    """Every schema node with its path (properties, items and additionalProperties)."""
    yield path, node
    for key, child in node.get("properties", {}).items():
        yield from walk(child, f"{path}.{key}")
    if isinstance(node.get("items"), Mapping):
        yield from walk(node["items"], f"{path}[*]")
    if isinstance(node.get("additionalProperties"), Mapping):
        yield from walk(node["additionalProperties"], f"{path}{{*}}")


def version_schemas() -> Iterator[Any]:
    for spec in ALL_CRDS:
        for version in render_crd(spec)["spec"]["versions"]:
            yield pytest.param(version["schema"]["openAPIV3Schema"], id=f"{spec.name}/{version['name']}")


@pytest.mark.parametrize("schema", list(version_schemas()))
def test_every_schema_is_structural(schema: Mapping[str, Any]) -> None:
    assert structural_violations(schema) == []
    for path, node in walk(schema):
        for key in ("$ref", "allOf", "oneOf", "not", "nullable", "$defs", "default", "title"):
            assert key not in node, f"{path}: {key}"
        assert node.get("type") != "null", path
        assert not isinstance(node.get("type"), list), path
        typed = "type" in node
        int_or_string = node.get("x-kubernetes-int-or-string") is True
        preserved = node.get("x-kubernetes-preserve-unknown-fields") is True
        assert typed or int_or_string or preserved, f"{path}: untyped node"
        if "anyOf" in node:
            assert int_or_string and node["anyOf"] == [{"type": "integer"}, {"type": "string"}], path
        if path:
            assert not ("properties" in node and "additionalProperties" in node), path
    assert schema["properties"]["metadata"] == {"type": "object"}
    assert schema["type"] == "object"


def cloneset_version() -> dict[str, Any]:
    crd = render_crd(CLONESET_CRD)
    (version,) = crd["spec"]["versions"]
    assert isinstance(version, dict)
    return version


def test_cloneset_crd_identity() -> None:
    crd = render_crd(CLONESET_CRD)
    assert crd["apiVersion"] == "apiextensions.k8s.io/v1"
    assert crd["metadata"]["name"] == "clonesets.apps.kruise.io"
    assert crd["spec"]["group"] == "apps.kruise.io"
    assert crd["spec"]["scope"] == "Namespaced"
    assert crd["spec"]["names"] == {
        "kind": "CloneSet",
        "listKind": "CloneSetList",
        "plural": "clonesets",
        "singular": "cloneset",
        "shortNames": ["clone"],
    }
    version = cloneset_version()
    assert (version["name"], version["served"], version["storage"]) == ("v1alpha1", True, True)


def test_cloneset_has_status_and_scale_subresources() -> None:
    assert cloneset_version()["subresources"] == {
        "status": {},
        "scale": {
            "specReplicasPath": ".spec.replicas",
            "statusReplicasPath": ".status.replicas",
            "labelSelectorPath": ".status.labelSelector",
        },
    }


def test_cloneset_printer_columns_match_openkruise_master() -> None:
    columns = [
        (c["name"], c["jsonPath"], c.get("priority", 0))
        for c in cloneset_version()["additionalPrinterColumns"]
    ]
    assert columns == [
        ("DESIRED", ".spec.replicas", 0),
        ("UPDATED", ".status.updatedReplicas", 0),
        ("UPDATED_READY", ".status.updatedReadyReplicas", 0),
        ("UPDATED_AVAILABLE", ".status.updatedAvailableReplicas", 0),
        ("READY", ".status.readyReplicas", 0),
        ("TOTAL", ".status.replicas", 0),
        ("AGE", ".metadata.creationTimestamp", 0),
        ("CONTAINERS", ".spec.template.spec.containers[*].name", 1),
        ("IMAGES", ".spec.template.spec.containers[*].image", 1),
        ("SELECTOR", ".status.labelSelector", 1),
    ]


def test_cloneset_schema_matches_upstream_shape() -> None:
    schema = cloneset_version()["schema"]["openAPIV3Schema"]
    spec = schema["properties"]["spec"]
    status = schema["properties"]["status"]
    assert "required" not in schema
    assert spec["required"] == ["selector", "template"]
    assert status["required"] == [
        "availableReplicas",
        "readyReplicas",
        "replicas",
        "updatedReadyReplicas",
        "updatedReplicas",
    ]
    # embedded objects are typed (upstream: schemaless) and keep the fields they do not describe
    template = spec["properties"]["template"]
    assert template["type"] == "object" and template["x-kubernetes-preserve-unknown-fields"] is True
    assert set(template["properties"]) == {"metadata", "spec"}
    pod = template["properties"]["spec"]["properties"]
    container = pod["containers"]["items"]
    assert container["x-kubernetes-preserve-unknown-fields"] is True
    assert container["properties"]["image"] == {"type": "string"}
    assert container["properties"]["ports"]["items"]["properties"]["containerPort"] == {
        "type": "integer",
        "format": "int32",
    }
    assert container["properties"]["ports"]["items"]["properties"]["hostIP"] == {"type": "string"}
    limits = container["properties"]["resources"]["properties"]["limits"]
    quantity = limits["additionalProperties"]
    assert "type" not in quantity and quantity["x-kubernetes-preserve-unknown-fields"] is True, "a Quantity"
    assert quantity["pattern"] == QUANTITY_PATTERN
    probe_port = container["properties"]["livenessProbe"]["properties"]["httpGet"]["properties"]["port"]
    assert probe_port["x-kubernetes-int-or-string"] is True
    annotations = template["properties"]["metadata"]["properties"]["annotations"]
    assert annotations == {"type": "object", "additionalProperties": {"type": "string"}}
    assert "creationTimestamp" not in template["properties"]["metadata"]["properties"], "kept as written"
    claims = spec["properties"]["volumeClaimTemplates"]
    assert claims["type"] == "array" and claims["items"]["type"] == "object"
    assert claims["items"]["properties"]["spec"]["properties"]["accessModes"]["items"] == {"type": "string"}
    strategy = spec["properties"]["updateStrategy"]["properties"]
    for name in ("partition", "maxUnavailable", "maxSurge"):
        assert strategy[name]["x-kubernetes-int-or-string"] is True
    assert strategy["type"] == {
        "type": "string",
        "description": "Type indicates the type of the CloneSetUpdateStrategy. Default is ReCreate.",
    }
    assert spec["properties"]["replicas"]["format"] == "int32"
    assert status["properties"]["observedGeneration"]["format"] == "int64"
    assert "disablePVCReuse" in spec["properties"]["scaleStrategy"]["properties"]
    assert set(spec["properties"]["lifecycle"]["properties"]) == {"preDelete", "inPlaceUpdate", "preNormal"}


# Appendix A of the reference: every CloneSet field path of the upstream CRD.
APPENDIX_A_PATHS = [
    "spec",
    "spec.lifecycle",
    "spec.lifecycle.inPlaceUpdate",
    "spec.lifecycle.inPlaceUpdate.finalizersHandler",
    "spec.lifecycle.inPlaceUpdate.labelsHandler",
    "spec.lifecycle.inPlaceUpdate.markPodNotReady",
    "spec.lifecycle.preDelete",
    "spec.lifecycle.preDelete.finalizersHandler",
    "spec.lifecycle.preDelete.labelsHandler",
    "spec.lifecycle.preDelete.markPodNotReady",
    "spec.lifecycle.preNormal",
    "spec.lifecycle.preNormal.finalizersHandler",
    "spec.lifecycle.preNormal.labelsHandler",
    "spec.lifecycle.preNormal.markPodNotReady",
    "spec.minReadySeconds",
    "spec.progressDeadlineSeconds",
    "spec.replicas",
    "spec.revisionHistoryLimit",
    "spec.scaleStrategy",
    "spec.scaleStrategy.disablePVCReuse",
    "spec.scaleStrategy.maxUnavailable",
    "spec.scaleStrategy.podsToDelete",
    "spec.selector",
    "spec.template",
    "spec.updateStrategy",
    "spec.updateStrategy.inPlaceUpdateStrategy",
    "spec.updateStrategy.inPlaceUpdateStrategy.gracePeriodSeconds",
    "spec.updateStrategy.inPlaceUpdateStrategy.imagePreDownloadMinUpdatedReadyPods",
    "spec.updateStrategy.inPlaceUpdateStrategy.imagePreDownloadParallelism",
    "spec.updateStrategy.inPlaceUpdateStrategy.imagePreDownloadTimeoutSeconds",
    "spec.updateStrategy.maxSurge",
    "spec.updateStrategy.maxUnavailable",
    "spec.updateStrategy.partition",
    "spec.updateStrategy.paused",
    "spec.updateStrategy.priorityStrategy",
    "spec.updateStrategy.priorityStrategy.orderPriority",
    "spec.updateStrategy.priorityStrategy.orderPriority.orderedKey",
    "spec.updateStrategy.priorityStrategy.weightPriority",
    "spec.updateStrategy.priorityStrategy.weightPriority.matchSelector",
    "spec.updateStrategy.priorityStrategy.weightPriority.weight",
    "spec.updateStrategy.scatterStrategy",
    "spec.updateStrategy.scatterStrategy.key",
    "spec.updateStrategy.scatterStrategy.value",
    "spec.updateStrategy.type",
    "spec.volumeClaimTemplates",
    "status",
    "status.availableReplicas",
    "status.collisionCount",
    "status.conditions",
    "status.conditions.lastTransitionTime",
    "status.conditions.lastUpdateTime",
    "status.conditions.message",
    "status.conditions.reason",
    "status.conditions.status",
    "status.conditions.type",
    "status.currentRevision",
    "status.expectedUpdatedReplicas",
    "status.labelSelector",
    "status.observedGeneration",
    "status.readyReplicas",
    "status.replicas",
    "status.updateRevision",
    "status.updatedAvailableReplicas",
    "status.updatedReadyReplicas",
    "status.updatedReplicas",
]


def test_cloneset_schema_has_every_appendix_a_field() -> None:
    schema = cloneset_version()["schema"]["openAPIV3Schema"]
    paths = set()
    for path, _ in walk(schema):
        dotted = path.replace("[*]", "").lstrip(".")
        if dotted.startswith(("spec", "status")) and "{*}" not in dotted:
            if ".selector." in f"{dotted}." and dotted != "spec.selector":
                continue  # the label selector's own fields are not expanded in Appendix A
            if ".matchSelector." in dotted:
                continue
            if dotted.startswith(("spec.template.", "spec.volumeClaimTemplates.")):
                continue  # core/v1 types, typed by kruise.core.api.pod (upstream: schemaless)
            paths.add(dotted)
    assert paths == set(APPENDIX_A_PATHS)


def test_committed_crds_equal_generated_output() -> None:
    generated = generated_crds()
    committed = {p.name: p.read_text(encoding="utf-8") for p in sorted(CRD_DIR.glob("*.yaml"))}
    ours = {name: text for name, text in committed.items() if name in generated}
    assert ours == generated, "charts/kruise/files/crds is stale: run `make crds`"
    assert "apps.kruise.io_clonesets.yaml" in generated


def test_generated_yaml_is_deterministic_and_loads_back() -> None:
    first = generated_crds()
    assert first == generated_crds()
    for spec in ALL_CRDS:
        assert yaml.safe_load(first[spec.filename]) == render_crd(spec)


def test_write_crds_writes_one_file_per_crd(tmp_path: Path) -> None:
    paths = write_crds(tmp_path / "out")
    assert [p.name for p in paths] == [spec.filename for spec in ALL_CRDS]
    assert {p.name: p.read_text(encoding="utf-8") for p in paths} == generated_crds()


# --- generator edge cases -----------------------------------------------------------------


class _Color(StrEnum):
    RED = "Red"
    BLUE = "Blue"


class _Leaf(KubeModel):
    """Leaf describes itself.

    Implementation notes that must not reach kubectl explain.
    """

    mode: Literal["A", "B"] | None = None
    color: _Color | None = None
    counts: dict[str, int] | None = None
    value: IntOrString | None = None


class _Root(KubeModel):
    """Root object."""

    leaf: _Leaf
    leaves: list[_Leaf] | None = None


def test_enums_maps_descriptions_and_required() -> None:
    schema = model_schema(_Root)
    leaf = schema["properties"]["leaf"]
    assert schema["required"] == ["leaf"]
    assert leaf["description"] == "Leaf describes itself."
    assert leaf["properties"]["mode"] == {"type": "string", "enum": ["A", "B"]}
    assert leaf["properties"]["color"] == {"type": "string", "enum": ["Red", "Blue"]}
    assert leaf["properties"]["counts"] == {"type": "object", "additionalProperties": {"type": "integer"}}
    assert schema["properties"]["leaves"]["items"] == leaf


class _Node(KubeModel):
    """A recursive model."""

    children: list[_Node] | None = None


class _Ambiguous(KubeModel):
    """A union with no structural form."""

    value: int | bool | None = None


@pytest.mark.parametrize("model", [_Node, _Ambiguous], ids=["recursive model", "bare union"])
def test_non_structural_models_are_refused(model: type[KubeModel]) -> None:
    with pytest.raises(CRDSchemaError):
        model_schema(model)


def test_a_crd_needs_exactly_one_storage_version() -> None:
    spec = CRDSpec(
        group="example.io",
        kind="Root",
        plural="roots",
        singular="root",
        versions=(CRDVersion(name="v1", model=_Root, storage=False),),
    )
    with pytest.raises(CRDSchemaError, match="storage"):
        render_crd(spec)
