"""Batch labels on pods, batchLabelSatisfied, the rollout-id restart and rolling back in batches
(pure; ``KR:pkg/controller/batchrelease/labelpatch``, ``context/context.go``, ``batchrelease_status.go``)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kruise.rollouts.workloads.cloneset import decide_cloneset
from kruise.rollouts.workloads.podlabels import (
    NO_NEED_UPDATE_LABEL,
    at_revision,
    batch_label_patches,
    batch_summary,
    label_candidates,
    labels_satisfied,
    no_need_update,
    planned_increments,
)

ID, BATCH = "rollouts.kruise.io/rollout-id", "rollouts.kruise.io/rollout-batch-id"
STEPS = ["20%", "40%", "60%", "80%", "100%"]


def pod(name: str, revision: str = "bbb", *, deleting: bool = False, **labels: str) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "labels": {"controller-revision-hash": f"web-{revision}", **labels}}
    if deleting:
        meta["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    return {"metadata": meta}


def labelled(rid: str, batch: int) -> dict[str, str]:
    return {ID: rid, BATCH: str(batch)}


def tally(pods: list[dict[str, Any]], rid: str) -> dict[str, int]:
    out: dict[str, int] = {}
    for p in pods:
        labels = p["metadata"]["labels"]
        if labels.get(ID) == rid:
            out[labels[BATCH]] = out.get(labels[BATCH], 0) + 1
    return out


def apply(pods: list[dict[str, Any]], patches: Any) -> None:
    by_name = {p["metadata"]["name"]: p for p in pods}
    for patch in patches:
        by_name[patch.name]["metadata"]["labels"].update(patch.labels)


# ------------------------------------------------------------------------------------ pure helpers
def test_increments_are_what_each_batch_adds() -> None:
    assert planned_increments(STEPS, 5, 0) == [1, 0, 0, 0, 0]
    assert planned_increments(STEPS, 5, 2) == [1, 1, 1, 0, 0]
    assert planned_increments(STEPS, 10, 4) == [2, 2, 2, 2, 2]
    assert planned_increments(["20%", "40%", "60%", "100%"], 10, 3) == [2, 2, 2, 4]


def test_revision_is_matched_by_short_hash_of_either_label() -> None:
    assert at_revision(pod("a"), "bbb") and at_revision(pod("a"), "web-bbb")
    assert at_revision({"metadata": {"labels": {"pod-template-hash": "bbb"}}}, "bbb")
    assert not at_revision(pod("a", "aaa"), "bbb") and not at_revision(pod("a"), "")


def test_first_batch_labels_one_pod_with_batch_id_one() -> None:
    pods = [pod("a"), pod("b", "aaa"), pod("c", "aaa")]
    patches = batch_label_patches(pods, rollout_id="1", batches=STEPS, replicas=5, current_batch=0)
    assert [(p.name, p.labels) for p in patches] == [("a", labelled("1", 1))]


def test_later_batches_keep_earlier_labels_and_label_only_the_new_pods() -> None:
    pods = [pod("a", **labelled("1", 1)), pod("b"), pod("c"), pod("d", "aaa")]
    patches = batch_label_patches(pods, rollout_id="1", batches=STEPS, replicas=5, current_batch=2)
    apply(pods, patches)
    assert tally(pods, "1") == {"1": 1, "2": 1, "3": 1}
    assert {p.name for p in patches} == {"b", "c"}


@pytest.mark.parametrize(
    "stale",
    [
        pytest.param(labelled("0", 1), id="older rollout-id"),
        pytest.param(labelled("1", 9), id="batch id beyond the plan"),
        pytest.param({ID: "1", BATCH: "x"}, id="batch id not a number"),
    ],
)
def test_stale_labels_are_overwritten(stale: dict[str, str]) -> None:
    pods = [pod("a", **stale)]
    patches = batch_label_patches(pods, rollout_id="1", batches=STEPS, replicas=5, current_batch=0)
    assert [(p.name, p.labels) for p in patches] == [("a", labelled("1", 1))]


def test_deleting_and_old_revision_pods_are_never_labelled_and_no_id_means_no_labels() -> None:
    pods = [pod("a", deleting=True), pod("b", "aaa")]
    assert (
        label_candidates(
            pods, rollout_id="1", update_revision="bbb", planned=1, desired_updated=1, rolling_back=False
        )
        == []
    )
    assert batch_label_patches([pod("a")], rollout_id="", batches=STEPS, replicas=5, current_batch=0) == []


def test_batch_label_satisfied_counts_live_pods_with_the_rollout_id() -> None:
    pods = [pod("a", **labelled("1", 1)), pod("b", deleting=True, **labelled("1", 1)), pod("c")]
    assert labels_satisfied(pods, "1", 1) and not labels_satisfied(pods, "1", 2)
    assert labels_satisfied(pods, "", 5) and labels_satisfied([], "1", 5)


@given(
    replicas=st.integers(1, 30),
    current=st.integers(0, 4),
    updated=st.integers(0, 30),
    prelabelled=st.integers(0, 30),
)
def test_labelling_pays_every_batch_debt_it_can_and_never_more(
    replicas: int, current: int, updated: int, prelabelled: int
) -> None:
    updated = min(updated, replicas)
    pre = min(prelabelled, updated)
    pods = [pod(f"p{i}") for i in range(updated)]
    for i in range(pre):
        pods[i]["metadata"]["labels"].update(labelled("r", 1))
    patches = batch_label_patches(
        pods, rollout_id="r", batches=STEPS, replicas=replicas, current_batch=current
    )
    owed = planned_increments(STEPS, replicas, current)
    debt = max(0, owed[0] - pre) + sum(max(0, o) for o in owed[1:])
    assert len(patches) == min(updated - pre, debt)
    apply(pods, patches)
    counts = tally(pods, "r")
    for index, value in enumerate(owed[1:], start=2):
        assert counts.get(str(index), 0) <= max(0, value)
    # idempotent: labelling twice writes nothing new
    assert (
        batch_label_patches(pods, rollout_id="r", batches=STEPS, replicas=replicas, current_batch=current)
        == []
    )


def test_no_need_update_marks_the_pods_already_at_the_target() -> None:
    pods = [pod("a", "aaa"), pod("b", "aaa", **{NO_NEED_UPDATE_LABEL: "2"}), pod("c", "bbb")]
    marked, marks = no_need_update(pods, "2", "aaa")
    assert marked == 1 and [(m.name, m.labels) for m in marks] == [("a", {NO_NEED_UPDATE_LABEL: "2"})]


# ----------------------------------------------------------------------------- decide_cloneset
def br(
    partition: int, *, rid: str = "1", status: dict[str, Any] | None = None, **annotations: str
) -> dict[str, Any]:
    return {
        "metadata": {
            "name": "web",
            "namespace": "shop",
            "uid": "u",
            "generation": 2,
            "annotations": annotations,
        },
        "spec": {
            "releasePlan": {
                "batches": [{"canaryReplicas": s} for s in STEPS],
                "batchPartition": partition,
                "rolloutID": rid,
            }
        },
        "status": status if status is not None else {"phase": "Progressing"},
    }


def cloneset(
    partition: Any, updated: int, *, current: str = "web-aaa", update: str = "web-bbb"
) -> dict[str, Any]:
    return {
        "metadata": {"name": "web", "uid": "cs", "generation": 4, "annotations": {}},
        "spec": {"replicas": 5, "updateStrategy": {"partition": partition}},
        "status": {
            "observedGeneration": 4,
            "replicas": 5,
            "updatedReplicas": updated,
            "updatedReadyReplicas": updated,
            "currentRevision": current,
            "updateRevision": update,
        },
    }


def controlled(cs: dict[str, Any], release: dict[str, Any]) -> dict[str, Any]:
    """``cs`` with ``release``'s control annotation (taken control of: no ``paused: false`` again)."""
    from kruise.rollouts.release.constants import BATCH_RELEASE_CONTROL_ANNOTATION
    from kruise.rollouts.workloads.ops import control_info

    cs["metadata"]["annotations"][BATCH_RELEASE_CONTROL_ANNOTATION] = control_info(release)
    return cs


def settle(release: dict[str, Any], cs: dict[str, Any], pods: list[dict[str, Any]], rounds: int = 8) -> Any:
    """Run rounds, applying pod patches and carrying the status (the control annotation is set)."""
    controlled(cs, release)
    d = None
    for _ in range(rounds):
        d = decide_cloneset(release, cs, pods)
        apply(pods, d.pod_patches)
        release["status"] = d.status
    return d


def test_batch_waits_for_its_labels_then_is_ready() -> None:
    pods = [pod("a"), *[pod(n, "aaa") for n in "bcde"]]
    release = br(0)
    first = settle(release, cloneset("80%", 1), pods, rounds=1)
    assert [p.name for p in first.pod_patches] == ["a"] and first.status["canaryStatus"][
        "batchState"
    ] == "Upgrading"
    done = settle(release, cloneset("80%", 1), pods, rounds=1)
    assert done.status["canaryStatus"]["batchState"] == "Ready"
    assert done.status["observedRolloutID"] == "1"


def test_a_new_rollout_id_restarts_at_batch_zero_and_relabels_batch_by_batch() -> None:
    """Only the rollout-id changed at step 3 (upstream e2e "only rollout-id changes")."""
    pods = [pod(n) for n in "abcde"]
    release = br(2)
    settle(release, cloneset("40%", 5), pods)
    assert tally(pods, "1") == {"1": 1, "2": 1, "3": 1}
    release["spec"]["releasePlan"]["rolloutID"] = "2"
    d = decide_cloneset(release, cloneset("40%", 5), pods)
    assert d.status["canaryStatus"]["currentBatch"] == 0 and d.status["observedRolloutID"] == "2"
    d = settle(release, cloneset("40%", 5), pods)
    assert tally(pods, "2") == {"1": 1, "2": 1, "3": 1}
    assert d.status["canaryStatus"] == {**d.status["canaryStatus"], "currentBatch": 2, "batchState": "Ready"}


def test_a_changed_plan_with_the_same_rollout_id_goes_straight_to_the_partition() -> None:
    pods = [pod(n) for n in "ab"] + [pod(n, "aaa") for n in "cde"]
    release = br(0)
    settle(release, cloneset("80%", 1), pods, rounds=2)
    release["spec"]["releasePlan"]["batchPartition"] = 1
    d = decide_cloneset(release, controlled(cloneset("80%", 1), release), pods)
    assert d.status["canaryStatus"]["currentBatch"] == 1
    assert (d.workload_patch or {}).get("spec") == {"updateStrategy": {"partition": "60%"}}


def test_rollback_in_batch_marks_no_need_pods_then_rolls_back_only_the_others() -> None:
    """5 pods, 3 on v2 (batches 1-3 of rollout-id 1), the template goes back to v1 with id 2
    (upstream e2e "patch batch id to pods: rollback case")."""
    pods = [pod("a", **labelled("1", 1)), pod("b", **labelled("1", 2)), pod("c", **labelled("1", 3))]
    pods += [pod("d", "aaa"), pod("e", "aaa")]
    status = {
        "phase": "Progressing",
        "stableRevision": "aaa",
        "updateRevision": "bbb",
        "observedRolloutID": "1",
        "canaryStatus": {"currentBatch": 2, "batchState": "Ready"},
    }
    rolled_back = cloneset("100%", 2, current="web-aaa", update="web-aaa")
    # before the Rollout copies its annotation: wait, nothing recorded
    waiting = decide_cloneset(br(0, rid="2", status=dict(status)), rolled_back, pods)
    assert waiting.workload_patch is None and waiting.status["updateRevision"] == "bbb"
    release = br(0, rid="2", status=dict(status), **{"rollouts.kruise.io/rollback-in-batch": "true"})
    marking = decide_cloneset(release, rolled_back, pods)
    assert {p.name for p in marking.pod_patches} == {"d", "e"}
    apply(pods, marking.pod_patches)
    release["status"] = marking.status
    prepared = decide_cloneset(release, rolled_back, pods)
    assert prepared.status["canaryStatus"]["noNeedUpdateReplicas"] == 2
    assert prepared.status["updateRevision"] == "aaa"
    release["status"] = prepared.status
    step1 = decide_cloneset(release, controlled(rolled_back, release), pods)
    # 20% of the 3 pods to roll back: 1 pod, 2 stay on v2 (40% of 5)
    assert (step1.workload_patch or {}).get("spec") == {"updateStrategy": {"partition": "40%"}}
    # the CloneSet rolls pod c back; then the batch labels go to it, not to the no-need pods
    pods[2]["metadata"]["labels"]["controller-revision-hash"] = "web-aaa"
    d = settle(release, cloneset("40%", 3, current="web-aaa", update="web-aaa"), pods, rounds=3)
    assert tally(pods, "2") == {"1": 1} and pods[2]["metadata"]["labels"][ID] == "2"
    assert d.status["canaryStatus"]["batchState"] == "Ready"


def test_nothing_moves_while_the_cloneset_status_is_behind_its_spec() -> None:
    """isWorkloadUnstable: right after the template went back (held at 100%), the CloneSet status
    still shows the old revision; lowering the partition now would roll pods back unplanned."""
    cs = cloneset("100%", 3)
    cs["status"]["observedGeneration"] = 3
    d = decide_cloneset(br(2, status={"phase": "Progressing", "updateRevision": "bbb"}), cs, [pod("a")])
    assert d.workload_patch is None and d.pod_patches == ()


def test_status_summary_counts_pods_per_batch_in_batch_order() -> None:
    pods = [pod("a", **labelled("1", 10)), pod("b", **labelled("1", 2)), pod("c", **labelled("1", 2))]
    pods += [pod("d", **labelled("0", 1)), pod("e", deleting=True, **labelled("1", 1))]
    assert batch_summary(pods, "1") == "rollout-id 1: batch 2=2, 10=1"
    assert batch_summary(pods, "9") == ""
