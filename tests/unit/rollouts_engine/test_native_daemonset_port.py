"""Native ``apps/v1`` DaemonSets through the workload port (``kruise.rollouts.workloads.nativedaemonset``).

Upstream facts (``KR:docs/proposals/20250924-native-daemonset-progressive-delivery.md``,
``pkg/util/controller_finder.go`` ``getNativeDaemonSet``, ``control/partitionstyle/nativedaemonset``,
``workload_update_handler.go`` ``handleNativeDaemonSet``): the hold makes the strategy ``OnDelete``
and records the original in ``rollouts.kruise.io/daemonset-original-update-strategy``; canary is
the newest ControllerRevision, stable the one before; a batch writes
``rollouts.kruise.io/daemonset-advanced-control: {"partition":"<kept>","batch-revision":"<hash>"}``;
finalising drops the annotations and restores the strategy (kept ``OnDelete`` under
``KeepWorkloadPausedOnRolloutDeletion``).
"""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from kruise.rollouts.release.constants import BATCH_RELEASE_CONTROL_ANNOTATION, IN_PROGRESSING_ANNOTATION
from kruise.rollouts.workloads.nativedaemonset import kind as native
from kruise.rollouts.workloads.nativedaemonset.marks import (
    ADVANCED_CONTROL,
    ORIGINAL_STRATEGY,
    REVISION,
    advanced_control,
    parse_advanced_control,
)
from kruise.rollouts.workloads.nativedaemonset.revisions import Revisions, daemonset_revisions
from kruise.rollouts.workloads.port import Gates, Observation
from kruise.rollouts.workloads.registry import kind_for, release_style

JSON = dict[str, Any]
V1, V2, V3 = "fluentd:v1", "fluentd:v2", "fluentd:v3"
HASHES = {V1: "5d8f7c9b6", V2: "7b9c6d5f8", V3: "68f9d7c5b"}


def template(image: str) -> JSON:
    return {
        "metadata": {"creationTimestamp": None, "labels": {"name": "fluentd"}},
        "spec": {"containers": [{"name": "fluentd", "image": image}]},
    }


def ds(
    image: str = V1, *, strategy: str = "RollingUpdate", annotations: JSON | None = None, **status: Any
) -> JSON:
    return {
        "apiVersion": "apps/v1",
        "kind": "DaemonSet",
        "metadata": {
            "name": "fluentd",
            "namespace": "ns",
            "uid": "ds-uid",
            "generation": 2,
            "annotations": dict(annotations or {}),
        },
        "spec": {
            "selector": {"matchLabels": {"name": "fluentd"}},
            "updateStrategy": {"type": strategy, "rollingUpdate": {"maxUnavailable": 3, "maxSurge": 0}},
            "template": template(image),
        },
        "status": {
            "observedGeneration": 2,
            "desiredNumberScheduled": 3,
            "currentNumberScheduled": 3,
            "updatedNumberScheduled": 3,
            "numberReady": 3,
            **status,
        },
    }


def revision(image: str, number: int) -> JSON:
    """A ControllerRevision as kube's DaemonSet controller writes it."""
    return {
        "metadata": {
            "name": f"fluentd-{HASHES[image]}",
            "labels": {"controller-revision-hash": HASHES[image], "name": "fluentd"},
            "ownerReferences": [{"kind": "DaemonSet", "uid": "ds-uid", "controller": True}],
        },
        "data": {"spec": {"template": {**template(image), "$patch": "replace"}}},
        "revision": number,
    }


def rollout(**strategy: Any) -> JSON:
    return {
        "metadata": {"name": "rollouts-demo", "namespace": "ns"},
        "spec": {
            "workloadRef": {"apiVersion": "apps/v1", "kind": "DaemonSet", "name": "fluentd"},
            "strategy": strategy or {"canary": {"steps": [{"replicas": 1}, {"replicas": "100%"}]}},
        },
    }


def pod(name: str, image: str, *, ready: bool = True) -> JSON:
    return {
        "metadata": {"name": name, "labels": {"controller-revision-hash": HASHES[image]}},
        "status": {"phase": "Running", "conditions": [{"type": "Ready", "status": str(ready)}]},
    }


IN_PROGRESS = {
    IN_PROGRESSING_ANNOTATION: '{"rolloutName":"rollouts-demo"}',
    ORIGINAL_STRATEGY: "RollingUpdate",
}


# -- the hold ----------------------------------------------------------------------------------


def test_a_template_change_is_held_with_on_delete_and_the_original_strategy_recorded() -> None:
    held = native.NATIVE_DAEMONSET.hold.decide(ds(V2), ds(V1), [rollout()], [])
    assert held is not None
    assert held["spec"]["updateStrategy"] == {
        "type": "OnDelete",
        "rollingUpdate": {"maxUnavailable": 3, "maxSurge": 0},
    }
    assert held["metadata"]["annotations"] == {
        IN_PROGRESSING_ANNOTATION: '{"rolloutName":"rollouts-demo"}',
        ORIGINAL_STRATEGY: "RollingUpdate",
    }


def test_a_continuous_release_keeps_the_strategy_recorded_when_the_release_started() -> None:
    """Upstream records the type of every held update, so a second template change during a
    release records ``OnDelete`` and the hand-back restores that; here the first record stays."""
    old = ds(V2, strategy="OnDelete", annotations=IN_PROGRESS)
    held = native.NATIVE_DAEMONSET.hold.decide(
        ds(V3, strategy="OnDelete", annotations=IN_PROGRESS), old, [rollout()], []
    )
    assert held is not None and held["metadata"]["annotations"][ORIGINAL_STRATEGY] == "RollingUpdate"
    on_delete = native.NATIVE_DAEMONSET.hold.decide(
        ds(V2, strategy="OnDelete"), ds(V1, strategy="OnDelete"), [rollout()], []
    )
    assert on_delete is not None and on_delete["metadata"]["annotations"][ORIGINAL_STRATEGY] == "OnDelete"


@pytest.mark.parametrize(
    ("new", "rollouts"),
    [
        pytest.param(ds(V1), [rollout()], id="template unchanged"),
        pytest.param(ds(V2), [], id="no Rollout"),
        pytest.param(
            ds(V2), [{**rollout(), "spec": {**rollout()["spec"], "disabled": True}}], id="disabled Rollout"
        ),
        pytest.param(ds(V2), [rollout(blueGreen={"steps": [{"replicas": 1}]})], id="blue-green: not served"),
    ],
)
def test_updates_that_cannot_start_a_release_are_admitted_unchanged(new: JSON, rollouts: list[JSON]) -> None:
    assert native.NATIVE_DAEMONSET.hold.decide(new, ds(V1), rollouts, []) is None


def test_the_hold_is_upstreams_native_daemonset_webhook() -> None:
    hold = native.NATIVE_DAEMONSET.hold
    assert (hold.name, hold.path, hold.group, hold.versions, hold.plural) == (
        "mdaemonset-native.kb.io",
        "/mutate-apps-v1-daemonset",
        "apps",
        ("v1",),
        "daemonsets",
    )


# -- revisions ---------------------------------------------------------------------------------


def test_canary_is_the_current_templates_revision_and_stable_the_newest_other() -> None:
    got = daemonset_revisions(ds(V2), [revision(V1, 1), revision(V2, 2)])
    assert got == Revisions(stable=HASHES[V1], canary=HASHES[V2], known=True)
    # continuous release v1 -> v2 -> v3: stable is v2, the revision before (upstream's reading)
    assert (
        daemonset_revisions(ds(V3), [revision(V3, 3), revision(V1, 1), revision(V2, 2)]).stable == HASHES[V2]
    )
    # one revision: both the same
    assert daemonset_revisions(ds(V1), [revision(V1, 1)]) == Revisions(HASHES[V1], HASHES[V1], True)


def test_a_template_reverted_to_an_older_one_releases_it_like_a_new_one() -> None:
    """kube gives the old template's ControllerRevision the next number: it is the canary again
    and the template it replaces the stable one (no rollback seen, as upstream)."""
    got = daemonset_revisions(ds(V1), [revision(V1, 3), revision(V2, 2)])
    assert (got.canary, got.stable) == (HASHES[V1], HASHES[V2])


def test_revisions_are_unknown_until_the_current_templates_one_is_in_the_cache() -> None:
    assert daemonset_revisions(ds(V2), [revision(V1, 1)]) == Revisions()
    assert not native.bound(Observation(ds(V2), revisions=[revision(V1, 1)])).state(ds(V2), ()).consistent


# -- the release -------------------------------------------------------------------------------


def br(batch_partition: int | None, *, status: JSON | None = None, policy: str | None = None) -> JSON:
    plan: JSON = {"batches": [{"canaryReplicas": 1}, {"canaryReplicas": "100%"}]}
    if batch_partition is not None:
        plan["batchPartition"] = batch_partition
    if policy:
        plan["finalizingPolicy"] = policy
    return {
        "metadata": {"name": "rollouts-demo", "namespace": "ns", "uid": "br-uid", "generation": 1},
        "spec": {"workloadRef": rollout()["spec"]["workloadRef"], "releasePlan": plan},
        "status": dict(status or {}),
    }


def observe(workload: JSON, *images: str, pods: list[JSON] | None = None) -> Observation:
    return Observation(workload, pods=pods or [], revisions=[revision(i, n) for n, i in enumerate(images, 1)])


def test_the_first_batch_takes_control_and_writes_the_batch_for_the_canary_revision() -> None:
    held = ds(V2, strategy="OnDelete", annotations=IN_PROGRESS, updatedNumberScheduled=0)
    d = native.NativeDaemonSetRelease().control(br(0), observe(held, V1, V2), Gates())
    (op,) = d.ops
    assert op.body["spec"] == {"updateStrategy": {"type": "OnDelete"}}
    annotations = op.body["metadata"]["annotations"]
    assert json.loads(annotations[ADVANCED_CONTROL]) == {"partition": "2", "batch-revision": HASHES[V2]}
    assert json.loads(annotations[REVISION]) == {"canary-revision": HASHES[V2], "stable-revision": HASHES[V1]}
    assert BATCH_RELEASE_CONTROL_ANNOTATION in annotations
    assert (d.status["updateRevision"], d.status["stableRevision"]) == (HASHES[V2], HASHES[V1])
    assert d.status["canaryStatus"]["batchState"] == "Upgrading"


def test_a_batch_is_ready_once_its_pods_run_the_canary_revision_and_are_ready() -> None:
    annotations = {**IN_PROGRESS, ADVANCED_CONTROL: advanced_control(2, HASHES[V2])}
    status = {"phase": "Progressing", "canaryStatus": {"currentBatch": 0}}
    one = ds(V2, strategy="OnDelete", annotations=annotations, updatedNumberScheduled=1)
    first = native.NativeDaemonSetRelease().control(br(0, status=status), observe(one, V1, V2), Gates())
    annotations[BATCH_RELEASE_CONTROL_ANNOTATION] = first.ops[0].body["metadata"]["annotations"][
        BATCH_RELEASE_CONTROL_ANNOTATION
    ]
    one = ds(V2, strategy="OnDelete", annotations=annotations, updatedNumberScheduled=1)
    pods = [pod("a", V1), pod("b", V1), pod("c", V2, ready=False)]
    waiting = native.NativeDaemonSetRelease().control(
        br(0, status=status), observe(one, V1, V2, pods=pods), Gates()
    )
    assert not waiting.ops and waiting.status["canaryStatus"]["batchState"] == "Upgrading"
    pods[2] = pod("c", V2)
    ready = native.NativeDaemonSetRelease().control(
        br(0, status=status), observe(one, V1, V2, pods=pods), Gates()
    )
    assert not ready.ops
    assert ready.status["canaryStatus"]["batchState"] == "Ready"
    assert ready.status["canaryStatus"]["updatedReadyReplicas"] == 1


def test_a_batch_written_for_the_previous_revision_releases_nothing_of_the_new_one() -> None:
    """A continuous release (v3 while v2's first batch is out): the same partition, but the batch
    must name v3, or no pod would move to it."""
    stale = {**IN_PROGRESS, ADVANCED_CONTROL: advanced_control(2, HASHES[V2])}
    workload = ds(V3, strategy="OnDelete", annotations=stale, updatedNumberScheduled=0)
    w = native.bound(observe(workload, V1, V2, V3))
    assert w.partition(workload) == 32767
    d = native.NativeDaemonSetRelease().control(br(0), observe(workload, V1, V2, V3), Gates())
    assert parse_advanced_control({"metadata": d.ops[0].body["metadata"]}) == (2, HASHES[V3])


def done(workload: JSON) -> JSON:
    w = copy.deepcopy(workload)
    w["metadata"]["annotations"].pop(IN_PROGRESSING_ANNOTATION, None)
    return w


RELEASED = {
    ORIGINAL_STRATEGY: "RollingUpdate",
    ADVANCED_CONTROL: advanced_control(0, HASHES[V2]),
    REVISION: '{"canary-revision":"x","stable-revision":"y"}',
    BATCH_RELEASE_CONTROL_ANNOTATION: "{}",
}


def test_finalising_drops_the_annotations_and_restores_the_recorded_strategy() -> None:
    workload = ds(V2, strategy="OnDelete", annotations=RELEASED)
    d = native.NativeDaemonSetRelease().control(
        br(None, status={"phase": "Progressing"}), observe(workload, V1, V2), Gates()
    )
    (op,) = d.ops
    assert op.body == {
        "spec": {"updateStrategy": {"type": "RollingUpdate"}},
        "metadata": {"annotations": dict.fromkeys(RELEASED)},
    }
    assert d.status["phase"] == "Finalizing"
    handed_back = ds(V2)
    after = native.NativeDaemonSetRelease().control(
        br(None, status=d.status), observe(handed_back, V1, V2), Gates()
    )
    assert not after.ops and after.status["phase"] == "Completed"


def test_finalising_under_keep_paused_on_rollout_deletion_keeps_on_delete() -> None:
    workload = ds(V2, strategy="OnDelete", annotations=RELEASED, updatedNumberScheduled=1)
    d = native.NativeDaemonSetRelease().control(
        br(None, status={"phase": "Progressing"}),
        observe(workload, V1, V2),
        Gates(keep_paused_on_cancel=True),
    )
    (op,) = d.ops
    assert op.body == {"metadata": {"annotations": dict.fromkeys(RELEASED)}}, "no strategy change"


def test_a_strategy_the_hold_never_recorded_is_left_alone() -> None:
    """Upstream restores ``RollingUpdate`` when nothing was recorded; a DaemonSet its user runs
    ``OnDelete`` is not turned into ``RollingUpdate`` by a Rollout that never held it."""
    assert native.NATIVE_DAEMONSET.resume(ds(V1, strategy="OnDelete")) is None
    assert native.NATIVE_DAEMONSET.resume(ds(V2, strategy="OnDelete", annotations=RELEASED)) == {
        "spec": {"updateStrategy": {"type": "RollingUpdate"}},
        "metadata": {"annotations": dict.fromkeys(RELEASED)},
    }


def test_info_gives_the_rollout_the_revisions_and_no_rollback_across_revisions() -> None:
    workload = ds(V2, strategy="OnDelete", annotations=IN_PROGRESS, updatedNumberScheduled=1)
    info = native.NativeDaemonSetRelease().info(rollout(), observe(workload, V1, V2))
    assert (info.stable_revision, info.canary_revision, info.pod_template_hash) == (
        HASHES[V1],
        HASHES[V2],
        HASHES[V2],
    )
    assert (info.replicas, info.updated_replicas, info.in_progressing, info.in_rollback) == (
        3,
        1,
        True,
        False,
    )
    assert info.revision_label_key == "controller-revision-hash" and info.status_consistent


def test_the_registry_serves_native_daemonsets_in_partition_style_only() -> None:
    kind = kind_for({"apiVersion": "apps/v1", "kind": "DaemonSet"})
    assert kind is native.NATIVE_DAEMONSET
    assert kind.style_for("Canary") is kind.styles["Partition"]
    assert kind.style_for("BlueGreen") is None
    assert release_style(br(0)) is not None
