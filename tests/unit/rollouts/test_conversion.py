"""v1alpha1 <-> v1beta1 conversion of Rollout and BatchRelease (upstream ``api/v1alpha1/conversion.go``)."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kruise.rollouts.api import (
    BatchRelease,
    BatchReleaseV1alpha1,
    Rollout,
    RolloutV1alpha1,
)
from kruise.rollouts.api.conversion import (
    ConversionError,
    batchrelease_to_v1alpha1,
    batchrelease_to_v1beta1,
    convert_object,
    convert_review,
    rollout_to_v1alpha1,
    rollout_to_v1beta1,
)
from tests.conformance.upstream_readme import Findings, static_findings, without
from tests.support.compare import missing
from tests.unit.rollouts.helpers import (
    CORPUS,
    example,
    load,
    upstream_examples,
    v1alpha1_rollout,
    v1beta1_rollout,
)

FINDINGS = static_findings(CORPUS.parent / "README.md")
NO_FINDINGS = Findings((), ())
ALPHA, BETA = "rollouts.kruise.io/v1alpha1", "rollouts.kruise.io/v1beta1"
STYLE, TR = "rollouts.kruise.io/rolling-style", "rollouts.kruise.io/trafficrouting"


def _of(api_version: str, kind: str) -> list[Path]:
    return [p for p in upstream_examples(kind) if load(p)["apiVersion"] == api_version]


# --- Rollout: the documented mapping -------------------------------------------------------


def test_v1alpha1_to_v1beta1_maps_every_field() -> None:
    doc = v1alpha1_rollout(
        paused=True,
        canary={
            "steps": [
                {
                    "weight": 5,
                    "replicas": 1,
                    "pause": {},
                    "matches": [{"headers": [{"name": "u", "value": "pc"}]}],
                },
                {"weight": 40, "pause": {"duration": 10}},
                {"replicas": "100%"},
            ],
            "trafficRoutings": [
                {
                    "service": "svc",
                    "gracePeriodSeconds": 5,
                    "ingress": {"name": "ing", "classType": "nginx"},
                    "customNetworkRefs": [
                        {"apiVersion": "networking.istio.io/v1", "kind": "VirtualService", "name": "vs"}
                    ],
                }
            ],
            "failureThreshold": "10%",
            "patchPodTemplateMetadata": {"labels": {"gray": "true"}},
            "disableGenerateCanaryService": True,
        },
    )
    doc["metadata"]["annotations"] = {STYLE: "Partition", TR: "tr-demo"}
    doc["spec"]["disabled"] = True
    beta = rollout_to_v1beta1(RolloutV1alpha1.from_dict(doc)).to_dict()
    assert beta["apiVersion"] == BETA
    assert beta["metadata"]["annotations"] == {STYLE: "Partition", TR: "tr-demo"}
    spec = beta["spec"]
    assert spec["workloadRef"] == {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"}
    assert spec["disabled"] is True
    assert spec["strategy"]["paused"] is True
    canary = spec["strategy"]["canary"]
    assert canary["steps"] == [
        {
            "traffic": "5%",
            "replicas": 1,
            "pause": {},
            "matches": [{"headers": [{"name": "u", "value": "pc"}]}],
        },
        {"traffic": "40%", "replicas": "40%", "pause": {"duration": 10}},
        {"replicas": "100%", "pause": {}},
    ]
    assert canary["trafficRoutings"] == doc["spec"]["strategy"]["canary"]["trafficRoutings"]
    assert canary["failureThreshold"] == "10%"
    assert canary["patchPodTemplateMetadata"] == {"labels": {"gray": "true"}}
    assert canary["disableGenerateCanaryService"] is True
    assert canary["enableExtraWorkloadForCanary"] is False  # "Partition" in any case means partition
    assert canary["trafficRoutingRef"] == "tr-demo"


@pytest.mark.parametrize(
    ("annotation", "extra"),
    [
        (None, True),
        ("canary", True),
        ("Canary", True),
        ("partition", False),
        ("PARTITION", False),
        ("other", True),
    ],
)
def test_rolling_style_annotation_decides_the_extra_workload(
    annotation: str | None, extra: bool | None
) -> None:
    doc = v1alpha1_rollout()
    if annotation is not None:
        doc["metadata"]["annotations"] = {STYLE: annotation}
    canary = rollout_to_v1beta1(RolloutV1alpha1.from_dict(doc)).spec.strategy.canary
    assert canary is not None and canary.enable_extra_workload_for_canary is extra


def test_v1beta1_to_v1alpha1_writes_the_annotations_and_weights() -> None:
    doc = v1beta1_rollout(
        canary={
            "enableExtraWorkloadForCanary": True,
            "trafficRoutingRef": "tr",
            "steps": [
                {
                    "traffic": "5%",
                    "replicas": 1,
                    "matches": [{"path": {"value": "/x"}, "headers": [{"name": "a", "value": "b"}]}],
                },
                {"traffic": "oops", "replicas": "50%"},
                {"replicas": "100%"},
            ],
            "trafficRoutings": [
                {"service": "svc", "gateway": {"httpRouteName": "route"}, "additionalParams": {"k": "v"}}
            ],
        }
    )
    alpha = rollout_to_v1alpha1(Rollout.from_dict(doc)).to_dict()
    assert alpha["apiVersion"] == ALPHA
    assert alpha["metadata"]["annotations"] == {STYLE: "canary", TR: "tr"}
    assert alpha["spec"]["objectRef"] == {
        "workloadRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"}
    }
    steps = alpha["spec"]["strategy"]["canary"]["steps"]
    # path and queryParams have no v1alpha1 field;
    # an unparsable traffic becomes weight 0 (upstream ignores the error)
    assert steps == [
        {"weight": 5, "replicas": 1, "matches": [{"headers": [{"name": "a", "value": "b"}]}], "pause": {}},
        {"weight": 0, "replicas": "50%", "pause": {}},
        {"replicas": "100%", "pause": {}},
    ]
    assert alpha["spec"]["strategy"]["canary"]["trafficRoutings"] == [
        {"service": "svc", "gateway": {"httpRouteName": "route"}}
    ]
    partition = rollout_to_v1alpha1(Rollout.from_dict(v1beta1_rollout()))
    assert partition.metadata.annotations == {STYLE: "partition"}


def test_blue_green_cannot_be_converted_to_v1alpha1() -> None:
    with pytest.raises(ConversionError) as err:
        rollout_to_v1alpha1(Rollout.from_dict(example("Rollout", "018")))
    assert str(err.value) == "v1beta1 Rollout with BlueGreen strategy cannot be converted to v1alpha1"


def test_rollout_status_maps_both_ways() -> None:
    canary = {
        "observedWorkloadGeneration": 3,
        "observedRolloutID": "id-1",
        "rolloutHash": "h",
        "stableRevision": "s",
        "canaryRevision": "c",
        "podTemplateHash": "p",
        "canaryReplicas": 2,
        "canaryReadyReplicas": 1,
        "currentStepIndex": 2,
        "currentStepState": "StepPaused",
        "nextStepIndex": 3,
        "finalisingStep": "",
        "message": "m",
        "lastUpdateTime": "2024-05-01T12:00:00Z",
    }
    condition = {
        "type": "Progressing",
        "status": "True",
        "reason": "InRolling",
        "message": "",
        "lastUpdateTime": "2024-05-01T12:00:00Z",
    }
    doc = v1alpha1_rollout()
    doc["status"] = {
        "observedGeneration": 4,
        "phase": "Progressing",
        "message": "msg",
        "conditions": [condition],
        "canaryStatus": canary,
    }
    beta = rollout_to_v1beta1(RolloutV1alpha1.from_dict(doc)).to_dict()["status"]
    assert beta == {**doc["status"], "currentStepIndex": 2, "currentStepState": "StepPaused"}
    back = rollout_to_v1alpha1(Rollout.from_dict({**v1beta1_rollout(), "status": beta})).to_dict()["status"]
    assert back == doc["status"]


def test_converted_conditions_are_copies_extra_fields_included() -> None:
    condition = {"type": "Progressing", "status": "True", "reason": "r", "message": "", "x": {"k": ["v"]}}
    src = Rollout.from_dict({**v1beta1_rollout(), "status": {"conditions": [condition]}})
    dst = rollout_to_v1alpha1(src)
    assert dst.status is not None and dst.status.conditions is not None
    copied = dst.status.conditions[0]
    assert copied.to_dict() == condition
    copied.reason = "changed"
    copied.model_extra["x"]["k"].append("w")  # type: ignore[index]
    assert src.to_dict()["status"]["conditions"] == [condition]


# --- Rollout: round trips --------------------------------------------------------------------


@pytest.mark.parametrize("path", _of(ALPHA, "Rollout"), ids=lambda p: str(p.relative_to(CORPUS)))
def test_v1alpha1_examples_survive_a_trip_through_storage(path: Path) -> None:
    doc = load(path)
    stored = convert_object(doc, BETA)
    Rollout.from_dict(stored)
    back = convert_object(stored, ALPHA)
    spec = {k: v for k, v in doc["spec"].items() if k in ("objectRef", "strategy", "disabled", "rolloutID")}
    if "objectRef" in spec:
        spec.pop(
            "rolloutID", None
        )  # the only v1alpha1 field v1beta1 cannot hold (none of the examples sets it)
        assert missing(spec, back["spec"]) == []
    assert back["metadata"]["name"] == doc["metadata"]["name"]
    assert missing(doc["metadata"].get("annotations", {}), back["metadata"].get("annotations", {})) == []


# v1beta1 examples: what a v1beta1 -> v1alpha1 -> v1beta1 trip loses (blue-green cannot go)
LOST = {
    "010": [
        "spec.strategy.canary.steps[0].matches[1].queryParams",
        "spec.strategy.canary.steps[0].matches[2].path",
    ],
    "011": [
        "spec.strategy.canary.steps[0].matches[1].queryParams",
        "spec.strategy.canary.steps[0].matches[2].path",
    ],
}


@pytest.mark.parametrize("path", _of(BETA, "Rollout"), ids=lambda p: str(p.relative_to(CORPUS)))
def test_v1beta1_examples_round_trip_through_v1alpha1(path: Path) -> None:
    # the example as upstream's API server stores it: unknown fields pruned
    raw = without(load(path), FINDINGS.get(str(path.relative_to(CORPUS.parent)), NO_FINDINGS).unknown)
    doc = Rollout.from_dict(raw).to_dict()
    if doc["spec"]["strategy"].get("blueGreen") is not None:
        with pytest.raises(ConversionError):
            convert_object(doc, ALPHA)
        return
    back = convert_object(convert_object(doc, ALPHA), BETA)
    lost = missing(doc["spec"], back["spec"], path="spec")
    assert lost == LOST.get(path.name[:3], [])


@given(
    st.lists(
        st.tuples(
            st.one_of(st.none(), st.integers(0, 100)),
            st.one_of(st.none(), st.integers(1, 50), st.integers(1, 100).map(lambda n: f"{n}%")),
        ),
        min_size=1,
        max_size=6,
    )
)
def test_steps_round_trip_with_replicas_defaulted_from_weight(
    steps: list[tuple[int | None, int | str | None]],
) -> None:
    raw: list[dict[str, Any]] = []
    for weight, replicas in steps:
        step: dict[str, Any] = {}
        if weight is not None:
            step["weight"] = weight
        if replicas is not None:
            step["replicas"] = replicas
        raw.append(step)
    doc = v1alpha1_rollout(canary={"steps": raw})
    back = convert_object(convert_object(doc, BETA), ALPHA)
    for original, step in zip(raw, back["spec"]["strategy"]["canary"]["steps"], strict=True):
        assert step.get("weight") == original.get("weight")
        expected = original.get("replicas", f"{original['weight']}%" if "weight" in original else None)
        assert step.get("replicas") == expected


# --- BatchRelease -----------------------------------------------------------------------------


def batchrelease_v1alpha1() -> dict[str, Any]:
    return {
        "apiVersion": ALPHA,
        "kind": "BatchRelease",
        "metadata": {"name": "demo", "namespace": "shop", "annotations": {STYLE: "Partition"}},
        "spec": {
            "targetReference": {
                "workloadRef": {"apiVersion": "apps.kruise.io/v1alpha1", "kind": "CloneSet", "name": "web"}
            },
            "releasePlan": {
                "batches": [{"canaryReplicas": 1}, {"canaryReplicas": "50%"}],
                "batchPartition": 0,
                "rolloutID": "r1",
                "failureThreshold": "20%",
                "finalizingPolicy": "WaitResume",
                "patchPodTemplateMetadata": {"annotations": {"a": "b"}},
                "enableExtraWorkloadForCanary": False,
            },
        },
        "status": {
            "phase": "Progressing",
            "stableRevision": "s",
            "updateRevision": "u",
            "observedGeneration": 2,
            "observedRolloutID": "r1",
            "observedWorkloadReplicas": 4,
            "collisionCount": 1,
            "observedReleasePlanHash": "hash",
            "canaryStatus": {
                "batchState": "Ready",
                "currentBatch": 1,
                "updatedReplicas": 2,
                "updatedReadyReplicas": 2,
            },
            "conditions": [{"type": "Progressing", "status": "True", "reason": "r", "message": ""}],
        },
    }


def test_batchrelease_v1alpha1_to_v1beta1() -> None:
    doc = batchrelease_v1alpha1()
    beta = batchrelease_to_v1beta1(BatchReleaseV1alpha1.from_dict(doc)).to_dict()
    assert beta["spec"]["workloadRef"] == doc["spec"]["targetReference"]["workloadRef"]
    assert beta["spec"]["releasePlan"] == {**doc["spec"]["releasePlan"], "rollingStyle": "Partition"}
    assert beta["status"] == doc["status"]


@pytest.mark.parametrize(
    ("annotation", "own", "style"),
    [
        ("bluegreen", None, "BlueGreen"),
        ("CANARY", "Partition", "Canary"),
        (None, "Canary", "Canary"),
        ("junk", None, None),
    ],
)
def test_batchrelease_rolling_style(annotation: str | None, own: str | None, style: str | None) -> None:
    doc = batchrelease_v1alpha1()
    doc["metadata"]["annotations"] = {} if annotation is None else {STYLE: annotation}
    if own is not None:
        doc["spec"]["releasePlan"]["rollingStyle"] = own
    assert (
        batchrelease_to_v1beta1(BatchReleaseV1alpha1.from_dict(doc)).spec.release_plan.rolling_style == style
    )


def test_batchrelease_round_trips_and_drops_the_v1beta1_message() -> None:
    doc = batchrelease_v1alpha1()
    beta = convert_object(doc, BETA)
    beta["status"]["message"] = "only in v1beta1"
    back = convert_object(beta, ALPHA)
    assert back["metadata"]["annotations"] == {STYLE: "partition"}
    assert back["spec"] == {
        **doc["spec"],
        "releasePlan": {**doc["spec"]["releasePlan"], "rollingStyle": "Partition"},
    }
    assert back["status"] == doc["status"]
    plain = BatchRelease.from_dict({"spec": {"releasePlan": {"batches": [{"canaryReplicas": 1}]}}})
    assert batchrelease_to_v1alpha1(plain).metadata.annotations is None


# --- wire entry points ---------------------------------------------------------------------


def test_convert_object_keeps_metadata_verbatim_except_annotations() -> None:
    doc = v1alpha1_rollout()
    doc["metadata"] |= {
        "uid": "u-1",
        "resourceVersion": "42",
        "creationTimestamp": "2024-05-01T12:00:00Z",
        "managedFields": [{"manager": "kubectl", "fieldsV1": {"f:spec": {}}}],
        "labels": {"app": "web"},
    }
    original = copy.deepcopy(doc)
    beta = convert_object(doc, BETA)
    assert doc == original
    assert beta["metadata"] == original["metadata"]
    back = convert_object(beta, ALPHA)
    assert back["metadata"] == {**original["metadata"], "annotations": {STYLE: "canary"}}
    assert convert_object(doc, ALPHA) == doc


def test_convert_object_refuses_what_it_does_not_know() -> None:
    with pytest.raises(ConversionError, match="unsupported conversion of TrafficRouting"):
        convert_object({"apiVersion": ALPHA, "kind": "TrafficRouting", "metadata": {}}, BETA)
    with pytest.raises(ConversionError, match="invalid Rollout"):
        convert_object({**v1alpha1_rollout(), "spec": {"disabled": "yes"}}, BETA)


def test_convert_review_success_and_failure() -> None:
    review = {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "ConversionReview",
        "request": {
            "uid": "abc",
            "desiredAPIVersion": BETA,
            "objects": [v1alpha1_rollout(), batchrelease_v1alpha1()],
        },
    }
    answer = convert_review(review)
    assert answer["apiVersion"] == "apiextensions.k8s.io/v1" and answer["kind"] == "ConversionReview"
    response = answer["response"]
    assert response["uid"] == "abc" and response["result"] == {"status": "Success"}
    assert [o["apiVersion"] for o in response["convertedObjects"]] == [BETA, BETA]
    failing = {
        **review,
        "request": {"uid": "x", "desiredAPIVersion": ALPHA, "objects": [example("Rollout", "018")]},
    }
    response = convert_review(failing)["response"]
    assert response["convertedObjects"] == []
    assert response["result"] == {
        "status": "Failure",
        "message": "v1beta1 Rollout with BlueGreen strategy cannot be converted to v1alpha1",
    }
