"""Advanced StatefulSet API: the v1alpha1 <-> v1beta1 conversion (round trips) and the CRD."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kruise.core.api.conversion import answer_conversion
from kruise.core.crdgen import render_crd
from kruise.workloads.api.statefulset import STATEFULSET_CRD, StatefulSet
from kruise.workloads.api.statefulset_conversion import (
    ALPHA_API_VERSION,
    BETA_API_VERSION,
    BETA_ONLY_SPEC_FIELDS,
    BETA_ONLY_STATUS_FIELDS,
    StatefulSetConversionError,
    convert_statefulset,
)
from kruise.workloads.api.statefulset_v1alpha1 import StatefulSetV1alpha1

names = st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789-", min_size=1, max_size=12)
int_or_percent = st.one_of(st.integers(0, 100), st.integers(0, 100).map(lambda n: f"{n}%"))
rolling = st.fixed_dictionaries(
    {},
    optional={
        "partition": st.integers(0, 50),
        "maxUnavailable": int_or_percent,
        "podUpdatePolicy": st.sampled_from(["ReCreate", "InPlaceIfPossible", "InPlaceOnly"]),
        "paused": st.booleans(),
        "minReadySeconds": st.integers(0, 300),
        "inPlaceUpdateStrategy": st.fixed_dictionaries({"gracePeriodSeconds": st.integers(0, 30)}),
        "unorderedUpdate": st.just({"priorityStrategy": {"orderPriority": [{"orderedKey": "k"}]}}),
    },
)
template = st.fixed_dictionaries(
    {
        "metadata": st.fixed_dictionaries({"labels": st.dictionaries(names, names, min_size=1, max_size=3)}),
        "spec": st.fixed_dictionaries(
            {"containers": st.lists(st.fixed_dictionaries({"name": names, "image": names}), min_size=1)}
        ),
    }
)
alpha_spec = st.fixed_dictionaries(
    {"selector": st.just({"matchLabels": {"app": "x"}}), "template": template},
    optional={
        "replicas": st.integers(0, 1000),
        "serviceName": names,
        "podManagementPolicy": st.sampled_from(["OrderedReady", "Parallel"]),
        "updateStrategy": st.fixed_dictionaries(
            {"type": st.sampled_from(["RollingUpdate", "OnDelete"])}, optional={"rollingUpdate": rolling}
        ),
        "revisionHistoryLimit": st.integers(0, 20),
        "volumeClaimTemplates": st.lists(
            st.fixed_dictionaries({"metadata": st.fixed_dictionaries({"name": names})})
        ),
    },
)
alpha_status = st.fixed_dictionaries(
    {
        "replicas": st.integers(0, 100),
        "readyReplicas": st.integers(0, 100),
        "availableReplicas": st.integers(0, 100),
        "currentReplicas": st.integers(0, 100),
        "updatedReplicas": st.integers(0, 100),
    },
    optional={
        "observedGeneration": st.integers(0, 10**6),
        "currentRevision": names,
        "updateRevision": names,
        "collisionCount": st.integers(0, 5),
        "labelSelector": st.just("app=x"),
        "conditions": st.lists(st.fixed_dictionaries({"type": names, "status": st.just("True")}), max_size=2),
    },
)
beta_only_spec = st.fixed_dictionaries(
    {},
    optional={
        "reserveOrdinals": st.lists(st.one_of(st.integers(0, 9), st.just("3-5")), max_size=3),
        "ordinals": st.fixed_dictionaries({"start": st.integers(0, 5)}),
        "lifecycle": st.just({"preDelete": {"finalizersHandler": ["f"]}}),
        "scaleStrategy": st.fixed_dictionaries({"maxUnavailable": int_or_percent}),
        "persistentVolumeClaimRetentionPolicy": st.just({"whenDeleted": "Delete", "whenScaled": "Retain"}),
        "volumeClaimUpdateStrategy": st.just({"type": "OnDelete"}),
    },
)


def statefulset(api_version: str, spec: dict[str, Any], status: dict[str, Any]) -> dict[str, Any]:
    meta = {"name": "web", "namespace": "ns", "uid": "u-1", "annotations": {"a": "b"}, "generation": 3}
    return {
        "apiVersion": api_version,
        "kind": "StatefulSet",
        "metadata": meta,
        "spec": spec,
        "status": status,
    }


@given(alpha_spec, alpha_status)
def test_v1alpha1_round_trips_through_v1beta1(spec: dict[str, Any], status: dict[str, Any]) -> None:
    alpha = statefulset(ALPHA_API_VERSION, spec, status)
    beta = convert_statefulset(alpha, BETA_API_VERSION)
    StatefulSet.from_dict(beta)  # a valid v1beta1 object
    assert beta["metadata"] == alpha["metadata"]
    assert convert_statefulset(beta, ALPHA_API_VERSION) == alpha


@given(alpha_spec, beta_only_spec, alpha_status)
def test_v1beta1_round_trip_keeps_all_but_the_beta_only_fields(
    spec: dict[str, Any], extra: dict[str, Any], status: dict[str, Any]
) -> None:
    beta = statefulset(BETA_API_VERSION, {**spec, **extra}, {**status, "updatedReadyReplicas": 1})
    alpha = convert_statefulset(beta, ALPHA_API_VERSION)
    StatefulSetV1alpha1.from_dict(alpha)
    assert not set(alpha["spec"]) & set(BETA_ONLY_SPEC_FIELDS)
    assert not set(alpha["status"]) & set(BETA_ONLY_STATUS_FIELDS)
    back = convert_statefulset(alpha, BETA_API_VERSION)
    assert back == statefulset(BETA_API_VERSION, spec, status)
    if not extra:
        assert convert_statefulset(statefulset(BETA_API_VERSION, spec, status), ALPHA_API_VERSION) == {
            **back,
            "apiVersion": ALPHA_API_VERSION,
        }


def test_conversion_refuses_other_kinds_and_versions() -> None:
    with pytest.raises(StatefulSetConversionError, match="unsupported type"):
        convert_statefulset({"apiVersion": "apps/v1", "kind": "StatefulSet"}, BETA_API_VERSION)
    with pytest.raises(StatefulSetConversionError):
        convert_statefulset(statefulset(ALPHA_API_VERSION, {}, {}), "apps.kruise.io/v2")


def test_conversion_review_answers_every_object_or_fails_whole() -> None:
    objects = [statefulset(ALPHA_API_VERSION, {"replicas": i}, {}) for i in range(3)]
    review = {
        "apiVersion": "apiextensions.k8s.io/v1",
        "request": {"uid": "r1", "desiredAPIVersion": BETA_API_VERSION, "objects": objects},
    }
    answer = answer_conversion(review, convert_statefulset)
    assert answer["response"]["uid"] == "r1"
    assert answer["response"]["result"] == {"status": "Success"}
    assert [o["spec"]["replicas"] for o in answer["response"]["convertedObjects"]] == [0, 1, 2]
    bad = {**review, "request": {**review["request"], "desiredAPIVersion": "apps.kruise.io/v9"}}
    failed = answer_conversion(bad, convert_statefulset)["response"]
    assert failed["result"]["status"] == "Failure" and failed["convertedObjects"] == []


def test_crd_has_both_versions_scale_status_and_columns() -> None:
    crd = render_crd(STATEFULSET_CRD)
    assert crd["spec"]["names"]["shortNames"] == ["sts", "asts"]
    versions = {v["name"]: v for v in crd["spec"]["versions"]}
    assert (versions["v1alpha1"]["storage"], versions["v1beta1"]["storage"]) == (False, True)
    for version in versions.values():
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
            "CONTAINERS",
            "IMAGES",
        ]
    beta_spec = versions["v1beta1"]["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]
    alpha_spec = versions["v1alpha1"]["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]
    assert set(beta_spec) - set(alpha_spec) == set(BETA_ONLY_SPEC_FIELDS)
    assert beta_spec["reserveOrdinals"]["items"]["x-kubernetes-int-or-string"] is True
    assert beta_spec["ordinals"]["required"] == ["start"]
