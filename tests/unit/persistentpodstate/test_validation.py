"""PersistentPodState validating webhook rules: upstream's messages, in upstream's order."""

from __future__ import annotations

from typing import Any

from kruise.workloads.admission.fielderrors import aggregate
from kruise.workloads.persistentpodstate.validation import validate_pps

STS = {"apiVersion": "apps/v1", "kind": "StatefulSet", "name": "web"}
TOPOLOGY = {"nodeTopologyKeys": ["topology.kubernetes.io/zone"]}


def _pps(name: str = "a", target: dict[str, str] | None = None, **spec: Any) -> dict[str, Any]:
    return {"metadata": {"name": name}, "spec": {"targetRef": target if target is not None else STS, **spec}}


def test_valid_required_or_preferred() -> None:
    assert validate_pps(_pps(requiredPersistentTopology=TOPOLOGY), None, []) == []
    preferred = [{"weight": 10, "preference": TOPOLOGY}]
    kruise = {**STS, "apiVersion": "apps.kruise.io/v1beta1"}
    assert validate_pps(_pps(target=kruise, preferredPersistentTopology=preferred), None, []) == []


def test_empty_and_unsupported_target() -> None:
    message = aggregate(
        validate_pps(
            _pps(target={"apiVersion": "apps/v1", "kind": "Deployment"}, requiredPersistentTopology=TOPOLOGY),
            None,
            [],
        )
    )
    ref = 'v1alpha1.TargetReference{APIVersion:"apps/v1", Kind:"Deployment", Name:""}'
    assert message == (
        f"[spec.TargetReference: Invalid value: {ref}: "
        "empty TargetReference is not valid for PersistentPodState., "
        f"spec.TargetReference: Invalid value: {ref}: TargetReference.Kind must be StatefulSet or in "
        "PPS_Watch_Custom_Workload_WhiteList]"
    )


def test_no_topology() -> None:
    message = aggregate(validate_pps(_pps(persistentPodAnnotations=[{"key": "ip"}]), None, []))
    assert message == (
        "spec: Invalid value: v1alpha1.PersistentPodStateSpec{TargetReference:v1alpha1.TargetReference{"
        'APIVersion:"apps/v1", Kind:"StatefulSet", Name:"web"}, PersistentPodAnnotations:'
        '[]v1alpha1.PersistentPodAnnotation{v1alpha1.PersistentPodAnnotation{Key:"ip"}}, '
        "RequiredPersistentTopology:(*v1alpha1.NodeTopologyTerm)(nil), "
        "PreferredPersistentTopology:[]v1alpha1.PreferredTopologyTerm(nil), "
        'PersistentPodStateRetentionPolicy:""}: '
        "TopologyConstraint and TopologyPreference cannot be empty at the same time"
    )


def test_target_immutable_on_update() -> None:
    old = _pps(requiredPersistentTopology=TOPOLOGY)
    new = _pps(target={**STS, "name": "other"}, requiredPersistentTopology=TOPOLOGY)
    assert (
        aggregate(validate_pps(new, old, []))
        == "spec.targetRef: Required value: targetRef cannot be modified"
    )
    assert validate_pps(old, old, []) == []


def test_conflict_with_other_pps_on_same_workload_any_version() -> None:
    mine = _pps("a", requiredPersistentTopology=TOPOLOGY)
    other = _pps("b", target={**STS, "apiVersion": "apps/v1beta2"})
    assert aggregate(validate_pps(mine, None, [mine, other])) == (
        "spec.targetReference: Invalid value: "
        'v1alpha1.TargetReference{APIVersion:"apps/v1", Kind:"StatefulSet", Name:"web"}: '
        "targetReference is in conflict with other PersistentPodState b"
    )
    elsewhere = _pps("c", target={**STS, "name": "db"})
    assert validate_pps(mine, None, [mine, elsewhere]) == []
