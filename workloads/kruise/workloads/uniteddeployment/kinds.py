"""The subset workload kinds a UnitedDeployment can be made of, and what differs between them
(upstream's adapters, ``pkg/controller/uniteddeployment/adapter``), pure.

Everything else (labels, selector, replicas, scheduling, patch) is the same for every kind
(:func:`~.subsets.subset_workload`). Managed so far: ``cloneSetTemplate`` (CloneSet) and
``advancedStatefulSetTemplate`` (Advanced StatefulSet, ``apps.kruise.io/v1beta1``); the
``statefulSetTemplate`` and ``deploymentTemplate`` kinds are not yet.

Partition, as upstream's adapters write and read it:

- CloneSet: ``updateStrategy.partition`` set to the subset's partition; read back resolved
  against the CloneSet's replicas (rounding up);
- Advanced StatefulSet: ``updateStrategy.rollingUpdate.partition`` set when the template's
  strategy type is empty or ``RollingUpdate``; read back from there, or for ``OnDelete`` as the
  number of its pods not at its revision.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from kruise.core.api import scaled_value_from_int_or_percent
from kruise.core.kube.resources import CLONESETS, STATEFULSETS, Resource
from kruise.workloads.objects import KubeObject, labels, mapping, spec

__all__ = ["ADVANCED_STATEFULSET", "CLONESET", "KINDS", "REVISION_LABEL", "SubsetKind", "subset_kind"]

REVISION_LABEL = "apps.kruise.io/controller-revision-hash"
"""Subset workloads and their pods: the UnitedDeployment revision they were made from."""

SetPartition = Callable[[dict[str, Any], int], None]
ReadPartition = Callable[[KubeObject, Sequence[KubeObject]], int]


@dataclass(frozen=True)
class SubsetKind:
    """One kind of subset workload.

    Attributes:
        template: the ``spec.template`` field it is made from (``cloneSetTemplate``).
        resource: where it lives (API group, version, plural, kind).
        label: upstream's subset type text in events (``Create 1 Subset (CloneSet)``).
        set_partition: writes the partition into a workload spec (given as a dict to modify).
        read_partition: the partition of a stored workload, given its pods.
    """

    template: str
    resource: Resource
    label: str
    set_partition: SetPartition
    read_partition: ReadPartition

    @property
    def api_version(self) -> str:
        return f"{self.resource.group}/{self.resource.version}"


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _set_cloneset_partition(workload: dict[str, Any], partition: int) -> None:
    workload["updateStrategy"] = {**mapping(workload.get("updateStrategy")), "partition": partition}


def _read_cloneset_partition(workload: KubeObject, _pods: Sequence[KubeObject]) -> int:
    value = mapping(spec(workload).get("updateStrategy")).get("partition")
    if value is None:
        return 0
    replicas = spec(workload).get("replicas")
    return scaled_value_from_int_or_percent(value, replicas if isinstance(replicas, int) else 1, True)


def _set_asts_partition(workload: dict[str, Any], partition: int) -> None:
    strategy = dict(mapping(workload.get("updateStrategy")))
    if strategy.get("type") in (None, "", "RollingUpdate"):
        strategy["rollingUpdate"] = {**mapping(strategy.get("rollingUpdate")), "partition": partition}
        workload["updateStrategy"] = strategy


def _read_asts_partition(workload: KubeObject, pods: Sequence[KubeObject]) -> int:
    strategy = mapping(spec(workload).get("updateStrategy"))
    if strategy.get("type") == "OnDelete":
        revision = labels(workload).get(REVISION_LABEL)
        return sum(1 for p in pods if labels(p).get(REVISION_LABEL) != revision)
    return _int(mapping(strategy.get("rollingUpdate")).get("partition"))


CLONESET = SubsetKind(
    "cloneSetTemplate", CLONESETS, "CloneSet", _set_cloneset_partition, _read_cloneset_partition
)
ADVANCED_STATEFULSET = SubsetKind(
    "advancedStatefulSetTemplate",
    STATEFULSETS,
    "AdvancedStatefulSet",
    _set_asts_partition,
    _read_asts_partition,
)
KINDS = (ADVANCED_STATEFULSET, CLONESET)
"""Every kind managed."""


_ORDER = ("statefulSetTemplate", "advancedStatefulSetTemplate", "cloneSetTemplate", "deploymentTemplate")
"""Upstream's order of precedence among the template kinds (``getSubsetControls``)."""


def subset_kind(template: Mapping[str, Any]) -> SubsetKind | None:
    """The kind ``spec.template`` asks for (``None``: no template, or a kind not managed yet)."""
    by_field = {kind.template: kind for kind in KINDS}
    for field in _ORDER:
        if template.get(field) is not None:
            return by_field.get(field)
    return None
