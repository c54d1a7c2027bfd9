"""What differs per subset kind: which template is used, and where the partition lives."""

from __future__ import annotations

from typing import Any

from kruise.workloads.uniteddeployment.kinds import (
    ADVANCED_STATEFULSET,
    CLONESET,
    REVISION_LABEL,
    subset_kind,
)
from kruise.workloads.uniteddeployment.subsets import subset_workload

POD = {"metadata": {"labels": {"app": "db"}}, "spec": {"containers": [{"name": "db", "image": "db:1"}]}}


def ud(strategy: dict[str, Any] | None = None) -> dict[str, Any]:
    asts: dict[str, Any] = {"selector": {"matchLabels": {"app": "db"}}, "template": POD, "serviceName": "db"}
    if strategy is not None:
        asts["updateStrategy"] = strategy
    return {
        "metadata": {"name": "db", "namespace": "ns", "uid": "u"},
        "spec": {
            "selector": {"matchLabels": {"app": "db"}},
            "template": {
                "advancedStatefulSetTemplate": {"metadata": {"labels": {"app": "db"}}, "spec": asts}
            },
            "topology": {"subsets": [{"name": "a"}]},
        },
    }


def test_the_template_picks_the_kind() -> None:
    assert subset_kind({"cloneSetTemplate": {}}) is CLONESET
    assert subset_kind({"advancedStatefulSetTemplate": {}}) is ADVANCED_STATEFULSET
    assert subset_kind({"statefulSetTemplate": {}}) is None
    assert subset_kind({"deploymentTemplate": {}}) is None
    assert subset_kind({}) is None


def test_advanced_statefulset_partition_in_rolling_update() -> None:
    sts = subset_workload(ADVANCED_STATEFULSET, ud(), "a", "r1", replicas=3, partition=2)
    assert (sts["apiVersion"], sts["kind"]) == ("apps.kruise.io/v1beta1", "StatefulSet")
    assert sts["spec"]["updateStrategy"] == {"rollingUpdate": {"partition": 2}}
    assert sts["spec"]["serviceName"] == "db" and sts["spec"]["replicas"] == 3
    assert ADVANCED_STATEFULSET.read_partition(sts, []) == 2
    explicit = subset_workload(
        ADVANCED_STATEFULSET,
        ud({"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 2}}),
        "a",
        "r1",
        3,
        1,
    )
    assert explicit["spec"]["updateStrategy"] == {
        "type": "RollingUpdate",
        "rollingUpdate": {"maxUnavailable": 2, "partition": 1},
    }


def test_on_delete_counts_pods_behind_the_revision() -> None:
    sts = subset_workload(ADVANCED_STATEFULSET, ud({"type": "OnDelete"}), "a", "r2", replicas=3, partition=1)
    assert sts["spec"]["updateStrategy"] == {"type": "OnDelete"}, "no partition written for OnDelete"
    pods = [{"metadata": {"labels": {REVISION_LABEL: r}}} for r in ("r1", "r2", "r1")]
    assert ADVANCED_STATEFULSET.read_partition(sts, pods) == 2


def test_cloneset_partition_resolves_percentages() -> None:
    workload = {"spec": {"replicas": 5, "updateStrategy": {"partition": "50%"}}}
    assert CLONESET.read_partition(workload, []) == 3
    assert CLONESET.read_partition({"spec": {"replicas": 5}}, []) == 0
