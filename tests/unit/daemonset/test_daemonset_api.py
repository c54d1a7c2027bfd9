"""The Advanced DaemonSet model and CRD: every Appendix A field, master's columns, upstream examples."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest
import yaml
from pydantic import ValidationError

from kruise.core.crdgen import render_crd
from kruise.workloads.api.daemonset import DAEMONSET_CRD, DaemonSet
from tests.support.corpus import UPSTREAM_EXAMPLES

UPSTREAM = UPSTREAM_EXAMPLES
EXAMPLES = sorted(
    [
        *(UPSTREAM / "kruise" / "DaemonSet").glob("*.yaml"),
        *(UPSTREAM / "kruise-rollouts" / "DaemonSet").glob("*.yaml"),
    ]
)

APPENDIX_A_PATHS = {
    "spec",
    "spec.burstReplicas",
    "spec.lifecycle",
    *(
        f"spec.lifecycle.{hook}{leaf}"
        for hook in ("inPlaceUpdate", "preDelete", "preNormal")
        for leaf in ("", ".finalizersHandler", ".labelsHandler", ".markPodNotReady")
    ),
    "spec.minReadySeconds",
    "spec.revisionHistoryLimit",
    "spec.selector",
    "spec.template",
    "spec.updateStrategy",
    "spec.updateStrategy.rollingUpdate",
    "spec.updateStrategy.rollingUpdate.maxSurge",
    "spec.updateStrategy.rollingUpdate.maxUnavailable",
    "spec.updateStrategy.rollingUpdate.partition",
    "spec.updateStrategy.rollingUpdate.paused",
    "spec.updateStrategy.rollingUpdate.rollingUpdateType",
    "spec.updateStrategy.rollingUpdate.selector",
    "spec.updateStrategy.type",
    "status",
    "status.collisionCount",
    "status.conditions",
    *(f"status.conditions.{f}" for f in ("lastTransitionTime", "message", "reason", "status", "type")),
    "status.currentNumberScheduled",
    "status.daemonSetHash",
    "status.desiredNumberScheduled",
    "status.numberAvailable",
    "status.numberMisscheduled",
    "status.numberReady",
    "status.numberUnavailable",
    "status.observedGeneration",
    "status.updatedNumberScheduled",
}
"""``K@master:config/crd/bases/apps.kruise.io_daemonsets.yaml`` (the reference's Appendix A)."""


def version() -> dict[str, Any]:
    crd = render_crd(DAEMONSET_CRD)
    (only,) = crd["spec"]["versions"]
    return dict(only)


def walk(node: Mapping[str, Any], path: str = "") -> Iterator[tuple[str, Mapping[str, Any]]]:
    for name, child in (node.get("properties") or {}).items():
        yield f"{path}.{name}", child
        yield from walk(child, f"{path}.{name}")
    if "items" in node:
        yield from walk(node["items"], path)


def test_identity_short_names_and_subresources() -> None:
    crd = render_crd(DAEMONSET_CRD)
    assert crd["metadata"]["name"] == "daemonsets.apps.kruise.io"
    assert crd["spec"]["names"]["shortNames"] == ["daemon", "ads"]
    assert crd["spec"]["scope"] == "Namespaced"
    v = version()
    assert (v["name"], v["served"], v["storage"]) == ("v1alpha1", True, True)
    assert v["subresources"] == {"status": {}}


def test_printer_columns_are_upstream_masters() -> None:
    columns = [
        (c["name"], c["jsonPath"], c.get("priority", 0)) for c in version()["additionalPrinterColumns"]
    ]
    assert columns == [
        ("DESIRED", ".status.desiredNumberScheduled", 0),
        ("CURRENT", ".status.currentNumberScheduled", 0),
        ("READY", ".status.numberReady", 0),
        ("UP-TO-DATE", ".status.updatedNumberScheduled", 0),
        ("AVAILABLE", ".status.numberAvailable", 0),
        ("AGE", ".metadata.creationTimestamp", 0),
        ("CONTAINERS", ".spec.template.spec.containers[*].name", 1),
        ("IMAGES", ".spec.template.spec.containers[*].image", 1),
    ]


def test_schema_has_every_appendix_a_field() -> None:
    schema = version()["schema"]["openAPIV3Schema"]
    paths = set()
    for path, _ in walk(schema):
        dotted = path.lstrip(".")
        if dotted.startswith(("spec", "status")) and not dotted.startswith(
            ("spec.selector.", "spec.updateStrategy.rollingUpdate.selector.", "spec.template.")
        ):
            paths.add(dotted)
    assert paths == APPENDIX_A_PATHS


def test_schema_types_follow_upstream() -> None:
    spec = version()["schema"]["openAPIV3Schema"]["properties"]["spec"]
    rolling = spec["properties"]["updateStrategy"]["properties"]["rollingUpdate"]["properties"]
    for field in ("maxSurge", "maxUnavailable", "partition"):
        assert rolling[field]["x-kubernetes-int-or-string"] is True
    assert spec["properties"]["burstReplicas"]["x-kubernetes-int-or-string"] is True
    template = spec["properties"]["template"]
    assert template["x-kubernetes-preserve-unknown-fields"] is True, "unknown template fields are kept"
    assert "containers" in template["properties"]["spec"]["properties"], "typed as the CloneSet's"
    assert spec["required"] == ["selector", "template"]
    status = version()["schema"]["openAPIV3Schema"]["properties"]["status"]
    assert sorted(status["required"]) == [
        "currentNumberScheduled",
        "desiredNumberScheduled",
        "numberMisscheduled",
        "numberReady",
        "updatedNumberScheduled",
    ]


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.name for p in EXAMPLES])
def test_upstream_examples_validate(path: Path) -> None:
    data = yaml.safe_load(path.read_text())
    ds = DaemonSet.from_dict(data)
    assert ds.to_dict()["spec"] == data["spec"]


def test_a_percent_partition_and_burst_are_accepted_and_a_float_is_not() -> None:
    data = yaml.safe_load(EXAMPLES[0].read_text())
    data["spec"]["updateStrategy"]["rollingUpdate"]["partition"] = "40%"
    data["spec"]["burstReplicas"] = "10%"
    assert DaemonSet.from_dict(data).spec.burst_replicas == "10%"
    data["spec"]["updateStrategy"]["rollingUpdate"]["partition"] = 1.5
    with pytest.raises(ValidationError):
        DaemonSet.from_dict(data)
