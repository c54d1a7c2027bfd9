"""The native DaemonSet controller's decision (``kruise.rollouts.nativedaemonset.deletion``).

Upstream facts (``KR:pkg/controller/nativedaemonset``, ``.../util/nativedaemoset_util.go`` and the
proposal): ``desired = pods - partition`` pods at the batch revision; deletion order Pending, not
Ready, lower ``controller.kubernetes.io/pod-deletion-cost``, newer; ``maxUnavailable`` (default 1)
bounds the Ready pods deleted, counting updated pods that are not Ready; a not-Ready old pod is
deleted without using it; wait while pods are being deleted.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kruise.rollouts.nativedaemonset.deletion import decide, deletion_order, max_unavailable
from kruise.rollouts.workloads.nativedaemonset.marks import ADVANCED_CONTROL, advanced_control

JSON = dict[str, Any]
OLD, NEW = "5d8f7c9b6", "7b9c6d5f8"


def ds(partition: int | None, *, max_unavailable: int | str | None = 3, desired: int = 5) -> JSON:
    annotations = {} if partition is None else {ADVANCED_CONTROL: advanced_control(partition, NEW)}
    rolling = {} if max_unavailable is None else {"maxUnavailable": max_unavailable}
    return {
        "metadata": {"name": "fluentd", "namespace": "ns", "annotations": annotations},
        "spec": {"updateStrategy": {"type": "OnDelete", "rollingUpdate": rolling}},
        "status": {"desiredNumberScheduled": desired},
    }


def pod(
    name: str,
    revision: str = OLD,
    *,
    ready: bool = True,
    phase: str = "Running",
    created: str = "2026-01-01T00:00:00Z",
    cost: str | None = None,
    terminating: bool = False,
) -> JSON:
    meta: JSON = {
        "name": name,
        "labels": {"controller-revision-hash": revision},
        "creationTimestamp": created,
        "annotations": {} if cost is None else {"controller.kubernetes.io/pod-deletion-cost": cost},
    }
    if terminating:
        meta["deletionTimestamp"] = "2026-01-01T00:01:00Z"
    return {
        "metadata": meta,
        "status": {"phase": phase, "conditions": [{"type": "Ready", "status": str(ready)}]},
    }


def olds(n: int) -> list[JSON]:
    return [pod(f"p{i}", created=f"2026-01-01T00:00:0{i}Z") for i in range(n)]


def test_no_batch_annotation_no_decision() -> None:
    assert decide(ds(None), olds(5), NEW) is None


@pytest.mark.parametrize(
    ("partition", "updated", "deleted"),
    [(4, 0, 1), (4, 1, 0), (2, 1, 2), (0, 2, 3), (5, 0, 0), (9, 0, 0)],
    ids=["first pod", "batch met", "two more", "the rest", "partition = pods", "partition > pods"],
)
def test_the_batch_deletes_the_pods_still_missing(partition: int, updated: int, deleted: int) -> None:
    pods = [pod(f"n{i}", NEW) for i in range(updated)] + olds(5 - updated)
    d = decide(ds(partition), pods, NEW)
    assert d is not None and (d.desired, d.updated, len(d.delete)) == (
        max(0, 5 - partition),
        updated,
        deleted,
    )


def test_newest_old_pods_go_first() -> None:
    d = decide(ds(3), olds(5), NEW)
    assert d is not None and d.delete == ("p4", "p3")


def test_deletion_order_pending_then_not_ready_then_cost_then_newest() -> None:
    pods = [
        pod("ready-old", created="2026-01-01T00:00:00Z"),
        pod("ready-new", created="2026-01-02T00:00:00Z"),
        pod("costly", created="2026-01-03T00:00:00Z", cost="100"),
        pod("cheap", created="2026-01-01T00:00:00Z", cost="-5"),
        pod("not-ready", ready=False),
        pod("pending", ready=False, phase="Pending"),
    ]
    names = [p["metadata"]["name"] for p in deletion_order(pods)]
    assert names == ["pending", "not-ready", "cheap", "ready-new", "ready-old", "costly"]


def test_max_unavailable_bounds_the_ready_pods_deleted() -> None:
    d = decide(ds(0, max_unavailable=2), olds(5), NEW)
    assert d is not None and len(d.delete) == 2
    # an updated pod not Ready yet uses one of them
    d = decide(ds(0, max_unavailable=2), [pod("n0", NEW, ready=False), *olds(4)], NEW)
    assert d is not None and len(d.delete) == 1
    d = decide(ds(0, max_unavailable=1), [pod("n0", NEW, ready=False), *olds(4)], NEW)
    assert d is not None and d.delete == () and d.waiting == "maxUnavailable 1 reached"


def test_a_not_ready_old_pod_is_deleted_without_using_max_unavailable() -> None:
    pods = [pod("sick", ready=False), *olds(4)]
    d = decide(ds(2, max_unavailable=1), pods, NEW)
    assert d is not None and d.delete == ("sick", "p3")


@pytest.mark.parametrize(
    ("value", "desired", "bound"),
    [(None, 5, 1), (3, 5, 3), ("50%", 5, 2), ("10%", 5, 1), (0, 5, 1), ("x", 5, 1)],
)
def test_max_unavailable_reading(value: int | str | None, desired: int, bound: int) -> None:
    assert max_unavailable(ds(0, max_unavailable=value, desired=desired)) == bound


def test_wait_while_a_pod_is_being_deleted() -> None:
    """A deleted old pod and its replacement may both exist for a while: counting both would
    delete one pod more than the batch (upstream counts terminating pods)."""
    pods = [pod("p4", terminating=True), pod("n4", NEW, ready=False), *olds(4)]
    d = decide(ds(3), pods, NEW)
    assert d is not None and d.delete == () and d.waiting == "pods are being deleted"


def test_finished_pods_do_not_count() -> None:
    pods = [pod("done", phase="Succeeded"), *olds(5)]
    d = decide(ds(4), pods, NEW)
    assert d is not None and (d.desired, len(d.delete)) == (1, 1)


def test_nothing_is_deleted_for_a_batch_of_another_revision_than_the_templates() -> None:
    """A continuous release left the previous batch on the DaemonSet: a pod deleted now would come
    back at the new template's revision, never at the batch's."""
    d = decide(ds(4), olds(5), "68f9d7c5b")
    assert d is not None and d.delete == () and d.waiting == "the batch revision is not the template's"
    unknown = decide(ds(4), olds(5), "")  # the template's revision not in the cache yet
    assert unknown is not None and unknown.delete == ()


@given(
    old_ready=st.lists(st.booleans(), max_size=8),
    new_ready=st.lists(st.booleans(), max_size=8),
    partition=st.integers(min_value=0, max_value=10),
    bound=st.integers(min_value=1, max_value=5),
)
def test_never_more_than_the_batch_nor_past_max_unavailable(
    old_ready: list[bool], new_ready: list[bool], partition: int, bound: int
) -> None:
    pods = [pod(f"o{i}", ready=r) for i, r in enumerate(old_ready)]
    pods += [pod(f"n{i}", NEW, ready=r) for i, r in enumerate(new_ready)]
    d = decide(ds(partition, max_unavailable=bound, desired=len(pods)), pods, NEW)
    assert d is not None
    need = max(0, len(pods) - partition - len(new_ready))
    assert len(d.delete) <= need
    by_name = {p["metadata"]["name"]: p for p in pods}
    assert all(not name.startswith("n") for name in d.delete), "never an updated pod"
    ready_deleted = sum(
        1 for name in d.delete if by_name[name]["status"]["conditions"][0]["status"] == "True"
    )
    unavailable = sum(1 for r in new_ready if not r)
    assert ready_deleted <= max(0, bound - unavailable)
    # the same world, the same decision, whatever order the cache lists the pods in
    assert decide(ds(partition, max_unavailable=bound, desired=len(pods)), pods[::-1], NEW) == d
