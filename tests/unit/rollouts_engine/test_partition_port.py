"""Every partition kind passes the workload port's contract (``partition_contract.py``), each on a
simulator of its own controller's partition rule:

- **CloneSet**: ``updateStrategy.partition`` is how many pods keep the current revision (an int,
  or a percentage of replicas rounded up, CloneSet's own ``calculate_partition``); which pods is
  the controller's choice (here: by name);
- **StatefulSet** (``apps/v1``): ``updateStrategy.rollingUpdate.partition`` is an ordinal: pods at
  or above it are updated, the ones below keep whatever revision they run;
- **Advanced StatefulSet**: the native rule by ordinal; with ``unorderedUpdate`` the partition
  counts the pods kept, as a CloneSet's;
- **Advanced DaemonSet**: ``rollingUpdate.partition`` is how many pods (one per node) keep
  their revision; the status is the DaemonSet's (``desiredNumberScheduled``,
  ``updatedNumberScheduled``, ``daemonSetHash``, no ``currentRevision``).
"""

from __future__ import annotations

import pytest

from kruise.core.kube.resources import CLONESETS, DAEMONSETS, NATIVE_STATEFULSETS, STATEFULSETS
from kruise.rollouts.workloads import advancedstatefulset, cloneset, daemonset, statefulset
from kruise.rollouts.workloads.podlabels import ordinal
from kruise.rollouts.workloads.registry import KINDS
from kruise.workloads.cloneset.arith import calculate_partition
from tests.unit.rollouts_engine.partition_contract import CHECKS, PartitionCase, SimulatedWorkload


class CloneSetSim(SimulatedWorkload):
    def kept(self) -> set[str]:
        strategy = self.obj["spec"].get("updateStrategy") or {}
        keep = calculate_partition(strategy.get("partition"), self.obj["spec"]["replicas"])
        update = self.revision()
        stale = sorted(
            p["metadata"]["name"]
            for p in self.pods
            if p["metadata"]["labels"]["controller-revision-hash"] != update
        )
        updated = len(self.pods) - len(stale)
        to_update = max(0, len(self.pods) - keep - updated)  # the controller updates that many more
        return set(stale[to_update:])


class StatefulSetSim(SimulatedWorkload):
    def kept(self) -> set[str]:
        rolling = (self.obj["spec"].get("updateStrategy") or {}).get("rollingUpdate") or {}
        partition = rolling.get("partition") or 0
        return {p["metadata"]["name"] for p in self.pods if ordinal(p) < partition}


class AdvancedStatefulSetSim(StatefulSetSim):
    """An Advanced StatefulSet updating by ordinal: the native rule."""


class UnorderedAdvancedStatefulSetSim(StatefulSetSim):
    """An Advanced StatefulSet with ``unorderedUpdate``: ``rollingUpdate.partition`` counts the
    pods kept at their revision; which ones is the controller's choice (by priority; here the
    stale pods by name, as the CloneSet simulator)."""

    def __post_init__(self) -> None:
        super().__post_init__()
        rolling = {"unorderedUpdate": {}}
        self.obj["spec"]["updateStrategy"] = {"type": "RollingUpdate", "rollingUpdate": rolling}

    def kept(self) -> set[str]:
        rolling = (self.obj["spec"].get("updateStrategy") or {}).get("rollingUpdate") or {}
        keep = min(int(rolling.get("partition") or 0), len(self.pods))
        update = self.revision()
        stale = sorted(
            p["metadata"]["name"]
            for p in self.pods
            if p["metadata"]["labels"]["controller-revision-hash"] != update
        )
        return set(stale[len(stale) - min(keep, len(stale)) :])


class DaemonSetSim(SimulatedWorkload):
    """Nodes' pods; the partition keeps that many old (the controller picks which: by name)."""

    def kept(self) -> set[str]:
        rolling = (self.obj["spec"].get("updateStrategy") or {}).get("rollingUpdate") or {}
        keep = daemonset.PARTITION.kept(rolling.get("partition"), len(self.pods))
        update = self.revision()
        stale = sorted(
            p["metadata"]["name"]
            for p in self.pods
            if p["metadata"]["labels"]["controller-revision-hash"] != update
        )
        to_update = max(0, len(self.pods) - keep - (len(self.pods) - len(stale)))
        return set(stale[to_update:])

    def reconcile(self) -> None:
        super().reconcile()
        status = self.obj["status"]
        nodes = status.pop("replicas")
        status.update(
            desiredNumberScheduled=nodes,
            currentNumberScheduled=nodes,
            numberReady=nodes,
            updatedNumberScheduled=status.pop("updatedReplicas"),
            daemonSetHash=status.pop("updateRevision").rsplit("-", 1)[1],
        )
        for key in ("readyReplicas", "updatedReadyReplicas", "currentRevision"):
            status.pop(key, None)


CASES = [
    PartitionCase(
        "CloneSet",
        cloneset.PARTITION,
        CLONESETS,
        lambda n: CloneSetSim("apps.kruise.io/v1alpha1", "CloneSet", replicas=n, short_hash_label=True),
    ),
    PartitionCase(
        "StatefulSet",
        statefulset.PARTITION,
        NATIVE_STATEFULSETS,
        lambda n: StatefulSetSim("apps/v1", "StatefulSet", replicas=n),
    ),
    PartitionCase(
        "AdvancedStatefulSet",
        advancedstatefulset.PARTITION,
        STATEFULSETS,
        lambda n: AdvancedStatefulSetSim("apps.kruise.io/v1beta1", "StatefulSet", replicas=n),
    ),
    PartitionCase(
        "AdvancedStatefulSet unorderedUpdate",
        advancedstatefulset.PARTITION,
        STATEFULSETS,
        lambda n: UnorderedAdvancedStatefulSetSim("apps.kruise.io/v1beta1", "StatefulSet", replicas=n),
    ),
    PartitionCase(
        "Advanced DaemonSet",
        daemonset.PARTITION,
        DAEMONSETS,
        lambda n: DaemonSetSim("apps.kruise.io/v1alpha1", "DaemonSet", replicas=n),
    ),
]


@pytest.mark.parametrize("check", CHECKS, ids=lambda c: c.__name__)
@pytest.mark.parametrize("case", CASES, ids=str)
def test_partition_kinds_pass_the_contract(case: PartitionCase, check: object) -> None:
    assert callable(check)
    check(case)


def test_every_partition_kind_of_the_registry_is_under_contract() -> None:
    """A partition kind registered without a case here would skip the contract."""
    covered = {case.resource for case in CASES}
    partition_kinds = {k.resource for k in KINDS if hasattr(k.styles.get("Partition"), "workload")}
    assert partition_kinds <= covered
