"""Deletion protection: the pure decision for every kind, with upstream's 403 texts."""

from __future__ import annotations

from typing import Any

import pytest

from kruise.workloads.admission.deletion_protection import (
    Facts,
    active_count,
    bound_pvc_count,
    decide,
    needs_facts,
)

KEY = "policy.kruise.io/delete-protection"
PREFIX = "forbidden by ResourcesProtectionDeletion for policy.kruise.io/delete-protection"


def obj(value: str | None, replicas: int | None = None, deleting: bool = False) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": "x", "labels": {KEY: value} if value else {}}
    if deleting:
        meta["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    return {"metadata": meta, "spec": {} if replicas is None else {"replicas": replicas}}


KINDS = (
    "Namespace",
    "CustomResourceDefinition",
    "Service",
    "Ingress",
    "CloneSet",
    "Deployment",
    "ReplicaSet",
    "StatefulSet",
    "UnitedDeployment",
)


@pytest.mark.parametrize("kind", KINDS)
def test_always_denies_every_kind(kind: str) -> None:
    assert decide(kind, obj("Always"), gate_enabled=True) == f"{PREFIX}=Always"


@pytest.mark.parametrize("kind", KINDS)
def test_gate_off_unlabelled_or_already_deleting_pass(kind: str) -> None:
    assert decide(kind, obj("Always"), gate_enabled=False) is None
    assert decide(kind, obj(None), gate_enabled=True) is None
    assert decide(kind, obj("Always", deleting=True), gate_enabled=True) is None
    assert decide(kind, obj("Sometimes"), gate_enabled=True) is None


@pytest.mark.parametrize("kind", ["CloneSet", "Deployment", "ReplicaSet", "StatefulSet", "UnitedDeployment"])
def test_cascading_workloads_follow_replicas(kind: str) -> None:
    assert decide(kind, obj("Cascading", 3), gate_enabled=True) == f"{PREFIX}=Cascading and replicas 3>0"
    assert decide(kind, obj("Cascading", 0), gate_enabled=True) is None
    assert decide(kind, obj("Cascading"), gate_enabled=True) is None


@pytest.mark.parametrize("kind", ["Service", "Ingress"])
def test_services_and_ingresses_know_only_always(kind: str) -> None:
    assert decide(kind, obj("Cascading", 3), Facts(active_pods=3), gate_enabled=True) is None


def test_cascading_namespace_pods_then_pvcs() -> None:
    ns = obj("Cascading")
    assert needs_facts("Namespace", ns) and not needs_facts("Namespace", obj("Always"))
    assert decide("Namespace", ns, Facts(active_pods=2, bound_pvcs=1), gate_enabled=True) == (
        f"{PREFIX}=Cascading and active pods 2>0"
    )
    assert decide("Namespace", ns, Facts(active_pods=0, bound_pvcs=1), gate_enabled=True) == (
        f'{PREFIX}=Cascading and "Bound" status pvc 1>0'
    )
    assert decide("Namespace", ns, Facts(active_pods=0, bound_pvcs=0), gate_enabled=True) is None


def test_cascading_crd_needs_its_gate_then_counts_objects() -> None:
    crd = obj("Cascading")
    assert decide("CustomResourceDefinition", crd, Facts(active_crs=4), gate_enabled=True) == (
        "feature-gate DeletionProtectionForCRDCascadingGate is not enabled"
    )
    with_gate = Facts(active_crs=4, crd_cascading_gate=True)
    assert decide("CustomResourceDefinition", crd, with_gate, gate_enabled=True) == (
        f"{PREFIX}=Cascading and active CRs 4>0"
    )
    assert (
        decide(
            "CustomResourceDefinition", crd, Facts(active_crs=0, crd_cascading_gate=True), gate_enabled=True
        )
        is None
    )


def test_counting_active_pods_and_bound_pvcs() -> None:
    gone = {"metadata": {"deletionTimestamp": "t"}, "status": {"phase": "Running"}}
    pods = [
        {"status": {"phase": "Running"}},
        {"status": {"phase": "Succeeded"}},
        {"status": {"phase": "Failed"}},
        gone,
    ]
    assert active_count(pods, pods=True) == 1
    assert active_count(pods) == 3
    pvcs = [
        {"status": {"phase": "Bound"}},
        {"status": {"phase": "Pending"}},
        {**gone, "status": {"phase": "Bound"}},
    ]
    assert bound_pvc_count(pvcs) == 1
