"""Every partition kind passes the workload port's contract (``partition_contract.py``), each on a
simulator of its own controller's partition rule:

- **CloneSet**: ``updateStrategy.partition`` is how many pods keep the current revision (an int,
  or a percentage of replicas rounded up, CloneSet's own ``calculate_partition``); which pods is
  the controller's choice (here: by name);
- **StatefulSet** (``apps/v1``): ``updateStrategy.rollingUpdate.partition`` is an ordinal: pods at
  or above it are updated, the ones below keep whatever revision they run.

Advanced StatefulSet and Advanced DaemonSet join by adding a case here.
"""

from __future__ import annotations

import pytest

from kruise.core.kube.resources import CLONESETS, NATIVE_STATEFULSETS
from kruise.rollouts.workloads import cloneset, statefulset
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
