"""WorkloadSpread per-revision accounting (``versionedSubsetStatuses``): revision keys, a
workload's latest revision, first statuses of a revision and the controller's versioned map."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from kruise.workloads.api.workloadspread import MATCHED_ANNOTATION
from kruise.workloads.intorpercent import IntOrPercentError
from kruise.workloads.workloadspread.subsets import Matched
from kruise.workloads.workloadspread.versions import (
    VERSION_IGNORED,
    initial_statuses,
    next_versioned_statuses,
    pod_version,
    workload_version,
)

NOW = datetime(2026, 1, 1, 12, 0, 0, tzinfo=UTC)
SUBSETS: Any = [{"name": "a", "maxReplicas": 2}, {"name": "b"}]


def _owned(
    kind: str, labels: dict[str, str], *, name: str = "p", subset: str | None = None
) -> dict[str, Any]:
    meta: dict[str, Any] = {
        "name": name,
        "labels": labels,
        "ownerReferences": [{"apiVersion": "apps/v1", "kind": kind, "name": "w", "controller": True}],
    }
    if subset is not None:
        meta["annotations"] = {MATCHED_ANNOTATION: Matched("ws", subset).encode()}
    return {"metadata": meta, "spec": {"nodeName": "n"}, "status": {"phase": "Running"}}


def test_only_replicaset_pods_are_versioned() -> None:
    """Upstream's default set (deployment, replicaset): a ReplicaSet's pod by its
    pod-template-hash; a CloneSet's or StatefulSet's pod is versionIgnored whatever it carries."""
    assert pod_version(_owned("ReplicaSet", {"pod-template-hash": "abc"})) == "abc"
    assert pod_version(_owned("ReplicaSet", {"controller-revision-hash": "web-7d9f"})) == "7d9f"
    assert pod_version(_owned("ReplicaSet", {})) == VERSION_IGNORED
    cloneset_pod = _owned("CloneSet", {"pod-template-hash": "abc", "controller-revision-hash": "web-abc"})
    assert pod_version(cloneset_pod) == VERSION_IGNORED
    assert pod_version(_owned("StatefulSet", {"controller-revision-hash": "web-1"})) == VERSION_IGNORED
    assert pod_version({"metadata": {"labels": {"pod-template-hash": "x"}}}) == VERSION_IGNORED


def _template(image: str, extra: dict[str, str] | None = None) -> dict[str, Any]:
    return {
        "metadata": {"labels": {"app": "web", **(extra or {})}},
        "spec": {"containers": [{"name": "web", "image": image}]},
    }


def test_a_deployments_latest_version_is_its_current_replicasets_hash() -> None:
    deployment = {
        "metadata": {"name": "web", "uid": "d1"},
        "spec": {"template": _template("v2")},
    }

    def rs(hash_: str, image: str, uid: str = "d1", deleting: bool = False) -> dict[str, Any]:
        meta: dict[str, Any] = {
            "name": f"web-{hash_}",
            "labels": {"pod-template-hash": hash_},
            "ownerReferences": [{"kind": "Deployment", "uid": uid, "controller": True}],
        }
        if deleting:
            meta["deletionTimestamp"] = "2026-01-01T00:00:00Z"
        return {"metadata": meta, "spec": {"template": _template(image, {"pod-template-hash": hash_})}}

    old, new = rs("h1", "v1"), rs("h2", "v2")
    assert workload_version("Deployment", deployment, [old, new]) == "h2"
    # no ReplicaSet of the current template yet (or only another owner's, or a deleting one)
    assert (
        workload_version(
            "Deployment", deployment, [old, rs("h3", "v2", uid="other"), rs("h4", "v2", deleting=True)]
        )
        is None
    )
    assert workload_version("ReplicaSet", {"metadata": {"labels": {"pod-template-hash": "h9"}}}) == "h9"
    # a CloneSet is not versioned (upstream's default set), whatever its revisions
    assert workload_version("CloneSet", {"status": {"updateRevision": "web-abc"}}) == VERSION_IGNORED


def test_a_new_revision_starts_from_the_spec() -> None:
    subsets: Any = [{"name": "a", "maxReplicas": "50%"}, {"name": "b", "maxReplicas": 1}, {"name": "c"}]
    assert initial_statuses(subsets, 5) == [
        {"name": "a", "replicas": 0, "missingReplicas": 3},
        {"name": "b", "replicas": 0, "missingReplicas": 1},
        {"name": "c", "replicas": 0, "missingReplicas": -1},
    ]
    with pytest.raises(IntOrPercentError):
        initial_statuses([{"name": "a", "maxReplicas": "x%"}], 5)


def test_each_revision_is_counted_against_the_whole_cap() -> None:
    """Old revision: 2 in a, 1 in b; new revision: 1 in a. Each revision's ``a`` is capped at 2
    on its own (the new one has room for 1 more), as upstream's per-version statuses."""
    pods = [
        _owned("ReplicaSet", {"pod-template-hash": "old"}, name="o1", subset="a"),
        _owned("ReplicaSet", {"pod-template-hash": "old"}, name="o2", subset="a"),
        _owned("ReplicaSet", {"pod-template-hash": "old"}, name="o3", subset="b"),
        _owned("ReplicaSet", {"pod-template-hash": "new"}, name="n1", subset="a"),
    ]
    out = next_versioned_statuses("ws", SUBSETS, {}, pods, 4, NOW)
    assert out == {
        "old": [
            {"name": "a", "replicas": 2, "missingReplicas": 0},
            {"name": "b", "replicas": 1, "missingReplicas": -1},
        ],
        "new": [
            {"name": "a", "replicas": 1, "missingReplicas": 1},
            {"name": "b", "replicas": 0, "missingReplicas": -1},
        ],
    }


def test_a_revision_without_pods_is_kept_only_while_it_waits() -> None:
    """A revision whose pod the webhook admitted but the controller has not seen is kept (its
    creation entry still counts); once the entry expires, or with nothing counted, it is dropped."""
    recent = (NOW - timedelta(seconds=5)).strftime("%Y-%m-%dT%H:%M:%SZ")
    stale = (NOW - timedelta(seconds=60)).strftime("%Y-%m-%dT%H:%M:%SZ")
    waiting: Any = {
        "h2": [
            {"name": "a", "replicas": 0, "missingReplicas": 1, "creatingPods": {"n1": recent}},
            {"name": "b", "replicas": 0, "missingReplicas": -1},
        ],
        "h3": [{"name": "a", "replicas": 0, "missingReplicas": 1, "creatingPods": {"n9": stale}}],
        "h4": [{"name": "a", "replicas": 3, "missingReplicas": 0}],
    }
    out = next_versioned_statuses("ws", SUBSETS, waiting, [], 4, NOW)
    assert list(out) == ["h2"]
    assert out["h2"][0] == {"name": "a", "replicas": 0, "missingReplicas": 1, "creatingPods": {"n1": recent}}
