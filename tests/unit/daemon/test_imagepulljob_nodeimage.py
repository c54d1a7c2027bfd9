"""The NodeImage controller's and the ImageListPullJob controller's pure cores."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from kruise.daemon.imagepulljob.listplan import HASH_LABEL, list_plan, template_hash
from kruise.daemon.imagepulljob.nodeimage_core import creation_wait, prune_spec, timeout_status
from kruise.daemon.imagepulljob.plan import format_time

NOW = datetime(2024, 1, 1, 12, 0, 0, tzinfo=UTC)


def ago(seconds: float) -> str:
    return format_time(NOW - timedelta(seconds=seconds))


def node(
    ready: str | None = "True", since: float = 100, labels: dict[str, str] | None = None
) -> dict[str, Any]:
    conditions = (
        [] if ready is None else [{"type": "Ready", "status": ready, "lastTransitionTime": ago(since)}]
    )
    return {"metadata": {"name": "n", "labels": labels or {}}, "status": {"conditions": conditions}}


CREATION = [
    ("a node ready long enough gets its NodeImage now", node(), 0.0),
    ("a node ready for 10s waits out the 30s delay", node(since=10), 20.0),
    ("a node not ready gets none", node(ready="False"), None),
    ("a virtual-kubelet node gets none", node(labels={"type": "virtual-kubelet"}), None),
]


@pytest.mark.parametrize(("n", "wait"), [c[1:] for c in CREATION], ids=[c[0] for c in CREATION])
def test_creation_wait(n: dict[str, Any], wait: float | None) -> None:
    assert creation_wait(n, NOW) == wait


def nodeimage(tags: list[dict[str, Any]], statuses: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    ni: dict[str, Any] = {
        "metadata": {"name": "n", "labels": {}},
        "spec": {"images": {"nginx": {"tags": tags}}},
    }
    if statuses is not None:
        ni["status"] = {"imageStatuses": {"nginx": {"tags": statuses}}}
    return ni


def owner(name: str, uid: str) -> dict[str, Any]:
    return {
        "apiVersion": "apps.kruise.io/v1alpha1",
        "kind": "ImagePullJob",
        "namespace": "ns",
        "name": name,
        "uid": uid,
    }


LIVE = {("ns", "alive"): "u1"}


def test_a_tag_of_a_deleted_job_is_dropped_and_a_shared_one_keeps_its_live_owner() -> None:
    ni = nodeimage(
        [
            {"tag": "1", "createdAt": ago(5), "ownerReferences": [owner("gone", "u0")]},
            {"tag": "2", "createdAt": ago(5), "ownerReferences": [owner("gone", "u0"), owner("alive", "u1")]},
        ]
    )
    change = prune_spec(ni, None, lambda ns, n: LIVE.get((ns, n)), NOW)
    assert change.spec is not None
    assert change.spec["images"]["nginx"]["tags"] == [
        {"tag": "2", "createdAt": ago(5), "ownerReferences": [owner("alive", "u1")]}
    ]


def test_a_recreated_job_with_another_uid_does_not_own_the_old_tag() -> None:
    ni = nodeimage([{"tag": "1", "createdAt": ago(5), "ownerReferences": [owner("alive", "old")]}])
    change = prune_spec(ni, None, lambda ns, n: LIVE.get((ns, n)), NOW)
    assert change.spec == {"images": {}}


def test_a_finished_tag_leaves_after_its_ttl_and_waits_before() -> None:
    tags = [
        {
            "tag": "1",
            "version": 1,
            "createdAt": ago(100),
            "pullPolicy": {"ttlSecondsAfterFinished": 60},
            "ownerReferences": [owner("alive", "u1")],
        }
    ]
    done_long_ago = nodeimage(
        tags, [{"tag": "1", "version": 1, "phase": "Succeeded", "completionTime": ago(61)}]
    )
    assert prune_spec(done_long_ago, None, lambda ns, n: LIVE.get((ns, n)), NOW).spec == {"images": {}}
    done_now = nodeimage(tags, [{"tag": "1", "version": 1, "phase": "Succeeded", "completionTime": ago(10)}])
    change = prune_spec(done_now, None, lambda ns, n: LIVE.get((ns, n)), NOW)
    assert not change.modified and change.requeue_after == 50


def test_labels_follow_the_node() -> None:
    change = prune_spec(nodeimage([]), node(labels={"zone": "z1"}), lambda ns, n: None, NOW)
    assert change.labels == {"zone": "z1"}


def test_a_tag_the_daemon_never_answered_fails_after_ten_minutes() -> None:
    tags = [{"tag": "1", "version": 0, "createdAt": ago(601), "ownerReferences": [owner("alive", "u1")]}]
    change = timeout_status(nodeimage(tags), NOW)
    assert change.status is not None
    assert (
        change.status["imageStatuses"]["nginx"]["tags"][0]["message"]
        == "node has not responded for a long time"
    )
    assert change.status["failed"] == 1 and change.status["desired"] == 1
    assert [f.image for f in change.failures] == ["nginx:1"]
    young = [{**tags[0], "createdAt": ago(60)}]
    assert timeout_status(nodeimage(young), NOW).requeue_after == 540


def lst(images: list[str], status: dict[str, Any] | None = None) -> dict[str, Any]:
    return {
        "metadata": {"name": "l", "namespace": "ns", "uid": "lu"},
        "spec": {"images": images, "completionPolicy": {"type": "Always"}},
        "status": status or {},
    }


def child(image: str, hash_: str, **status: Any) -> dict[str, Any]:
    return {
        "metadata": {"name": f"l-{image}", "namespace": "ns", "labels": {HASH_LABEL: hash_}},
        "spec": {"image": image},
        "status": status,
    }


def test_a_list_creates_one_owned_job_per_image() -> None:
    decided = list_plan(lst(["a", "b"]), [], NOW)
    assert [c["spec"]["image"] for c in decided.create] == ["a", "b"]
    ref = decided.create[0]["metadata"]["ownerReferences"][0]
    assert ref["kind"] == "ImageListPullJob" and ref["controller"] is True
    assert decided.status == {"desired": 2, "startTime": format_time(NOW)}


def test_a_list_aggregates_its_jobs_and_completes() -> None:
    h = template_hash(lst(["a", "b"]))
    kids = [
        child("a", h, startTime="t", desired=2, succeeded=2),
        child("b", h, startTime="t", desired=2, succeeded=1, failed=1),
    ]
    decided = list_plan(lst(["a", "b"]), kids, NOW)
    assert decided.create == () and decided.delete == ()
    assert decided.status["completed"] == 2 and decided.status["succeeded"] == 1
    assert decided.status["completionTime"] == format_time(NOW)
    assert decided.status["failedImageStatuses"][0]["imagePullJob"] == "l-b"


def test_a_changed_template_replaces_children_and_a_removed_image_deletes_one() -> None:
    kids = [child("a", "stale"), child("gone", template_hash(lst(["a"])))]
    decided = list_plan(lst(["a"]), kids, NOW)
    assert set(decided.delete) == {"ns/l-a", "ns/l-gone"}
    assert [c["spec"]["image"] for c in decided.create] == ["a"]
