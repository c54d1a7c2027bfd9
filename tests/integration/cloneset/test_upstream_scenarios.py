"""OpenKruise's CloneSet e2e scenarios (``test/e2e/apps/v1alpha1/cloneset.go``) on the real control plane.

One test per upstream ``ginkgo.It``; the docstring is the upstream name (Describe > Context > It).
Timings are shortened where upstream waits only to let a real kubelet pull images (KWOK plays the
kubelets). Scenarios that need what this product does not have yet are skipped with the reason;
``UPSTREAM_SCENARIOS.md`` maps every upstream name to its test.
"""

from __future__ import annotations

import itertools
from collections.abc import AsyncIterator
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from kruise.core.kube import KubeClient
from kruise.core.kube.resources import CLONESETS, CONTROLLER_REVISIONS, IMAGEPULLJOBS, PODS
from kruise.rollouts.manager.process import ManagerProcess
from tests.integration.cloneset.helpers import (
    INSTANCE_ID,
    LIFECYCLE,
    NEW_IMAGE,
    SPECIFIED_DELETE,
    consistently,
    create,
    get,
    label,
    names,
    new_cloneset,
    patch_pod,
    patch_spec,
    pods,
    pvcs,
    ready_time,
    set_image,
    wait_gone,
    wait_pods,
    wait_status,
)
from tests.support.cluster import TestCluster
from tests.support.managers import own_replica
from tests.support.wait import eventually

pytestmark = pytest.mark.usefixtures("manager")
MAX_INT32 = 2**31 - 1


def _parse(ts: str) -> float:
    return datetime.fromisoformat(ts.replace("Z", "+00:00")).timestamp()


# ---------------------------------------------------------------------------------- Creating
async def test_creates_with_host_network_pod_and_container_port(kube: KubeClient, namespace: str) -> None:
    """CloneSet > CloneSet Creating > creates with hostNetwork pod, specified containerPort without specifying hostPort"""  # noqa: E501
    body = new_cloneset("hostnetwork-port", 1)
    body["spec"]["template"]["spec"]["hostNetwork"] = True
    body["spec"]["template"]["spec"]["containers"][0]["ports"] = [{"containerPort": 80}]
    await create(kube, namespace, body)
    await wait_status(kube, namespace, "hostnetwork-port", readyReplicas=1)
    for pod in await pods(kube, namespace, "hostnetwork-port"):
        port = pod["spec"]["containers"][0]["ports"][0]
        assert port["hostPort"] == port["containerPort"] == 80


async def test_creates_with_lifecycle_pre_normal_finalizer(kube: KubeClient, namespace: str) -> None:
    """CloneSet > CloneSet Creating > creates with lifecycle preNormal finalizer"""
    finalizer = "finalizers.sigs.k8s.io/test"
    body = new_cloneset("clone", 1, lifecycle={"preNormal": {"finalizersHandler": [finalizer]}})
    await create(kube, namespace, body)
    cs = await wait_status(kube, namespace, "clone", readyReplicas=1)
    assert cs["status"]["availableReplicas"] == 0  # only Normal pods are available
    (pod,) = await pods(kube, namespace, "clone")
    assert label(pod, LIFECYCLE) == "PreparingNormal"

    await patch_pod(kube, namespace, pod["metadata"]["name"], {"metadata": {"finalizers": [finalizer]}})

    async def normal() -> bool:
        (current,) = await pods(kube, namespace, "clone")
        return label(current, LIFECYCLE) == "Normal"

    await eventually(normal, what="pod lifecycle Normal once preNormal is all-hooked")
    await wait_status(kube, namespace, "clone", availableReplicas=1)
    await kube.patch(
        PODS, pod["metadata"]["name"], {"metadata": {"finalizers": None}}, namespace, patch_type="merge"
    )


async def test_creates_with_unschedulable_scheduler(kube: KubeClient, namespace: str) -> None:
    """CloneSet > CloneSet Creating > creates with unschedulable scheduler"""
    body = new_cloneset("clone", 1)
    body["spec"]["template"]["spec"]["schedulerName"] = "unschedulable"
    await create(kube, namespace, body)
    await wait_status(kube, namespace, "clone", replicas=1)

    async def pending_and_preparing_normal() -> bool:
        (pod,) = await pods(kube, namespace, "clone")
        return pod["status"].get("phase") == "Pending" and label(pod, LIFECYCLE) == "PreparingNormal"

    await consistently(pending_and_preparing_normal, seconds=4, what="unscheduled pod stays PreparingNormal")

    await patch_spec(kube, namespace, "clone", {"template": {"spec": {"schedulerName": None}}})
    await wait_status(kube, namespace, "clone", readyReplicas=1, updatedReadyReplicas=1)

    async def normal() -> bool:
        found = await pods(kube, namespace, "clone")
        return len(found) == 1 and label(found[0], LIFECYCLE) == "Normal"

    await eventually(normal, what="rescheduled pod Normal")


async def test_creates_with_max_int32_progress_deadline_seconds(kube: KubeClient, namespace: str) -> None:
    """CloneSet > CloneSet Creating > creates with maxInt32 progressDeadlineSeconds"""
    await create(kube, namespace, new_cloneset("pds", 1, progressDeadlineSeconds=MAX_INT32))
    cs = await wait_status(kube, namespace, "pds", readyReplicas=1)
    assert cs["spec"]["progressDeadlineSeconds"] == MAX_INT32
    # A maxInt32 deadline disables progress tracking: no Progressing condition.
    assert not [c for c in cs["status"].get("conditions") or [] if c["type"] == "Progressing"]


async def test_creates_with_max_int32_min_ready_seconds_and_progress_deadline(
    kube: KubeClient, namespace: str
) -> None:
    """CloneSet > CloneSet Creating > creates with maxInt32 minReadySeconds and maxInt32 progressDeadlineSeconds"""  # noqa: E501
    body = new_cloneset("pds", 1, minReadySeconds=MAX_INT32, progressDeadlineSeconds=MAX_INT32)
    await create(kube, namespace, body)
    cs = await wait_status(kube, namespace, "pds", readyReplicas=1)
    assert cs["spec"]["minReadySeconds"] == MAX_INT32
    assert cs["spec"]["progressDeadlineSeconds"] == MAX_INT32
    assert cs["status"]["availableReplicas"] == 0  # ready, but never for maxInt32 seconds
    assert not [c for c in cs["status"].get("conditions") or [] if c["type"] == "Progressing"]

    await patch_spec(kube, namespace, "pds", {"minReadySeconds": 1, "progressDeadlineSeconds": None})
    cs = await wait_status(kube, namespace, "pds", readyReplicas=1, availableReplicas=1)
    assert not [c for c in cs["status"].get("conditions") or [] if c["type"] == "Progressing"]


# ---------------------------------------------------------------------------------- Scaling
async def test_scales_in_normal_cases(kube: KubeClient, namespace: str) -> None:
    """CloneSet > CloneSet Scaling > scales in normal cases"""
    cs = await create(kube, namespace, new_cloneset("clone", 3))
    assert cs["spec"]["updateStrategy"]["type"] == "ReCreate"
    assert cs["spec"]["updateStrategy"]["maxUnavailable"] == "20%"
    await wait_status(kube, namespace, "clone", timeout=3, replicas=3)
    await wait_status(kube, namespace, "clone", readyReplicas=3)


async def test_scales_with_min_ready_seconds_and_scale_strategy(kube: KubeClient, namespace: str) -> None:
    """CloneSet > CloneSet Scaling > scales with minReadySeconds and scaleStrategy"""
    # Upstream: 4 replicas, minReadySeconds 10. Three and 4 s prove the same pacing faster.
    replicas, min_ready = 3, 4
    body = new_cloneset("clone", replicas, minReadySeconds=min_ready, scaleStrategy={"maxUnavailable": 1})
    body["spec"]["template"]["spec"]["containers"][0]["imagePullPolicy"] = "IfNotPresent"
    await create(kube, namespace, body)
    await wait_status(kube, namespace, "clone", timeout=40, replicas=replicas, readyReplicas=replicas)
    found = sorted(await pods(kube, namespace, "clone"), key=lambda p: p["metadata"]["creationTimestamp"])
    allow_fluctuation = 2.0
    for previous, pod in itertools.pairwise(found):
        gap = _parse(pod["metadata"]["creationTimestamp"]) - _parse(ready_time(previous))
        assert min_ready <= gap <= min_ready + allow_fluctuation, (pod["metadata"]["name"], gap)


async def test_pods_should_be_ready_when_paused(kube: KubeClient, namespace: str) -> None:
    """CloneSet > CloneSet Scaling > pods should be ready when paused=true"""
    body = new_cloneset("clone", 3, strategy={"type": "ReCreate", "paused": True})
    await create(kube, namespace, body)
    await wait_status(kube, namespace, "clone", timeout=3, replicas=3)
    await wait_status(kube, namespace, "clone", readyReplicas=3)


def _pre_delete_cloneset(**extra: Any) -> dict[str, Any]:
    body = new_cloneset(
        "clone",
        3,
        template_labels={"lifecycle-hook": "true"},
        lifecycle={"preDelete": {"labelsHandler": {"lifecycle-hook": "true"}}},
    )
    body["metadata"].update(extra)
    return body


async def _wait_preparing_delete(kube: KubeClient, namespace: str, pod_name: str) -> None:
    async def preparing() -> bool:
        pod = await kube.get(PODS, pod_name, namespace)
        return label(pod, LIFECYCLE) == "PreparingDelete"

    await eventually(preparing, timeout=10, what=f"{pod_name} PreparingDelete")


async def test_specific_delete_a_pod_when_scaling_exclude_preparing_delete_is_disabled(
    kube: KubeClient, namespace: str
) -> None:
    """CloneSet > CloneSet Scaling > specific delete a Pod, when scalingExcludePreparingDelete is disabled"""
    await create(kube, namespace, _pre_delete_cloneset())
    await wait_status(kube, namespace, "clone", timeout=3, replicas=3)
    await wait_status(kube, namespace, "clone", readyReplicas=3)
    old = await pods(kube, namespace, "clone")
    victim = old[0]["metadata"]["name"]

    await patch_pod(kube, namespace, victim, {"metadata": {"labels": {SPECIFIED_DELETE: "true"}}})
    await _wait_preparing_delete(kube, namespace, victim)

    async def still_three() -> bool:
        return (await get(kube, namespace, "clone"))["status"]["replicas"] == 3

    await consistently(still_three, seconds=3, what="no scale-up while the pod waits in PreparingDelete")
    assert names(await pods(kube, namespace, "clone")) == names(old)

    await patch_pod(kube, namespace, victim, {"metadata": {"labels": {"lifecycle-hook": None}}})
    await wait_gone(kube, namespace, victim)
    await wait_status(kube, namespace, "clone", replicas=3)
    new = await wait_pods(kube, namespace, "clone", 3, all_ready=False)
    assert len(names(new) & names(old)) == 2


async def test_specific_scale_down_with_lifecycle_then_scale_up_when_exclude_preparing_delete(
    kube: KubeClient, namespace: str
) -> None:
    """CloneSet > CloneSet Scaling > specific scale down with lifecycle and then scale up, when scalingExcludePreparingDelete is enabled"""  # noqa: E501
    body = _pre_delete_cloneset(labels={"apps.kruise.io/cloneset-scaling-exclude-preparing-delete": "true"})
    await create(kube, namespace, body)
    await wait_status(kube, namespace, "clone", timeout=3, replicas=3)
    await wait_status(kube, namespace, "clone", readyReplicas=3)
    old = await pods(kube, namespace, "clone")
    victim = old[0]["metadata"]["name"]

    await patch_spec(kube, namespace, "clone", {"replicas": 2, "scaleStrategy": {"podsToDelete": [victim]}})
    await _wait_preparing_delete(kube, namespace, victim)
    assert (await get(kube, namespace, "clone"))["status"]["replicas"] == 3

    await patch_spec(kube, namespace, "clone", {"replicas": 3})
    await wait_status(kube, namespace, "clone", timeout=10, replicas=4)

    await patch_pod(kube, namespace, victim, {"metadata": {"labels": {"lifecycle-hook": None}}})
    await wait_gone(kube, namespace, victim)
    await wait_status(kube, namespace, "clone", timeout=5, replicas=3)
    new = await pods(kube, namespace, "clone")
    assert len(new) == 3
    assert len(names(new) & names(old)) == 2


# ---------------------------------------------------------------------------------- Updating
@pytest.mark.skip(
    reason="KWOK derives a container's imageID from the image string (sha256 of it), so two tags of "
    "one digest cannot be played; the same-imageID completion rule is unit-tested in "
    "tests/unit/cloneset/test_inplace.py (test_check_in_place_update_completed)"
)
async def test_in_place_update_images_with_the_same_image_id() -> None:
    """CloneSet > CloneSet Updating > in-place update images with the same imageID"""


@pytest.mark.skip(
    reason="container launch priority needs the pod webhook (KRUISE_CONTAINER_PRIORITY -> "
    "KRUISE_CONTAINER_BARRIER injection) and kubelet postStart timing; neither exists here yet. "
    "Batching by priority is unit-tested (test_inplace.py::test_container_priorities_update_in_batches)"
)
async def test_in_place_update_two_container_images_with_priorities_successfully() -> None:
    """CloneSet > CloneSet Updating > in-place update two container images with priorities successfully"""


@pytest.mark.skip(
    reason="needs a container that fails to start after an in-place restart (KWOK always reports the "
    "new container Running) and the pod webhook's launch-priority injection"
)
async def test_in_place_update_two_container_images_with_priorities_previous_failed() -> None:
    """CloneSet > CloneSet Updating > in-place update two container images with priorities, should not update the next when the previous one failed"""  # noqa: E501


@pytest.mark.skip(reason="needs kruise-daemon (env from metadata) and the pod webhook (launch priority)")
async def test_in_place_update_two_container_image_and_env_from_metadata_with_priorities() -> None:
    """CloneSet > CloneSet Updating > in-place update two container image and env from metadata with priorities"""  # noqa: E501


async def test_partition_99_percent_of_4_updates_exactly_one(kube: KubeClient, namespace: str) -> None:
    """CloneSet > CloneSet Updating > CloneSet partition="99%", replicas=4, make sure one pod is upgraded"""
    strategy = {"type": "InPlaceIfPossible", "maxUnavailable": "50%", "partition": "99%"}
    await create(kube, namespace, new_cloneset("clone", 4, strategy=strategy))
    await wait_status(kube, namespace, "clone", readyReplicas=4)
    await set_image(kube, namespace, "clone", NEW_IMAGE)
    await wait_status(kube, namespace, "clone", updatedReplicas=1)

    async def exactly_one() -> bool:
        st = (await get(kube, namespace, "clone"))["status"]
        return bool(st["updatedReplicas"] == 1)

    await consistently(exactly_one, seconds=3, what="exactly one pod updated")
    cs = await wait_status(kube, namespace, "clone", updatedReplicas=1, updatedReadyReplicas=1)
    assert cs["status"]["expectedUpdatedReplicas"] == 1
    assert len(await pods(kube, namespace, "clone")) == 4


def _vct(name: str, size: str = "1Gi") -> dict[str, Any]:
    return {
        "metadata": {"name": name},
        "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": size}}},
    }


async def _delete_all_pods(kube: KubeClient, namespace: str, victims: list[dict[str, Any]]) -> None:
    """Delete the pods and wait until each is gone (a replacement may reuse its name)."""
    for pod in victims:
        await kube.delete(PODS, pod["metadata"]["name"], namespace, missing_ok=True)
    for pod in victims:

        async def gone(pod: dict[str, Any] = pod) -> bool:
            now = await kube.get_or_none(PODS, pod["metadata"]["name"], namespace)
            return now is None or now["metadata"]["uid"] != pod["metadata"]["uid"]

        await eventually(gone, what=f"pod {pod['metadata']['name']} deleted")


async def test_update_with_disable_pvc_reuse(kube: KubeClient, namespace: str) -> None:
    """CloneSet > CloneSet Updating > CloneSet Update with DisablePVCReuse=true"""
    body = new_cloneset(
        "clone",
        4,
        strategy={"type": "ReCreate"},
        volumeClaimTemplates=[_vct("data-vol1"), _vct("data-vol2")],
    )
    await create(kube, namespace, body)
    await wait_status(kube, namespace, "clone", readyReplicas=4)
    first = await pods(kube, namespace, "clone")
    ids = {label(p, INSTANCE_ID) for p in first}
    claims = await pvcs(kube, namespace)
    assert len(claims) == 8
    claim_names = names(claims)
    for claim in claims:
        assert label(claim, INSTANCE_ID) in ids
        (ref,) = [r for r in claim["metadata"]["ownerReferences"] if r.get("controller")]
        assert ref["kind"] == "CloneSet"

    # deleted pods come back with the same instance ids and reuse their PVCs
    await _delete_all_pods(kube, namespace, first)
    second = await wait_pods(kube, namespace, "clone", 4)
    await wait_status(kube, namespace, "clone", readyReplicas=4)
    assert {label(p, INSTANCE_ID) for p in second} == ids
    assert names(await pvcs(kube, namespace)) == claim_names

    # with disablePVCReuse the PVCs of deleted pods are cleaned up: fresh ids, fresh PVCs
    await patch_spec(kube, namespace, "clone", {"scaleStrategy": {"disablePVCReuse": True}})
    await wait_status(kube, namespace, "clone", readyReplicas=4)
    await _delete_all_pods(kube, namespace, second)
    third = await wait_pods(kube, namespace, "clone", 4)
    await wait_status(kube, namespace, "clone", readyReplicas=4)
    new_ids = {label(p, INSTANCE_ID) for p in third}

    async def fresh_claims() -> list[dict[str, Any]] | None:
        current = await pvcs(kube, namespace)
        return current if len(current) == 8 else None

    claims = await eventually(fresh_claims, what="8 fresh PVCs")
    for claim in claims:
        assert label(claim, INSTANCE_ID) in new_ids
        assert claim["metadata"]["name"] not in claim_names
    assert not new_ids & ids


@pytest.fixture
async def preparing_update_as_update(
    manager: ManagerProcess, cluster: TestCluster, tmp_path: Path
) -> AsyncIterator[None]:
    """A manager with the gate ``PreparingUpdateAsUpdate``, as upstream's e2e run enables it."""
    async with own_replica(
        manager, cluster, tmp_path / "gated", extra_args=("--feature-gates=PreparingUpdateAsUpdate=true",)
    ):
        yield


@pytest.mark.usefixtures("preparing_update_as_update")
async def test_regard_preparing_update_pod_as_update_when_scaling(kube: KubeClient, namespace: str) -> None:
    """CloneSet > CloneSet Updating > CloneSet regard preparing-update pod as update when scaling"""
    hook = {"preparing-update-hook": "true"}
    unhook = {"metadata": {"labels": {"preparing-update-hook": None}}}
    strategy = {"type": "InPlaceIfPossible", "maxUnavailable": "50%", "partition": "99%"}
    lifecycle = {"inPlaceUpdate": {"labelsHandler": hook}}
    body = new_cloneset("clone", 2, strategy=strategy, template_labels=hook, lifecycle=lifecycle)
    await create(kube, namespace, body)
    await wait_status(kube, namespace, "clone", readyReplicas=2)
    await set_image(kube, namespace, "clone", NEW_IMAGE)
    update_revision = (await wait_status(kube, namespace, "clone"))["status"]["updateRevision"]

    async def grouped(updated: int, current: int, preparing: int) -> list[dict[str, Any]] | None:
        found = await pods(kube, namespace, "clone")
        new = [p for p in found if label(p, "controller-revision-hash") == update_revision]
        waiting = [p for p in found if label(p, LIFECYCLE) == "PreparingUpdate"]
        counts = (len(new), len(found) - len(new), len(waiting))
        return found if counts == (updated, current, preparing) else None

    found = await eventually(lambda: grouped(0, 2, 1), what="one pod held in PreparingUpdate")
    other = next(p for p in found if label(p, LIFECYCLE) != "PreparingUpdate")
    await kube.delete(PODS, other["metadata"]["name"], namespace)
    await wait_gone(kube, namespace, other["metadata"]["name"])
    await wait_pods(kube, namespace, "clone", 2, all_ready=False)
    await eventually(lambda: grouped(0, 2, 1), what="the replacement is created at the current revision")

    await patch_spec(kube, namespace, "clone", {"replicas": 3})
    found = await eventually(lambda: grouped(0, 3, 1), what="the scaled pod is at the current revision")
    held = next(p for p in found if label(p, LIFECYCLE) == "PreparingUpdate")
    await patch_pod(kube, namespace, held["metadata"]["name"], unhook)
    await eventually(lambda: grouped(1, 2, 0), timeout=30, what="the released pod updated")

    wider = {"updateStrategy": {"partition": None, "maxUnavailable": "100%"}}
    await patch_spec(kube, namespace, "clone", wider)
    found = await eventually(lambda: grouped(1, 2, 2), what="the other two held in PreparingUpdate")
    for pod in found:
        if label(pod, LIFECYCLE) == "PreparingUpdate":
            await patch_pod(kube, namespace, pod["metadata"]["name"], unhook)
    await eventually(lambda: grouped(3, 0, 0), timeout=30, what="all pods updated")


@pytest.mark.skip(
    reason="upstream runs it with gate RecreatePodWhenChangeVCTInCloneSetGate (VCT hash in revisions "
    "forces recreate); the gate is off by default in v1.8 and not implemented here. PVC naming and "
    "reuse are covered by test_upstream_behaviours.py::test_volume_claim_templates_named_and_reused"
)
async def test_update_with_volume_claim_template_changes() -> None:
    """CloneSet > CloneSet Updating > CloneSet Update with VolumeClaimTemplate changes"""


async def test_change_resource_and_qos_succeeds_to_recreate(kube: KubeClient, namespace: str) -> None:
    """CloneSet > CloneSet Updating > change resource and qos -> succeed to recreate"""
    body = new_cloneset(
        "clone", 1, strategy={"type": "InPlaceIfPossible"}, template_labels={"test-env": "foo"}
    )
    body["spec"]["template"]["spec"]["containers"][0]["env"] = [
        {"name": "TEST_ENV", "valueFrom": {"fieldRef": {"fieldPath": "metadata.labels['test-env']"}}}
    ]
    await create(kube, namespace, body)
    await wait_status(kube, namespace, "clone", readyReplicas=1)
    (old,) = await pods(kube, namespace, "clone")
    resources = {"requests": {"cpu": "1", "memory": "1Gi"}, "limits": {"cpu": "1", "memory": "1Gi"}}
    container = dict(body["spec"]["template"]["spec"]["containers"][0], resources=resources)
    await patch_spec(kube, namespace, "clone", {"template": {"spec": {"containers": [container]}}})
    await wait_status(kube, namespace, "clone", updatedReadyReplicas=1, replicas=1)
    (new,) = await wait_pods(kube, namespace, "clone", 1)
    assert new["metadata"]["uid"] != old["metadata"]["uid"]
    assert new["spec"]["containers"][0]["resources"]["limits"] == resources["limits"]


# ---------------------------------------------------------------------------------- pre-download
@pytest.fixture
async def pre_download_gate(
    manager: ManagerProcess, cluster: TestCluster, tmp_path: Path
) -> AsyncIterator[None]:
    """A manager with the gate ``PreDownloadImageForInPlaceUpdate``, as upstream's e2e run enables it."""
    gates = ("--feature-gates=PreDownloadImageForInPlaceUpdate=true",)
    async with own_replica(manager, cluster, tmp_path / "predownload", extra_args=gates):
        yield


async def _pull_jobs(kube: KubeClient, namespace: str) -> list[dict[str, Any]]:
    return list((await kube.list(IMAGEPULLJOBS, namespace)).get("items") or [])


async def _start_pre_download_update(kube: KubeClient, namespace: str) -> str:
    """Upstream's steps: 5 replicas, partition 1, available; then parallelism 2 and a new image."""
    body = new_cloneset("clone", 5, strategy={"type": "InPlaceIfPossible", "partition": 1})
    await create(kube, namespace, body)
    await wait_status(kube, namespace, "clone", readyReplicas=5, availableReplicas=5, timeout=60)
    annotations = {"apps.kruise.io/image-predownload-parallelism": "2"}
    await kube.patch(
        CLONESETS, "clone", {"metadata": {"annotations": annotations}}, namespace, patch_type="merge"
    )
    await set_image(kube, namespace, "clone", NEW_IMAGE)
    return str((await wait_status(kube, namespace, "clone"))["status"]["updateRevision"])


@pytest.mark.usefixtures("pre_download_gate")
async def test_pre_download_for_new_image(kube: KubeClient, namespace: str) -> None:
    """CloneSet > CloneSet pre-download images > pre-download for new image"""
    update_revision = await _start_pre_download_update(kube, namespace)
    jobs = await eventually(lambda: _pull_jobs(kube, namespace), what="the ImagePullJob")
    (job,) = jobs
    cs = await get(kube, namespace, "clone")
    revision_hash = update_revision.rsplit("-", 1)[1]
    assert job["metadata"]["name"] == f"{update_revision}-nginx"
    assert job["spec"]["image"] == NEW_IMAGE
    assert job["spec"]["parallelism"] == 2
    assert job["spec"]["pullPolicy"] == {"backoffLimit": 1, "timeoutSeconds": 300}
    assert job["spec"]["completionPolicy"] == {"type": "Always", "ttlSecondsAfterFinished": 600}
    assert job["metadata"]["labels"] == {"app": "clone", "controller.kubernetes.io/hash": revision_hash}
    (ref,) = job["metadata"]["ownerReferences"]
    assert (ref["kind"], ref["name"], ref["uid"], ref["controller"]) == (
        "CloneSet",
        "clone",
        cs["metadata"]["uid"],
        True,
    )
    assert job["spec"]["podSelector"] == {
        "matchLabels": {"app": "clone"},
        "matchExpressions": [
            {
                "key": "controller-revision-hash",
                "operator": "NotIn",
                "values": [update_revision, revision_hash],
            }
        ],
    }
    rev = await kube.get(CONTROLLER_REVISIONS, update_revision, namespace)
    assert rev["metadata"]["labels"].get("apps.kruise.io/pre-predownload-created") == "true"

    # the revisions converge: the jobs go
    await patch_spec(kube, namespace, "clone", {"updateStrategy": {"partition": 0}})
    await wait_status(
        kube, namespace, "clone", updatedReadyReplicas=5, currentRevision=update_revision, timeout=60
    )

    async def gone() -> bool:
        return not await _pull_jobs(kube, namespace)

    await eventually(gone, what="the ImagePullJob deleted")


async def test_pre_download_gate_off_creates_nothing(kube: KubeClient, namespace: str) -> None:
    """Ours: with ``PreDownloadImageForInPlaceUpdate`` off (the default) no ImagePullJob appears."""
    update_revision = await _start_pre_download_update(kube, namespace)
    await consistently(lambda: _no_jobs(kube, namespace), seconds=3)
    rev = await kube.get(CONTROLLER_REVISIONS, update_revision, namespace)
    assert "apps.kruise.io/pre-predownload-created" not in (rev["metadata"].get("labels") or {})


async def _no_jobs(kube: KubeClient, namespace: str) -> bool:
    return not await _pull_jobs(kube, namespace)
