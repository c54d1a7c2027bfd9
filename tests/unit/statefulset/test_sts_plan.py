"""One StatefulSet round, decided: the scale and rolling-update phases and the status (pure)."""

from __future__ import annotations

from typing import Any

from sts_builders import NOW, decide, pods_at, revision, running, statefulset, with_image

from kruise.workloads.objects import name
from kruise.workloads.statefulset.actions import (
    CreatePod,
    DeletePod,
    DeleteReason,
    LifecycleChange,
    SetClaimOwners,
    UpdateInPlace,
)
from kruise.workloads.statefulset.identity import new_pod
from kruise.workloads.statefulset.update import sort_pods_to_update


def created(p: Any) -> list[str]:
    return [name(a.pod) for a in p.scale if isinstance(a, CreatePod)]


def deleted(actions: Any) -> list[str]:
    return [name(a.pod) for a in actions if isinstance(a, DeletePod)]


# ----------------------------------------------------------------------------- scale
def test_ordered_ready_creates_one_pod_and_waits() -> None:
    sts = statefulset(3)
    first = decide(sts, [])
    assert created(first) == ["web-0"] and first.scale_exit
    rev = revision(sts)
    second = decide(sts, pods_at(sts, rev, [0]))
    assert created(second) == ["web-1"]
    halted = decide(sts, pods_at(sts, rev, [0], ready=False))
    assert created(halted) == [] and halted.scale_exit  # halts at an unhealthy pod


def test_parallel_creates_every_missing_pod_in_one_round() -> None:
    sts = statefulset(5, parallel=True)
    p = decide(sts, pods_at(sts, revision(sts), [1], ready=False))
    assert created(p) == ["web-0", "web-2", "web-3", "web-4"] and not p.scale_exit


def test_scale_max_unavailable_limits_parallel_creation() -> None:
    sts = statefulset(6, parallel=True, scaleStrategy={"maxUnavailable": 2})
    p = decide(sts, pods_at(sts, revision(sts), [0, 1]))
    assert created(p) == ["web-2", "web-3"]
    limited = decide(sts, pods_at(sts, revision(sts), [0], ready=False))  # one already unavailable
    assert created(limited) == ["web-1"]


def test_reserved_ordinals_are_never_created_and_their_pods_condemned() -> None:
    sts = statefulset(3, parallel=True, reserveOrdinals=[1])
    rev = revision(sts)
    p = decide(sts, pods_at(sts, rev, [0, 1]))
    assert created(p) == ["web-2", "web-3"]
    assert deleted(p.scale) == ["web-1"] and p.scale[-1].reason == DeleteReason.CONDEMNED


def test_ordered_scale_in_deletes_from_the_top_one_at_a_time() -> None:
    sts = statefulset(1)
    rev = revision(sts)
    p = decide(sts, pods_at(sts, rev, [0, 1, 2]))
    assert deleted(p.scale) == ["web-2"] and p.scale_exit
    blocked = decide(sts, [*pods_at(sts, rev, [1, 2]), *pods_at(sts, rev, [0], ready=False)])
    assert deleted(blocked.scale) == []  # halts: the replica web-0 is not available
    # an unhealthy condemned pod waits unless it is the first unhealthy one; a healthy one goes
    mixed = decide(sts, [*pods_at(sts, rev, [0, 2]), *pods_at(sts, rev, [1], ready=False)])
    assert deleted(mixed.scale) == ["web-2"]


def test_parallel_scale_in_deletes_all_at_once() -> None:
    sts = statefulset(1, parallel=True)
    p = decide(sts, pods_at(sts, revision(sts), [0, 1, 2]))
    assert deleted(p.scale) == ["web-2", "web-1"]


def test_failed_pods_are_deleted_to_be_recreated() -> None:
    sts = statefulset(2, parallel=True)
    rev = revision(sts)
    evicted = pods_at(sts, rev, [0, 1])
    evicted[0]["status"]["phase"] = "Failed"
    p = decide(sts, evicted)
    assert deleted(p.scale) == ["web-0"] and p.scale[0].reason == DeleteReason.FINISHED and p.scale_exit


def test_pre_delete_hook_turns_a_delete_into_preparing_delete() -> None:
    sts = statefulset(1, lifecycle={"preDelete": {"finalizersHandler": ["hold"]}})
    rev = revision(sts)
    pods = pods_at(sts, rev, [0, 1])
    pods[1]["metadata"]["finalizers"] = ["hold"]
    p = decide(sts, pods)
    (change,) = [a for a in p.scale if isinstance(a, LifecycleChange)]
    assert name(change.pod) == "web-1" and change.transition.state == "PreparingDelete"
    pods[1]["metadata"]["labels"]["lifecycle.apps.kruise.io/state"] = "PreparingDelete"
    assert [a for a in decide(sts, pods).scale if isinstance(a, (LifecycleChange, DeletePod))] == []


def test_retention_owners_for_a_condemned_pod() -> None:
    sts = statefulset(
        1,
        persistentVolumeClaimRetentionPolicy={"whenScaled": "Delete", "whenDeleted": "Retain"},
        volumeClaimTemplates=[{"metadata": {"name": "data"}, "spec": {}}],
    )
    rev = revision(sts)
    pods = pods_at(sts, rev, [0, 1])
    claims = {n: {"metadata": {"name": n, "resourceVersion": "1"}} for n in ("data-web-0", "data-web-1")}
    p = decide(sts, pods, claims=claims)
    (owners,) = [a for a in p.scale if isinstance(a, SetClaimOwners)]
    assert name(owners.claim) == "data-web-1"
    assert owners.owner_references == [
        {"apiVersion": "v1", "kind": "Pod", "name": "web-1", "uid": "uid-web-1"}
    ]


# ----------------------------------------------------------------------------- update
def updated_pods(
    sts: Any, count: int, *, old_ordinals: list[int], **state: Any
) -> tuple[list[Any], Any, Any]:
    old = revision(sts, 1)
    new_sts = with_image(sts, "nginx:2")
    new = revision(new_sts, 2)
    pods = [
        running(new_pod(new_sts, old if o in old_ordinals else new, o, NOW), **state) for o in range(count)
    ]
    return pods, old, new


def test_ordered_recreate_goes_from_the_top_within_max_unavailable() -> None:
    sts = statefulset(4, rolling={"partition": 1})
    pods, old, new = updated_pods(sts, 4, old_ordinals=[0, 1, 2, 3])
    p = decide(with_image(sts, "nginx:2"), pods, current=old, update=new)
    assert deleted(p.update) == ["web-3"] and p.update[0].reason == DeleteReason.UPDATE
    assert p.status["currentReplicas"] == 3  # web-3 leaves the current revision


def test_already_unavailable_pods_are_replaced_beyond_max_unavailable() -> None:
    # rollingUpdateStatefulsetPods seeds its unavailable set with the unhealthy replicas and only
    # stops at an *available* pod once the set holds maxUnavailable: broken pods never wait.
    sts = statefulset(3, parallel=True, rolling={"maxUnavailable": 1})
    pods, old, new = updated_pods(sts, 3, old_ordinals=[0, 1, 2])
    pods = [running(pod, ready=name(pod) == "web-0") for pod in pods]
    p = decide(with_image(sts, "nginx:2"), pods, current=old, update=new, revisions=[old, new])
    assert deleted(p.update) == ["web-2", "web-1"]  # then web-0 is available and the budget spent


def test_partition_is_respected_and_in_place_used_when_possible() -> None:
    sts = statefulset(5, parallel=True, in_place=True, rolling={"partition": 2, "maxUnavailable": 2})
    pods, old, new = updated_pods(sts, 5, old_ordinals=[0, 1, 2, 3, 4])
    p = decide(with_image(sts, "nginx:2"), pods, current=old, update=new, revisions=[old, new])
    moved = [a for a in p.update if isinstance(a, UpdateInPlace)]
    assert [name(a.pod) for a in moved] == ["web-4", "web-3"]  # maxUnavailable 2
    assert moved[0].spec.container_images == {"main": "nginx:2"}


def test_unordered_update_follows_the_priority_and_partition() -> None:
    sts = statefulset(
        4,
        parallel=True,
        rolling={
            "partition": 2,
            "maxUnavailable": 4,
            "unorderedUpdate": {
                "priorityStrategy": {
                    "weightPriority": [{"weight": 50, "matchSelector": {"matchLabels": {"pri": "hi"}}}]
                }
            },
        },
    )
    pods, old, new = updated_pods(sts, 4, old_ordinals=[0, 1, 2, 3])
    pods[0]["metadata"]["labels"]["pri"] = "hi"
    pods[1]["metadata"]["labels"]["pri"] = "hi"
    p = decide(with_image(sts, "nginx:2"), pods, current=old, update=new)
    assert sorted(deleted(p.update)) == ["web-0", "web-1"]


def test_in_place_only_refuses_other_changes() -> None:
    sts = statefulset(2, in_place=True)
    sts["spec"]["updateStrategy"]["rollingUpdate"]["podUpdatePolicy"] = "InPlaceOnly"
    old = revision(sts, 1)
    changed = with_image(sts, "nginx:1")
    changed["spec"]["template"]["spec"]["containers"][0]["env"] = [{"name": "A", "value": "1"}]
    new = revision(changed, 2)
    pods = [running(new_pod(sts, old, o, NOW)) for o in range(2)]
    p = decide(changed, pods, current=old, update=new, revisions=[old, new])
    assert p.update == () and p.errors == (
        "find strategy is InPlaceOnly but Pod web-1 can not update in-place",
    )


def test_specified_delete_ignores_the_partition_but_not_max_unavailable() -> None:
    sts = statefulset(3, rolling={"partition": 3})
    rev = revision(sts)
    pods = pods_at(sts, rev, [0, 1, 2])
    for pod in pods[:2]:
        pod["metadata"]["labels"]["apps.kruise.io/specified-delete"] = "true"
    p = decide(sts, pods)
    assert deleted(p.update) == ["web-1"]
    assert p.update[0].reason == DeleteReason.SPECIFIED


def test_paused_and_on_delete_update_nothing() -> None:
    for sts in (statefulset(2, rolling={"paused": True}), statefulset(2, update_type="OnDelete")):
        pods, old, new = updated_pods(sts, 2, old_ordinals=[0, 1])
        assert decide(with_image(sts, "nginx:2"), pods, current=old, update=new).update == ()


def test_sort_pods_to_update() -> None:
    slots: list[Any] = [{"metadata": {"name": f"p-{i}", "labels": {}}} for i in range(4)]
    slots[2] = None
    assert sort_pods_to_update({"partition": 1}, "r", 4, slots) == [3, 1]
    assert sort_pods_to_update({"partition": 4}, "r", 4, slots) == []
    assert sort_pods_to_update(None, "r", 4, slots) == [3, 1, 0]


# ----------------------------------------------------------------------------- status
def test_status_counts_and_completion() -> None:
    sts = statefulset(3, rolling={"minReadySeconds": 60})
    rev = revision(sts)
    pods = [*pods_at(sts, rev, [0, 1]), *pods_at(sts, rev, [2], since=NOW)]
    status = decide(sts, pods).status
    assert {k: status[k] for k in ("replicas", "readyReplicas", "availableReplicas", "updatedReplicas")} == {
        "replicas": 3,
        "readyReplicas": 3,
        "availableReplicas": 2,
        "updatedReplicas": 3,
    }
    assert status["currentRevision"] == status["updateRevision"] == name(rev)
    assert status["labelSelector"] == "app=web" and status["observedGeneration"] == 2


def test_volume_claims_status() -> None:
    template = {"metadata": {"name": "data"}, "spec": {"resources": {"requests": {"storage": "1Gi"}}}}
    sts = statefulset(2, volumeClaimTemplates=[template])
    rev = revision(sts)
    claims = {
        "data-web-0": {
            "spec": {"resources": {"requests": {"storage": "2Gi"}}},
            "status": {"capacity": {"storage": "2Gi"}},
        },
        "data-web-1": {"spec": {"resources": {"requests": {"storage": "1Gi"}}}, "status": {}},
    }
    status = decide(sts, pods_at(sts, rev, [0, 1]), claims=claims).status
    assert status["volumeClaims"] == [
        {"volumeClaimName": "data", "compatibleReplicas": 2, "compatibleReadyReplicas": 1}
    ]
