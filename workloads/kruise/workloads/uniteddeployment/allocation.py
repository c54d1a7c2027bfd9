"""The UnitedDeployment's pure core: which subsets can schedule now, and each subset's replicas.

``allocate(ud, observed, now) -> Allocation`` is what one reconcile decides before touching any
subset workload (upstream ``Reconcile``: the Adaptive pre-processing, ``NewReplicaAllocator(...)
.Alloc`` and the reservation post-processing). It reads only its arguments.

The Adaptive strategy (default mode) keeps one ``Schedulable`` condition per subset in
``status.subsetStatuses``:

- a pod of the subset that is Pending, unbound, not being deleted, with ``PodScheduled=False``
  reason ``Unschedulable``, and older than ``rescheduleCriticalSeconds`` (default 30) makes the
  subset unschedulable: the condition turns False (``reschedule``, "timeout pending pods found")
  and the allocator keeps only the subset's ready pods there, moving the rest to later subsets;
- the subset stays unschedulable until ``unschedulableDuration`` (default 300 s) after the
  condition turned False; then it turns True (``recover``) and pods may come back.

In reservation mode (``reserveUnschedulablePods``) the caller counts each subset's reserved pods
(``ObservedSubset.reserved_pods``); the condition follows them ("reserved pods found" / "no
reserved pods"), and a just-recovered subset that is scaled up is marked False again ("subset just
recovered scaled up") so its new pods are verified before substitutes go; a subset added to a
topology that already has subset statuses starts False ("created", upstream ``initStatus``) so its
first pods are reserved until proven.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from kruise.core.api import ConditionStatus
from kruise.workloads.api.uniteddeployment import UnitedDeployment
from kruise.workloads.api.uniteddeployment_status import SUBSET_SCHEDULABLE, UnitedDeploymentSubsetCondition
from kruise.workloads.objects import as_utc
from kruise.workloads.pods import PodScheduling
from kruise.workloads.uniteddeployment.allocator import SubsetState, allocator_kind, next_replicas

__all__ = ["Allocation", "ObservedSubset", "allocate"]


@dataclass(frozen=True)
class ObservedSubset:
    """One existing subset workload as observed (a subset with no workload yet is absent).

    Attributes:
        replicas: the workload's ``spec.replicas``.
        status_replicas: its ``status.replicas``.
        ready_replicas: its ``status.readyReplicas``.
        pods: its pods, for the Adaptive default mode.
        reserved_pods: reservation mode: pods counted as reserved by the caller.
    """

    replicas: int
    status_replicas: int = 0
    ready_replicas: int = 0
    pods: Sequence[PodScheduling] = ()
    reserved_pods: int = 0


@dataclass(frozen=True)
class Allocation:
    """What :func:`allocate` decided.

    Attributes:
        replicas: next ``spec.replicas`` of every topology subset, in topology order.
        schedulable: the new ``Schedulable`` condition of each subset whose condition changed
            (to be written into ``status.subsetStatuses[name].conditions``).
        unschedulable: names of the subsets treated as unschedulable in this decision.
        requeue_after: seconds until a timed check is due again (``None``: no timed check).
    """

    replicas: dict[str, int]
    schedulable: dict[str, UnitedDeploymentSubsetCondition] = field(default_factory=dict)
    unschedulable: frozenset[str] = frozenset()
    requeue_after: float | None = None


def allocate(ud: UnitedDeployment, observed: Mapping[str, ObservedSubset], now: datetime) -> Allocation:
    """Decide every subset's replicas for ``ud`` given its existing subsets at ``now`` (aware UTC).

    Raises :class:`~kruise.workloads.uniteddeployment.allocator.AllocationError` (upstream's
    message) when the topology's specified replicas do not fit; nothing should change then.
    """
    now = as_utc(now)
    kind = allocator_kind(ud.spec)
    conditions = _conditions(ud)
    changed: dict[str, UnitedDeploymentSubsetCondition] = {}
    waits: list[timedelta] = []
    states: dict[str, SubsetState] = {}
    strategy = ud.spec.topology.schedule_strategy if ud.spec.topology else None
    settings = strategy.settings() if strategy else None

    def record(name: str, cond: UnitedDeploymentSubsetCondition | None) -> None:
        if cond is not None and cond is not conditions.get(name):
            changed[name] = conditions[name] = cond

    for name, subset in observed.items():
        state = SubsetState(replicas=subset.replicas, ready_replicas=subset.ready_replicas)
        if settings is not None and kind == "adaptive" and name in conditions:
            critical, hold = settings.reschedule_critical(), settings.unschedulable_seconds()
            state, cond = _assess_default(subset, conditions[name], critical, hold, now, waits)
            record(name, cond)
        elif kind == "reservation" and name in conditions:
            state, cond = _assess_reserved(subset, conditions[name], now)
            record(name, cond)
        states[name] = state
    replicas = next_replicas(ud.spec, states)
    if kind == "reservation" and ud.status is not None and ud.status.subset_statuses:
        known = {s.name for s in ud.status.subset_statuses}
        for name in list(conditions):
            if name not in known:
                message = "newly-created subsets in reservation strategy"
                record(name, _set(None, False, "created", message, now))
    if kind == "reservation":
        for name, state in states.items():
            if (
                state.marked_unschedulable
                and not state.unschedulable
                and replicas.get(name, 0) > state.replicas
            ):
                record(
                    name,
                    _set(conditions.get(name), False, "reschedule", "subset just recovered scaled up", now),
                )
    return Allocation(
        replicas=replicas,
        schedulable=changed,
        unschedulable=frozenset(n for n, s in states.items() if s.unschedulable),
        requeue_after=min(waits).total_seconds() if waits else None,
    )


_NO_CONDITION: UnitedDeploymentSubsetCondition | None = None


def _conditions(ud: UnitedDeployment) -> dict[str, UnitedDeploymentSubsetCondition | None]:
    """The ``Schedulable`` condition of every topology subset (``None`` when it has none yet)."""
    statuses = {s.name: s for s in (ud.status.subset_statuses or []) if s.name} if ud.status else {}
    out: dict[str, UnitedDeploymentSubsetCondition | None] = {}
    for subset in (ud.spec.topology.subsets or []) if ud.spec.topology else []:
        status = statuses.get(subset.name)
        found = [c for c in (status.conditions or []) if c.type == SUBSET_SCHEDULABLE] if status else []
        out[subset.name] = found[0] if found else _NO_CONDITION
    return out


def _set(
    current: UnitedDeploymentSubsetCondition | None, status: bool, reason: str, message: str, now: datetime
) -> UnitedDeploymentSubsetCondition | None:
    """Upstream ``SetCondition``: unchanged (the same object) when status and reason already match."""
    value = ConditionStatus.TRUE.value if status else ConditionStatus.FALSE.value
    if current is not None and current.status == value and current.reason == reason:
        return current
    return UnitedDeploymentSubsetCondition(
        type=SUBSET_SCHEDULABLE, status=value, last_transition_time=now, reason=reason, message=message
    )


def _assess_default(
    subset: ObservedSubset,
    condition: UnitedDeploymentSubsetCondition | None,
    critical: int,
    unschedulable_seconds: int,
    now: datetime,
    waits: list[timedelta],
) -> tuple[SubsetState, UnitedDeploymentSubsetCondition | None]:
    """Upstream ``calculateSubsetsStatusForDefaultAdaptiveStrategy`` for one subset."""
    unschedulable = False
    hold = timedelta(seconds=unschedulable_seconds)
    if condition is not None and condition.status == ConditionStatus.FALSE.value:
        since = condition.last_transition_time
        recover_at = as_utc(since) + hold if since is not None else None
        if recover_at is not None and now < recover_at:
            unschedulable = True
            waits.append(recover_at - now)
        else:
            message = f"unschedulable subset recovered after {float(unschedulable_seconds):f} seconds"
            condition = _set(condition, True, "recover", message, now)
    if subset.ready_replicas < subset.status_replicas:
        timed_out = 0
        for pod in subset.pods:
            expired, after = pod.pending_timeout(timedelta(seconds=critical), now)
            timed_out += expired
            if after is not None and after > timedelta(0):
                waits.append(after)
        if timed_out:
            unschedulable = True
            condition = _set(condition, False, "reschedule", "timeout pending pods found", now)
            waits.append(hold)
    state = SubsetState(
        replicas=subset.replicas, ready_replicas=subset.ready_replicas, unschedulable=unschedulable
    )
    return state, condition


def _assess_reserved(
    subset: ObservedSubset, condition: UnitedDeploymentSubsetCondition | None, now: datetime
) -> tuple[SubsetState, UnitedDeploymentSubsetCondition | None]:
    """The subset-level half of upstream ``calculateSubsetsStatusForReservedAdaptiveStrategy``."""
    marked = condition is not None and condition.status == ConditionStatus.FALSE.value
    unschedulable = subset.reserved_pods > 0
    if unschedulable:
        condition = _set(condition, False, "reschedule", "reserved pods found", now)
    else:
        condition = _set(condition, True, "reschedule", "no reserved pods", now)
    state = SubsetState(
        replicas=subset.replicas,
        ready_replicas=subset.ready_replicas,
        unschedulable=unschedulable,
        marked_unschedulable=marked,
        reserved_pods=subset.reserved_pods,
    )
    return state, condition
