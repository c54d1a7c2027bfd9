"""Batch labels of canary-style, blue-green and partition-style Deployment releases (pure).

Upstream (``KR:pkg/controller/batchrelease/control/{canarystyle,bluegreenstyle}/control_plane.go``,
``partitionstyle/deployment/control.go``, ``labelpatch/patcher.go``): every control plane runs
``PatchPodBatchLabel`` in ``EnsureBatchPodsReadyAndLabeled`` (batch Verifying and Ready): with
``releasePlan.rolloutID`` set, the pods at the update revision get ``rollouts.kruise.io/rollout-id``
and ``rollout-batch-id`` (1-based), each batch up to the current one its increment of
``ceil(canaryReplicas x replicas)``. The canary style labels the canary Deployment's pods and does
not wait for them (its batch context plans no count); blue-green and the Deployment's partition
style are not Ready before ``PlannedUpdatedReplicas`` pods carry the rollout-id.
"""

from __future__ import annotations

from typing import Any

from kruise.rollouts.api.common import ROLLOUT_BATCH_ID_LABEL as BATCH
from kruise.rollouts.api.common import ROLLOUT_ID_LABEL as ID
from kruise.rollouts.release.constants import MAX_READY_SECONDS, ORIGINAL_DEPLOYMENT_STRATEGY_ANNOTATION
from kruise.rollouts.workloads.bluegreen import decide_blue_green
from kruise.rollouts.workloads.deployment.canary import decide_deployment_canary
from kruise.rollouts.workloads.deployment.partition import decide_deployment_partition
from kruise.rollouts.workloads.ops import ControlDecision, Op, Target
from kruise.rollouts.workloads.podlabels import release_label_patches
from tests.unit.rollouts_engine.test_batchrelease_deployments import (
    CONTROL,
    STABLE_RS,
    bg_deployment,
    br,
    canary,
    rs,
)
from tests.unit.rollouts_engine.test_batchrelease_deployments import stable as stable_deployment
from tests.unit.rollouts_engine.test_batchrelease_partition_deployment import controlled

JSON = dict[str, Any]
RID = "r1"


def pod(
    name: str, owner_uid: str, *, hash_key: str = "pod-template-hash", revision: str = "bbb", **labels: str
) -> JSON:
    return {
        "metadata": {
            "name": name,
            "labels": {"app": "web", hash_key: revision, **labels},
            "ownerReferences": [{"kind": "ReplicaSet", "uid": owner_uid, "controller": True}],
        },
        "status": {"conditions": [{"type": "Ready", "status": "True"}]},
    }


def owned_rs(pod_hash: str, owner_uid: str, uid: str, replicas: int) -> JSON:
    body = rs(pod_hash, "v2", replicas, created="2026-01-02T00:00:00Z")
    body["metadata"]["uid"] = uid
    body["metadata"]["ownerReferences"] = [{"kind": "Deployment", "uid": owner_uid, "controller": True}]
    return body


def label_ops(d: ControlDecision) -> dict[str, dict[str, str]]:
    return {op.name: op.body["metadata"]["labels"] for op in d.ops if op.target == Target.POD}


def apply(pods: list[JSON], ops: tuple[Op, ...]) -> None:
    by_name = {p["metadata"]["name"]: p for p in pods}
    for op in ops:
        if op.target == Target.POD:
            by_name[op.name]["metadata"]["labels"].update(op.body["metadata"]["labels"])


def tally(pods: list[JSON]) -> dict[str, int]:
    out: dict[str, int] = {}
    for p in pods:
        labels = p["metadata"]["labels"]
        if labels.get(ID) == RID:
            out[labels[BATCH]] = out.get(labels[BATCH], 0) + 1
    return out


# ------------------------------------------------------------------------------ the pure rule
def test_bluegreen_scale_up_owes_each_batch_its_new_increment() -> None:
    """Upstream e2e "Bluegreen Release - Deployment > bluegreen scale up and down": at step 2
    (100%) with 4 pods labelled 2+2, scaling to 7 labels the 3 new pods 2 for batch 1 (ceil 3.5 = 4)
    and 1 for batch 2 (7 - 4 = 3)."""
    plan = {"rolloutID": RID, "batches": [{"canaryReplicas": "50%"}, {"canaryReplicas": "100%"}]}
    labelled = [pod(f"p{i}", "rs", **{ID: RID, BATCH: str(1 + i // 2)}) for i in range(4)]
    fresh = [pod(f"n{i}", "rs") for i in range(3)]
    patches = release_label_patches(
        labelled + fresh, plan, update_revision="bbb", replicas=7, current_batch=1
    )
    assert sorted(p.labels[BATCH] for p in patches) == ["1", "1", "2"]
    assert {p.name for p in patches} == {"n0", "n1", "n2"}


def test_pods_of_another_revision_or_going_away_are_never_labelled() -> None:
    plan = {"rolloutID": RID, "batches": [{"canaryReplicas": "100%"}]}
    old = pod("old", "rs", revision="aaa")
    going = pod("going", "rs")
    going["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    assert release_label_patches([old, going], plan, update_revision="bbb", replicas=2, current_batch=0) == []
    assert (
        release_label_patches(
            [pod("p", "rs")], {**plan, "rolloutID": ""}, update_revision="bbb", replicas=1, current_batch=0
        )
        == []
    )


# ------------------------------------------------------------------------------ canary style
def test_canary_style_labels_the_canary_deployments_pods_without_waiting_for_them() -> None:
    """Upstream e2e "Step Jump > V1->V2: Deployment, Canary, patch nextStepIndex to jump" and
    "remove 2-4 steps" read one pod per batch among the canary's pods."""
    canary_rs = owned_rs("ccc", "can-uid", "can-rs", 3)
    stable_rs = owned_rs("aaa", "dep-uid", "stable-rs", 5)
    pods = [pod(f"c{i}", "can-rs", revision="ccc") for i in range(3)]
    pods += [pod(f"s{i}", "stable-rs", revision="ccc") for i in range(2)]  # not the canary's
    release = br(1, rolloutID=RID)
    d = decide_deployment_canary(release, stable_deployment(), [canary(3, 3)], [stable_rs, canary_rs], pods)
    assert d.status["canaryStatus"]["batchState"] == "Ready"  # not gated on the labels
    assert set(label_ops(d)) == {"c0", "c1", "c2"}
    apply(pods, d.ops)
    assert tally(pods) == {"1": 1, "2": 2}  # ceil(20% x 5) = 1, ceil(60% x 5) - 1 = 2
    again = decide_deployment_canary(
        release, stable_deployment(), [canary(3, 3)], [stable_rs, canary_rs], pods
    )
    assert again.ops == ()


def test_canary_style_labels_nothing_while_scaling_the_canary() -> None:
    canary_rs = owned_rs("ccc", "can-uid", "can-rs", 1)
    pods = [pod("c0", "can-rs", revision="ccc")]
    d = decide_deployment_canary(br(1, rolloutID=RID), stable_deployment(), [canary(1, 1)], [canary_rs], pods)
    [op] = d.ops
    assert op.target == Target.DEPLOYMENT and op.body["spec"]["replicas"] == 3


# ------------------------------------------------------------------------------ blue-green
def test_blue_green_deployment_is_ready_only_once_its_new_pods_are_labelled() -> None:
    """Upstream e2e "Bluegreen Release - Deployment > bluegreen rolling with traffic case" (3 pods of
    batch 1 at 50% of 5) and "scale up and down"."""
    new_rs = owned_rs("bbb", "dep-uid", "new-rs", 3)
    pods = [pod(f"n{i}", "new-rs") for i in range(3)] + [
        pod(f"o{i}", "old-rs", revision="aaa") for i in range(5)
    ]
    release = br(
        0, style="BlueGreen", rolloutID=RID, batches=[{"canaryReplicas": "50%"}, {"canaryReplicas": "100%"}]
    )
    workload = bg_deployment(surge="50%", status={"updatedReplicas": 3})
    d = decide_blue_green(release, workload, [STABLE_RS, new_rs], (), pods)
    assert d.status["canaryStatus"]["batchState"] == "Upgrading"
    assert set(label_ops(d)) == {"n0", "n1", "n2"}
    apply(pods, d.ops)
    assert tally(pods) == {"1": 3}
    ready = decide_blue_green(release, workload, [STABLE_RS, new_rs], (), pods)
    assert ready.ops == () and ready.status["canaryStatus"]["batchState"] == "Ready"


def test_blue_green_cloneset_labels_its_updated_pods() -> None:
    """Upstream e2e "Bluegreen Release - Cloneset > bluegreen rolling with traffic case": 5 pods of
    batch 1 at step 1 (100% of 5)."""
    cs = {
        "apiVersion": "apps.kruise.io/v1alpha1",
        "kind": "CloneSet",
        "metadata": {
            "name": "web",
            "namespace": "shop",
            "uid": "cs-uid",
            "generation": 3,
            "annotations": {**CONTROL, ORIGINAL_DEPLOYMENT_STRATEGY_ANNOTATION: '{"maxSurge":"0%"}'},
        },
        "spec": {
            "replicas": 5,
            "minReadySeconds": MAX_READY_SECONDS,
            "updateStrategy": {"type": "ReCreate", "maxSurge": "100%"},
        },
        "status": {
            "observedGeneration": 3,
            "currentRevision": "web-aaa",
            "updateRevision": "web-bbb",
            "updatedReplicas": 5,
            "updatedReadyReplicas": 5,
        },
    }
    pods = [pod(f"n{i}", "cs-uid", hash_key="controller-revision-hash", revision="web-bbb") for i in range(5)]
    pods += [
        pod(f"o{i}", "cs-uid", hash_key="controller-revision-hash", revision="web-aaa") for i in range(5)
    ]
    release = br(0, style="BlueGreen", kind="CloneSet", rolloutID=RID, batches=[{"canaryReplicas": "100%"}])
    d = decide_blue_green(release, cs, (), (), pods)
    assert d.status["canaryStatus"]["batchState"] == "Upgrading"
    apply(pods, d.ops)
    assert tally(pods) == {"1": 5}
    assert decide_blue_green(release, cs, (), (), pods).status["canaryStatus"]["batchState"] == "Ready"


# ------------------------------------------------------------------------------ partition style
def test_partition_deployment_labels_its_new_pods_before_the_batch_is_ready() -> None:
    deployment = controlled("40%", updated=2, ready=2, observedGeneration=2)
    new_rs = owned_rs("h2", "dep-uid", "new-rs", 2)
    pods = [pod(f"n{i}", "new-rs", revision="h2") for i in range(2)]
    release = br(
        1, style="Partition", rolloutID=RID, batches=[{"canaryReplicas": "20%"}, {"canaryReplicas": "40%"}]
    )
    release["status"]["canaryStatus"] = {"currentBatch": 1}
    new_rs["spec"]["template"] = deployment["spec"]["template"]
    d = decide_deployment_partition(release, deployment, [new_rs], pods=pods)
    assert d.status["updateRevision"] == "h2"
    assert d.status["canaryStatus"]["batchState"] == "Upgrading"
    apply(pods, d.ops)
    assert tally(pods) == {"1": 1, "2": 1}
    ready = decide_deployment_partition(release, deployment, [new_rs], pods=pods)
    assert ready.ops == () and ready.status["canaryStatus"]["batchState"] == "Ready"
