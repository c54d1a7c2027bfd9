"""Reserved pods of the Adaptive strategy's reservation mode (``adaptive.reserveUnschedulablePods``), pure.

Upstream (master: ``calculateSubsetsStatusForReservedAdaptiveStrategy``,
``CheckPodReallyInReservedStatus``, ``IsPodMarkedAsReserved``): a pod that cannot start in its
subset is not moved away but *reserved* there, labelled
``apps.kruise.io/united-deployment-reserved-pod: "true"``, while the allocator
(:mod:`.allocator`, ``reservationAllocator``) creates temporary substitutes in later subsets;
every other pod of the subset is labelled ``"false"``. Per pod, each round:

- in a subset whose ``Schedulable`` condition is False, a pod without the label is new there: it
  is reserved at once;
- a pod labelled reserved stays so until it runs at the UnitedDeployment's update revision and
  has been Ready for ``unschedulableDuration`` (default 300 s); the check is due when that time
  is up (or after ``unschedulableDuration`` when it is not Ready yet);
- any other pod becomes reserved when, at the update revision, it is Pending, unbound and
  ``PodScheduled=False/Unschedulable`` longer than ``rescheduleCriticalSeconds`` (default 30) since
  its creation; or, at an older revision, not being deleted, once the UnitedDeployment's
  ``UnitedDeploymentUpdated`` condition has been False (the update under way) that long; such a
  pod also counts as an *update timeout* pod, which raises the subset's ``maxUnavailable``.

:func:`reserve` gives, per subset, the reserved count, the update-timeout count, the label value
to write on each pod whose label is missing or changes, and when to look again.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from kruise.workloads.api.uniteddeployment import RESERVED_POD_LABEL, UnitedDeployment
from kruise.workloads.api.uniteddeployment_status import SUBSET_SCHEDULABLE
from kruise.workloads.objects import KubeObject, as_utc, labels, name, parse_time
from kruise.workloads.pods import PodScheduling, get_condition, phase
from kruise.workloads.uniteddeployment.kinds import REVISION_LABEL
from kruise.workloads.uniteddeployment.status import updated_condition

__all__ = [
    "RESERVED_POD_LABEL",
    "PodReservation",
    "SubsetReservation",
    "raised_max_unavailable",
    "reserve",
    "reserve_subsets",
]


@dataclass(frozen=True)
class PodReservation:
    """The facts of one subset pod reservation mode reads.

    Attributes:
        name: the pod's name (the key of :attr:`SubsetReservation.labels`).
        scheduling: the Pending/unschedulable facts of the default mode.
        marked: the reserved label: ``True``/``False`` for ``"true"``/any other value, ``None``
            when the pod has none.
        revision: its ``apps.kruise.io/controller-revision-hash`` label.
        running: ``status.phase`` is Running.
        ready_since: the ``lastTransitionTime`` of its ``Ready=True`` condition (``None``: not Ready).
    """

    name: str
    scheduling: PodScheduling
    marked: bool | None = None
    revision: str = ""
    running: bool = False
    ready_since: datetime | None = None

    @property
    def deleting(self) -> bool:
        return self.scheduling.deleting

    @classmethod
    def of(cls, pod: KubeObject) -> PodReservation:
        """Read these facts from a pod as the API server returns it."""
        label = labels(pod).get(RESERVED_POD_LABEL)
        ready = get_condition(pod, "Ready") or {}
        since = ready.get("lastTransitionTime") if ready.get("status") == "True" else None
        return cls(
            name=name(pod),
            scheduling=PodScheduling.of(pod),
            marked=None if label is None else label == "true",
            revision=str(labels(pod).get(REVISION_LABEL) or ""),
            running=phase(pod) == "Running",
            ready_since=parse_time(since),
        )


@dataclass(frozen=True)
class SubsetReservation:
    """What :func:`reserve` found in one subset.

    Attributes:
        reserved: pods counted as reserved (``UnschedulableStatus.ReservedPods``).
        update_timeout: pods at an older revision whose update timed out (``UpdateTimeoutPods``).
        labels: pod name -> reserved label value to write (missing or changed labels only).
        check_after: seconds until a pod's reservation should be looked at again (``None``: none).
    """

    reserved: int = 0
    update_timeout: int = 0
    labels: dict[str, bool] = field(default_factory=dict)
    check_after: float | None = None


def _check(
    pod: PodReservation,
    revision: str,
    updating_since: datetime | None,
    pending_timeout: timedelta,
    hold: timedelta,
    now: datetime,
) -> tuple[bool, timedelta | None, bool]:
    """``CheckPodReallyInReservedStatus``: ``(reserved, check again after, update timed out)``."""
    if pod.marked:
        if pod.running and pod.revision == revision and pod.ready_since is not None:
            leaves_at = as_utc(pod.ready_since) + hold
            return (False, None, False) if leaves_at < now else (True, leaves_at - now, False)
        return True, hold, False
    if pod.revision == revision:
        timed_out, after = pod.scheduling.pending_timeout(pending_timeout, now)
        return (True, hold, False) if timed_out else (False, after, False)
    if pod.deleting or updating_since is None:
        return False, None, False
    deadline = as_utc(updating_since) + pending_timeout
    if deadline < now:
        return True, hold, True
    return False, deadline - now, False


def reserve(
    pods: Sequence[PodReservation],
    *,
    marked_unschedulable: bool,
    revision: str,
    updating_since: datetime | None,
    reschedule_critical_seconds: int,
    unschedulable_seconds: int,
    now: datetime,
) -> SubsetReservation:
    """Assess one subset's pods (see the module doc).

    ``marked_unschedulable``: the subset's ``Schedulable`` condition is False; ``revision``: the
    update revision's name; ``updating_since``: when ``UnitedDeploymentUpdated`` turned False
    (``None`` while it is True: no pod at an older revision times out); ``now`` aware UTC.
    """
    now = as_utc(now)
    pending_timeout = timedelta(seconds=reschedule_critical_seconds)
    hold = timedelta(seconds=unschedulable_seconds)
    reserved = update_timeout = 0
    to_label: dict[str, bool] = {}
    waits: list[timedelta] = []
    for pod in pods:
        if marked_unschedulable and pod.marked is None:
            reserved += 1  # created in an unschedulable subset
            to_label[pod.name] = True
            continue
        is_reserved, after, timed_out = _check(pod, revision, updating_since, pending_timeout, hold, now)
        reserved += is_reserved
        update_timeout += timed_out
        if after is not None and after > timedelta(0):
            waits.append(after)
        if pod.marked is None or pod.marked != is_reserved:
            to_label[pod.name] = is_reserved
    return SubsetReservation(
        reserved=reserved,
        update_timeout=update_timeout,
        labels=to_label,
        check_after=min(waits).total_seconds() if waits else None,
    )


def reserve_subsets(
    ud: UnitedDeployment, pods: Mapping[str, Sequence[PodReservation]], revision: str, now: datetime
) -> dict[str, SubsetReservation]:
    """:func:`reserve` for every existing subset (``pods`` by subset name) of a UnitedDeployment in
    reservation mode; ``{}`` in any other mode. ``revision`` is the update revision's name; the
    update is under way since the ``UnitedDeploymentUpdated`` condition this round writes turned
    False (:func:`~.status.updated_condition`, with the stored current revision).
    """
    strategy = ud.spec.topology.schedule_strategy if ud.spec.topology else None
    if strategy is None or not strategy.reserves_unschedulable_pods():
        return {}
    settings = strategy.settings()
    stored = ud.status.to_dict() if ud.status else {}
    current = str(stored.get("currentRevision") or "") or revision
    updated = updated_condition(stored.get("conditions") or [], current, revision, now)
    updating_since = parse_time(updated.get("lastTransitionTime")) if updated["status"] == "False" else None
    marked = {
        s.name
        for s in (ud.status.subset_statuses or [] if ud.status else [])
        for c in (s.conditions or [])
        if c.type == SUBSET_SCHEDULABLE and c.status == "False"
    }
    return {
        subset: reserve(
            subset_pods,
            marked_unschedulable=subset in marked,
            revision=revision,
            updating_since=updating_since,
            reschedule_critical_seconds=settings.reschedule_critical(),
            unschedulable_seconds=settings.unschedulable_seconds(),
            now=now,
        )
        for subset, subset_pods in pods.items()
    }


def raised_max_unavailable(
    replicas: Mapping[str, int],
    ready: Mapping[str, int],
    unschedulable: frozenset[str],
    reservations: Mapping[str, SubsetReservation],
) -> dict[str, int]:
    """The ``maxUnavailable`` an update writes into each unschedulable subset of reservation mode
    (``UpdateSubset``): its current ``spec.replicas`` minus its ready replicas plus its
    update-timeout pods, so the pods that cannot become ready do not block the rolling update."""
    return {
        subset: replicas.get(subset, 0) - ready.get(subset, 0) + found.update_timeout
        for subset, found in reservations.items()
        if subset in unschedulable
    }
