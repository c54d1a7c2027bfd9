"""Native Deployments: template revisions, WorkloadInfo and the workload hold webhook (pure)."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from kruise.rollouts.release.constants import (
    IN_PROGRESSING_ANNOTATION,
    ORIGINAL_DEPLOYMENT_STRATEGY_ANNOTATION,
    STABLE_REVISION_LABEL,
)
from kruise.rollouts.workloads.deployment.gohash import compute_hash
from kruise.rollouts.workloads.deployment.hold import hold_deployment
from kruise.rollouts.workloads.deployment.info import deployment_info, new_and_stable
from kruise.rollouts.workloads.deployment.podtemplate import (
    deployment_revision,
    equal_ignore_hash,
    template_revision,
)

JSON = dict[str, Any]


def template(image: str, **labels: str) -> JSON:
    return {
        "metadata": {"labels": {"app": "web", **labels}},
        "spec": {"containers": [{"name": "web", "image": image}]},
    }


def deployment(
    image: str = "v2", *, annotations: JSON | None = None, labels: JSON | None = None, generation: int = 2
) -> JSON:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {
            "name": "web",
            "namespace": "shop",
            "uid": "dep-uid",
            "generation": generation,
            "annotations": annotations or {},
            "labels": labels or {},
        },
        "spec": {"replicas": 5, "selector": {"matchLabels": {"app": "web"}}, "template": template(image)},
        "status": {"observedGeneration": 2},
    }


def replicaset(
    name: str,
    image: str,
    pod_hash: str,
    *,
    owner: str = "dep-uid",
    replicas: int = 5,
    revision: str = "1",
    created: str = "2026-01-01T00:00:00Z",
) -> JSON:
    return {
        "metadata": {
            "name": name,
            "namespace": "shop",
            "labels": {"app": "web", "pod-template-hash": pod_hash},
            "annotations": {"deployment.kubernetes.io/revision": revision},
            "creationTimestamp": created,
            "ownerReferences": [{"kind": "Deployment", "uid": owner, "controller": True}],
        },
        "spec": {"replicas": replicas, "template": template(image, **{"pod-template-hash": pod_hash})},
        "status": {"readyReplicas": replicas},
    }


def rollout(*, blue_green: bool = False, extra: bool = True, routing: bool = True) -> JSON:
    body: JSON = {"steps": [{"replicas": "20%"}]}
    if routing:
        body["trafficRoutings"] = [{"service": "web", "ingress": {"name": "web"}}]
    if blue_green:
        strategy = {"blueGreen": body}
    else:
        strategy = {"canary": {**body, "enableExtraWorkloadForCanary": extra}}
    return {
        "metadata": {"name": "web", "namespace": "shop"},
        "spec": {
            "workloadRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
            "strategy": strategy,
        },
    }


IN_PROGRESS = {IN_PROGRESSING_ANNOTATION: '{"rolloutName":"web"}'}


# ------------------------------------------------------------------------------ revisions
def test_templates_compare_without_their_pod_template_hash_and_empty_maps() -> None:
    assert equal_ignore_hash(template("v1", **{"pod-template-hash": "abc"}), template("v1"))
    bare = {"metadata": {"labels": {}, "annotations": {}}, "spec": {}}
    assert equal_ignore_hash(bare, {"spec": {}})
    assert not equal_ignore_hash(template("v1"), template("v2"))


def test_a_revision_is_upstreams_compute_hash_and_pods_carry_their_replicasets_hash() -> None:
    """``canaryRevision`` is ``util.ComputeHash(&template, nil)`` (k8s.io/api v0.28.9); the pods of a
    template carry the ``pod-template-hash`` of the ReplicaSet that runs it, else the hash the
    advanced Deployment controller will name it by."""
    assert deployment_revision(template("v1")) == compute_hash(template("v1"))
    assert (
        deployment_revision(template("v1"), 2)
        == compute_hash(template("v1"), 2)
        != deployment_revision(template("v1"))
    )
    rs = replicaset("web-abc", "v1", "abc")
    assert template_revision(template("v1"), [rs]) == "abc"
    assert template_revision(template("v2"), [rs]) == compute_hash(template("v2"))


def test_a_template_the_port_refuses_gets_a_stable_stand_in() -> None:
    """A set ``creationTimestamp`` (Go's value would hold the controller's time zone)."""
    stamped = {**template("v1"), "metadata": {"creationTimestamp": "2024-01-01T00:00:00Z"}}
    revision = deployment_revision(stamped)
    assert revision == deployment_revision(copy.deepcopy(stamped))
    assert set(revision) <= set("bcdfghjklmnpqrstvwxz2456789")


# ------------------------------------------------------------------------------ WorkloadInfo
def test_canary_style_info_reads_stable_and_canary_replicasets() -> None:
    stable_rs = replicaset("web-aaa", "v1", "aaa")
    canary = {
        **deployment("v2"),
        "metadata": {
            "name": "web-x1",
            "namespace": "shop",
            "uid": "can-uid",
            "labels": {"rollouts.kruise.io/canary-deployment": "web"},
        },
    }
    canary_rs = replicaset("web-x1-bbb", "v2", "bbb", owner="can-uid", replicas=1)
    info = deployment_info(rollout(), deployment(annotations=IN_PROGRESS), [stable_rs, canary_rs], [canary])
    revisions = (info.stable_revision, info.canary_revision, info.pod_template_hash)
    assert revisions == ("aaa", compute_hash(template("v2")), "bbb")
    assert info.in_progressing and not info.in_rollback and info.status_consistent


def test_canary_style_rollback_is_the_stable_template_again() -> None:
    info = deployment_info(
        rollout(), deployment("v1", annotations=IN_PROGRESS), [replicaset("web-aaa", "v1", "aaa")]
    )
    assert info.in_rollback and info.canary_revision == compute_hash(template("v1"))


@pytest.mark.parametrize(
    ("dep", "rss"),
    [
        pytest.param(
            deployment(generation=3), [replicaset("web-aaa", "v1", "aaa")], id="generation not observed"
        ),
        pytest.param(deployment(), [], id="no stable replicaset yet"),
    ],
)
def test_canary_style_info_is_not_trusted_before_the_controller_caught_up(dep: JSON, rss: list[JSON]) -> None:
    assert not deployment_info(rollout(), dep, rss).status_consistent


def test_blue_green_info_reads_the_stable_revision_label_and_the_new_replicaset() -> None:
    dep = deployment(annotations=IN_PROGRESS, labels={STABLE_REVISION_LABEL: "aaa"})
    rss = [replicaset("web-aaa", "v1", "aaa"), replicaset("web-bbb", "v2", "bbb", replicas=3, revision="2")]
    info = deployment_info(rollout(blue_green=True), dep, rss)
    revisions = (info.stable_revision, info.canary_revision, info.pod_template_hash)
    assert revisions == ("aaa", compute_hash(template("v2")), "bbb")
    assert not info.in_rollback
    rolled_back = deployment("v1", annotations=IN_PROGRESS, labels={STABLE_REVISION_LABEL: "aaa"})
    assert deployment_info(rollout(blue_green=True), rolled_back, rss).in_rollback


def test_new_and_stable_order_replicasets_by_revision() -> None:
    old = replicaset("web-old", "v0", "ooo", revision="1", replicas=0)
    stable = replicaset("web-aaa", "v1", "aaa", revision="2")
    new = replicaset("web-bbb", "v2", "bbb", revision="3")
    assert new_and_stable([new, stable, old], deployment("v2")) == (new, stable)


# ------------------------------------------------------------------------------ hold webhook
def test_a_template_change_enters_the_release_paused_labelled_and_annotated() -> None:
    held = hold_deployment(
        deployment("v2"), deployment("v1"), [rollout()], [replicaset("web-aaa", "v1", "aaa")]
    )
    assert held is not None
    assert held["spec"]["paused"] is True
    assert held["metadata"]["labels"][STABLE_REVISION_LABEL] == "aaa"
    assert json.loads(held["metadata"]["annotations"][IN_PROGRESSING_ANNOTATION]) == {"rolloutName": "web"}


@pytest.mark.parametrize(
    ("new", "old", "rss", "ro"),
    [
        pytest.param(
            deployment("v1"),
            deployment("v1"),
            [replicaset("a", "v1", "aaa")],
            rollout(),
            id="template unchanged",
        ),
        pytest.param(deployment("v2"), deployment("v1"), [], rollout(), id="no active replicaset"),
        pytest.param(
            deployment("v2"),
            deployment("v1"),
            [replicaset("a", "v1", "aaa"), replicaset("b", "v0", "ooo")],
            rollout(),
            id="two versions with traffic routing",
        ),
        pytest.param(
            {**deployment("v2"), "spec": {**deployment("v2")["spec"], "replicas": 0}},
            deployment("v1"),
            [replicaset("a", "v1", "aaa")],
            rollout(),
            id="scaled to zero",
        ),
        pytest.param(
            deployment("v2", annotations={"rollouts.kruise.io/rollout-id": "r1"}),
            deployment("v1", annotations={"rollouts.kruise.io/rollout-id": "r1"}),
            [replicaset("a", "v1", "aaa")],
            rollout(),
            id="rollout-id set and unchanged",
        ),
    ],
)
def test_changes_that_do_not_enter_a_release(new: JSON, old: JSON, rss: list[JSON], ro: JSON) -> None:
    assert hold_deployment(new, old, [ro], rss) is None


ID = "rollouts.kruise.io/rollout-id"


@pytest.mark.parametrize(
    ("meta", "want"),
    [
        pytest.param({"labels": {ID: "r1"}}, "r1", id="the label"),
        pytest.param({"annotations": {ID: "r2"}}, "r2", id="the annotation without a label"),
        pytest.param({"labels": {ID: "r1"}, "annotations": {ID: "r2"}}, "r1", id="the label wins"),
    ],
)
def test_a_deployment_reads_its_rollout_id_by_the_shared_label_then_annotation_rule(
    meta: dict[str, JSON], want: str
) -> None:
    dep = deployment(**meta)
    rss = [replicaset("web-aaa", "v1", "aaa"), replicaset("web-bbb", "v2", "bbb", revision="2")]
    for ro in (rollout(), rollout(blue_green=True)):
        assert deployment_info(ro, dep, rss).observed_rollout_id == want


@pytest.mark.parametrize(
    ("new_meta", "old_meta", "enters"),
    [
        pytest.param({"labels": {ID: "r2"}}, {"labels": {ID: "r1"}}, True, id="label changed"),
        pytest.param({"labels": {ID: "r1"}}, {"labels": {ID: "r1"}}, False, id="label unchanged"),
        pytest.param(
            {"labels": {ID: "r1"}, "annotations": {ID: "x"}},
            {"labels": {ID: "r1"}, "annotations": {ID: "y"}},
            False,
            id="the annotation does not count next to a label",
        ),
    ],
)
def test_an_id_change_enters_a_release_whether_the_id_is_a_label_or_an_annotation(
    new_meta: dict[str, JSON], old_meta: dict[str, JSON], enters: bool
) -> None:
    """``isEffectiveDeploymentRevisionChange`` with the id read as for every workload; the
    template is the same on both sides, so only the id decides."""
    held = hold_deployment(
        deployment("v1", **new_meta),
        deployment("v1", **old_meta),
        [rollout()],
        [replicaset("web-aaa", "v1", "aaa")],
    )
    assert (held is not None) == enters


def test_two_versions_enter_a_release_without_traffic_routing() -> None:
    rss = [replicaset("a", "v1", "aaa", revision="2"), replicaset("b", "v0", "ooo", revision="1")]
    held = hold_deployment(deployment("v2"), deployment("v1"), [rollout(routing=False)], rss)
    assert held is not None and held["metadata"]["labels"][STABLE_REVISION_LABEL] == "ooo"


def test_canary_style_in_progress_stays_paused_and_keeps_rolling_update() -> None:
    old = deployment("v2", annotations=IN_PROGRESS)
    old["spec"]["strategy"] = {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1}}
    new = copy.deepcopy(old)
    new["spec"]["paused"] = False
    new["spec"]["strategy"] = {"type": "Recreate"}
    held = hold_deployment(new, old, [rollout()], [])
    assert held is not None
    assert held["spec"]["paused"] is True
    assert held["spec"]["strategy"] == old["spec"]["strategy"]
    old["spec"]["paused"] = True
    assert hold_deployment(old, old, [rollout()], []) is None


def test_blue_green_in_progress_pauses_on_a_new_revision_only() -> None:
    annotations = {**IN_PROGRESS, ORIGINAL_DEPLOYMENT_STRATEGY_ANNOTATION: "{}"}
    old = deployment("v2", annotations=annotations)
    old["spec"]["strategy"] = {"type": "RollingUpdate"}
    resumed = copy.deepcopy(old)
    resumed["spec"]["paused"] = False
    assert hold_deployment(resumed, old, [rollout(blue_green=True)], []) is None  # BatchRelease resumes it
    v3 = deployment("v3", annotations=annotations)
    v3["spec"]["strategy"] = {"type": "Recreate"}
    held = hold_deployment(v3, old, [rollout(blue_green=True)], [])
    assert held is not None and held["spec"]["paused"] is True
    assert held["spec"]["strategy"]["type"] == "RollingUpdate"


def test_a_cd_tool_update_without_uid_gets_the_old_uid() -> None:
    new = deployment("v2")
    new["metadata"]["uid"] = ""
    held = hold_deployment(new, deployment("v1"), [rollout()], [replicaset("a", "v1", "aaa")])
    assert held is not None and held["metadata"]["uid"] == "dep-uid"
