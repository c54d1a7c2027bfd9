"""UnitedDeployment API models: upstream's manifests round-trip, the templates reuse the workloads'
own spec models, and the Adaptive parameters fall back as upstream's getters do."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from kruise.core.crdgen import render_crd
from kruise.workloads.api.cloneset import CloneSetSpec
from kruise.workloads.api.uniteddeployment import (
    UNITEDDEPLOYMENT_CRD,
    AdaptiveUnitedDeploymentStrategy,
    UnitedDeployment,
    UnitedDeploymentScheduleStrategy,
)
from tests.support.corpus import UPSTREAM_EXAMPLES

EXAMPLES = sorted((UPSTREAM_EXAMPLES / "kruise" / "UnitedDeployment").glob("*.yaml"))


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.name for p in EXAMPLES])
def test_upstream_example_round_trips_losslessly(path: Path) -> None:
    doc = yaml.safe_load(path.read_text())
    ud = UnitedDeployment.from_dict(doc)
    assert ud.to_dict() == doc
    assert ud.spec.topology is not None and ud.spec.topology.subsets is not None
    assert [s.name for s in ud.spec.topology.subsets] == ["subset-a", "subset-b", "subset-c"]


def test_clone_set_template_spec_is_the_clone_set_spec() -> None:
    ud = UnitedDeployment.from_dict(
        {
            "spec": {
                "selector": {"matchLabels": {"app": "x"}},
                "template": {
                    "cloneSetTemplate": {
                        "metadata": {"labels": {"app": "x"}},
                        "spec": {
                            "selector": {"matchLabels": {"app": "x"}},
                            "template": {"metadata": {"labels": {"app": "x"}}},
                            "updateStrategy": {"partition": "50%"},
                        },
                    }
                },
            }
        }
    )
    template = ud.spec.template
    assert template is not None and template.clone_set_template is not None
    assert isinstance(template.clone_set_template.spec, CloneSetSpec)
    assert template.clone_set_template.spec.update_strategy is not None
    assert template.clone_set_template.spec.update_strategy.partition == "50%"


@pytest.mark.parametrize(
    ("adaptive", "critical", "unschedulable"),
    [
        pytest.param(None, 30, 300, id="unset: 30 s and 300 s"),
        pytest.param({"rescheduleCriticalSeconds": 5}, 5, 300, id="critical only"),
        pytest.param({"unschedulableDuration": 60}, 30, 60, id="master's name"),
        pytest.param({"unschedulableLastSeconds": 90}, 30, 90, id="v1.8's name"),
        pytest.param(
            {"unschedulableDuration": 60, "unschedulableLastSeconds": 90}, 30, 60, id="master's wins"
        ),
    ],
)
def test_adaptive_parameters_fall_back_to_upstream_defaults(
    adaptive: dict[str, int] | None, critical: int, unschedulable: int
) -> None:
    strategy = UnitedDeploymentScheduleStrategy.from_dict({"type": "Adaptive", "adaptive": adaptive})
    assert strategy.is_adaptive()
    assert strategy.settings().reschedule_critical() == critical
    assert strategy.settings().unschedulable_seconds() == unschedulable


def test_reservation_needs_adaptive_type() -> None:
    adaptive = AdaptiveUnitedDeploymentStrategy(reserve_unschedulable_pods=True)
    assert UnitedDeploymentScheduleStrategy(type="Adaptive", adaptive=adaptive).reserves_unschedulable_pods()
    assert not UnitedDeploymentScheduleStrategy(type="Fixed", adaptive=adaptive).reserves_unschedulable_pods()
    assert not UnitedDeploymentScheduleStrategy(type="Adaptive").reserves_unschedulable_pods()


def test_crd_names_subresources_and_columns() -> None:
    crd = render_crd(UNITEDDEPLOYMENT_CRD)
    assert crd["metadata"]["name"] == "uniteddeployments.apps.kruise.io"
    assert crd["spec"]["names"]["shortNames"] == ["ud"]
    (version,) = crd["spec"]["versions"]
    assert version["subresources"]["scale"] == {
        "specReplicasPath": ".spec.replicas",
        "statusReplicasPath": ".status.replicas",
        "labelSelectorPath": ".status.labelSelector",
    }
    assert [c["name"] for c in version["additionalPrinterColumns"]] == [
        "DESIRED",
        "CURRENT",
        "UPDATED",
        "READY",
        "AGE",
    ]
    schema = version["schema"]["openAPIV3Schema"]
    assert schema["properties"]["spec"]["required"] == ["selector"]
    assert schema["properties"]["status"]["required"] == ["currentRevision", "replicas", "updatedReplicas"]
    subset = schema["properties"]["spec"]["properties"]["topology"]["properties"]["subsets"]["items"]
    assert subset["required"] == ["name"]
    assert subset["properties"]["patch"] == {
        "description": subset["properties"]["patch"]["description"],
        "x-kubernetes-preserve-unknown-fields": True,
    }
    clone = schema["properties"]["spec"]["properties"]["template"]["properties"]["cloneSetTemplate"]
    assert clone["properties"]["spec"]["required"] == ["selector", "template"]
