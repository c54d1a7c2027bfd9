"""BatchRelease controls for native Deployments (canary style) and blue-green releases (pure)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from kruise.rollouts.release.constants import (
    BATCH_RELEASE_CONTROL_ANNOTATION,
    BATCH_RELEASE_FINALIZER,
    BATCH_RELEASE_OWN_FINALIZER,
    CANARY_DEPLOYMENT_LABEL,
    MAX_PROGRESS_SECONDS,
    MAX_READY_SECONDS,
    ORIGINAL_DEPLOYMENT_STRATEGY_ANNOTATION,
    STABLE_REVISION_LABEL,
)
from kruise.rollouts.workloads.bluegreen import decide_blue_green, new_rs_replicas_limit
from kruise.rollouts.workloads.bluegreen_setting import dump_setting
from kruise.rollouts.workloads.deployment.canary import decide_deployment_canary, max_unavailable
from kruise.rollouts.workloads.hpa import hpa_op
from kruise.rollouts.workloads.ops import OpKind, Target, control_info

JSON = dict[str, Any]


def br(
    partition: int | None,
    *,
    style: str = "Canary",
    phase: str = "Progressing",
    policy: str = "Immediate",
    finalizers: list[str] | None = None,
    deleting: bool = False,
    kind: str = "Deployment",
    **plan: Any,
) -> JSON:
    release: JSON = {
        "batches": [{"canaryReplicas": "20%"}, {"canaryReplicas": "60%"}, {"canaryReplicas": "100%"}],
        "rollingStyle": style,
        "finalizingPolicy": policy,
        **plan,
    }
    if partition is not None:
        release["batchPartition"] = partition
    meta: JSON = {
        "name": "web",
        "namespace": "shop",
        "uid": "br-uid",
        "generation": 1,
        "finalizers": [BATCH_RELEASE_OWN_FINALIZER] if finalizers is None else finalizers,
    }
    if deleting:
        meta["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    api = "apps/v1" if kind == "Deployment" else "apps.kruise.io/v1alpha1"
    return {
        "apiVersion": "rollouts.kruise.io/v1beta1",
        "kind": "BatchRelease",
        "metadata": meta,
        "spec": {"workloadRef": {"apiVersion": api, "kind": kind, "name": "web"}, "releasePlan": release},
        "status": {"phase": phase},
    }


CONTROL = {BATCH_RELEASE_CONTROL_ANNOTATION: control_info(br(0))}


def stable(
    *, paused: bool = True, annotations: JSON | None = None, status: JSON | None = None, **spec: Any
) -> JSON:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {
            "name": "web",
            "namespace": "shop",
            "uid": "dep-uid",
            "generation": 4,
            "resourceVersion": "10",
            "annotations": dict(CONTROL) if annotations is None else annotations,
        },
        "spec": {
            "replicas": 5,
            "paused": paused,
            "selector": {"matchLabels": {"app": "web"}},
            "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1, "maxUnavailable": 0}},
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [{"name": "web", "image": "v2"}]},
            },
            **spec,
        },
        "status": {
            "observedGeneration": 4,
            "replicas": 5,
            "updatedReplicas": 0,
            "availableReplicas": 5,
            **(status or {}),
        },
    }


def canary(replicas: int, ready: int, *, finalizers: list[str] | None = None) -> JSON:
    body = stable(paused=False)
    return {
        **body,
        "metadata": {
            "name": "web-x1",
            "namespace": "shop",
            "uid": "can-uid",
            "generation": 2,
            "resourceVersion": "20",
            "creationTimestamp": "2026-01-01T00:00:00Z",
            "labels": {CANARY_DEPLOYMENT_LABEL: "web"},
            "finalizers": [BATCH_RELEASE_FINALIZER] if finalizers is None else finalizers,
            "ownerReferences": [{"kind": "BatchRelease", "uid": "br-uid", "controller": True}],
        },
        "spec": {**body["spec"], "replicas": replicas, "paused": False},
        "status": {"observedGeneration": 2, "replicas": replicas, "availableReplicas": ready},
    }


# ------------------------------------------------------------------------------ canary style
def test_taking_control_adds_the_finalizer_and_the_control_annotation_first() -> None:
    d = decide_deployment_canary(br(0, phase="", finalizers=[]), stable(annotations={}), [])
    assert [(op.kind, op.target) for op in d.ops] == [
        (OpKind.ADD_FINALIZER, Target.BATCH_RELEASE),
        (OpKind.PATCH, Target.DEPLOYMENT),
    ]
    assert d.ops[1].body["metadata"]["annotations"] == CONTROL
    assert d.ops[1].body["metadata"]["resourceVersion"] == "10"  # a guarded write
    assert d.status["phase"] == "Preparing"


def test_the_canary_deployment_is_a_copy_of_the_stable_spec_at_zero_replicas() -> None:
    plan = {"patchPodTemplateMetadata": {"labels": {"track": "canary"}, "annotations": {"a": "b"}}}
    d = decide_deployment_canary(br(0, phase="Preparing", **plan), stable(), [])
    [op] = d.ops
    assert (op.kind, op.target) == (OpKind.CREATE, Target.DEPLOYMENT)
    meta, spec = op.body["metadata"], op.body["spec"]
    assert meta["generateName"] == "web-"
    assert meta["labels"] == {CANARY_DEPLOYMENT_LABEL: "web"}
    assert meta["finalizers"] == [BATCH_RELEASE_FINALIZER]
    assert meta["ownerReferences"][0]["uid"] == "br-uid" and meta["ownerReferences"][0]["controller"]
    assert json.loads(meta["annotations"][BATCH_RELEASE_CONTROL_ANNOTATION])["kind"] == "BatchRelease"
    assert (spec["replicas"], spec["paused"]) == (0, False)
    assert spec["template"]["metadata"] == {
        "labels": {"app": "web", "track": "canary"},
        "annotations": {"a": "b"},
    }
    assert spec["selector"] == {"matchLabels": {"app": "web"}}


def test_each_batch_scales_the_canary_up_to_the_rounded_up_share() -> None:
    d = decide_deployment_canary(br(1), stable(), [canary(1, 1)])
    [op] = d.ops
    assert op.body["spec"]["replicas"] == 3  # ceil(60% x 5)
    assert d.status["canaryStatus"]["batchState"] == "Upgrading"
    ready = decide_deployment_canary(br(1), stable(), [canary(3, 3)])
    assert ready.ops == () and ready.status["canaryStatus"]["batchState"] == "Ready"
    assert decide_deployment_canary(br(0), stable(), [canary(3, 3)]).ops == ()  # never scales down


def test_a_missing_canary_mid_release_is_reported_not_recreated() -> None:
    d = decide_deployment_canary(br(0), stable(), [])
    assert d.ops == () and "no canary Deployment" in d.status["message"]


def test_finalising_resumes_the_stable_deployment_and_releases_the_canaries() -> None:
    d = decide_deployment_canary(br(None), stable(), [canary(3, 3)])
    assert [(op.kind, op.target, op.name) for op in d.ops] == [
        (OpKind.PATCH, Target.DEPLOYMENT, "web"),
        (OpKind.REMOVE_FINALIZER, Target.DEPLOYMENT, "web-x1"),
    ]
    assert d.ops[0].body["spec"] == {"paused": False}
    assert d.ops[0].body["metadata"]["annotations"] == {BATCH_RELEASE_CONTROL_ANNOTATION: None}
    done = decide_deployment_canary(
        br(None), stable(paused=False, annotations={}), [canary(3, 3, finalizers=[])]
    )
    assert done.ops == () and done.status["phase"] == "Completed"


def test_wait_resume_completes_once_the_stable_deployment_rolled_everything() -> None:
    resumed = {"paused": False, "annotations": {}}
    waiting = decide_deployment_canary(
        br(None, policy="WaitResume"), stable(**resumed, status={"updatedReplicas": 2}), []
    )
    assert waiting.status["phase"] == "Finalizing"
    rolled = stable(**resumed, status={"updatedReplicas": 5, "availableReplicas": 5})
    assert decide_deployment_canary(br(None, policy="WaitResume"), rolled, []).status["phase"] == "Completed"


def test_a_deleted_batchrelease_mid_release_keeps_the_workload_paused_then_lets_go() -> None:
    d = decide_deployment_canary(br(0, deleting=True), stable(), [canary(1, 1)])
    assert d.ops[0].body == {
        "metadata": {"annotations": {BATCH_RELEASE_CONTROL_ANNOTATION: None}, "resourceVersion": "10"}
    }
    done = decide_deployment_canary(
        br(0, deleting=True), stable(annotations={}), [canary(1, 1, finalizers=[])]
    )
    assert [(op.kind, op.target) for op in done.ops] == [(OpKind.REMOVE_FINALIZER, Target.BATCH_RELEASE)]


@pytest.mark.parametrize(
    ("strategy", "want"),
    [
        pytest.param(
            {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1, "maxUnavailable": 0}},
            0,
            id="0 unavailable",
        ),
        pytest.param(
            {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 0, "maxUnavailable": 0}},
            1,
            id="0/0 means 1",
        ),
        pytest.param({"type": "RollingUpdate"}, 1, id="default 25% of 5 rounds down"),
        pytest.param({"type": "Recreate"}, 0, id="recreate"),
    ],
)
def test_max_unavailable_resolves_fenceposts(strategy: JSON, want: int) -> None:
    assert max_unavailable(stable(strategy=strategy)) == want


# ------------------------------------------------------------------------------ blue-green
SAVED = '{"maxUnavailable":0,"maxSurge":1,"progressDeadlineSeconds":600}'


def bg_deployment(*, controlled: bool = True, surge: Any = 1, status: JSON | None = None) -> JSON:
    annotations: JSON = {}
    spec: JSON = {}
    if controlled:
        annotations = {
            **CONTROL,
            ORIGINAL_DEPLOYMENT_STRATEGY_ANNOTATION: SAVED,
        }
        spec = {
            "minReadySeconds": MAX_READY_SECONDS,
            "progressDeadlineSeconds": MAX_PROGRESS_SECONDS,
            "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": surge, "maxUnavailable": 0}},
        }
    d = stable(annotations=annotations, status=status, **spec)
    d["metadata"]["labels"] = {STABLE_REVISION_LABEL: "aaa"}
    return d


def rs(pod_hash: str, image: str, ready: int, *, created: str) -> JSON:
    return {
        "metadata": {
            "name": f"web-{pod_hash}",
            "labels": {"app": "web", "pod-template-hash": pod_hash},
            "creationTimestamp": created,
            "ownerReferences": [{"kind": "Deployment", "uid": "dep-uid", "controller": True}],
        },
        "spec": {
            "replicas": ready,
            "template": {
                "metadata": {"labels": {"app": "web", "pod-template-hash": pod_hash}},
                "spec": {"containers": [{"name": "web", "image": image}]},
            },
        },
        "status": {"readyReplicas": ready},
    }


STABLE_RS = rs("aaa", "v1", 5, created="2026-01-01T00:00:00Z")
HPA = {
    "metadata": {"name": "web"},
    "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"}},
}


def test_blue_green_takes_control_saving_the_strategy_and_inflating_min_ready_seconds() -> None:
    d = decide_blue_green(
        br(0, style="BlueGreen"), bg_deployment(controlled=False), [STABLE_RS], [(Target.HPA_V2, HPA)]
    )
    hpa, rs_patch, dep_patch = d.ops
    assert (hpa.target, hpa.body["spec"]["scaleTargetRef"]["name"]) == (Target.HPA_V2, "web-DisableByRollout")
    assert (rs_patch.target, rs_patch.name, rs_patch.body) == (
        Target.REPLICASET,
        "web-aaa",
        {"spec": {"minReadySeconds": MAX_READY_SECONDS}},
    )
    annotations = dep_patch.body["metadata"]["annotations"]
    assert (
        annotations[ORIGINAL_DEPLOYMENT_STRATEGY_ANNOTATION]
        == '{"maxUnavailable":0,"maxSurge":1,"progressDeadlineSeconds":600}'
    )
    assert dep_patch.body["spec"] == {
        "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1, "maxUnavailable": 0}},
        "minReadySeconds": MAX_READY_SECONDS,
        "progressDeadlineSeconds": MAX_PROGRESS_SECONDS,
    }
    assert d.status["phase"] == "Preparing"


def test_blue_green_batches_raise_the_surge_and_resume() -> None:
    d = decide_blue_green(br(0, style="BlueGreen"), bg_deployment(), [STABLE_RS])
    [op] = d.ops
    assert op.body["spec"] == {
        "paused": False,
        "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": "20%", "maxUnavailable": 0}},
    }
    new_rs = rs("bbb", "v2", 1, created="2026-01-02T00:00:00Z")
    ready = decide_blue_green(
        br(0, style="BlueGreen"),
        bg_deployment(surge="20%", status={"updatedReplicas": 1}),
        [STABLE_RS, new_rs],
    )
    assert ready.ops == () and ready.status["canaryStatus"]["batchState"] == "Ready"
    assert (ready.status["stableRevision"], ready.status["updateRevision"]) == ("aaa", "bbb")
    lower = decide_blue_green(br(0, style="BlueGreen"), bg_deployment(surge="100%"), [STABLE_RS])
    assert lower.ops == ()  # the surge never goes down (a jump back keeps the pods)


def test_blue_green_refuses_a_workload_that_lost_its_settings_with_upstreams_message() -> None:
    dep = bg_deployment()
    dep["spec"]["minReadySeconds"] = 0
    d = decide_blue_green(br(0, style="BlueGreen"), dep, [STABLE_RS])
    assert d.ops == ()
    assert d.status["message"] == (
        "cannot upgrade batch, because deployment shop/web doesn't satisfy conditions: deployment strategy "
        "minReadySeconds or progressDeadlineSeconds is not MaxReadySeconds or MaxProgressSeconds"
    )


def test_blue_green_finalising_restores_waits_and_gives_the_hpa_back() -> None:
    d = decide_blue_green(br(None, style="BlueGreen"), bg_deployment(surge="100%"), [STABLE_RS])
    [op] = d.ops
    assert op.body["spec"] == {
        "paused": False,
        "minReadySeconds": 0,
        "progressDeadlineSeconds": 600,
        "strategy": {"rollingUpdate": {"maxSurge": 1, "maxUnavailable": 0}},
    }
    assert op.body["metadata"]["labels"] == {STABLE_REVISION_LABEL: None}
    restored = stable(
        paused=False, annotations={}, status={"replicas": 10, "updatedReplicas": 5, "readyReplicas": 10}
    )
    assert decide_blue_green(br(None, style="BlueGreen"), restored, []).status["phase"] == "Finalizing"
    settled = stable(paused=False, annotations={}, status={"updatedReplicas": 5, "readyReplicas": 5})
    disabled = {
        **HPA,
        "spec": {"scaleTargetRef": {**HPA["spec"]["scaleTargetRef"], "name": "web-DisableByRollout"}},
    }
    giving_back = decide_blue_green(br(None, style="BlueGreen"), settled, [], [(Target.HPA_V1, disabled)])
    assert giving_back.ops[0].body["spec"]["scaleTargetRef"]["name"] == "web"
    assert (
        decide_blue_green(br(None, style="BlueGreen"), settled, [], [(Target.HPA_V2, HPA)]).status["phase"]
        == "Completed"
    )


def test_blue_green_cloneset_uses_partition_null_and_maxsurge() -> None:
    cs = {
        "apiVersion": "apps.kruise.io/v1alpha1",
        "kind": "CloneSet",
        "metadata": {
            "name": "web",
            "namespace": "shop",
            "generation": 3,
            "resourceVersion": "7",
            "annotations": {},
        },
        "spec": {"replicas": 5, "updateStrategy": {"type": "ReCreate", "partition": "100%"}},
        "status": {"observedGeneration": 3, "currentRevision": "web-aaa", "updateRevision": "web-bbb"},
    }
    take = decide_blue_green(br(0, style="BlueGreen", kind="CloneSet"), cs)
    [op] = take.ops
    assert op.body["spec"] == {
        "updateStrategy": {"paused": False, "maxSurge": 1, "maxUnavailable": 0},
        "minReadySeconds": MAX_READY_SECONDS,
    }
    assert json.loads(op.body["metadata"]["annotations"][ORIGINAL_DEPLOYMENT_STRATEGY_ANNOTATION]) == {
        "maxUnavailable": "20%",
        "maxSurge": "0%",
    }
    cs["metadata"]["annotations"] = {**CONTROL, ORIGINAL_DEPLOYMENT_STRATEGY_ANNOTATION: '{"maxSurge":"0%"}'}
    cs["spec"]["minReadySeconds"] = MAX_READY_SECONDS
    [upgrade] = decide_blue_green(br(2, style="BlueGreen", kind="CloneSet"), cs).ops
    assert upgrade.body["spec"] == {"updateStrategy": {"partition": None, "maxSurge": "100%"}}
    cs["spec"]["updateStrategy"]["type"] = "InPlaceIfPossible"
    refused = decide_blue_green(br(2, style="BlueGreen", kind="CloneSet"), cs)
    assert refused.status["message"].endswith("cloneSet strategy type is not ReCreate")


@pytest.mark.parametrize(
    ("surge", "replicas", "want"),
    [("50%", 5, 3), ("100%", 5, 5), ("99%", 5, 4), (2, 5, 2), (9, 5, 5), ("100%", 1, 1)],
)
def test_new_rs_replicas_limit(surge: Any, replicas: int, want: int) -> None:
    assert new_rs_replicas_limit(surge, replicas) == want


def test_setting_annotation_omits_zero_fields_in_upstream_order() -> None:
    assert (
        dump_setting({"maxSurge": "25%", "minReadySeconds": 0, "maxUnavailable": 1})
        == '{"maxUnavailable":1,"maxSurge":"25%"}'
    )
    assert (
        hpa_op(
            stable(), [(Target.HPA_V2, {**HPA, "spec": {"scaleTargetRef": {"name": "other"}}})], disable=True
        )
        is None
    )


@pytest.mark.parametrize(
    ("release", "want"),
    [
        pytest.param(br(0), "Canary", id="deployment canary"),
        pytest.param(br(0, style="Partition"), "Partition", id="deployment partition (advanced deployment)"),
        pytest.param(br(0, style="BlueGreen", kind="CloneSet"), "BlueGreen", id="cloneset blue-green"),
        pytest.param(br(0, style="Partition", kind="CloneSet"), "Partition", id="cloneset partition"),
        pytest.param(br(0, style="Canary", kind="CloneSet"), "Partition", id="cloneset canary degrades"),
    ],
)
def test_which_style_serves_each_batchrelease(release: JSON, want: str) -> None:
    """The registry picks the kind by ``workloadRef`` and the style by ``releasePlan.rollingStyle``;
    a Canary request on a kind without an extra canary workload is a partition release."""
    from kruise.rollouts.workloads.registry import release_style

    served = release_style(release)
    assert served is not None
    kind, style = served
    assert (kind.kind, style.style) == (release["spec"]["workloadRef"]["kind"], want)
