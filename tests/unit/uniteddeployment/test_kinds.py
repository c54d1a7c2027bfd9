"""What differs per subset kind: which template is used, where the partition lives, how the pods
are found and which pods a rolling update is stuck on."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from kruise.core.kube.resources import DEPLOYMENTS, NATIVE_STATEFULSETS, PODS, REPLICASETS, Resource
from kruise.workloads.uniteddeployment.kinds import (
    ADVANCED_STATEFULSET,
    CLONESET,
    DEPLOYMENT,
    KINDS,
    REVISION_LABEL,
    STATEFULSET,
    owning_workload,
    subset_kind,
)
from kruise.workloads.uniteddeployment.subsets import subset_workload

SUBSET = "apps.kruise.io/subset-name"
POD = {"metadata": {"labels": {"app": "db"}}, "spec": {"containers": [{"name": "db", "image": "db:1"}]}}


def ud(strategy: dict[str, Any] | None = None, field: str = "advancedStatefulSetTemplate") -> dict[str, Any]:
    asts: dict[str, Any] = {"selector": {"matchLabels": {"app": "db"}}, "template": POD, "serviceName": "db"}
    if strategy is not None:
        asts["updateStrategy"] = strategy
    return {
        "metadata": {"name": "db", "namespace": "ns", "uid": "u"},
        "spec": {
            "selector": {"matchLabels": {"app": "db"}},
            "template": {field: {"metadata": {"labels": {"app": "db"}}, "spec": asts}},
            "topology": {"subsets": [{"name": "a"}]},
        },
    }


def test_the_template_picks_the_kind() -> None:
    assert subset_kind({"cloneSetTemplate": {}}) is CLONESET
    assert subset_kind({"advancedStatefulSetTemplate": {}}) is ADVANCED_STATEFULSET
    assert subset_kind({"statefulSetTemplate": {}}) is STATEFULSET
    assert subset_kind({"deploymentTemplate": {}}) is DEPLOYMENT
    assert subset_kind({"deploymentTemplate": {}, "statefulSetTemplate": {}}) is STATEFULSET, (
        "upstream's order"
    )
    assert subset_kind({"cloneSetTemplate": {}, "advancedStatefulSetTemplate": {}}) is ADVANCED_STATEFULSET
    assert subset_kind({}) is None
    assert [k.label for k in KINDS] == ["StatefulSet", "AdvancedStatefulSet", "CloneSet", "Deployment"]


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


def test_native_statefulset_partition_makes_the_strategy_rolling_update() -> None:
    sts = subset_workload(STATEFULSET, ud(field="statefulSetTemplate"), "a", "r1", replicas=3, partition=2)
    assert (sts["apiVersion"], sts["kind"]) == ("apps/v1", "StatefulSet")
    assert sts["spec"]["updateStrategy"] == {"type": "RollingUpdate", "rollingUpdate": {"partition": 2}}
    assert STATEFULSET.read_partition(sts, []) == 2
    kept = subset_workload(
        STATEFULSET,
        ud({"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 2}}, "statefulSetTemplate"),
        "a",
        "r1",
        3,
        1,
    )
    assert kept["spec"]["updateStrategy"] == {
        "type": "RollingUpdate",
        "rollingUpdate": {"maxUnavailable": 2, "partition": 1},
    }
    on_delete = subset_workload(STATEFULSET, ud({"type": "OnDelete"}, "statefulSetTemplate"), "a", "r2", 3, 1)
    assert on_delete["spec"]["updateStrategy"] == {"type": "OnDelete"}
    pods = [{"metadata": {"labels": {REVISION_LABEL: r}}} for r in ("r1", "r2", "r2")]
    assert STATEFULSET.read_partition(on_delete, pods) == 1


def pod(pod_name: str, revision: str, ready: bool) -> dict[str, Any]:
    condition = {"type": "Ready", "status": "True" if ready else "False"}
    return {
        "metadata": {"name": pod_name, "labels": {REVISION_LABEL: revision}},
        "status": {"conditions": [condition]},
    }


def test_native_statefulset_deletes_pods_stuck_behind_the_partition() -> None:
    """``isPodStuckForRollingUpdate``: ordinal >= partition, old revision, not Ready."""
    sts = subset_workload(STATEFULSET, ud(field="statefulSetTemplate"), "a", "r2", replicas=4, partition=1)
    pods = [
        pod("db-a-0", "r1", False),
        pod("db-a-1", "r1", False),
        pod("db-a-2", "r1", True),
        pod("db-a-3", "r2", False),
    ]
    assert [p["metadata"]["name"] for p in STATEFULSET.stuck_pods(sts, pods, "r2", 1)] == ["db-a-1"]
    on_delete = subset_workload(STATEFULSET, ud({"type": "OnDelete"}, "statefulSetTemplate"), "a", "r2", 4, 0)
    assert STATEFULSET.stuck_pods(on_delete, pods, "r2", 0) == []
    assert ADVANCED_STATEFULSET.stuck_pods(sts, pods, "r2", 1) == [], (
        "only the native StatefulSet's PostUpdate"
    )


def test_deployment_has_no_partition() -> None:
    deployment = subset_workload(DEPLOYMENT, ud({"type": "Recreate"}, "deploymentTemplate"), "a", "r1", 3, 2)
    assert (deployment["apiVersion"], deployment["kind"]) == ("apps/v1", "Deployment")
    assert "partition" not in str(deployment["spec"]), "nothing written"
    assert DEPLOYMENT.read_partition(deployment, []) == 0
    assert DEPLOYMENT.stuck_pods(deployment, [pod("db-a-0", "r0", False)], "r1", 0) == []


def owned(owner_name: str, labels: dict[str, str], obj_name: str, owner: tuple[str, str]) -> dict[str, Any]:
    """An object named ``obj_name`` (UID ``<name>-uid``) selecting ``labels``, controlled by
    ``owner`` (kind, apiVersion) named ``owner_name``."""
    kind, api = owner
    ref = {
        "apiVersion": api,
        "kind": kind,
        "name": owner_name,
        "uid": f"{owner_name}-uid",
        "controller": True,
    }
    meta = {
        "name": obj_name,
        "namespace": "ns",
        "labels": labels,
        "uid": f"{obj_name}-uid",
        "ownerReferences": [ref],
    }
    return {"metadata": meta, "spec": {"selector": {"matchLabels": labels}}}


class Index:
    """The cache's owner-UID index over a few objects."""

    def __init__(self, objects: dict[Resource, list[dict[str, Any]]]) -> None:
        self.objects = objects

    def owned_by(self, resource: Resource, owner_uid: str) -> Sequence[dict[str, Any]]:
        return [
            o
            for o in self.objects.get(resource, [])
            if any(r["uid"] == owner_uid for r in o["metadata"].get("ownerReferences", []))
        ]

    def get(self, resource: Resource, key: str) -> dict[str, Any] | None:
        return next((o for o in self.objects.get(resource, []) if f"ns/{o['metadata']['name']}" == key), None)


def test_deployment_pods_are_those_of_its_replicasets() -> None:
    web = {"app": "web", SUBSET: "a"}
    deployment = owned("ud", web, "web-a", ("UnitedDeployment", "apps.kruise.io/v1alpha1"))
    rs_old = owned("web-a", {**web, "pod-template-hash": "1"}, "web-a-1", ("Deployment", "apps/v1"))
    rs_new = owned("web-a", {**web, "pod-template-hash": "2"}, "web-a-2", ("Deployment", "apps/v1"))
    strayed = owned("web-a", {"app": "other"}, "web-a-3", ("Deployment", "apps/v1"))
    pods = [
        owned("web-a-1", {**web, "pod-template-hash": "1"}, "p1", ("ReplicaSet", "apps/v1")),
        owned("web-a-2", {**web, "pod-template-hash": "2"}, "p2", ("ReplicaSet", "apps/v1")),
        owned("web-a-2", {**web, "pod-template-hash": "9"}, "relabelled", ("ReplicaSet", "apps/v1")),
        owned("web-a-3", {"app": "other"}, "of-strayed", ("ReplicaSet", "apps/v1")),
        owned("web-a", web, "direct", ("Deployment", "apps/v1")),
    ]
    index = Index({REPLICASETS: [rs_old, rs_new, strayed], PODS: pods, DEPLOYMENTS: [deployment]})
    found = DEPLOYMENT.pods_of(deployment, index.owned_by)
    assert sorted(p["metadata"]["name"] for p in found) == ["p1", "p2"]
    assert [p["metadata"]["name"] for p in CLONESET.pods_of(deployment, index.owned_by)] == ["direct"]
    assert owning_workload(DEPLOYMENT, pods[1], index.get) is deployment
    assert owning_workload(DEPLOYMENT, pods[4], index.get) is None, (
        "a pod the Deployment owns directly is no RS's"
    )
    sts = owned("ud", web, "web-a", ("UnitedDeployment", "apps.kruise.io/v1alpha1"))
    sts_pod = owned("web-a", web, "web-a-0", ("StatefulSet", "apps/v1"))
    index = Index({NATIVE_STATEFULSETS: [sts], PODS: [sts_pod]})
    assert owning_workload(STATEFULSET, sts_pod, index.get) is sts
    assert owning_workload(ADVANCED_STATEFULSET, sts_pod, index.get) is None, "another API group"
