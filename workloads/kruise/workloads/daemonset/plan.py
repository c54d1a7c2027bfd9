"""The Advanced DaemonSet's decision (pure): ``plan(ds, nodes, pods, revisions, now) -> Plan``.

One reconcile of OpenKruise's ``syncDaemonSet`` (v1.8), with the API calls left to the shell:

1. **Manage** (``manage``/``podsShouldBeOnNode``): a pod for every node that should run one and
   has none; on a node that may keep its pod, failed pods deleted (each node's deletions spaced
   by an exponential backoff, 1 s doubling to 15 min), ``PreparingDelete`` pods whose hook was
   released deleted, and extra pods deleted (without surge all but the first; with surge all but
   the oldest new and oldest old, and the old one once the new is available for
   ``minReadySeconds`` or the old is not Ready); every pod of a node that may not keep it
   deleted, and unscheduled pods of vanished nodes. With ``partition`` and the
   ``progressive-create-pod`` annotation only ``desired - updated - partition`` nodes get a pod.
2. If Manage changed anything, stop: the shell waits for its cache to show the changes
   (expectations), as upstream returns after ``manage`` when expectations are unsatisfied.
3. **Rolling update** (``rollingUpdate``), unless paused or ``OnDelete``: the nodes that may be
   updated (:func:`nodes_to_update`: the updated and emptied ones count first, then those
   matching ``rollingUpdate.selector`` (or all), at most ``nodes - partition``), then either
   without surge: old pods deleted (or updated in place) within ``maxUnavailable``, unavailable
   old pods always; or with surge: new pods created beside old available ones within
   ``maxSurge`` (beside unavailable ones always) and old pods deleted once their new one is
   available.

Deletions go through the ``preDelete`` hook (a hooked pod moves to ``PreparingDelete`` instead),
and creations, deletions and in-place updates are each capped at ``burstReplicas`` per round.
Creations are ordered by node name (the shell creates them in slow-start batches).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from enum import StrEnum

from kruise.workloads.daemonset.daemonpods import (
    DAEMONSET_KIND,
    in_place_spec,
    is_nil_or_pre_deleting,
    is_pre_deleting,
    is_rollout_available,
    pods_by_node,
    template_generation,
    updated_and_old,
)
from kruise.workloads.daemonset.nodes import NodeFit, daemon_pod_spec, node_fit
from kruise.workloads.daemonset.status import DaemonSetCounts, count_status, seconds_until_available
from kruise.workloads.daemonset.strategy import (
    allow_surge,
    burst_replicas,
    is_in_place,
    is_on_delete,
    is_paused,
    is_progressive,
    min_ready_seconds,
    node_update_selector,
    partition_count,
    rolling_numbers,
    rolling_update,
)
from kruise.workloads.inplace import InPlaceUpdateSpec
from kruise.workloads.lifecycle import hook_of, is_pod_hooked
from kruise.workloads.objects import (
    KubeObject,
    as_utc,
    is_being_deleted,
    labels,
    mapping,
    name,
    namespace,
    spec,
)
from kruise.workloads.pods import PHASE_FAILED, is_ready, node_name, phase, ready_time, short_hash
from kruise.workloads.revisions import sort_revisions
from kruise.workloads.selector import SelectorError, selector_matches


class Phase(StrEnum):
    """Which part of the reconcile a :class:`Plan` acts for."""

    MANAGE = "Manage"
    UPDATE = "Update"
    IDLE = "Idle"


class DeleteReason(StrEnum):
    """Why a pod is deleted (metrics count ``Update`` and ``SurgeReplaced`` as recreations)."""

    MISSCHEDULED = "Misscheduled"
    EXCESS = "Excess"
    FAILED = "Failed"
    HOOK_RELEASED = "HookReleased"
    NODE_GONE = "NodeGone"
    SURGE_REPLACED = "SurgeReplaced"
    UPDATE = "Update"

    @property
    def recreates(self) -> bool:
        return self in (DeleteReason.UPDATE, DeleteReason.SURGE_REPLACED)


@dataclass(frozen=True)
class Deletion:
    """Delete ``pod`` (or, when its preDelete hook holds it, move it to ``PreparingDelete``)."""

    pod: str
    reason: DeleteReason


@dataclass(frozen=True)
class InPlace:
    """Update ``pod`` in place to ``spec.revision``."""

    pod: str
    spec: InPlaceUpdateSpec


@dataclass(frozen=True)
class Warning:
    """A Warning event on the DaemonSet: ``reason`` and ``message``."""

    reason: str
    message: str


@dataclass(frozen=True)
class FailedBackoff:
    """The failed-pod backoff of one node: last step at ``since``, current ``delay`` (seconds)."""

    since: datetime
    delay: float

    def holds(self, now: datetime) -> bool:
        return as_utc(now) - as_utc(self.since) < timedelta(seconds=self.delay)

    def remaining(self, now: datetime) -> float:
        return max(0.0, self.delay - (as_utc(now) - as_utc(self.since)).total_seconds())


@dataclass(frozen=True)
class Plan:
    """What one reconcile does.

    Attributes:
        phase: Manage (core loop), Update (rolling update) or Idle (nothing to change).
        hash: the update revision's hash (pods' ``controller-revision-hash``, ``daemonSetHash``).
        create: nodes to create a pod on, by node name.
        delete: pods to delete now.
        pre_delete: pods to move to ``PreparingDelete`` (their preDelete hook holds them).
        in_place: pods to update in place.
        backoff_next: nodes whose failed-pod backoff steps on (a failed pod is deleted now).
        warnings: Warning events to record.
        requeue_after: seconds until something time-based is due (backoff, minReadySeconds).
        counts: the status counters of the observed world.
    """

    phase: Phase
    hash: str
    counts: DaemonSetCounts
    create: tuple[str, ...] = ()
    delete: tuple[Deletion, ...] = ()
    pre_delete: tuple[Deletion, ...] = ()
    in_place: tuple[InPlace, ...] = ()
    backoff_next: tuple[str, ...] = ()
    warnings: tuple[Warning, ...] = ()
    requeue_after: float | None = None

    @property
    def changes(self) -> bool:
        """Whether the plan writes pods (creations, deletions, hooks or in-place updates)."""
        return bool(self.create or self.delete or self.pre_delete or self.in_place)


@dataclass
class _Round:
    """Accumulates one phase's decisions."""

    create: list[str] = field(default_factory=list)
    delete: list[tuple[KubeObject, DeleteReason]] = field(default_factory=list)
    in_place: list[InPlace] = field(default_factory=list)
    backoff_next: list[str] = field(default_factory=list)
    warnings: list[Warning] = field(default_factory=list)
    waits: list[float] = field(default_factory=list)


@dataclass(frozen=True)
class _World:
    """The observed world, computed once per plan."""

    ds: KubeObject
    hash: str
    generation: str | None
    fits: Mapping[str, NodeFit]
    node_labels: Mapping[str, Mapping[str, str]]
    by_node: Mapping[str, Sequence[KubeObject]]
    desired: int
    min_ready: int
    now: datetime


def plan(
    ds: KubeObject,
    nodes: Sequence[KubeObject],
    pods: Sequence[KubeObject],
    revisions: Sequence[KubeObject],
    now: datetime,
    *,
    backoff: Mapping[str, FailedBackoff] | None = None,
) -> Plan:
    """Decide one reconcile of ``ds`` (a DaemonSet dict).

    Args:
        nodes: every Node.
        pods: the DaemonSet's pods (by controller owner), terminating and failed ones included.
        revisions: its ControllerRevisions; the newest is the update revision (the shell creates
            or bumps it first).
        now: the instant availability and backoffs are judged at.
        backoff: per node, the failed-pod backoff of this DaemonSet generation.

    Raises:
        StrategyError: maxSurge or maxUnavailable cannot be read (nothing is updated).
        ValueError: ``revisions`` is empty.
    """
    if not revisions:
        raise ValueError("plan needs the update revision")
    update_rev = sort_revisions(revisions)[-1]
    hash_value = str(labels(update_rev).get(DAEMONSET_KIND.hash_label) or short_hash(name(update_rev)))
    pod_spec = daemon_pod_spec(mapping(mapping(spec(ds).get("template")).get("spec")))
    fits = {name(n): node_fit(pod_spec, n) for n in nodes}
    world = _World(
        ds=ds,
        hash=hash_value,
        generation=template_generation(ds),
        fits=fits,
        node_labels={name(n): labels(n) for n in nodes},
        by_node=pods_by_node(pods),
        desired=sum(1 for f in fits.values() if f.should_run),
        min_ready=min_ready_seconds(ds),
        now=now,
    )
    counts = count_status(fits, world.by_node, hash_value, world.generation, world.min_ready, now)
    base = Plan(phase=Phase.IDLE, hash=hash_value, counts=counts)
    manage = _manage(world, backoff or {})
    wake = seconds_until_available([p for p in pods if not is_being_deleted(p)], world.min_ready, now)
    managed = _finish(world, base, Phase.MANAGE, manage, wake)
    if managed.changes or is_paused(ds) or is_on_delete(ds):
        return managed
    update = _rolling_update(world, revisions)
    update.backoff_next, update.warnings = manage.backoff_next, manage.warnings
    update.waits += manage.waits
    return _finish(world, base, Phase.UPDATE, update, wake)


def _finish(world: _World, base: Plan, phase: Phase, decided: _Round, wake: float | None) -> Plan:
    """Apply the preDelete hook and ``burstReplicas`` (``syncNodes``) and build the plan."""
    burst = burst_replicas(world.ds, world.desired)
    hook = hook_of(world.ds, "preDelete")
    delete: list[Deletion] = []
    pre_delete: list[Deletion] = []
    for pod, reason in decided.delete:
        if is_pod_hooked(hook, pod):
            if not is_pre_deleting(pod):
                pre_delete.append(Deletion(name(pod), reason))
        else:
            delete.append(Deletion(name(pod), reason))
    waits = [*decided.waits, *([wake] if wake is not None else [])]
    out = replace(
        base,
        create=tuple(sorted(decided.create)[:burst]),
        delete=tuple(delete[:burst]),
        pre_delete=tuple(pre_delete),
        in_place=tuple(decided.in_place[:burst]),
        backoff_next=tuple(decided.backoff_next),
        warnings=tuple(decided.warnings),
        requeue_after=min(waits) if waits else None,
    )
    return replace(out, phase=phase if out.changes else Phase.IDLE)


# ---------------------------------------------------------------------------------- manage
def _manage(world: _World, backoff: Mapping[str, FailedBackoff]) -> _Round:
    out = _Round()
    surge = allow_surge(world.ds)
    new_pod_nodes = 0
    for node, fit in sorted(world.fits.items()):
        node_pods = world.by_node.get(node)
        new, _, ok = updated_and_old(node_pods or (), world.hash, world.generation)
        new_pod_nodes += 1 if ok and new is not None else 0
        if fit.should_run and node_pods is None:
            out.create.append(node)
        elif fit.should_continue_running and node_pods is not None:
            _keep_node(world, node, fit, node_pods, surge, backoff.get(node), out)
        elif not fit.should_continue_running and node_pods is not None:
            out.delete += [(p, DeleteReason.MISSCHEDULED) for p in node_pods if not is_being_deleted(p)]
    for node, node_pods in world.by_node.items():
        if node not in world.fits:  # getUnscheduledPodsWithoutNode
            out.delete += [(p, DeleteReason.NODE_GONE) for p in node_pods if not node_name(p)]
    partition = partition_count(world.ds, world.desired)
    if rolling_update(world.ds) is not None and partition and is_progressive(world.ds):
        limit = max(world.desired - new_pod_nodes - min(partition, world.desired), 0)
        out.create = sorted(out.create)[:limit]
    return out


def _keep_node(
    world: _World,
    node: str,
    fit: NodeFit,
    node_pods: Sequence[KubeObject],
    surge: bool,
    backoff: FailedBackoff | None,
    out: _Round,
) -> None:
    """``podsShouldBeOnNode`` for a node that may keep its pods."""
    running: list[KubeObject] = []
    for pod in node_pods:
        if is_being_deleted(pod):
            continue
        if phase(pod) == PHASE_FAILED:
            if backoff is not None and backoff.holds(world.now):
                out.waits.append(backoff.remaining(world.now))
                continue
            out.backoff_next.append(node)
            message = (
                f"Found failed daemon pod {namespace(pod)}/{name(pod)} on node {node}, will try to kill it"
            )
            out.warnings.append(Warning("FailedDaemonPod", message))
            out.delete.append((pod, DeleteReason.FAILED))
        elif is_pre_deleting(pod):
            out.delete.append((pod, DeleteReason.HOOK_RELEASED))
        else:
            running.append(pod)
    if not surge:
        out.delete += [(p, DeleteReason.EXCESS) for p in running[1:]]
        return
    if len(running) <= 1:
        if not running and fit.should_run:
            out.create.append(node)
        return
    oldest_new = oldest_old = None
    for pod in running:  # already in pod order
        if _updated(world, pod):
            if oldest_new is None:
                oldest_new = pod
                continue
        elif oldest_old is None:
            oldest_old = pod
            continue
        out.delete.append((pod, DeleteReason.EXCESS))
    if oldest_new is None or oldest_old is None:
        return
    if not is_ready(oldest_old) or is_rollout_available(oldest_new, world.min_ready, world.now):
        out.delete.append((oldest_old, DeleteReason.SURGE_REPLACED))
    elif is_ready(oldest_new) and world.min_ready > 0:
        since = ready_time(oldest_new)
        waited = (as_utc(world.now) - since).total_seconds() if since else 0.0
        out.waits.append(max(world.min_ready - waited, 0.0) + 0.05)


def _updated(world: _World, pod: KubeObject) -> bool:
    new, _, _ = updated_and_old((pod,), world.hash, world.generation)
    return new is not None


# ---------------------------------------------------------------------------- rolling update
def nodes_to_update(
    ds: KubeObject,
    candidates: Mapping[str, Sequence[KubeObject]],
    node_labels: Mapping[str, Mapping[str, str]],
    hash_value: str,
    generation: str | None,
    partition: int,
) -> list[str]:
    """``filterDaemonPodsNodeToUpdate``: the nodes the rolling update may touch, in order.

    Nodes are walked by name, descending: those already updated (or with more than one pod)
    come first, then those without a live old pod, then, with ``rollingUpdate.selector``, the
    nodes it matches (without it every other node); the list is cut at
    ``len(candidates) - partition``.
    """
    selector = node_update_selector(ds)
    updated: list[str] = []
    emptied: list[str] = []
    selected: list[str] = []
    rest: list[str] = []
    for node in sorted(candidates, reverse=True):
        new, old, ok = updated_and_old(candidates[node], hash_value, generation)
        if not ok or new is not None:
            updated.append(node)
        elif is_nil_or_pre_deleting(old):
            emptied.append(node)
        elif selector is not None and _selects(selector, node_labels.get(node, {})):
            selected.append(node)
        else:
            rest.append(node)
    ordered = [*updated, *emptied, *(selected if selector is not None else rest)]
    return ordered[: max(len(candidates) - partition, 0)]


def _selects(selector: Mapping[str, object], node_labels: Mapping[str, str]) -> bool:
    try:
        return selector_matches(selector, node_labels)
    except SelectorError:
        return False


def _rolling_update(world: _World, revisions: Sequence[KubeObject]) -> _Round:
    numbers = rolling_numbers(world.ds, world.desired)
    candidates: dict[str, Sequence[KubeObject]] = {
        node: pods for node, pods in world.by_node.items() if node in world.fits
    }
    for node, fit in world.fits.items():
        if fit.should_run:
            candidates.setdefault(node, ())
    partition = partition_count(world.ds, world.desired)
    ordered = nodes_to_update(
        world.ds, candidates, world.node_labels, world.hash, world.generation, partition
    )
    if numbers.max_surge == 0:
        return _replace_within_unavailable(world, candidates, ordered, numbers.max_unavailable, revisions)
    return _surge(world, candidates, ordered, numbers.max_surge)


def _replace_within_unavailable(
    world: _World,
    candidates: Mapping[str, Sequence[KubeObject]],
    ordered: Iterable[str],
    max_unavailable: int,
    revisions: Sequence[KubeObject],
) -> _Round:
    """The ``maxSurge == 0`` branch: old pods go (or are updated in place) within maxUnavailable."""
    unavailable = 0
    allowed: list[KubeObject] = []
    candidate_pods: list[KubeObject] = []
    for node in ordered:
        new, old, ok = updated_and_old(candidates[node], world.hash, world.generation)
        if not ok or is_nil_or_pre_deleting(old) == is_nil_or_pre_deleting(new):
            unavailable += 1
        elif new is not None:
            unavailable += 0 if is_rollout_available(new, world.min_ready, world.now) else 1
            unavailable += 1 if is_pre_deleting(new) else 0
        elif old is not None and not is_rollout_available(old, world.min_ready, world.now):
            allowed.append(old)
        elif unavailable < max_unavailable and old is not None:
            candidate_pods.append(old)
    budget = min(max(max_unavailable - unavailable, 0), len(candidate_pods))
    out = _Round()
    for pod in [*allowed, *candidate_pods[:budget]]:
        update = in_place_spec(world.ds, pod, revisions) if is_in_place(world.ds) else None
        if update is not None:
            out.in_place.append(InPlace(name(pod), update))
        else:
            out.delete.append((pod, DeleteReason.UPDATE))
    return out


def _surge(
    world: _World, candidates: Mapping[str, Sequence[KubeObject]], ordered: Iterable[str], max_surge: int
) -> _Round:
    """The ``maxSurge > 0`` branch: a new pod beside each old one within maxSurge, the old one
    deleted once the new is available."""
    out = _Round()
    surging = 0
    allowed: list[str] = []
    candidate_nodes: list[str] = []
    for node in ordered:
        new, old, ok = updated_and_old(candidates[node], world.hash, world.generation)
        if not ok:
            surging += 1
        elif old is None or is_pre_deleting(old):
            continue
        elif new is None:
            if not is_rollout_available(old, world.min_ready, world.now):
                allowed.append(node)
            elif surging < max_surge:
                candidate_nodes.append(node)
        elif not is_rollout_available(new, world.min_ready, world.now) or is_pre_deleting(new):
            surging += 1
        elif old is not None:
            out.delete.append((old, DeleteReason.SURGE_REPLACED))
    budget = min(max(max_surge - surging, 0), len(candidate_nodes))
    out.create = [*allowed, *candidate_nodes[:budget]]
    return out
