"""The contract every :class:`~kruise.rollouts.workloads.port.PartitionWorkload` passes.

A partition kind (CloneSet, native StatefulSet; Advanced StatefulSet and Advanced DaemonSet next)
is one module implementing ``PartitionWorkload`` plus a registry entry. This module checks it the
way a release uses it, on a **simulated workload** that plays the kind's own controller (pods move
to the update revision as the partition allows, the status follows), through the generic hold,
BatchRelease round, info and resume of :mod:`kruise.rollouts.workloads.partition` and ``partitionkind``:

- :func:`check_hold`: a template change under a Rollout is admitted with the partition at its
  maximum and the in-progressing mark, and then no pod moves; updates that cannot start a release
  (nothing changed, no Rollout, no replicas) are admitted unchanged;
- :func:`check_share`: each batch of a plan releases its share of pods (never fewer than the batch
  before), labels them with the rollout-id and batch id, and turns Ready;
- :func:`check_rollback`: the template reverted mid-release is seen as a rollback (and no longer
  once every pod is back);
- :func:`check_restore`: finalising clears the partition and the control mark, every pod reaches
  the update revision, ``WaitResume`` completes only then; resuming without a BatchRelease lifts
  the hold;
- :func:`check_rollback_in_batches`: rolling back in batches releases each batch's share of the
  pods that were not at the target already;
- :func:`check_continuous_release`: a new template mid-release is held and the old BatchRelease
  moves no pod to it however many rounds pass before the Rollout resets it; the new release then
  starts from its first batch.

A kind's test module adds a :class:`PartitionCase` (the implementation, its resource and a
simulator factory) and runs every check in :data:`CHECKS` on it (``test_partition_port.py``).
"""

from __future__ import annotations

import copy
import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from kruise.core.kube.resources import Resource
from kruise.rollouts.api.common import ROLLBACK_IN_BATCH_ANNOTATION, ROLLOUT_BATCH_ID_LABEL, ROLLOUT_ID_LABEL
from kruise.rollouts.release.batchplan import planned_canary
from kruise.rollouts.release.constants import BATCH_RELEASE_CONTROL_ANNOTATION, IN_PROGRESSING_ANNOTATION
from kruise.rollouts.workloads.partition import decide_partition
from kruise.rollouts.workloads.partitionkind import partition_hold, partition_info, partition_resume
from kruise.rollouts.workloads.port import Observation, PartitionWorkload

JSON = dict[str, Any]
V1, V2 = "registry.example.com/web:1", "registry.example.com/web:2"
V3 = "registry.example.com/web:3"


def merge(target: JSON, patch: JSON) -> None:
    """Apply a JSON merge patch in place (RFC 7386)."""
    for key, value in patch.items():
        if value is None:
            target.pop(key, None)
        elif isinstance(value, dict) and isinstance(target.get(key), dict):
            merge(target[key], value)
        else:
            target[key] = copy.deepcopy(value)


@dataclass
class SimulatedWorkload:
    """A workload and its pods as its controller keeps them; kinds override the partition rule.

    Revisions are ``<name>-<hash of the template>``; a pod carries its revision in
    ``controller-revision-hash`` (and the hash alone in ``pod-template-hash`` when
    ``short_hash_label``). ``status.currentRevision`` moves to the update revision once every pod
    runs it, as both CloneSets and StatefulSets do.
    """

    api_version: str
    kind: str
    replicas: int = 10
    name: str = "web"
    short_hash_label: bool = False
    obj: JSON = field(default_factory=dict)
    pods: list[JSON] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.obj = {
            "apiVersion": self.api_version,
            "kind": self.kind,
            "metadata": {"name": self.name, "namespace": "shop", "uid": "wl-uid", "generation": 1},
            "spec": {"replicas": self.replicas, "template": self.template(V1)},
            "status": {},
        }
        revision = self.revision()
        self.pods = [self.pod(i, revision) for i in range(self.replicas)]
        self.obj["status"]["currentRevision"] = revision
        self.reconcile()

    @staticmethod
    def template(image: str) -> JSON:
        return {
            "metadata": {"labels": {"app": "web"}},
            "spec": {"containers": [{"name": "web", "image": image}]},
        }

    def revision(self, template: JSON | None = None) -> str:
        canonical = json.dumps(template or self.obj["spec"]["template"], sort_keys=True)
        return f"{self.name}-{hashlib.sha256(canonical.encode()).hexdigest()[:8]}"

    def pod(self, ordinal: int, revision: str) -> JSON:
        pod: JSON = {
            "metadata": {"name": f"{self.name}-{ordinal}", "labels": {"app": "web"}},
            "status": {"conditions": [{"type": "Ready", "status": "True"}]},
        }
        self.set_revision(pod, revision)
        return pod

    def set_revision(self, pod: JSON, revision: str) -> None:
        labels = pod["metadata"]["labels"]
        labels["controller-revision-hash"] = revision
        if self.short_hash_label:
            labels["pod-template-hash"] = revision.rsplit("-", 1)[1]

    def kept(self) -> set[str]:
        """Names of the pods the partition keeps at their revision (the kind's rule)."""
        raise NotImplementedError

    def edit(self, body: JSON) -> None:
        """A write to the object (merge patch, or a whole object admitted by the hold)."""
        merge(self.obj, body)
        self.obj["metadata"]["generation"] += 1

    def reconcile(self) -> None:
        """The kind's controller: pods not kept move to the update revision; the status follows."""
        update = self.revision()
        kept = self.kept()
        for pod in self.pods:
            if pod["metadata"]["name"] not in kept:
                self.set_revision(pod, update)
        updated = sum(1 for p in self.pods if p["metadata"]["labels"]["controller-revision-hash"] == update)
        status = self.obj["status"]
        status.update(
            observedGeneration=self.obj["metadata"]["generation"],
            replicas=len(self.pods),
            readyReplicas=len(self.pods),
            updatedReplicas=updated,
            updatedReadyReplicas=updated,
            updateRevision=update,
        )
        if updated == len(self.pods):
            status["currentRevision"] = update

    def at(self, image: str) -> int:
        """Pods running ``image``'s revision."""
        revision = self.revision(self.template(image))
        return sum(1 for p in self.pods if p["metadata"]["labels"]["controller-revision-hash"] == revision)

    def label(self, name: str, labels: dict[str, str]) -> None:
        pod = next(p for p in self.pods if p["metadata"]["name"] == name)
        pod["metadata"]["labels"].update(labels)


@dataclass(frozen=True)
class PartitionCase:
    """One implementation under contract: the port, its resource and its simulator."""

    name: str
    workload: PartitionWorkload
    resource: Resource
    simulate: Callable[[int], SimulatedWorkload]  # replicas -> a settled workload on V1

    def __str__(self) -> str:
        return self.name


def rollout(case: PartitionCase, **annotations: str) -> JSON:
    return {
        "metadata": {"name": "web", "namespace": "shop", "annotations": annotations},
        "spec": {
            "workloadRef": {
                "apiVersion": case.resource.api_version,
                "kind": case.resource.kind,
                "name": "web",
            },
            "strategy": {
                "canary": {"steps": [{"replicas": "20%"}, {"replicas": "50%"}, {"replicas": "100%"}]}
            },
        },
    }


def batch_release(case: PartitionCase, batches: list[Any], index: int | None, **extra: Any) -> JSON:
    plan: JSON = {"batches": [{"canaryReplicas": b} for b in batches], "rolloutID": "r1", **extra}
    if index is not None:
        plan["batchPartition"] = index
    return {
        "apiVersion": "rollouts.kruise.io/v1beta1",
        "kind": "BatchRelease",
        "metadata": {"name": "web", "namespace": "shop", "uid": "br-uid", "generation": 1, "annotations": {}},
        "spec": {
            "workloadRef": {
                "apiVersion": case.resource.api_version,
                "kind": case.resource.kind,
                "name": "web",
            },
            "releasePlan": plan,
        },
        "status": {},
    }


def hold(case: PartitionCase, sim: SimulatedWorkload, image: str, ro: JSON) -> None:
    """The user changes the image; the webhook admits what the hold says."""
    old = copy.deepcopy(sim.obj)
    new = copy.deepcopy(sim.obj)
    new["spec"]["template"] = sim.template(image)
    held = partition_hold(case.workload, new, old, [ro])
    sim.edit(held if held is not None else {"spec": {"template": new["spec"]["template"]}})
    sim.reconcile()


def drive(case: PartitionCase, sim: SimulatedWorkload, br: JSON, *, limit: int = 30) -> JSON:
    """Rounds of the BatchRelease against the simulated workload until nothing is left to do."""
    for _ in range(limit):
        d = decide_partition(case.workload, br, sim.obj, sim.pods)
        br["status"] = d.status
        if d.workload_patch:
            sim.edit(d.workload_patch)
        for labels in d.pod_patches:
            sim.label(labels.name, labels.labels)
        sim.reconcile()
        if d.workload_patch is None and not d.pod_patches and d.requeue_after is None:
            return br
    raise AssertionError(f"no settled round; status={br['status']}")


def waits_for_pods(case: PartitionCase, sim: SimulatedWorkload, br: JSON, *, limit: int = 10) -> JSON:
    """Rounds until the BatchRelease moves the partition, then one more before the workload's
    controller moved any pod: the batch must not be Ready on pods that did not move."""
    for _ in range(limit):
        d = decide_partition(case.workload, br, sim.obj, sim.pods)
        br["status"] = d.status
        for labels in d.pod_patches:
            sim.label(labels.name, labels.labels)
        if d.workload_patch and "spec" in d.workload_patch:
            sim.edit(d.workload_patch)
            lagging = decide_partition(case.workload, br, sim.obj, sim.pods)
            assert lagging.status["canaryStatus"]["batchState"] != "Ready", "Ready before the pods moved"
            return br
        if d.workload_patch:
            sim.edit(d.workload_patch)
    raise AssertionError(f"the partition never moved; status={br['status']}")


# ------------------------------------------------------------------------------------------ checks
def check_hold(case: PartitionCase) -> None:
    sim = case.simulate(10)
    ro = rollout(case)
    hold(case, sim, V2, ro)
    assert case.workload.partition(sim.obj) == case.workload.held_partition
    assert json.loads(sim.obj["metadata"]["annotations"][IN_PROGRESSING_ANNOTATION]) == {"rolloutName": "web"}
    assert (sim.at(V1), sim.at(V2)) == (10, 0), "the hold moves no pod"
    unchanged = copy.deepcopy(sim.obj)
    assert partition_hold(case.workload, unchanged, copy.deepcopy(sim.obj), [ro]) is None, "nothing changed"
    changed = copy.deepcopy(sim.obj)
    changed["spec"]["template"] = sim.template("registry.example.com/web:3")
    assert partition_hold(case.workload, changed, sim.obj, []) is None, "no Rollout"
    assert (
        partition_hold(case.workload, {**changed, "spec": {**changed["spec"], "replicas": 0}}, sim.obj, [ro])
        is None
    )


def check_share(case: PartitionCase) -> None:
    for replicas, batches in ((10, ["20%", "50%", "100%"]), (5, [1, 3, 5])):
        sim = case.simulate(replicas)
        hold(case, sim, V2, rollout(case))
        br = batch_release(case, batches, 0)
        seen = 0
        for index, batch in enumerate(batches):
            br["spec"]["releasePlan"]["batchPartition"] = index
            br = drive(case, sim, waits_for_pods(case, sim, br))
            want = planned_canary(batch, replicas)
            assert sim.at(V2) == want >= seen, f"batch {index} released {sim.at(V2)} of {want}"
            seen = want
            assert br["status"]["canaryStatus"]["batchState"] == "Ready"
            assert br["status"]["canaryStatus"]["updatedReplicas"] == want
            if want < replicas:  # (once every pod runs it, the update revision is the current one)
                assert br["status"]["stableRevision"] != br["status"]["updateRevision"]
            labelled = [p for p in sim.pods if p["metadata"]["labels"].get(ROLLOUT_ID_LABEL) == "r1"]
            assert len(labelled) == want
            assert {p["metadata"]["labels"][ROLLOUT_BATCH_ID_LABEL] for p in labelled} <= {
                str(i + 1) for i in range(index + 1)
            }
        assert sim.obj["metadata"]["annotations"][BATCH_RELEASE_CONTROL_ANNOTATION]


def check_rollback(case: PartitionCase) -> None:
    sim = case.simulate(10)
    ro = rollout(case)
    hold(case, sim, V2, ro)
    drive(case, sim, batch_release(case, ["20%", "100%"], 0))
    info = partition_info(case.workload, case.resource, Observation(sim.obj, sim.pods))
    assert info.in_progressing and not info.in_rollback and info.canary_revision != info.stable_revision
    hold(case, sim, V1, ro)  # the user reverts the template
    info = partition_info(case.workload, case.resource, Observation(sim.obj, sim.pods))
    assert info.in_rollback and info.canary_revision == info.stable_revision
    sim.edit(partition_resume(case.workload, sim.obj) or {})
    sim.reconcile()
    assert sim.at(V1) == 10
    assert not partition_info(case.workload, case.resource, Observation(sim.obj, sim.pods)).in_rollback


def check_restore(case: PartitionCase) -> None:
    sim = case.simulate(10)
    hold(case, sim, V2, rollout(case))
    drive(case, sim, batch_release(case, ["20%", "100%"], 0))
    assert partition_resume(case.workload, sim.obj) is not None, "a held workload has a hold to lift"
    br = batch_release(case, ["20%", "100%"], None, finalizingPolicy="WaitResume")
    br["status"] = {"phase": "Progressing"}
    d = decide_partition(case.workload, br, sim.obj, sim.pods)
    assert d.workload_patch is not None and d.status["phase"] == "Finalizing"
    sim.edit(d.workload_patch)
    br["status"] = d.status
    assert decide_partition(case.workload, br, sim.obj, sim.pods).status["phase"] == "Finalizing", (
        "WaitResume waits for every pod"
    )
    sim.reconcile()
    assert drive(case, sim, br)["status"]["phase"] == "Completed"
    assert sim.at(V2) == 10
    assert case.workload.partition(sim.obj) in (None, 0)
    assert BATCH_RELEASE_CONTROL_ANNOTATION not in sim.obj["metadata"].get("annotations", {})
    assert partition_resume(case.workload, sim.obj) is None, "nothing left to lift"


def check_rollback_in_batches(case: PartitionCase) -> None:
    sim = case.simulate(10)
    ro = rollout(case, **{ROLLBACK_IN_BATCH_ANNOTATION: "true"})
    hold(case, sim, V2, ro)
    batches = ["20%", "50%", "100%"]
    br = batch_release(case, batches, 0)
    br["spec"]["releasePlan"]["batchPartition"] = 1
    br = drive(case, sim, br)
    assert (sim.at(V1), sim.at(V2)) == (5, 5)
    hold(case, sim, V1, ro)  # back to v1, in batches: the Rollout restarts at step 1
    br["metadata"]["annotations"] = {ROLLBACK_IN_BATCH_ANNOTATION: "true"}
    br["spec"]["releasePlan"].update(batchPartition=0, rolloutID="r2")
    for index, want in ((0, 6), (1, 8), (2, 10)):  # 5 already at v1; 20%, 50%, 100% of the 5 others
        br["spec"]["releasePlan"]["batchPartition"] = index
        br = drive(case, sim, waits_for_pods(case, sim, br))
        assert br["status"]["canaryStatus"]["noNeedUpdateReplicas"] == 5
        assert sim.at(V1) == want, f"rollback batch {index}: {sim.at(V1)} at v1, want {want}"


def check_continuous_release(case: PartitionCase) -> None:
    sim = case.simulate(10)
    ro = rollout(case)
    hold(case, sim, V2, ro)
    br = batch_release(case, ["20%", "50%", "100%"], 1)
    br = drive(case, sim, br)
    assert (sim.at(V1), sim.at(V2)) == (5, 5)
    hold(case, sim, V3, ro)  # v3 while v2 is at step 2: held, nothing moves
    for _ in range(5):  # the Rollout's reset has not landed yet
        d = decide_partition(case.workload, br, sim.obj, sim.pods)
        assert d.workload_patch is None and not d.pod_patches, "the old release touches nothing"
        br["status"] = d.status
        sim.reconcile()
    assert (sim.at(V1), sim.at(V2), sim.at(V3)) == (5, 5, 0)
    br = drive(case, sim, batch_release(case, ["20%", "50%", "100%"], 0))  # the restarted release
    assert sim.at(V3) == 2 and br["status"]["canaryStatus"]["currentBatch"] == 0


CHECKS: list[Callable[[PartitionCase], None]] = [
    check_hold,
    check_share,
    check_rollback,
    check_restore,
    check_rollback_in_batches,
    check_continuous_release,
]
