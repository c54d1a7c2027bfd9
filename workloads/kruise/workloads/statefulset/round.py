"""The world one StatefulSet round decides on, split into replica slots and condemned pods.

``updateStatefulSet`` (OpenKruise v1.8) first sorts the set's pods: a pod whose ordinal lies in
the replica range (:class:`~.identity.ReplicaRange`) takes the slot ``ordinal - start``, a pod
with a valid ordinal outside it (scaled in, or now reserved) is *condemned* (sorted by
descending ordinal), a pod without ordinal is ignored. Every empty, unreserved slot then gets a
*draft* of the pod to create, at the current revision or the update revision as the partition
says (:func:`~.identity.current_revision_needed`). Drafts have no ``status.phase`` (not
*created*).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from kruise.workloads.objects import KubeObject, mapping, name, spec
from kruise.workloads.statefulset.health import is_healthy
from kruise.workloads.statefulset.identity import (
    ReplicaRange,
    current_revision_needed,
    new_pod,
    ordinal_of,
    replica_range,
)

__all__ = ["Options", "Round", "World", "build_round"]


@dataclass(frozen=True)
class Options:
    """Feature gates of the controller (upstream defaults)."""

    start_ordinal: bool = False  # StatefulSetStartOrdinal
    pod_index_label: bool = True  # PodIndexLabel
    auto_delete_pvc: bool = True  # StatefulSetAutoDeletePVC
    env_from_metadata: bool = True  # InPlaceUpdateEnvFromMetadata


@dataclass(frozen=True)
class World:
    """Everything a round reads.

    Attributes:
        statefulset: the v1beta1 object.
        pods: the pods it owns (adopted included, terminating and finished included).
        claims: PVCs of its namespace by name (those the controller may look up).
        current_revision / update_revision: ControllerRevision dicts.
        revisions: every revision of the set, ascending.
        collision_count: ``status.collisionCount`` to report.
        now: the instant availability is judged at.
    """

    statefulset: KubeObject
    pods: Sequence[KubeObject]
    claims: Mapping[str, KubeObject]
    current_revision: KubeObject
    update_revision: KubeObject
    revisions: Sequence[KubeObject]
    collision_count: int
    now: datetime


@dataclass
class Round:
    """A world split into slots (``replicas`` upstream), condemned pods and the first unhealthy pod."""

    world: World
    options: Options
    range: ReplicaRange
    slots: list[dict[str, Any] | KubeObject | None]
    condemned: list[KubeObject]
    first_unhealthy: KubeObject | None
    drafts: set[str] = field(default_factory=set)

    @property
    def statefulset(self) -> KubeObject:
        return self.world.statefulset

    @property
    def monotonic(self) -> bool:
        """``!allowsBurst``: anything but ``Parallel`` orders pods one by one."""
        return spec(self.statefulset).get("podManagementPolicy") != "Parallel"

    @property
    def min_ready_seconds(self) -> int:
        rolling = mapping(mapping(spec(self.statefulset).get("updateStrategy")).get("rollingUpdate"))
        return int(rolling.get("minReadySeconds") or 0)

    def is_draft(self, pod: KubeObject) -> bool:
        return name(pod) in self.drafts


def build_round(world: World, options: Options) -> Round:
    """Sort ``world.pods`` into slots and condemned pods and draft the missing replicas."""
    sts = world.statefulset
    ordinals = replica_range(sts, start_ordinal_gate=options.start_ordinal)
    slots: list[dict[str, Any] | KubeObject | None] = [None] * (ordinals.end - ordinals.start)
    condemned: list[KubeObject] = []
    for pod in world.pods:
        ordinal = ordinal_of(pod)
        if ordinals.holds(ordinal):
            slots[ordinal - ordinals.start] = pod
        elif ordinal >= 0:
            condemned.append(pod)
    update_name = name(world.update_revision)
    drafts: set[str] = set()
    for ordinal in ordinals.ordinals():
        index = ordinal - ordinals.start
        if slots[index] is not None:
            continue
        keep = current_revision_needed(sts, update_name, ordinal, slots, ordinals.start)
        revision = world.current_revision if keep else world.update_revision
        draft = new_pod(sts, revision, ordinal, world.now, pod_index_label=options.pod_index_label)
        slots[index] = draft
        drafts.add(name(draft))
    condemned.sort(key=ordinal_of, reverse=True)
    first: KubeObject | None = None
    for pod in [*(p for p in slots if p is not None), *reversed(condemned)]:
        if not is_healthy(pod) and (first is None or ordinal_of(pod) < ordinal_of(first)):
            first = pod
    return Round(world, options, ordinals, slots, condemned, first, drafts)
