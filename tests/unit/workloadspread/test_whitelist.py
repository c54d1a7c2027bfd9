"""WorkloadSpread's custom-workload white list (kruise-configuration key
``WorkloadSpread_Watch_Custom_Workload_WhiteList``): parsing, permitted kinds, the owner kinds
walked, the replicas path and its value."""

from __future__ import annotations

import pytest

from kruise.workloads.workloadspread.targetfilter import TargetFilterError
from kruise.workloads.workloadspread.whitelist import (
    CustomWorkload,
    GroupKind,
    WhitelistError,
    chain_kinds,
    parse_whitelist,
    permits,
    replicas_of,
    replicas_path,
)

# upstream's e2e configuration (test/kruise-e2e-config.yaml), plus a sub-resource
E2E = """{
  "workloads": [
    {"Group": "kubeflow.org", "Version": "v1", "Kind": "TFJob",
     "ReplicasPath": "spec.tfReplicaSpecs.MASTER.replicas"},
    {"Group": "apps.kruise.io", "Kind": "DaemonSet"},
    {"group": "example.io", "version": "v1", "kind": "Game",
     "subResources": [{"Group": "apps.kruise.io", "Version": "v1alpha1", "Kind": "CloneSet"}],
     "replicasPath": "spec.size"}
  ]
}"""


def test_parse_accepts_any_key_case_as_go() -> None:
    workloads = parse_whitelist(E2E)
    assert workloads[0] == CustomWorkload(
        GroupKind("kubeflow.org", "TFJob", "v1"), (), "spec.tfReplicaSpecs.MASTER.replicas"
    )
    assert workloads[1] == CustomWorkload(GroupKind("apps.kruise.io", "DaemonSet"))
    assert workloads[2].sub_resources == (GroupKind("apps.kruise.io", "CloneSet", "v1alpha1"),)
    assert parse_whitelist("{}") == ()
    for bad in (
        "not json",
        '{"workloads": {}}',
        '{"workloads": [1]}',
        '{"workloads": [{"subResources": 2}]}',
    ):
        with pytest.raises(WhitelistError):
            parse_whitelist(bad)


def test_permits_chain_and_replicas_path() -> None:
    workloads = parse_whitelist(E2E)
    assert permits(workloads, "kubeflow.org/v2", "TFJob")  # group and kind only
    assert not permits(workloads, "kubeflow.org/v1", "PyTorchJob")
    assert not permits(workloads, "apps.kruise.io/v1alpha1", "CloneSet")  # a sub-resource is no target
    assert chain_kinds(workloads) == {
        ("kubeflow.org", "TFJob"),
        ("apps.kruise.io", "DaemonSet"),
        ("example.io", "Game"),
        ("apps.kruise.io", "CloneSet"),
    }
    # upstream's controller matches the version as well
    assert replicas_path(workloads, "kubeflow.org/v1", "TFJob") == "spec.tfReplicaSpecs.MASTER.replicas"
    assert replicas_path(workloads, "kubeflow.org/v2", "TFJob") == ""
    assert replicas_path(workloads, "apps.kruise.io/v1alpha1", "DaemonSet") == ""


def test_replicas_of_reads_the_path() -> None:
    tfjob = {"spec": {"tfReplicaSpecs": {"MASTER": {"replicas": 5}, "PS": {}}}}
    assert replicas_of(tfjob, "spec.tfReplicaSpecs.MASTER.replicas") == 5
    assert replicas_of(tfjob, "spec.tfReplicaSpecs.PS.replicas") == 0  # missing
    assert replicas_of(tfjob, "") == 0
    with pytest.raises(TargetFilterError):
        replicas_of(tfjob, "spec.tfReplicaSpecs.MASTER")
