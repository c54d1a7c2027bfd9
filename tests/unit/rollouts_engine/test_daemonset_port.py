"""Advanced DaemonSets through the workload port: what is DaemonSet-specific (the generic
partition behaviour is ``test_partition_port.py``'s contract, with :class:`DaemonSetSim`).

Upstream facts (``KR:pkg/util/controller_finder.go`` ``getKruiseDaemonSet``,
``control/partitionstyle/daemonset/control.go``, ``workload_update_handler.go`` ``handleDaemonSet``):
replicas are ``status.desiredNumberScheduled``, the canary revision ``status.daemonSetHash``;
a batch writes ``rollingUpdate.partition = replicas - planned`` (pods kept old, not an ordinal);
taking control lifts ``paused``; finalising clears partition and pause; the hold writes 32767.
"""

from __future__ import annotations

from typing import Any

import pytest

from kruise.core.kube.resources import DAEMONSETS
from kruise.rollouts.release.constants import (
    BATCH_RELEASE_CONTROL_ANNOTATION,
    IN_PROGRESSING_ANNOTATION,
    STABLE_REVISION_LABEL,
)
from kruise.rollouts.workloads import daemonset
from kruise.rollouts.workloads.partition import decide_partition
from kruise.rollouts.workloads.partitionkind import partition_info
from kruise.rollouts.workloads.port import Observation
from kruise.rollouts.workloads.registry import kind_for, release_style

JSON = dict[str, Any]


def ads(image: str = "fluentd:v1", **status: Any) -> JSON:
    return {
        "apiVersion": "apps.kruise.io/v1alpha1",
        "kind": "DaemonSet",
        "metadata": {"name": "fluentd", "namespace": "kube-system", "uid": "ds-uid", "generation": 2},
        "spec": {
            "selector": {"matchLabels": {"name": "fluentd"}},
            "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 1}},
            "template": {"spec": {"containers": [{"name": "fluentd", "image": image}]}},
        },
        "status": {
            "observedGeneration": 2,
            "desiredNumberScheduled": 5,
            "currentNumberScheduled": 5,
            "updatedNumberScheduled": 5,
            "numberReady": 5,
            "daemonSetHash": "6c9f7b8d4",
            **status,
        },
    }


def on_delete(workload: JSON) -> JSON:
    workload["spec"]["updateStrategy"] = {"type": "OnDelete"}
    return workload


def rollout(**strategy: Any) -> JSON:
    return {
        "metadata": {"name": "rollouts-demo", "namespace": "kube-system"},
        "spec": {
            "workloadRef": {"apiVersion": "apps.kruise.io/v1alpha1", "kind": "DaemonSet", "name": "fluentd"},
            "strategy": strategy or {"canary": {"steps": [{"replicas": 1}, {"replicas": "100%"}]}},
        },
    }


def test_a_template_change_is_held_at_partition_max_int16_with_the_stable_revision() -> None:
    held = daemonset.DAEMONSET.hold.decide(ads("fluentd:v2"), ads(), [rollout()], [])
    assert held is not None
    assert held["spec"]["updateStrategy"]["rollingUpdate"]["partition"] == 32767
    assert held["metadata"]["annotations"][IN_PROGRESSING_ANNOTATION] == '{"rolloutName":"rollouts-demo"}'
    assert held["metadata"]["labels"][STABLE_REVISION_LABEL] == "6c9f7b8d4"


def test_a_release_in_progress_keeps_its_stable_revision() -> None:
    old = ads("fluentd:v2", daemonSetHash="77aa88bb9")
    old["metadata"]["annotations"] = {IN_PROGRESSING_ANNOTATION: '{"rolloutName":"rollouts-demo"}'}
    old["metadata"]["labels"] = {STABLE_REVISION_LABEL: "6c9f7b8d4"}
    new = ads("fluentd:v3")
    new["metadata"] = old["metadata"]
    held = daemonset.DAEMONSET.hold.decide(new, old, [rollout()], [])
    assert held is not None and held["metadata"]["labels"][STABLE_REVISION_LABEL] == "6c9f7b8d4"


@pytest.mark.parametrize(
    ("new", "rollouts"),
    [
        pytest.param(ads(), [rollout()], id="template unchanged"),
        pytest.param(ads("fluentd:v2"), [], id="no Rollout"),
        pytest.param(
            {
                **ads("fluentd:v2"),
                "spec": {**ads("fluentd:v2")["spec"], "updateStrategy": {"type": "OnDelete"}},
            },
            [rollout()],
            id="OnDelete",
        ),
    ],
)
def test_updates_that_cannot_start_a_release_are_admitted_unchanged(new: JSON, rollouts: list[JSON]) -> None:
    assert daemonset.DAEMONSET.hold.decide(new, ads(), rollouts, []) is None


def test_info_reads_the_nodes_pods_and_the_controller_revision_hash() -> None:
    pods = [
        {
            "metadata": {"name": f"fluentd-{i}", "labels": {"controller-revision-hash": h}},
            "status": {"conditions": [{"type": "Ready", "status": "True"}]},
        }
        for i, h in enumerate(["77aa88bb9", "77aa88bb9", "6c9f7b8d4", "6c9f7b8d4", "6c9f7b8d4"])
    ]
    workload = ads("fluentd:v2", daemonSetHash="77aa88bb9", updatedNumberScheduled=2)
    workload["metadata"]["annotations"] = {IN_PROGRESSING_ANNOTATION: "{}"}
    workload["metadata"]["labels"] = {STABLE_REVISION_LABEL: "6c9f7b8d4"}
    info = partition_info(daemonset.PARTITION, DAEMONSETS, Observation(workload, pods))
    assert (info.replicas, info.updated_replicas, info.updated_ready_replicas) == (5, 2, 2)
    assert (info.stable_revision, info.canary_revision, info.pod_template_hash) == (
        "6c9f7b8d4",
        "77aa88bb9",
        "77aa88bb9",
    )
    assert info.revision_label_key == "controller-revision-hash" and not info.in_rollback


@pytest.mark.parametrize(
    ("batch", "no_need", "partition"), [(1, 0, 4), ("40%", 0, 3), ("100%", 0, 0), (1, 2, 2), ("100%", 2, 0)]
)
def test_a_batch_keeps_the_others_old(batch: int | str, no_need: int, partition: int) -> None:
    assert daemonset.PARTITION.partition_for(ads(), batch, 5, no_need) == partition


def test_the_registry_serves_advanced_daemonsets_in_partition_style_only() -> None:
    kind = kind_for({"apiVersion": "apps.kruise.io/v1alpha1", "kind": "DaemonSet"})
    assert kind is daemonset.DAEMONSET
    assert kind_for({"apiVersion": "apps/v1", "kind": "DaemonSet"}) is not kind, (
        "a native DaemonSet is another kind (test_native_daemonset_port.py)"
    )
    assert kind.style_for("BlueGreen") is None
    br = {"spec": {"workloadRef": rollout()["spec"]["workloadRef"], "releasePlan": {}}}
    assert release_style(br) is not None


def finalising(workload: JSON) -> tuple[JSON | None, str]:
    """One finalising round (``batchPartition`` unset, ``WaitResume``): the patch and the phase."""
    br = {
        "metadata": {"name": "rollouts-demo", "namespace": "kube-system", "uid": "br-uid", "generation": 3},
        "spec": {"releasePlan": {"batches": [{"canaryReplicas": 1}], "finalizingPolicy": "WaitResume"}},
        "status": {"phase": "Progressing"},
    }
    d = decide_partition(daemonset.PARTITION, br, workload)
    return d.workload_patch, str(d.status["phase"])


def released(*, in_progress: bool, recorded: bool, partition: int | None) -> JSON:
    """Every node on the new revision; the hold's marks as given."""
    workload = ads("fluentd:v2", daemonSetHash="77aa88bb9")
    if partition is not None:
        workload["spec"]["updateStrategy"]["rollingUpdate"]["partition"] = partition
    if in_progress:
        workload["metadata"]["annotations"] = {IN_PROGRESSING_ANNOTATION: '{"rolloutName":"rollouts-demo"}'}
    if recorded:
        workload["metadata"]["labels"] = {STABLE_REVISION_LABEL: "6c9f7b8d4"}
    return workload


def test_finalising_keeps_the_stable_revision_while_the_release_is_in_progress() -> None:
    patch, phase = finalising(released(in_progress=True, recorded=True, partition=3))
    assert patch == {"spec": {"updateStrategy": {"rollingUpdate": {"partition": None, "paused": False}}}}
    assert phase == "Finalizing"


def test_finalising_drops_the_stable_revision_once_the_release_is_over() -> None:
    patch, phase = finalising(released(in_progress=False, recorded=True, partition=None))
    assert patch == {"metadata": {"labels": {STABLE_REVISION_LABEL: None}}}
    assert phase == "Finalizing", "completed only once nothing is left to write"
    assert (
        daemonset.PARTITION.stable_forget(released(in_progress=False, recorded=False, partition=None)) is None
    )
    assert finalising(released(in_progress=False, recorded=False, partition=None)) == (None, "Completed")


def test_without_a_batch_release_the_rollout_hands_everything_back() -> None:
    """A Rollout finalising after its BatchRelease is gone (the garbage collector deleted it first
    under Foreground propagation) hands the DaemonSet back itself: what the BatchRelease's
    finalisation would have written, the stable record once ``in-progressing`` is gone."""
    workload = released(in_progress=True, recorded=True, partition=2)
    workload["metadata"]["annotations"][BATCH_RELEASE_CONTROL_ANNOTATION] = '{"kind":"BatchRelease"}'
    assert daemonset.DAEMONSET.resume(workload) == {
        "metadata": {"annotations": {BATCH_RELEASE_CONTROL_ANNOTATION: None}},
        "spec": {"updateStrategy": {"rollingUpdate": {"partition": None, "paused": False}}},
    }
    assert daemonset.DAEMONSET.resume(released(in_progress=False, recorded=True, partition=None)) == {
        "metadata": {"labels": {STABLE_REVISION_LABEL: None}}
    }
    assert daemonset.DAEMONSET.resume(released(in_progress=False, recorded=False, partition=0)) is None


def test_taking_control_writes_paused_false_even_when_it_was_unset() -> None:
    """Upstream's ``Initialize`` (``control/partitionstyle/daemonset/control.go``) patches
    ``rollingUpdate: {partition, paused: false}`` with the control annotation, whether or not the
    DaemonSet was paused; its e2e "DaemonSet canary rollout" dereferences ``rollingUpdate.paused``
    at step 1 (``rollout_test.go:2864``). Once in control, an unset pause is not written again."""
    br = {
        "metadata": {"name": "rollouts-demo", "namespace": "kube-system", "uid": "br-uid", "generation": 1},
        "spec": {"releasePlan": {"batches": [{"canaryReplicas": 1}], "batchPartition": 0}},
        "status": {},
    }
    workload = ads("fluentd:v2", daemonSetHash="77aa88bb9", updatedNumberScheduled=0)
    workload["spec"]["updateStrategy"]["rollingUpdate"]["partition"] = 32767
    first = decide_partition(daemonset.PARTITION, br, workload).workload_patch
    assert first is not None
    assert first["spec"]["updateStrategy"]["rollingUpdate"] == {"partition": 4, "paused": False}
    assert BATCH_RELEASE_CONTROL_ANNOTATION in first["metadata"]["annotations"]

    controlled = ads("fluentd:v2", daemonSetHash="77aa88bb9", updatedNumberScheduled=0)
    controlled["metadata"]["annotations"] = first["metadata"]["annotations"]
    controlled["spec"]["updateStrategy"]["rollingUpdate"]["partition"] = 4
    br["status"] = {"phase": "Progressing", "canaryStatus": {"currentBatch": 0}}
    again = decide_partition(daemonset.PARTITION, br, controlled).workload_patch
    assert again is None, "in control with the batch's partition: nothing to write"
