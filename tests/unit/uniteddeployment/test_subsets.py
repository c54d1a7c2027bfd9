"""Subset workloads (upstream's ApplySubsetTemplate for CloneSets) and the create/update/delete plan."""

from __future__ import annotations

from typing import Any

from kruise.workloads.api.uniteddeployment import UnitedDeploymentSpec
from kruise.workloads.uniteddeployment.kinds import CLONESET
from kruise.workloads.uniteddeployment.revision import new_ud_revision
from kruise.workloads.uniteddeployment.subsets import (
    REVISION_LABEL,
    next_partitions,
    plan_subsets,
    subset_prefix,
    subset_workload,
)


def template_revision(ud: dict[str, Any]) -> str:
    return str(new_ud_revision(ud, 1, 0)["metadata"]["name"])


def cloneset_for(
    ud: dict[str, Any], subset: str, revision: str, replicas: int, partition: int, **kw: Any
) -> dict[str, Any]:
    return subset_workload(CLONESET, ud, subset, revision, replicas, partition, **kw)


def partition_of(workload: dict[str, Any]) -> int:
    return CLONESET.read_partition(workload, [])


def united(**spec: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "apiVersion": "apps.kruise.io/v1alpha1",
        "kind": "UnitedDeployment",
        "metadata": {"name": "web", "namespace": "ns", "uid": "ud-uid"},
        "spec": {
            "replicas": 6,
            "selector": {"matchLabels": {"app": "web"}},
            "template": {
                "cloneSetTemplate": {
                    "metadata": {"labels": {"app": "web", "tier": "front"}, "annotations": {"note": "x"}},
                    "spec": {
                        "selector": {"matchLabels": {"app": "web"}},
                        "template": {
                            "metadata": {"labels": {"app": "web"}},
                            "spec": {
                                "containers": [{"name": "web", "image": "nginx"}],
                                "tolerations": [{"key": "base", "operator": "Exists"}],
                            },
                        },
                        "updateStrategy": {"type": "InPlaceIfPossible"},
                    },
                }
            },
            "topology": {
                "subsets": [
                    {
                        "name": "a",
                        "nodeSelectorTerm": {
                            "matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}],
                            "matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n1"]}],
                        },
                        "tolerations": [{"key": "zone-a", "operator": "Exists"}],
                        "replicas": 2,
                    },
                    {"name": "b", "patch": {"metadata": {"labels": {"x": "y"}}}},
                ]
            },
        },
    }
    body["spec"].update(spec)
    return body


def test_prefix_falls_back_to_the_ud_name_when_too_long() -> None:
    assert subset_prefix("web", "a") == "web-a-"
    long_subset = "s" * 60
    long_ud = "u" * 200
    assert subset_prefix(long_ud, long_subset) == f"{long_ud}-"


def test_partitions_are_capped_by_replicas() -> None:
    spec = UnitedDeploymentSpec.model_validate(
        {
            "selector": {},
            "topology": {"subsets": [{"name": "a"}, {"name": "b"}, {"name": "c"}]},
            "updateStrategy": {"type": "Manual", "manualUpdate": {"partitions": {"a": 5, "b": 1}}},
        }
    )
    assert next_partitions(spec, {"a": 3, "b": 3, "c": 3}) == {"a": 3, "b": 1, "c": 0}
    spec.update_strategy = None
    assert next_partitions(spec, {"a": 3}) == {"a": 0, "b": 0, "c": 0}


def test_cloneset_carries_subset_labels_scheduling_and_allocation() -> None:
    ud = united()
    revision = template_revision(ud)
    cs = cloneset_for(ud, "a", revision, replicas=2, partition=1)
    meta = cs["metadata"]
    assert meta["generateName"] == "web-a-" and meta["namespace"] == "ns"
    assert meta["labels"] == {
        "app": "web",
        "tier": "front",
        "apps.kruise.io/subset-name": "a",
        REVISION_LABEL: revision,
    }
    assert meta["annotations"] == {"note": "x", "apps.kruise.io/subset-patch": ""}
    assert meta["ownerReferences"] == [
        {
            "apiVersion": "apps.kruise.io/v1alpha1",
            "kind": "UnitedDeployment",
            "name": "web",
            "uid": "ud-uid",
            "controller": True,
            "blockOwnerDeletion": True,
        }
    ]
    spec = cs["spec"]
    assert spec["selector"] == {"matchLabels": {"app": "web", "apps.kruise.io/subset-name": "a"}}
    assert spec["replicas"] == 2
    assert spec["updateStrategy"] == {"type": "InPlaceIfPossible", "partition": 1}
    pod = spec["template"]
    assert pod["metadata"]["labels"] == {
        "app": "web",
        "apps.kruise.io/subset-name": "a",
        REVISION_LABEL: revision,
    }
    terms = pod["spec"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
    assert terms == {
        "nodeSelectorTerms": [{"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}]}]
    }
    assert pod["spec"]["tolerations"] == [
        {"key": "base", "operator": "Exists"},
        {"key": "zone-a", "operator": "Exists"},
    ]
    assert "affinity" not in ud["spec"]["template"]["cloneSetTemplate"]["spec"]["template"]["spec"], (
        "ud untouched"
    )
    b = cloneset_for(ud, "b", revision, replicas=4, partition=0)
    assert b["metadata"]["annotations"]["apps.kruise.io/subset-patch"] == '{"metadata":{"labels":{"x":"y"}}}'
    assert b["spec"]["template"]["spec"]["tolerations"] == [{"key": "base", "operator": "Exists"}]
    assert b["spec"]["template"]["metadata"]["labels"]["x"] == "y", "the subset's patch is applied"
    assert "x" not in cs["spec"]["template"]["metadata"]["labels"]


def test_update_keeps_identity_and_merges_labels() -> None:
    ud = united()
    stored = cloneset_for(ud, "a", "old", 2, 0)
    stored["metadata"].update(name="web-a-xyz", resourceVersion="7", uid="cs-uid")
    stored["metadata"]["labels"]["extra"] = "kept"
    updated = cloneset_for(ud, "a", "new", 3, 0, base=stored)
    assert (updated["metadata"]["name"], updated["metadata"]["resourceVersion"]) == ("web-a-xyz", "7")
    assert updated["metadata"]["labels"]["extra"] == "kept"
    assert updated["metadata"]["labels"][REVISION_LABEL] == "new"
    assert len(updated["metadata"]["ownerReferences"]) == 1


def stored(
    ud: dict[str, Any], subset: str, replicas: int, revision: str, name: str, created: str
) -> dict[str, Any]:
    cs = cloneset_for(ud, subset, revision, replicas, 0)
    cs["metadata"].update(name=name, creationTimestamp=created)
    return cs


def test_plan_creates_updates_and_deletes() -> None:
    ud = united()
    rev = template_revision(ud)
    a_old = stored(ud, "a", 2, rev, "web-a-1", "2026-01-01T00:00:00Z")
    a_dup = stored(ud, "a", 2, rev, "web-a-2", "2026-01-02T00:00:00Z")
    gone = stored(
        united(topology={"subsets": [{"name": "gone"}]}), "gone", 1, rev, "web-gone-1", "2026-01-01T00:00:00Z"
    )
    plan = plan_subsets(ud, [a_dup, gone, a_old], {"a": 2, "b": 4}, {"a": 0, "b": 0}, rev, partition_of)
    assert plan.create == ("b",)
    assert plan.update == ()
    assert [c["metadata"]["name"] for c in plan.delete] == ["web-a-2", "web-gone-1"]
    assert plan.workloads["a"]["metadata"]["name"] == "web-a-1"

    rescaled = plan_subsets(ud, [a_old], {"a": 3, "b": 3}, {"a": 0, "b": 0}, rev, partition_of)
    assert rescaled.update == ("a",)
    assert plan_subsets(ud, [a_old], {"a": 2, "b": 4}, {"a": 1, "b": 0}, rev, partition_of).update == ("a",)
    raised = plan_subsets(
        ud, [a_old], {"a": 2, "b": 4}, {"a": 0, "b": 0}, rev, partition_of, lambda n, w: n == "a"
    )
    assert raised.update == ("a",), "a stale subset (maxUnavailable to raise) is updated"
    assert plan_subsets(ud, [a_old], {"a": 2, "b": 4}, {"a": 0, "b": 0}, "other", partition_of).update == (
        "a",
    )
