"""Scale-out objects (pods, PVCs, instance ids) and status arithmetic."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from cloneset_builders import NOW, cloneset, pod

from kruise.workloads.cloneset.newpods import (
    CLONESET_KIND,
    ID_ALPHABET,
    choose_instance_ids,
    free_pvc_instance_ids,
    new_pod,
    new_pvcs,
    plan_pvc_cleanup,
    pvc_reown_patch,
)
from kruise.workloads.cloneset.status import (
    calculate_status,
    seconds_until_available,
    status_to_write,
)
from kruise.workloads.inplace.writer import slow_start_batches
from kruise.workloads.revisions import new_revision
from kruise.workloads.selector import format_label_selector


def _with_meta(cs: dict[str, Any]) -> dict[str, Any]:
    cs["metadata"].update({"name": "web", "namespace": "shop", "uid": "cs-uid"})
    return cs


@pytest.mark.parametrize(
    ("total", "batches"),
    [
        pytest.param(0, [], id="nothing to create"),
        pytest.param(1, [1], id="one pod"),
        pytest.param(10, [1, 2, 4, 3], id="ten pods in slow-start batches"),
        pytest.param(15, [1, 2, 4, 8], id="exact powers"),
    ],
)
def test_slow_start_batches(total: int, batches: list[int]) -> None:
    assert slow_start_batches(total) == batches
    assert sum(batches) == total


def test_instance_ids_reuse_free_pvcs_first_then_fresh_ones() -> None:
    ids = choose_instance_ids(3, taken={"aaaaa"}, reusable=["bbbbb"])
    assert ids[0] == "bbbbb"
    assert len(set(ids)) == 3 and "aaaaa" not in ids
    assert all(len(i) == 5 and set(i) <= set(ID_ALPHABET) for i in ids[1:])


def test_free_pvc_ids_exclude_those_in_use() -> None:
    def pvc(instance: str) -> dict[str, Any]:
        return {"metadata": {"labels": {"apps.kruise.io/cloneset-instance-id": instance}}}

    live = {"metadata": {"labels": {"apps.kruise.io/cloneset-instance-id": "used1"}}}
    assert free_pvc_instance_ids([pvc("used1"), pvc("free1")], [live]) == ["free1"]


def test_new_pod_has_name_labels_gate_owner_and_claims() -> None:
    cs = _with_meta(cloneset(3))
    cs["spec"]["volumeClaimTemplates"] = [
        {"metadata": {"name": "data"}, "spec": {"accessModes": ["ReadWriteOnce"]}}
    ]
    cs["spec"]["template"]["spec"]["volumes"] = [
        {"name": "data", "emptyDir": {}},
        {"name": "cache", "emptyDir": {}},
    ]
    rev = new_revision(cs, 1, 0, controller=CLONESET_KIND)
    p = new_pod(cs, rev, "x7k2q", NOW)
    rev_name = rev["metadata"]["name"]
    assert p["metadata"]["name"] == "web-x7k2q"
    labels = p["metadata"]["labels"]
    assert labels["controller-revision-hash"] == rev_name
    assert labels["pod-template-hash"] == rev_name.rsplit("-", 1)[1]
    assert labels["apps.kruise.io/cloneset-instance-id"] == "x7k2q"
    assert labels["lifecycle.apps.kruise.io/state"] == "PreparingNormal"
    # InPlaceUpdateReady from the in-place engine, KruisePodReady as upstream's pod webhook adds it
    assert p["spec"]["readinessGates"][-2:] == [
        {"conditionType": "InPlaceUpdateReady"},
        {"conditionType": "KruisePodReady"},
    ]
    assert p["metadata"]["ownerReferences"][0]["uid"] == "cs-uid"
    assert p["spec"]["volumes"][0] == {
        "name": "data",
        "persistentVolumeClaim": {"claimName": "data-web-x7k2q"},
    }
    assert [v["name"] for v in p["spec"]["volumes"]] == ["data", "cache"], (
        "VCT volume replaces the template's"
    )
    (claim,) = new_pvcs(cs, "x7k2q")
    assert claim["metadata"]["name"] == "data-web-x7k2q"
    assert claim["metadata"]["labels"]["apps.kruise.io/cloneset-instance-id"] == "x7k2q"


def test_new_pod_copies_template_finalizers() -> None:
    cs = _with_meta(cloneset(1))
    cs["spec"]["template"]["metadata"]["finalizers"] = ["example.com/hold"]
    p = new_pod(cs, new_revision(cs, 1, 0, controller=CLONESET_KIND), "x7k2q", NOW)
    assert p["metadata"]["finalizers"] == ["example.com/hold"]
    cs["spec"]["template"]["metadata"].pop("finalizers")
    assert (
        "finalizers"
        not in new_pod(cs, new_revision(cs, 1, 0, controller=CLONESET_KIND), "x7k2q", NOW)["metadata"]
    )


def _claim(instance: str) -> dict[str, Any]:
    return {
        "metadata": {
            "name": f"data-web-{instance}",
            "resourceVersion": "7",
            "labels": {"apps.kruise.io/cloneset-instance-id": instance},
            "ownerReferences": [{"kind": "CloneSet", "uid": "cs-uid", "controller": True}],
        }
    }


def _owned_pod(instance: str, *, terminating: bool = False, phase: str = "Running") -> dict[str, Any]:
    subject = pod(
        name=f"web-{instance}", phase=phase, labels={"apps.kruise.io/cloneset-instance-id": instance}
    )
    if terminating:
        subject["metadata"]["deletionTimestamp"] = "2024-01-01T00:00:00Z"
    return subject


def test_pvc_cleanup_keeps_active_reowns_inactive_and_deletes_orphans() -> None:
    active, terminating, finished = (
        _owned_pod("a"),
        _owned_pod("t", terminating=True),
        _owned_pod("f", phase="Succeeded"),
    )
    claims = [_claim(i) for i in ("a", "t", "f", "gone")]
    plan = plan_pvc_cleanup([active, terminating, finished], claims)
    assert [c["metadata"]["name"] for c in plan.keep] == ["data-web-a"]
    assert [(c["metadata"]["name"], p["metadata"]["name"]) for c, p in plan.reown] == [
        ("data-web-t", "web-t"),
        ("data-web-f", "web-f"),
    ]
    assert [c["metadata"]["name"] for c in plan.delete] == ["data-web-gone"]


def test_pvc_reown_patch_swaps_the_controller_reference() -> None:
    terminating = _owned_pod("t", terminating=True)
    patch = pvc_reown_patch(_claim("t"), "cs-uid", terminating)
    assert patch["metadata"]["resourceVersion"] == "7"
    (ref,) = patch["metadata"]["ownerReferences"]
    assert ref == {
        "apiVersion": "v1",
        "kind": "Pod",
        "name": "web-t",
        "uid": terminating["metadata"]["uid"],
        "controller": True,
        "blockOwnerDeletion": True,
    }


@pytest.mark.parametrize(
    ("selector", "text"),
    [
        pytest.param({"matchLabels": {"app": "web", "tier": "fe"}}, "app=web,tier=fe", id="labels sorted"),
        pytest.param(
            {"matchExpressions": [{"key": "env", "operator": "In", "values": ["b", "a"]}]},
            "env in (a,b)",
            id="set-based in",
        ),
        pytest.param(
            {"matchExpressions": [{"key": "x", "operator": "DoesNotExist"}]}, "!x", id="does not exist"
        ),
        pytest.param({}, "", id="empty"),
    ],
)
def test_label_selector_format(selector: dict[str, Any], text: str) -> None:
    assert format_label_selector(selector) == text


def test_status_counts_and_current_revision_follow_upstream() -> None:
    cs = cloneset(3, partition=1)
    cs["metadata"]["generation"] = 4
    pods = [pod("cs-new", name="a"), pod("cs-new", name="b"), pod("cs-old", name="c")]
    st = calculate_status(
        cs, pods, update_revision="cs-new", current_revision="cs-old", collision_count=0, now=NOW
    )
    assert st["observedGeneration"] == 4
    assert (st["replicas"], st["updatedReplicas"], st["expectedUpdatedReplicas"]) == (3, 2, 2)
    assert st["currentRevision"] == "cs-old", "not all pods updated yet"
    done = [pod("cs-new", name=n) for n in "abc"]
    st = calculate_status(
        cs, done, update_revision="cs-new", current_revision="cs-old", collision_count=0, now=NOW
    )
    assert st["currentRevision"] == "cs-new"


@pytest.mark.parametrize(
    ("min_ready", "ready_ago", "expected"),
    [
        pytest.param(None, [3.0], None, id="no minReadySeconds: nothing to wait for"),
        pytest.param(10, [3.0], 7.05, id="ready 3s ago with 10s: wake just after 7s"),
        pytest.param(10, [3.0, 8.0], 2.05, id="the earliest pod to cross the threshold decides"),
        pytest.param(10, [30.0], None, id="already available: no wake-up"),
    ],
)
def test_seconds_until_available(
    min_ready: int | None, ready_ago: list[float], expected: float | None
) -> None:
    cs = cloneset(3, min_ready_seconds=min_ready)
    pods = [pod(ready_since=NOW - timedelta(seconds=s), in_place_ready=True) for s in ready_ago]
    got = seconds_until_available(cs, pods, NOW)
    assert got == (None if expected is None else pytest.approx(expected))


def test_seconds_until_available_ignores_pods_that_are_not_ready() -> None:
    cs = cloneset(3, min_ready_seconds=10)
    assert seconds_until_available(cs, [pod(ready=False, ready_since=NOW)], NOW) is None


_STATUS = {
    "observedGeneration": 2,
    "replicas": 3,
    "readyReplicas": 3,
    "availableReplicas": 3,
    "updatedReplicas": 3,
    "updatedReadyReplicas": 3,
    "updatedAvailableReplicas": 3,
    "expectedUpdatedReplicas": 3,
    "updateRevision": "web-1",
    "currentRevision": "web-1",
    "labelSelector": "app=web",
    "collisionCount": 0,
}


def test_status_is_not_written_when_nothing_upstream_compares_changed() -> None:
    assert status_to_write(_STATUS, dict(_STATUS), {}, NOW) is None
    assert status_to_write(_STATUS, dict(_STATUS), {"FailedScale": "boom"}, NOW) is None, (
        "a failure alone does not write the status"
    )


def test_written_status_carries_only_this_rounds_failures() -> None:
    old = {**_STATUS, "conditions": [{"type": "FailedUpdate", "status": "True", "message": "old"}]}
    new = {**_STATUS, "readyReplicas": 2}
    written = status_to_write(old, new, {"FailedScale": "quota"}, NOW)
    assert written is not None
    assert written["readyReplicas"] == 2
    assert written["conditions"] == [
        {
            "type": "FailedScale",
            "status": "True",
            "lastTransitionTime": "2024-05-01T12:00:00Z",
            "message": "quota",
        }
    ]
    cleared = status_to_write(old, {**new, "observedGeneration": 3}, {}, NOW)
    assert cleared is not None and cleared["conditions"] is None
