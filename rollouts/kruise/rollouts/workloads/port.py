"""The workload port: what a release needs from a workload, one implementation per kind and style.

Kruise Rollouts drives a workload it does not own. What it needs from one is small, and the
same for every kind; how each kind provides it differs. So the Rollout engine
(:mod:`kruise.rollouts.rollout`), the BatchRelease controller (:mod:`kruise.rollouts.batchrelease`)
and the hold webhooks talk to a :class:`WorkloadKind` looked up in the registry
(:mod:`kruise.rollouts.workloads.registry`) by ``workloadRef`` (group and kind, as upstream's
``ControllerFinder``), and to the :class:`ReleaseStyle` the Rollout's strategy picks from it::

    Rollout engine ─┐                      ┌ CloneSet        partition (CloneSetPartition), blue-green
    BatchRelease  ──┼─ registry ─ WorkloadKind ┤ Deployment      partition (advanced), canary, blue-green
    hold webhooks ──┘   by workloadRef     └ StatefulSet     partition (StatefulSetPartition)
                                               (Advanced StatefulSet, Advanced DaemonSet: partition;
                                                native DaemonSet: partition through OnDelete)

A :class:`WorkloadKind` is one registry entry: where the objects live, which events wake the
controllers (:class:`Route`), how the webhook holds the kind back (:class:`WorkloadHold`), what
a round reads beside the object, how to lift the hold without a BatchRelease, and its styles.

A :class:`ReleaseStyle` is what one style needs: the Rollout engine's :class:`WorkloadInfo`
(revisions, replicas, rolling back or not) and the BatchRelease's round (take control, set the
batch's share, report, finalise), as a pure :class:`~kruise.rollouts.workloads.ops.ControlDecision`.

Most kinds release by **partition**: the hold sets the partition to its maximum, each batch lowers
it, finalising clears it, canary Services select on the revision label the pods carry. Such a kind
implements only :class:`PartitionWorkload` (a few pure accessors and patches) and gets the hold,
the info, the BatchRelease control and the resume from
:mod:`kruise.rollouts.workloads.partition` and :mod:`~kruise.rollouts.workloads.partitionkind`
(``partition_kind`` makes the registry entry); every implementation passes
``tests/unit/rollouts_engine/partition_contract.py``. Adding a kind is one module plus a registry
entry.

Everything here is pure: objects are JSON dicts; reads go through :class:`CacheView` (the
controller's in-memory cache), writes are returned as data.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from kruise.core.kube.resources import Resource
from kruise.core.webhook.conditions import MatchCondition
from kruise.rollouts.api.common import RollingStyle
from kruise.rollouts.release.batchplan import IntOrStr
from kruise.rollouts.workloads.info import WorkloadInfo
from kruise.rollouts.workloads.ops import ControlDecision

JSON = dict[str, Any]
WorkloadKey = tuple[str, str, str]
"""``(namespace, kind, name)`` of a workload a Rollout may reference."""


class CacheView(Protocol):
    """The reads a kind makes (structurally :class:`kruise.core.runtime.CacheReader`)."""

    def get(self, resource: Resource, key: str) -> JSON | None: ...

    def by_index(self, resource: Resource, index: str, value: str) -> list[JSON]: ...


@dataclass(frozen=True)
class Observation:
    """A workload as one round sees it: the object and what its kind reads beside it.

    ``pods``: the pods it controls, directly or through ``replicasets`` (only the BatchRelease
    asks for them); ``replicasets`` and
    ``canaries``: a Deployment's ReplicaSets (its own and its canary Deployments') and canary
    Deployments; ``revisions``: the ControllerRevisions it controls, read by a kind whose status
    names no revision (a native DaemonSet); ``hpas``: ``(resource, object)`` pairs of the
    namespace's HPAs, v2 first, read by the BatchRelease shell only when
    :meth:`ReleaseStyle.needs_hpas` says a round may touch one.
    """

    workload: JSON
    pods: Sequence[JSON] = ()
    replicasets: Sequence[JSON] = ()
    canaries: Sequence[JSON] = ()
    revisions: Sequence[JSON] = ()
    hpas: Sequence[tuple[Resource, JSON]] = ()


@dataclass(frozen=True)
class Gates:
    """Feature gates the BatchRelease controls honour (``AdvancedDeployment``,
    ``KeepWorkloadPausedOnRolloutDeletion``)."""

    advanced_deployment: bool = True
    keep_paused_on_cancel: bool = False


class ReleaseStyle(Protocol):
    """What one release style needs from one workload kind.

    - :attr:`style`: the ``releasePlan.rollingStyle`` it serves;
    - :attr:`rollback_in_batches`: whether ``rollouts.kruise.io/rollback-in-batch`` applies
      (``IsRollbackInBatchPolicy``: CloneSets and StatefulSets, without traffic routing);
    - :meth:`info`: the Rollout engine's view of the workload;
    - :meth:`control`: one BatchRelease round (``obs`` None: the workload is gone);
    - :meth:`needs_hpas`: whether that round may touch an HPA (the shell then lists them).
    """

    @property
    def style(self) -> RollingStyle: ...

    @property
    def rollback_in_batches(self) -> bool: ...

    def info(self, rollout: Mapping[str, Any], obs: Observation) -> WorkloadInfo: ...

    def control(self, br: Mapping[str, Any], obs: Observation | None, gates: Gates) -> ControlDecision: ...

    def needs_hpas(self, br: Mapping[str, Any], obs: Observation | None) -> bool: ...


@dataclass(frozen=True)
class PartitionState:
    """A partition workload's status as a release reads it.

    Revisions are written the way its pods carry them under
    :attr:`PartitionWorkload.revision_label_key` (a CloneSet's short hash, a StatefulSet's
    ControllerRevision name); ``current`` is ``status.replicas`` (pods that exist), ``updated``
    and ``updated_ready`` the pods at the update revision (ready ones); ``consistent``: the status
    observed the current generation.
    """

    replicas: int
    current: int
    stable_revision: str
    update_revision: str
    updated: int
    updated_ready: int
    consistent: bool


class PartitionWorkload(Protocol):
    """A workload released by partition (CloneSet, StatefulSet, Advanced StatefulSet, Advanced
    DaemonSet): the pods it keeps at the stable revision are set by a partition.

    Everything is pure over JSON dicts. The generic parts (hold, info, the BatchRelease round,
    resume) live in :mod:`kruise.rollouts.workloads.partition` and
    :mod:`~kruise.rollouts.workloads.partitionkind`; an implementation answers:

    - :attr:`revision_label_key`: the pod label canary Services select on;
    - :attr:`ordered`: pods are updated by ordinal, highest first (a StatefulSet): a rollback in
      batches keeps the pods already rolled back inside the partition and labels by ordinal;
    - :meth:`state`: replicas, revisions and counts (``pods`` where the status lacks a count);
    - :meth:`partition`: the partition now (None when unset) and :meth:`kept`: how many pods a
      partition keeps at the stable revision for ``replicas``;
    - :meth:`partition_for`: the partition that releases a batch of ``batch_replicas``, leaving
      out ``no_need`` pods already at the target (rolling back in batches);
    - :meth:`partition_patch`: the merge patch setting it (None: clear it);
      :attr:`held_partition`: what the hold writes (nothing moves);
    - :meth:`paused` / :meth:`unpause_patch`: the kind's own pause, if any (None: no pause);
    - :meth:`holdable`: whether an update may enter a release at all (a StatefulSet only with
      ``RollingUpdate``) and :meth:`single_version`: whether its pods run one revision (upstream
      holds a multi-version workload under traffic routing only when that is known).
    """

    @property
    def revision_label_key(self) -> str: ...

    @property
    def held_partition(self) -> IntOrStr: ...

    def ordered(self, workload: Mapping[str, Any]) -> bool: ...

    def state(self, workload: Mapping[str, Any], pods: Sequence[Mapping[str, Any]]) -> PartitionState: ...

    def partition(self, workload: Mapping[str, Any]) -> IntOrStr | None: ...

    def kept(self, partition: IntOrStr | None, replicas: int) -> int: ...

    def partition_for(
        self, workload: Mapping[str, Any], batch_replicas: IntOrStr, replicas: int, no_need: int
    ) -> IntOrStr: ...

    def partition_patch(self, partition: IntOrStr | None) -> JSON: ...

    def paused(self, workload: Mapping[str, Any]) -> bool: ...

    def unpause_patch(self) -> JSON | None: ...

    def holdable(self, workload: Mapping[str, Any]) -> bool: ...

    def single_version(self, workload: Mapping[str, Any]) -> bool | None: ...


@runtime_checkable
class RecordsStableRevision(Protocol):
    """A :class:`PartitionWorkload` whose status names no stable revision (an Advanced DaemonSet):
    :meth:`stable_record` is the merge patch the hold adds when a release starts, recording the
    revision ``old`` (the object being replaced) runs, so :meth:`PartitionWorkload.state` can read
    it back while the release is in progress (None: nothing to record); :meth:`stable_forget` is
    the merge patch that drops the record from a ``workload`` no longer in a release, which the
    BatchRelease's finalisation writes with the rest of the hand-back (None: nothing to drop)."""

    def stable_record(self, old: Mapping[str, Any]) -> JSON | None: ...

    def stable_forget(self, workload: Mapping[str, Any]) -> JSON | None: ...


@runtime_checkable
class HandsBack(Protocol):
    """A :class:`PartitionWorkload` held by more than its partition and pause (a native DaemonSet:
    its ``OnDelete`` update strategy and the annotations its batches are released through), so
    clearing those two does not give it back. :meth:`hand_back` is the whole merge patch that does
    (None: nothing left to write); the BatchRelease's finalisation and the resume without a
    BatchRelease write it instead of clearing the partition and the pause. ``keep``: the release
    ends without ``WaitResume`` under ``KeepWorkloadPausedOnRolloutDeletion``, so the pods stay
    where they are (only the release's own marks go)."""

    def hand_back(self, workload: Mapping[str, Any], *, keep: bool) -> JSON | None: ...


Indexer = Callable[[JSON], Iterable[str]]


@dataclass(frozen=True)
class Route:
    """An event route: an event of a ``resource`` object concerns the workloads ``workloads(obj)``
    names, so the controllers steering them wake (the cache maps workloads to Rollouts);
    ``indexers``: the named indices the kind reads through on that resource."""

    resource: Resource
    workloads: Callable[[JSON], Iterable[WorkloadKey]]
    indexers: Mapping[str, Indexer] = field(default_factory=dict)


def self_route(resource: Resource) -> Route:
    """The route every kind has: an event of the workload concerns the workload itself."""

    def workloads(obj: JSON) -> tuple[WorkloadKey, ...]:
        meta = obj.get("metadata") or {}
        return ((str(meta.get("namespace")), resource.kind, str(meta.get("name"))),)

    return Route(resource, workloads)


@dataclass(frozen=True)
class WorkloadHold:
    """How the workload webhook holds a kind back when its template changes under a Rollout.

    Served as a mutating webhook ``name`` at ``path`` for UPDATEs of ``group``/``versions``/
    ``plural``, only for objects labelled ``rollouts.kruise.io/workload-type`` (plus ``exclude``
    expressions in its ``objectSelector``). ``worth_a_look(new, old)`` is a cheap filter: False
    admits the update without reading anything; ``related(new)`` names what to list beside the
    namespace's Rollouts (``(resource, label selector)``, or None); ``decide(new, old, rollouts,
    related)`` returns the object to admit instead (None: admit ``new`` as it is).
    ``match_conditions``: CEL ``matchConditions`` that keep the API server from calling at all
    for an update ``worth_a_look`` would wave through (each must hold whenever it says yes; a
    superset is fine, nothing is the safe default).
    """

    name: str
    path: str
    group: str
    versions: tuple[str, ...]
    plural: str
    decide: Callable[[JSON, JSON, Sequence[JSON], Sequence[JSON]], JSON | None]
    worth_a_look: Callable[[JSON, JSON], bool]
    related: Callable[[JSON], tuple[Resource, str] | None] = lambda _new: None
    exclude: tuple[JSON, ...] = ()
    match_conditions: tuple[MatchCondition, ...] = ()


def alone(_view: CacheView, workload: JSON) -> Observation:
    """A kind that reads nothing beside its object."""
    return Observation(workload)


@dataclass(frozen=True)
class WorkloadKind:
    """One registry entry: a workload kind and the release styles it serves.

    ``resource``: where its objects live (read, labelled, held, patched); ``styles``: its release
    styles (``Partition`` first: the one a Canary request degrades to on a kind without an extra
    canary workload, as upstream's ``IsRealPartition``); ``hold``: its webhook; ``routes``: the
    events that concern it (its own, plus e.g. a Deployment's ReplicaSets); ``observe(view,
    workload)``: the object with what a round reads beside it; ``resume(workload)``:
    the merge patch lifting the hold when no BatchRelease is left to do it (None: nothing held);
    ``revisions``: its template revisions are ControllerRevisions named ``<workload>-<hash>`` (an
    aborted analysis reverts the template through them).
    """

    resource: Resource
    styles: Mapping[RollingStyle, ReleaseStyle]
    hold: WorkloadHold
    routes: tuple[Route, ...]
    resume: Callable[[JSON], JSON | None]
    observe: Callable[[CacheView, JSON], Observation] = alone
    revisions: bool = True

    @property
    def kind(self) -> str:
        return self.resource.kind

    @property
    def group(self) -> str:
        return self.resource.group

    def matches(self, api_version: str, kind: str) -> bool:
        """Whether a ``workloadRef`` (any version of the group, as upstream compares) names this kind."""
        group = api_version.rpartition("/")[0] if "/" in api_version else ""
        return kind == self.kind and group == self.group

    def style_for(self, requested: RollingStyle) -> ReleaseStyle | None:
        """The style serving ``requested``: Canary degrades to Partition on a kind without it;
        None when the kind cannot serve the request at all (blue-green on a partition-only kind)."""
        if requested in self.styles:
            return self.styles[requested]
        if requested == RollingStyle.CANARY:
            return self.styles.get(RollingStyle.PARTITION)
        return None
