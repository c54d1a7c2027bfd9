"""WorkloadSpread pure core: subset choice, status records, injection, accounting, deletion costs."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any

from kruise.workloads.api.workloadspread import MATCHED_ANNOTATION
from kruise.workloads.workloadspread.subsets import (
    Matched,
    deleting_subset,
    deletion_costs,
    deletion_under_way,
    inject_into_pod,
    matched_of,
    max_replicas,
    next_statuses,
    orphaned_pods,
    record_creation,
    record_deletion,
    subset_status,
)

NOW = datetime(2026, 1, 1, 12, 0, 0, tzinfo=UTC)
ZONE_A = {"matchExpressions": [{"key": "topology.kubernetes.io/zone", "operator": "In", "values": ["a"]}]}


def _pod(name: str, *, ready: bool = True, node: str = "n1", created: int = 0) -> dict[str, Any]:
    stamp = (NOW + timedelta(seconds=created)).strftime("%Y-%m-%dT%H:%M:%SZ")
    conditions = [{"type": "Ready", "status": "True" if ready else "False"}]
    return {
        "metadata": {"name": name, "creationTimestamp": stamp},
        "spec": {"nodeName": node},
        "status": {"phase": "Running", "conditions": conditions},
    }


def test_first_subset_with_room_takes_the_pod() -> None:
    statuses: list[Any] = [
        {"name": "a", "replicas": 2, "missingReplicas": 0},
        {"name": "b", "replicas": 0, "missingReplicas": -1},
    ]
    out = record_creation(statuses, "p1", NOW)
    # upstream: an uncapped subset takes the pod but records nothing (no status write)
    assert out.subset == "b" and out.statuses is None
    statuses[0]["missingReplicas"] = 2
    out = record_creation(statuses, "p2", NOW)
    assert out.subset == "a" and out.statuses is not None and out.statuses[0]["missingReplicas"] == 1
    assert out.statuses[0]["creatingPods"] == {"p2": "2026-01-01T12:00:00Z"}
    assert "creatingPods" not in statuses[0]  # input untouched


def test_unschedulable_subset_skipped_and_nameless_pod_gets_uid() -> None:
    statuses: list[Any] = [
        {
            "name": "a",
            "replicas": 0,
            "missingReplicas": 3,
            "conditions": [{"type": "Schedulable", "status": "False"}],
        },
        {"name": "b", "replicas": 0, "missingReplicas": 1},
    ]
    out = record_creation(statuses, "", NOW, new_uid="u-1")
    assert out.subset == "b" and out.uid == "u-1"
    assert out.statuses is not None and out.statuses[1]["creatingPods"] == {"u-1": "2026-01-01T12:00:00Z"}


def test_no_room_and_already_recorded_write_nothing() -> None:
    full: list[Any] = [{"name": "a", "replicas": 2, "missingReplicas": 0}]
    assert record_creation(full, "p", NOW).statuses is None
    seen: list[Any] = [{"name": "a", "replicas": 1, "missingReplicas": 1, "creatingPods": {"p": "x"}}]
    again = record_creation(seen, "p", NOW)
    assert again.statuses is None and again.subset == "a"


def test_record_deletion() -> None:
    statuses: list[Any] = [
        {"name": "a", "replicas": 2, "missingReplicas": 0},
        {"name": "b", "missingReplicas": -1},
    ]
    out = record_deletion(statuses, "p", "a", NOW)
    assert out.statuses is not None
    assert (
        out.statuses[0]["deletingPods"] == {"p": "2026-01-01T12:00:00Z"}
        and out.statuses[0]["missingReplicas"] == 1
    )
    assert record_deletion(out.statuses, "p", "a", NOW).statuses is None
    uncapped = record_deletion(statuses, "q", "b", NOW)  # upstream: nothing to give back
    assert uncapped.statuses is None and uncapped.subset == "b"
    assert record_deletion(statuses, "p", "zz", NOW).statuses is None


def test_deleting_subset_needs_an_active_controlled_annotated_pod() -> None:
    pod = _pod("web-1")
    pod["metadata"]["ownerReferences"] = [{"kind": "ReplicaSet", "name": "web-x", "controller": True}]
    assert deleting_subset(pod) is None  # no matched annotation
    pod["metadata"]["annotations"] = {MATCHED_ANNOTATION: Matched("ws", "a").encode()}
    assert deleting_subset(pod) == Matched("ws", "a")
    assert deleting_subset({**pod, "metadata": {**pod["metadata"], "ownerReferences": []}}) is None
    gone = {**pod, "metadata": {**pod["metadata"], "deletionTimestamp": "2026-01-01T12:00:00Z"}}
    assert deleting_subset(gone) is None
    assert deleting_subset({**pod, "status": {"phase": "Succeeded"}}) is None
    pod["metadata"]["annotations"] = {MATCHED_ANNOTATION: "{not json"}
    assert deleting_subset(pod) is None


def test_injection() -> None:
    pod = {
        "metadata": {"name": "p", "labels": {"app": "x"}},
        "spec": {
            "tolerations": [{"key": "t", "operator": "Exists"}],
            "affinity": {
                "nodeAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": {
                        "nodeSelectorTerms": [{"matchExpressions": [{"key": "k", "operator": "Exists"}]}]
                    }
                }
            },
            "containers": [{"name": "c", "image": "i"}],
        },
    }
    subset: Any = {
        "name": "a",
        "requiredNodeSelectorTerm": ZONE_A,
        "preferredNodeSelectorTerms": [{"weight": 5, "preference": ZONE_A}],
        "tolerations": [{"key": "zone", "operator": "Exists"}],
        "patch": {"metadata": {"labels": {"subset": "a"}}},
    }
    out = inject_into_pod(pod, subset, "ws")
    affinity = out["spec"]["affinity"]["nodeAffinity"]
    terms = affinity["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"]
    assert terms == [{"matchExpressions": [{"key": "k", "operator": "Exists"}, *ZONE_A["matchExpressions"]]}]
    assert affinity["preferredDuringSchedulingIgnoredDuringExecution"] == [
        {"weight": 5, "preference": ZONE_A}
    ]
    assert [t["key"] for t in out["spec"]["tolerations"]] == ["t", "zone"]
    assert out["metadata"]["labels"] == {"app": "x", "subset": "a"}
    assert json.loads(out["metadata"]["annotations"][MATCHED_ANNOTATION]) == {"name": "ws", "subset": "a"}
    assert "annotations" not in pod["metadata"]  # input untouched
    fresh = inject_into_pod({"metadata": {}, "spec": {}}, subset, "ws", uid="u")
    assert fresh["spec"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"] == {
        "nodeSelectorTerms": [ZONE_A]
    }
    assert matched_of(fresh) == Matched("ws", "a", "u")
    assert matched_of({"metadata": {"annotations": {MATCHED_ANNOTATION: "{bad"}}}) is None


def test_a_patch_changing_the_priority_class_drops_the_resolved_priority() -> None:
    """Upstream: the apiserver resolved ``priority`` from the template's class before the
    webhook; a patch naming another class clears it (re-resolved), any other patch keeps it."""
    pod: Any = {"metadata": {}, "spec": {"priorityClassName": "low", "priority": 0}}
    raised: Any = {"name": "a", "patch": {"spec": {"priorityClassName": "high"}}}
    out = inject_into_pod(pod, raised, "ws")
    assert out["spec"]["priorityClassName"] == "high" and "priority" not in out["spec"]
    labelled: Any = {"name": "a", "patch": {"metadata": {"labels": {"subset": "a"}}}}
    assert inject_into_pod(pod, labelled, "ws")["spec"]["priority"] == 0


def test_max_replicas_percent_rounds_up() -> None:
    assert max_replicas({"name": "a", "maxReplicas": "50%"}, 5) == 3
    assert max_replicas({"name": "a", "maxReplicas": 2}, 5) == 2
    assert max_replicas({"name": "a"}, 5) is None


def test_subset_status_accounting_and_expiry() -> None:
    recent = (NOW - timedelta(seconds=5)).strftime("%Y-%m-%dT%H:%M:%SZ")
    old_stamp = (NOW - timedelta(seconds=60)).strftime("%Y-%m-%dT%H:%M:%SZ")
    old: Any = {
        "name": "a",
        "replicas": 0,
        "missingReplicas": 0,
        "creatingPods": {"p1": recent, "p9": recent, "stale": old_stamp},
        "deletingPods": {"p2": recent, "gone": recent},
        "conditions": [{"type": "Schedulable", "status": "True"}],
    }
    pods = [_pod("p1"), _pod("p2")]
    out = subset_status({"name": "a", "maxReplicas": 4}, old, pods, 6, NOW)
    assert out["replicas"] == 2
    assert out["creatingPods"] == {"p9": recent}  # p1 seen, stale expired
    assert out["deletingPods"] == {"p2": recent}  # "gone" is gone
    assert out["missingReplicas"] == 4 - 2 - 1 + 1
    assert out["conditions"] == old["conditions"]
    uncapped = subset_status({"name": "b"}, None, pods, 6, NOW)
    assert uncapped == {"name": "b", "replicas": 2, "missingReplicas": -1}


def test_deletion_costs_prefer_later_subsets_and_pods_over_cap() -> None:
    subsets: Any = [{"name": "a", "maxReplicas": 2}, {"name": "b"}]
    pods = {
        "a": [_pod("a1", created=0), _pod("a2", created=1), _pod("a3", ready=False, created=2)],
        "b": [_pod("b1"), _pod("b2")],
    }
    costs = deletion_costs(subsets, pods, 5)
    # upstream: over subset i's cap -100 * (i + 1); kept 100 * (n - i)
    assert costs == {"a1": 200, "a2": 200, "a3": -100, "b1": 100, "b2": 100}
    pods["a"] = []
    pods["b"] = [_pod("b1"), _pod("b2"), _pod("b3", ready=False)]
    assert deletion_costs([{"name": "a"}, {"name": "b", "maxReplicas": 2}], pods, 5)["b3"] == -200


def test_pods_of_a_removed_subset_get_the_lowest_deletion_cost() -> None:
    """Upstream's fake subset: a pod matched to a subset no longer in the spec costs -100 * (n + 1);
    pods of other WorkloadSpreads or without the annotation are not orphans."""

    def placed(name: str, ws: str, subset: str | None) -> dict[str, Any]:
        pod = _pod(name)
        if subset is not None:
            pod["metadata"]["annotations"] = {MATCHED_ANNOTATION: Matched(ws, subset).encode()}
        return pod

    subsets: Any = [{"name": "a", "maxReplicas": 3}]
    pods = [
        placed("p1", "ws", "b"),
        placed("p2", "ws", "a"),
        placed("p3", "other", "b"),
        placed("p4", "ws", None),
    ]
    orphans = orphaned_pods("ws", subsets, pods)
    assert [p["metadata"]["name"] for p in orphans] == ["p1"]
    assert deletion_costs(subsets, {"a": [pods[1]]}, 3, orphans) == {"p1": -200, "p2": 100}


def test_next_statuses_groups_pods_by_their_matched_subset() -> None:
    subsets: Any = [{"name": "a", "maxReplicas": 2}, {"name": "b"}]

    def placed(name: str, ws: str, subset: str) -> dict[str, Any]:
        pod = _pod(name)
        pod["metadata"]["annotations"] = {MATCHED_ANNOTATION: Matched(ws, subset).encode()}
        return pod

    pods = [
        placed("a1", "ws", "a"),
        placed("b1", "ws", "b"),
        placed("b2", "ws", "b"),
        placed("x", "other", "a"),
    ]
    old: Any = [
        {
            "name": "b",
            "replicas": 0,
            "missingReplicas": -1,
            "creatingPods": {"b3": NOW.strftime("%Y-%m-%dT%H:%M:%SZ")},
        }
    ]
    out = next_statuses("ws", subsets, old, pods, 6, NOW)
    assert [(s["name"], s["replicas"], s["missingReplicas"]) for s in out] == [("a", 1, 1), ("b", 2, -1)]
    assert out[1]["creatingPods"] == {"b3": "2026-01-01T12:00:00Z"}


def test_a_creation_recorded_by_uid_is_dropped_when_its_pod_is_seen() -> None:
    stamp = NOW.strftime("%Y-%m-%dT%H:%M:%SZ")
    pod = _pod("web-x1")
    pod["metadata"]["annotations"] = {MATCHED_ANNOTATION: Matched("ws", "a", "u-1").encode()}
    old: Any = {"name": "a", "replicas": 0, "missingReplicas": 1, "creatingPods": {"u-1": stamp}}
    out = subset_status({"name": "a", "maxReplicas": 2}, old, [pod], 6, NOW)
    assert "creatingPods" not in out and out["missingReplicas"] == 1


def test_an_old_revisions_deletion_costs_number_the_subsets_from_the_last() -> None:
    """Upstream's ``updateDeletionCostBySubset(reverseOrder)``: for an old revision subset ``i``
    counts as ``n - i - 1``, so its first subset's pods go first; over a cap as usual."""
    subsets: Any = [{"name": "a", "maxReplicas": 2}, {"name": "b"}]
    pods = {
        "a": [_pod("a1", created=0), _pod("a2", created=1), _pod("a3", ready=False, created=2)],
        "b": [_pod("b1")],
    }
    costs = deletion_costs(subsets, pods, 4, reverse=True)
    assert costs == {"a1": 100, "a2": 100, "a3": -200, "b1": 200}


def test_a_delete_validated_again_after_it_was_carried_out_is_told_apart() -> None:
    """The API server's second validation of a zero-grace DELETE carries the pod as it was before
    the first: read fresh, the pod is terminating or gone, and recording it again would free its
    room twice."""
    admitted = _pod("web-1")
    admitted["metadata"]["uid"] = "u1"
    assert not deletion_under_way(admitted, admitted)  # the first call: the pod is still there
    terminating = {
        **admitted,
        "metadata": {**admitted["metadata"], "deletionTimestamp": "2026-01-01T12:00:00Z"},
    }
    assert deletion_under_way(admitted, terminating)
    assert deletion_under_way(admitted, None)
    recreated = {**admitted, "metadata": {**admitted["metadata"], "uid": "u2"}}  # a StatefulSet's
    assert deletion_under_way(admitted, recreated)
    assert deletion_under_way(admitted, {**admitted, "status": {"phase": "Failed"}})
