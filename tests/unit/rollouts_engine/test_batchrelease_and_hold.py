"""BatchRelease's CloneSet control and the workload hold webhook (pure)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from kruise.rollouts.release.constants import BATCH_RELEASE_CONTROL_ANNOTATION, IN_PROGRESSING_ANNOTATION
from kruise.rollouts.release.hashing import release_plan_hash
from kruise.rollouts.workloads.cloneset import decide_cloneset, hold_cloneset


def br(
    batch_partition: int | None, *, phase: str = "Progressing", policy: str = "Immediate"
) -> dict[str, Any]:
    plan: dict[str, Any] = {
        "batches": [{"canaryReplicas": "20%"}, {"canaryReplicas": "50%"}, {"canaryReplicas": "100%"}],
        "finalizingPolicy": policy,
    }
    if batch_partition is not None:
        plan["batchPartition"] = batch_partition
    return {
        "apiVersion": "rollouts.kruise.io/v1beta1",
        "kind": "BatchRelease",
        "metadata": {"name": "web", "namespace": "shop", "uid": "br-uid", "generation": 3},
        "spec": {"workloadRef": {"kind": "CloneSet", "name": "web"}, "releasePlan": plan},
        "status": {"phase": phase},
    }


def cloneset(
    partition: Any, updated: int, *, replicas: int = 10, annotations: dict[str, str] | None = None
) -> dict[str, Any]:
    return {
        "metadata": {"name": "web", "namespace": "shop", "generation": 5, "annotations": annotations or {}},
        "spec": {"replicas": replicas, "updateStrategy": {"partition": partition}},
        "status": {
            "observedGeneration": 5,
            "replicas": replicas,
            "updatedReplicas": updated,
            "updatedReadyReplicas": updated,
            "currentRevision": "web-aaa",
            "updateRevision": "web-bbb",
        },
    }


def test_first_batch_moves_partition_from_hold_to_eighty_percent_and_takes_control() -> None:
    d = decide_cloneset(br(0), cloneset("100%", 0))
    assert d.workload_patch is not None
    assert d.workload_patch["spec"]["updateStrategy"]["partition"] == "80%"
    assert (
        json.loads(d.workload_patch["metadata"]["annotations"][BATCH_RELEASE_CONTROL_ANNOTATION])["uid"]
        == "br-uid"
    )
    assert d.status["canaryStatus"]["batchState"] == "Upgrading"
    assert d.status["observedReleasePlanHash"] == release_plan_hash(br(0)["spec"]["releasePlan"])


def test_batch_is_ready_once_the_planned_pods_are_updated_and_ready() -> None:
    control = {
        BATCH_RELEASE_CONTROL_ANNOTATION: decide_cloneset(br(0), cloneset("100%", 0)).workload_patch[
            "metadata"
        ]["annotations"][BATCH_RELEASE_CONTROL_ANNOTATION]
    }  # type: ignore[index]
    d = decide_cloneset(br(0), cloneset("80%", 2, annotations=control))
    assert d.workload_patch is None
    assert d.status["canaryStatus"] == {
        "updatedReplicas": 2,
        "updatedReadyReplicas": 2,
        "currentBatch": 0,
        "batchState": "Ready",
    }
    assert (d.status["stableRevision"], d.status["updateRevision"]) == ("aaa", "bbb")


def test_partition_never_moves_back_up_during_a_release() -> None:
    d = decide_cloneset(br(0), cloneset("50%", 5))
    assert d.workload_patch is None or "partition" not in d.workload_patch.get("spec", {}).get(
        "updateStrategy", {}
    )


def test_finalising_hands_the_workload_back() -> None:
    d = decide_cloneset(br(None), cloneset("0%", 10, annotations={BATCH_RELEASE_CONTROL_ANNOTATION: "x"}))
    assert d.workload_patch == {
        "spec": {"updateStrategy": {"partition": None, "paused": False}},
        "metadata": {"annotations": {BATCH_RELEASE_CONTROL_ANNOTATION: None}},
    }
    done = decide_cloneset(br(None), cloneset(None, 10))
    assert done.workload_patch is None and done.status["phase"] == "Completed"


def test_keep_workload_paused_on_rollout_deletion_keeps_a_cancelled_clonesets_partition() -> None:
    """``KeepWorkloadPausedOnRolloutDeletion``: without ``WaitResume`` only ``paused`` is cleared;
    a finished release (``WaitResume``) releases the partition as usual."""
    held = cloneset("80%", 2, annotations={BATCH_RELEASE_CONTROL_ANNOTATION: "x"})
    held["spec"]["updateStrategy"]["paused"] = True
    kept = decide_cloneset(br(None), held, keep_paused_on_cancel=True)
    assert kept.workload_patch == {
        "spec": {"updateStrategy": {"paused": False}},
        "metadata": {"annotations": {BATCH_RELEASE_CONTROL_ANNOTATION: None}},
    }
    finished = decide_cloneset(br(None, policy="WaitResume"), held, keep_paused_on_cancel=True)
    assert finished.workload_patch is not None
    assert finished.workload_patch["spec"] == {"updateStrategy": {"partition": None, "paused": False}}


def test_wait_resume_completes_only_when_every_pod_is_updated() -> None:
    assert decide_cloneset(br(None, policy="WaitResume"), cloneset(None, 7)).status["phase"] == "Finalizing"
    assert decide_cloneset(br(None, policy="WaitResume"), cloneset(None, 10)).status["phase"] == "Completed"


ROLLOUT = {
    "metadata": {"name": "web", "namespace": "shop"},
    "spec": {
        "workloadRef": {"kind": "CloneSet", "name": "web"},
        "strategy": {"canary": {"steps": [{"replicas": 1}]}},
    },
}


def _cs(image: str, **status: int) -> dict[str, Any]:
    return {
        "kind": "CloneSet",
        "metadata": {"name": "web", "namespace": "shop"},
        "spec": {"replicas": 10, "template": {"spec": {"containers": [{"name": "web", "image": image}]}}},
        "status": {"replicas": 10, "updatedReplicas": 10, **status},
    }


def test_template_change_under_a_rollout_is_held_at_partition_100_percent() -> None:
    held = hold_cloneset(_cs("v2"), _cs("v1"), [ROLLOUT])
    assert held is not None
    assert held["spec"]["updateStrategy"]["partition"] == "100%"
    assert json.loads(held["metadata"]["annotations"][IN_PROGRESSING_ANNOTATION]) == {"rolloutName": "web"}


@pytest.mark.parametrize(
    ("new", "old", "rollouts"),
    [
        pytest.param(_cs("v1"), _cs("v1"), [ROLLOUT], id="template unchanged"),
        pytest.param(_cs("v2"), _cs("v1"), [], id="no rollout"),
        pytest.param(
            _cs("v2"),
            _cs("v1"),
            [{**ROLLOUT, "spec": {**ROLLOUT["spec"], "disabled": True}}],
            id="disabled rollout",
        ),
    ],
)
def test_changes_outside_a_rollout_pass_unchanged(
    new: dict[str, Any], old: dict[str, Any], rollouts: list[Any]
) -> None:
    assert hold_cloneset(new, old, rollouts) is None
