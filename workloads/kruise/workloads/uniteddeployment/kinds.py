"""The subset workload kinds a UnitedDeployment can be made of, and what differs between them
(upstream's adapters, ``pkg/controller/uniteddeployment/adapter``), pure.

Everything else (labels, selector, replicas, scheduling, patch) is the same for every kind
(:func:`~.subsets.subset_workload`). Every template kind is managed: ``statefulSetTemplate``
(native StatefulSet, ``apps/v1``), ``advancedStatefulSetTemplate`` (Advanced StatefulSet,
``apps.kruise.io/v1beta1``), ``cloneSetTemplate`` (CloneSet) and ``deploymentTemplate``
(Deployment, ``apps/v1``), in that order of precedence when several are set.

Partition, as upstream's adapters write and read it:

- CloneSet: ``updateStrategy.partition`` set to the subset's partition; read back resolved
  against the CloneSet's replicas (rounding up);
- Advanced StatefulSet: ``updateStrategy.rollingUpdate.partition`` set when the template's
  strategy type is empty or ``RollingUpdate``; read back from there, or for ``OnDelete`` as the
  number of its pods not at its revision;
- native StatefulSet: the same, and the strategy type is then written as ``RollingUpdate``;
  after each update, its pods from the partition on that are not at the revision and not Ready
  are deleted (``PostUpdate``, kubernetes/kubernetes#67250's stuck rolling update);
- Deployment: none (a Deployment has no partition; written nothing, read as 0, so a Manual
  partition keeps the subset "to update" every round, as upstream's does).

The pods of a subset, as upstream's ``GetSubsetPods`` claims them: those its workload controls
that match the workload's selector; for a Deployment, those each of its ReplicaSets (controlled
by it and matching its selector) controls and that match that ReplicaSet's selector. Upstream's
claim would also adopt matching orphans; here the owners' own controllers do that.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from kruise.core.api import scaled_value_from_int_or_percent
from kruise.core.kube.resources import (
    CLONESETS,
    DEPLOYMENTS,
    NATIVE_STATEFULSETS,
    PODS,
    REPLICASETS,
    STATEFULSETS,
    Resource,
)
from kruise.core.runtime import owner_key
from kruise.workloads.objects import KubeObject, labels, mapping, spec, uid
from kruise.workloads.pods import is_ready
from kruise.workloads.selector import SelectorError, selector_matches
from kruise.workloads.statefulset.identity import ordinal_of

__all__ = [
    "ADVANCED_STATEFULSET",
    "CLONESET",
    "DEPLOYMENT",
    "KINDS",
    "REVISION_LABEL",
    "STATEFULSET",
    "Get",
    "OwnedBy",
    "SubsetKind",
    "owning_workload",
    "subset_kind",
]

REVISION_LABEL = "apps.kruise.io/controller-revision-hash"
"""Subset workloads and their pods: the UnitedDeployment revision they were made from."""

SetPartition = Callable[[dict[str, Any], int], None]
ReadPartition = Callable[[KubeObject, Sequence[KubeObject]], int]
OwnedBy = Callable[[Resource, str], Sequence[KubeObject]]
"""``(resource, uid)`` -> the objects of ``resource`` whose controller ownerReference has that
UID (the cache's ``OWNER_UID`` index)."""
Get = Callable[[Resource, str], KubeObject | None]
"""``(resource, "namespace/name")`` -> the object, or ``None`` (the cache)."""
PodsOf = Callable[[KubeObject, OwnedBy], list[KubeObject]]
StuckPods = Callable[[KubeObject, Sequence[KubeObject], str, int], list[KubeObject]]


def _claimed(owner: KubeObject, controlled: Sequence[KubeObject]) -> list[KubeObject]:
    """Of the objects ``owner`` controls, those its ``spec.selector`` matches (none when the
    selector is malformed): ``ClaimOwnedObjects`` without the adoption."""
    selector = mapping(spec(owner).get("selector"))
    try:
        return [obj for obj in controlled if selector_matches(selector, labels(obj))]
    except SelectorError:
        return []


def _controlled_pods(workload: KubeObject, owned_by: OwnedBy) -> list[KubeObject]:
    """The pods the workload controls and selects (CloneSet, both StatefulSets)."""
    return _claimed(workload, owned_by(PODS, uid(workload)))


def _deployment_pods(deployment: KubeObject, owned_by: OwnedBy) -> list[KubeObject]:
    """``getDeploymentPods``: the pods of each ReplicaSet the Deployment controls and selects."""
    return [
        pod
        for replica_set in _claimed(deployment, owned_by(REPLICASETS, uid(deployment)))
        for pod in _claimed(replica_set, owned_by(PODS, uid(replica_set)))
    ]


def _none_stuck(
    _workload: KubeObject, _pods: Sequence[KubeObject], _revision: str, _partition: int
) -> list[KubeObject]:
    return []


@dataclass(frozen=True)
class SubsetKind:
    """One kind of subset workload.

    Attributes:
        template: the ``spec.template`` field it is made from (``cloneSetTemplate``).
        resource: where it lives (API group, version, plural, kind).
        label: upstream's subset type text in events (``Create 1 Subset (CloneSet)``).
        set_partition: writes the partition into a workload spec (given as a dict to modify).
        read_partition: the partition of a stored workload, given its pods.
        pods_of: a stored workload's pods (``GetSubsetPods``), read through ``owned_by``.
        via: the kinds between the workload and its pods, the pods' owner first (a Deployment's
            ReplicaSets); the controller reads them indexed by owner UID.
        stuck_pods: ``PostUpdate``: given the written workload, its pods, the revision and the
            partition, the pods to delete after an update (none but for a native StatefulSet).
        max_unavailable: where its spec holds the rolling update's ``maxUnavailable``
            (``SetMaxUnavailable``): ``updateStrategy.maxUnavailable`` for a (v1alpha1) CloneSet,
            ``updateStrategy.rollingUpdate.maxUnavailable`` for both StatefulSets,
            ``strategy.rollingUpdate.maxUnavailable`` for a Deployment.
    """

    template: str
    resource: Resource
    label: str
    set_partition: SetPartition
    read_partition: ReadPartition
    pods_of: PodsOf = _controlled_pods
    via: tuple[Resource, ...] = ()
    stuck_pods: StuckPods = _none_stuck
    max_unavailable: tuple[str, ...] = ("updateStrategy", "rollingUpdate", "maxUnavailable")

    @property
    def api_version(self) -> str:
        return f"{self.resource.group}/{self.resource.version}"

    def read_max_unavailable(self, workload: KubeObject) -> Any:
        """A stored workload's rolling-update ``maxUnavailable`` (``None`` when unset)."""
        node: Any = spec(workload)
        for key in self.max_unavailable:
            node = mapping(node).get(key)
        return node

    def set_max_unavailable(self, workload: dict[str, Any], value: int) -> None:
        """Write ``value`` as the rolling update's ``maxUnavailable`` into a workload spec (given
        as a dict to modify; the maps on the way are copied, not shared)."""
        *path, last = self.max_unavailable
        node = workload
        for key in path:
            node[key] = dict(mapping(node.get(key)))
            node = node[key]
        node[last] = value


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


def _set_statefulset_partition(workload: dict[str, Any], partition: int) -> None:
    strategy = mapping(workload.get("updateStrategy"))
    if strategy.get("type") in (None, "", "RollingUpdate"):
        workload["updateStrategy"] = {**strategy, "type": "RollingUpdate"}
    _set_asts_partition(workload, partition)


def _statefulset_stuck_pods(
    workload: KubeObject, pods: Sequence[KubeObject], revision: str, partition: int
) -> list[KubeObject]:
    """``deleteStuckPods`` (``isPodStuckForRollingUpdate``): under ``RollingUpdate``, the pods
    whose ordinal is at least ``partition``, not at ``revision`` and not Ready."""
    if mapping(spec(workload).get("updateStrategy")).get("type") == "OnDelete":
        return []
    return [
        pod
        for pod in pods
        if ordinal_of(pod) >= partition and labels(pod).get(REVISION_LABEL) != revision and not is_ready(pod)
    ]


def _set_no_partition(_workload: dict[str, Any], _partition: int) -> None:
    """A Deployment has no partition: nothing is written."""


def _read_no_partition(_workload: KubeObject, _pods: Sequence[KubeObject]) -> int:
    return 0


def _read_asts_partition(workload: KubeObject, pods: Sequence[KubeObject]) -> int:
    strategy = mapping(spec(workload).get("updateStrategy"))
    if strategy.get("type") == "OnDelete":
        revision = labels(workload).get(REVISION_LABEL)
        return sum(1 for p in pods if labels(p).get(REVISION_LABEL) != revision)
    return _int(mapping(strategy.get("rollingUpdate")).get("partition"))


CLONESET = SubsetKind(
    "cloneSetTemplate",
    CLONESETS,
    "CloneSet",
    _set_cloneset_partition,
    _read_cloneset_partition,
    max_unavailable=("updateStrategy", "maxUnavailable"),
)
ADVANCED_STATEFULSET = SubsetKind(
    "advancedStatefulSetTemplate",
    STATEFULSETS,
    "AdvancedStatefulSet",
    _set_asts_partition,
    _read_asts_partition,
)
STATEFULSET = SubsetKind(
    "statefulSetTemplate",
    NATIVE_STATEFULSETS,
    "StatefulSet",
    _set_statefulset_partition,
    _read_asts_partition,
    stuck_pods=_statefulset_stuck_pods,
)
DEPLOYMENT = SubsetKind(
    "deploymentTemplate",
    DEPLOYMENTS,
    "Deployment",
    _set_no_partition,
    _read_no_partition,
    pods_of=_deployment_pods,
    via=(REPLICASETS,),
    max_unavailable=("strategy", "rollingUpdate", "maxUnavailable"),
)
KINDS = (STATEFULSET, ADVANCED_STATEFULSET, CLONESET, DEPLOYMENT)
"""Every kind managed, in upstream's order of precedence (``getSubsetControls``)."""


def subset_kind(template: Mapping[str, Any]) -> SubsetKind | None:
    """The kind ``spec.template`` asks for, the first set in upstream's order (``None``: no
    template at all, which the webhook refuses)."""
    return next((kind for kind in KINDS if template.get(kind.template) is not None), None)


def owning_workload(kind: SubsetKind, pod: KubeObject, get: Get) -> KubeObject | None:
    """The subset workload of ``kind`` a pod belongs to, following controller ownerReferences
    through :attr:`SubsetKind.via` (pod -> ReplicaSet -> Deployment); ``None`` when the chain
    breaks or leads to another kind."""
    obj: KubeObject | None = pod
    for resource in (*kind.via, kind.resource):
        key = owner_key(obj, resource) if obj is not None else None
        obj = get(resource, key) if key else None
    return obj
