"""The CloneSet model accepts the documented and upstream manifests unchanged, and rejects bad types."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
import yaml
from pydantic import ValidationError

from kruise.core.api import scaled_value_from_int_or_percent
from kruise.workloads.api import CloneSet, CloneSetStatus, CloneSetUpdateStrategyType
from tests.support.corpus import UPSTREAM_EXAMPLES

UPSTREAM = UPSTREAM_EXAMPLES
UPSTREAM_CLONESETS = sorted(
    [
        *(UPSTREAM / "kruise" / "CloneSet").glob("*.yaml"),
        *(UPSTREAM / "kruise-rollouts" / "CloneSet").glob("*.yaml"),
    ]
)

DOCUMENTED = """
apiVersion: apps.kruise.io/v1alpha1
kind: CloneSet
metadata: { name: web, namespace: shop }
spec:
  replicas: 10
  selector:
    matchLabels: { app: web }
  template:
    metadata:
      labels: { app: web }
    spec:
      containers:
        - name: web
          image: registry.example.com/shop/web:1.4.0
  updateStrategy:
    type: InPlaceIfPossible
    partition: 8
    maxUnavailable: 20%
"""


def documented() -> dict[str, Any]:
    data = yaml.safe_load(DOCUMENTED)
    assert isinstance(data, dict)
    return data


def test_documented_example_validates_and_round_trips() -> None:
    data = documented()
    cs = CloneSet.from_dict(data)
    assert cs.metadata.name == "web" and cs.metadata.namespace == "shop"
    assert cs.spec.replicas == 10
    assert cs.spec.selector.match_labels == {"app": "web"}
    strategy = cs.spec.update_strategy
    assert strategy is not None
    assert strategy.type == CloneSetUpdateStrategyType.IN_PLACE_IF_POSSIBLE
    assert strategy.partition == 8
    assert strategy.max_unavailable == "20%"
    assert scaled_value_from_int_or_percent(strategy.max_unavailable, 10, True) == 2
    assert cs.status is None
    assert cs.to_dict() == data


@pytest.mark.parametrize(
    ("path", "value"),
    [
        pytest.param(("spec", "replicas"), "ten", id="replicas as a word"),
        pytest.param(("spec", "replicas"), "10", id="replicas as a quoted number"),
        pytest.param(("spec", "updateStrategy", "paused"), "yes", id="paused not a bool"),
        pytest.param(("spec", "minReadySeconds"), [1], id="minReadySeconds as a list"),
        pytest.param(("spec", "updateStrategy", "partition"), 1.5, id="partition as a float"),
        pytest.param(("spec", "selector"), "app=web", id="selector as a string"),
    ],
)
def test_wrong_types_are_rejected(path: tuple[str, ...], value: Any) -> None:
    data = copy.deepcopy(documented())
    target = data
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    with pytest.raises(ValidationError):
        CloneSet.from_dict(data)


@pytest.mark.parametrize("missing", ["selector", "template"])
def test_selector_and_template_are_required(missing: str) -> None:
    data = documented()
    del data["spec"][missing]
    with pytest.raises(ValidationError):
        CloneSet.from_dict(data)


def test_unvalidated_values_are_left_to_the_webhook() -> None:
    """Like the CRD, the model accepts well-typed but invalid values so the webhook can word the error."""
    data = documented()
    data["spec"]["updateStrategy"].update({"type": "OnDelete", "partition": "5"})
    data["spec"]["updateStrategy"]["priorityStrategy"] = {
        "weightPriority": [{"weight": 500, "matchSelector": {"matchLabels": {"a": "b"}}}],
        "orderPriority": [{"orderedKey": "k"}],
    }
    cs = CloneSet.from_dict(data)
    assert cs.spec.update_strategy is not None and cs.spec.update_strategy.partition == "5"
    assert cs.to_dict() == data


def test_a_full_spec_and_status_round_trip() -> None:
    data = documented()
    data["metadata"].update({"uid": "u-1", "generation": 2, "resourceVersion": "9"})
    data["spec"].update(
        {
            "volumeClaimTemplates": [
                {"metadata": {"name": "data"}, "spec": {"accessModes": ["ReadWriteOnce"]}}
            ],
            "scaleStrategy": {"podsToDelete": ["web-abcde"], "maxUnavailable": 1, "disablePVCReuse": True},
            "revisionHistoryLimit": 5,
            "minReadySeconds": 3,
            "lifecycle": {
                "preDelete": {"finalizersHandler": ["example.com/hook"], "markPodNotReady": True},
                "inPlaceUpdate": {"labelsHandler": {"example.com/ready": "true"}},
                "preNormal": {"labelsHandler": {"example.com/warm": "true"}},
            },
        }
    )
    data["spec"]["updateStrategy"].update(
        {
            "maxSurge": "10%",
            "paused": False,
            "scatterStrategy": [{"key": "zone", "value": "a"}],
            "inPlaceUpdateStrategy": {"gracePeriodSeconds": 10},
        }
    )
    data["status"] = {
        "observedGeneration": 2,
        "replicas": 10,
        "readyReplicas": 9,
        "availableReplicas": 9,
        "updatedReplicas": 2,
        "updatedReadyReplicas": 2,
        "updatedAvailableReplicas": 2,
        "expectedUpdatedReplicas": 2,
        "updateRevision": "web-6d8f",
        "currentRevision": "web-5c7e",
        "collisionCount": 0,
        "labelSelector": "app=web",
        "conditions": [{"type": "FailedScale", "status": "True", "reason": "r", "message": "m"}],
    }
    cs = CloneSet.from_dict(data)
    assert cs.spec.scale_strategy is not None and cs.spec.scale_strategy.disable_pvc_reuse is True
    assert cs.status is not None and cs.status.updated_ready_replicas == 2
    assert cs.to_dict() == data


def test_api_version_and_kind_are_filled_in() -> None:
    data = documented()
    del data["apiVersion"], data["kind"]
    out = CloneSet.from_dict(data).to_dict()
    assert (out["apiVersion"], out["kind"]) == ("apps.kruise.io/v1alpha1", "CloneSet")


def test_status_counters_default_to_zero() -> None:
    assert CloneSetStatus().to_dict() == {
        "observedGeneration": 0,
        "replicas": 0,
        "readyReplicas": 0,
        "availableReplicas": 0,
        "updatedReplicas": 0,
        "updatedReadyReplicas": 0,
        "updatedAvailableReplicas": 0,
        "expectedUpdatedReplicas": 0,
    }


def test_the_upstream_examples_are_all_here() -> None:
    assert len(UPSTREAM_CLONESETS) == 6


@pytest.mark.parametrize("path", UPSTREAM_CLONESETS, ids=lambda p: f"{p.parent.parent.name}/{p.name}")
def test_upstream_cloneset_examples_parse_unchanged(path: Path) -> None:
    for doc in yaml.safe_load_all(path.read_text(encoding="utf-8")):
        if not doc or doc.get("kind") != "CloneSet":
            continue
        assert CloneSet.from_dict(doc).to_dict() == doc
