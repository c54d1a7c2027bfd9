"""Image pre-download for in-place update: which ImagePullJobs, when (the pure core)."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from kruise.workloads.predownload import (
    CREATED_LABEL,
    IGNORED_LABEL,
    controlled_jobs,
    diff_images,
    ignore_reason,
    min_updated_ready_pods,
    plan_predownload,
)

JSON = dict[str, Any]


def template(*containers: tuple[str, str], annotations: JSON | None = None) -> JSON:
    meta: JSON = {"labels": {"app": "web"}}
    if annotations:
        meta["annotations"] = annotations
    return {"metadata": meta, "spec": {"containers": [{"name": n, "image": i} for n, i in containers]}}


def revision(name: str, tmpl: JSON, **labels: str) -> JSON:
    return {
        "metadata": {
            "name": name,
            "namespace": "ns",
            "resourceVersion": "5",
            "labels": {"controller.kubernetes.io/hash": name.rsplit("-", 1)[1], **labels},
        },
        "data": {"spec": {"template": {**tmpl, "$patch": "replace"}}},
    }


def cloneset(replicas: int = 5, annotations: JSON | None = None, **strategy: Any) -> JSON:
    return {
        "apiVersion": "apps.kruise.io/v1alpha1",
        "kind": "CloneSet",
        "metadata": {"name": "web", "namespace": "ns", "uid": "u1", "annotations": annotations or {}},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": "web"}},
            "template": template(("app", "nginx:2"), ("side", "busybox:1"), annotations={"a": "b"}),
            "updateStrategy": {"type": "InPlaceIfPossible", **strategy},
        },
        "status": {"updateRevision": "web-new", "updatedReadyReplicas": 0},
    }


OLD = revision("web-old", template(("app", "nginx:1"), ("side", "busybox:1")))
NEW = revision("web-new", template(("app", "nginx:2"), ("side", "busybox:1")))


def test_diff_images_new_or_changed_containers_only() -> None:
    old = template(("a", "x:1"), ("b", "y:1"))
    new = template(("a", "x:2"), ("b", "y:1"), ("c", "z:1"))
    assert diff_images(old, new) == {"a": "x:2", "c": "z:1"}
    assert diff_images(old, old) == {}


def test_creates_one_job_per_changed_image_as_upstream() -> None:
    cs = cloneset(annotations={"apps.kruise.io/image-predownload-parallelism": "2"})
    cs["spec"]["template"]["spec"]["imagePullSecrets"] = [{"name": "reg"}]
    plan = plan_predownload(cs, OLD, NEW)
    assert plan.mark == CREATED_LABEL and not plan.delete_jobs
    (job,) = plan.jobs
    assert job["metadata"]["name"] == "web-new-app"
    assert job["metadata"]["labels"] == {"app": "web", "controller.kubernetes.io/hash": "new"}
    (ref,) = job["metadata"]["ownerReferences"]
    assert ref == {
        "apiVersion": "apps.kruise.io/v1alpha1",
        "kind": "CloneSet",
        "name": "web",
        "uid": "u1",
        "controller": True,
        "blockOwnerDeletion": True,
    }
    spec = job["spec"]
    assert spec["image"] == "nginx:2"
    assert spec["parallelism"] == 2
    assert spec["pullPolicy"] == {"backoffLimit": 1, "timeoutSeconds": 300}
    assert spec["completionPolicy"] == {"type": "Always", "ttlSecondsAfterFinished": 600}
    assert spec["pullSecrets"] == ["reg"]
    assert spec["sandboxConfig"] == {
        "labels": {"app": "web", "controller.kubernetes.io/hash": "new"},
        "annotations": {"a": "b"},
    }
    assert spec["podSelector"] == {
        "matchLabels": {"app": "web"},
        "matchExpressions": [
            {"key": "controller-revision-hash", "operator": "NotIn", "values": ["web-new", "new"]}
        ],
    }


def test_timeout_annotation() -> None:
    cs = cloneset(annotations={"apps.kruise.io/image-predownload-timeout-seconds": "60"})
    assert plan_predownload(cs, OLD, NEW).jobs[0]["spec"]["pullPolicy"]["timeoutSeconds"] == 60


def test_waits_for_min_updated_ready_pods() -> None:
    cs = cloneset(annotations={"apps.kruise.io/image-predownload-min-updated-ready-pods": "40%"})
    assert min_updated_ready_pods(cs) == 2  # 40% of 5 rounded up
    assert plan_predownload(cs, OLD, NEW).jobs == ()
    cs["status"]["updatedReadyReplicas"] = 2
    assert len(plan_predownload(cs, OLD, NEW).jobs) == 1
    cs["status"]["updateRevision"] = "web-older"  # the count is of another revision: 0
    assert plan_predownload(cs, OLD, NEW).jobs == ()


def test_min_updated_ready_pods_invalid_means_zero() -> None:
    assert (
        min_updated_ready_pods(
            cloneset(annotations={"apps.kruise.io/image-predownload-min-updated-ready-pods": "x"})
        )
        == 0
    )


@pytest.mark.parametrize("label", [CREATED_LABEL, IGNORED_LABEL])
def test_handled_revision_does_nothing(label: str) -> None:
    new = copy.deepcopy(NEW)
    new["metadata"]["labels"][label] = "true"
    plan = plan_predownload(cloneset(), OLD, new)
    assert plan.jobs == () and plan.mark is None


def test_converged_revisions_delete_jobs() -> None:
    plan = plan_predownload(cloneset(), NEW, NEW)
    assert plan.delete_jobs and plan.jobs == () and plan.mark is None


@pytest.mark.parametrize(
    ("cs", "reason"),
    [
        (cloneset(type="ReCreate"), "recreates"),
        (cloneset(replicas=3), "replicas 3 <= 3"),
        (cloneset(maxUnavailable="100%"), "one batch"),
        (cloneset(maxUnavailable=5), "one batch"),
    ],
)
def test_ignored_cases(cs: JSON, reason: str) -> None:
    plan = plan_predownload(cs, OLD, NEW)
    assert plan.mark == IGNORED_LABEL and plan.jobs == ()
    assert reason in plan.reason


def test_partition_keeps_a_one_batch_update_eligible() -> None:
    assert ignore_reason(cloneset(maxUnavailable="100%", partition=1), OLD, NEW) == ""
    assert ignore_reason(cloneset(replicas=4), OLD, NEW) == ""


def test_not_in_place_is_ignored() -> None:
    new = revision(
        "web-new",
        {
            **template(("app", "nginx:2")),
            "spec": {"containers": [{"name": "app", "image": "nginx:2", "args": ["x"]}]},
        },
    )
    assert "in place" in plan_predownload(cloneset(), OLD, new).reason


def statefulset(replicas: int = 5, **strategy: Any) -> JSON:
    cs = cloneset(replicas)
    cs["apiVersion"], cs["kind"] = "apps.kruise.io/v1beta1", "StatefulSet"
    cs["spec"]["updateStrategy"] = strategy
    return cs


@pytest.mark.parametrize(
    ("strategy", "ignored"),
    [
        ({"type": "RollingUpdate", "rollingUpdate": {"podUpdatePolicy": "InPlaceIfPossible"}}, False),
        ({"type": "OnDelete", "rollingUpdate": {}}, True),
        ({"type": "RollingUpdate"}, True),
        ({"type": "RollingUpdate", "rollingUpdate": {"podUpdatePolicy": "ReCreate"}}, True),
        ({"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 5}}, True),
        ({"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 5, "partition": 1}}, False),
        # upstream's default maxUnavailable is the string "1", read as 1 percent: never one batch
        ({"type": "RollingUpdate", "rollingUpdate": {}}, False),
    ],
)
def test_statefulset_ignored_cases(strategy: JSON, ignored: bool) -> None:
    plan = plan_predownload(statefulset(**strategy), OLD, NEW)
    assert (plan.mark == IGNORED_LABEL) is ignored
    if not ignored:
        assert plan.jobs[0]["metadata"]["ownerReferences"][0]["kind"] == "StatefulSet"


def test_controlled_jobs() -> None:
    mine = {"metadata": {"name": "a", "ownerReferences": [{"uid": "u1", "controller": True}]}}
    other = {"metadata": {"name": "b", "ownerReferences": [{"uid": "u2", "controller": True}]}}
    weak = {"metadata": {"name": "c", "ownerReferences": [{"uid": "u1"}]}}
    assert controlled_jobs([mine, other, weak], "u1") == [mine]
