"""Pod predicates and well-known pod keys every Kruise workload uses.

Each predicate mirrors one upstream helper (named in its docstring) so that counting
"available", "ready" or "updated" pods gives the same numbers as OpenKruise v1.8. Time enters
only through the explicit ``now`` argument. Workload-specific notions (a CloneSet's
"available", a StatefulSet's "healthy") live with their workload.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import StrEnum
from typing import Any

from kruise.workloads.objects import (
    KubeObject,
    annotations_of,
    as_utc,
    creation_time,
    is_being_deleted,
    labels,
    mapping,
    parse_time,
    sequence,
    spec,
    status,
)

REVISION_HASH_LABEL = "controller-revision-hash"
POD_TEMPLATE_HASH_LABEL = "pod-template-hash"
SPECIFIED_DELETE_LABEL = "apps.kruise.io/specified-delete"
LIFECYCLE_STATE_LABEL = "lifecycle.apps.kruise.io/state"
LIFECYCLE_TIMESTAMP_ANNOTATION = "lifecycle.apps.kruise.io/timestamp"
UNAVAILABLE_LABEL_PREFIX = "unavailable-pod.kruise.io/"
DELETION_COST_ANNOTATION = "controller.kubernetes.io/pod-deletion-cost"

POD_READY = "Ready"
IN_PLACE_UPDATE_READY = "InPlaceUpdateReady"
KRUISE_POD_READY = "KruisePodReady"

PHASE_PENDING = "Pending"
PHASE_RUNNING = "Running"
PHASE_UNKNOWN = "Unknown"
PHASE_SUCCEEDED = "Succeeded"
PHASE_FAILED = "Failed"


class LifecycleState(StrEnum):
    """Values of the ``lifecycle.apps.kruise.io/state`` pod label (``apps/pub/lifecycle.go``)."""

    PREPARING_NORMAL = "PreparingNormal"
    NORMAL = "Normal"
    PREPARING_UPDATE = "PreparingUpdate"
    UPDATING = "Updating"
    UPDATED = "Updated"
    PREPARING_DELETE = "PreparingDelete"


def phase(pod: KubeObject) -> str:
    """``status.phase`` ("" when absent)."""
    return str(status(pod).get("phase") or "")


def node_name(pod: KubeObject) -> str:
    """``spec.nodeName`` ("" for an unscheduled pod)."""
    return str(spec(pod).get("nodeName") or "")


def is_active(pod: KubeObject) -> bool:
    """Not Succeeded, not Failed, not being deleted (``kubecontroller.IsPodActive``)."""
    return phase(pod) not in (PHASE_SUCCEEDED, PHASE_FAILED) and not is_being_deleted(pod)


def is_running(pod: KubeObject) -> bool:
    """Phase is ``Running``."""
    return phase(pod) == PHASE_RUNNING


def get_condition(pod: KubeObject, condition_type: str) -> dict[str, Any] | None:
    """The pod condition of ``condition_type`` or ``None``."""
    for condition in sequence(status(pod).get("conditions")):
        if isinstance(condition, dict) and condition.get("type") == condition_type:
            return condition
    return None


def is_ready(pod: KubeObject) -> bool:
    """The ``Ready`` condition is ``True`` (``podutil.IsPodReady``; phase is not checked)."""
    condition = get_condition(pod, POD_READY)
    return condition is not None and condition.get("status") == "True"


def ready_time(pod: KubeObject) -> datetime | None:
    """``lastTransitionTime`` of a True ``Ready`` condition; ``None`` when not ready or unset."""
    if not is_ready(pod):
        return None
    condition = get_condition(pod, POD_READY) or {}
    return parse_time(condition.get("lastTransitionTime"))


def is_available(pod: KubeObject, min_ready_seconds: int, now: datetime) -> bool:
    """Ready for more than ``min_ready_seconds`` at ``now`` (``podutil.IsPodAvailable``).

    With ``min_ready_seconds == 0`` readiness suffices; otherwise the Ready condition's
    ``lastTransitionTime + min_ready_seconds`` must be strictly before ``now`` (a missing
    transition time means not available).
    """
    if not is_ready(pod):
        return False
    if min_ready_seconds <= 0:
        return True
    since = ready_time(pod)
    return since is not None and since + timedelta(seconds=min_ready_seconds) < as_utc(now)


def in_place_update_ready_ok(pod: KubeObject) -> bool:
    """False only when an ``InPlaceUpdateReady`` condition exists and is not ``True``."""
    condition = get_condition(pod, IN_PLACE_UPDATE_READY)
    return condition is None or condition.get("status") == "True"


def lifecycle_state(pod: KubeObject) -> str:
    """The lifecycle state label ("" when absent), see :class:`LifecycleState`."""
    return str(labels(pod).get(LIFECYCLE_STATE_LABEL) or "")


def is_specified_delete(pod: KubeObject) -> bool:
    """The pod carries the ``apps.kruise.io/specified-delete`` label, any value."""
    return SPECIFIED_DELETE_LABEL in labels(pod)


def revision_hash(pod: KubeObject) -> str:
    """The ``controller-revision-hash`` label ("" when absent)."""
    return str(labels(pod).get(REVISION_HASH_LABEL) or "")


def short_hash(revision: str) -> str:
    """The last ``-`` segment of a revision name (``clonesetutils.GetShortHash``)."""
    return revision.split("-")[-1]


def equal_to_revision_hash(pod: KubeObject, revision: str) -> bool:
    """The pod's revision label names ``revision``, in full or short form (``EqualToRevisionHash``)."""
    own = revision_hash(pod)
    return own == revision or short_hash(own) == short_hash(revision)


def is_pod_update(pod: KubeObject, update_revision: str, *, preparing_update_as_update: bool = False) -> bool:
    """Counts as updated for scaling (``revision.IsPodUpdate``).

    With feature gate ``PreparingUpdateAsUpdate`` (``preparing_update_as_update``) a pod in
    ``PreparingUpdate`` also counts as updated.
    """
    if preparing_update_as_update and lifecycle_state(pod) == LifecycleState.PREPARING_UPDATE:
        return True
    return equal_to_revision_hash(pod, update_revision)


def has_unavailable_label(pod: KubeObject) -> bool:
    """Any label key starts with ``unavailable-pod.kruise.io/`` (``pub.HasUnavailableLabel``).

    PodUnavailableBudget treats such pods as unavailable; the CloneSet counters do not consult it
    in v1.8.
    """
    return any(key.startswith(UNAVAILABLE_LABEL_PREFIX) for key in labels(pod))


_DELETION_COST = re.compile(r"-?[0-9]+|0")


def deletion_cost(pod: KubeObject) -> int:
    """``controller.kubernetes.io/pod-deletion-cost`` as an int32; 0 when absent or invalid.

    Like upstream, a leading ``+`` or leading zeros (``"+10"``, ``"008"``) are invalid.
    """
    value = annotations_of(pod).get(DELETION_COST_ANNOTATION)
    if not isinstance(value, str) or not value:
        return 0
    if not (value[0] == "-" or value == "0" or "1" <= value[0] <= "9"):
        return 0
    if not _DELETION_COST.fullmatch(value):
        return 0
    number = int(value)
    return number if -(2**31) <= number < 2**31 else 0


def max_container_restarts(pod: KubeObject) -> int:
    """The highest ``restartCount`` among ``status.containerStatuses`` (0 when none)."""
    counts = [
        int(mapping(c).get("restartCount") or 0) for c in sequence(status(pod).get("containerStatuses"))
    ]
    return max([0, *counts])


def container_status(pod: KubeObject, container: str) -> dict[str, Any] | None:
    """The ``status.containerStatuses`` entry for ``container`` or ``None``."""
    for entry in sequence(status(pod).get("containerStatuses")):
        if isinstance(entry, dict) and entry.get("name") == container:
            return entry
    return None


# --- kubecontroller.ActivePods ordering ------------------------------------------------------

_PHASE_ORDINAL = {PHASE_PENDING: 0, PHASE_UNKNOWN: 1, PHASE_RUNNING: 2}


def _after_or_zero(t1: datetime | None, t2: datetime | None) -> bool:
    """Go ``afterOrZero``: a zero time counts as after any non-zero time."""
    if t1 is None or t2 is None:
        return t1 is None
    return t1 > t2


def _cmp(first: bool) -> int:
    return -1 if first else 1


def compare_pods_head(a: KubeObject, b: KubeObject) -> int:
    """First keys of ``ActivePods.Less``: unassigned < assigned, Pending < Unknown < Running
    (``cmp``-style: negative when ``a`` comes first, 0 when these keys tie)."""
    na, nb = node_name(a), node_name(b)
    if na != nb and (not na or not nb):
        return _cmp(not na)
    pa, pb = _PHASE_ORDINAL.get(phase(a), 0), _PHASE_ORDINAL.get(phase(b), 0)
    if pa != pb:
        return _cmp(pa < pb)
    return 0


def compare_pods_tail(a: KubeObject, b: KubeObject) -> int:
    """Last keys of ``ActivePods.Less``: shorter ready time, more restarts, newer creation first
    (a missing timestamp counts as newest)."""
    if is_ready(a) and is_ready(b):
        ra, rb = ready_time(a), ready_time(b)
        if ra != rb:
            return _cmp(_after_or_zero(ra, rb))
    restarts_a, restarts_b = max_container_restarts(a), max_container_restarts(b)
    if restarts_a != restarts_b:
        return _cmp(restarts_a > restarts_b)
    ca, cb = creation_time(a), creation_time(b)
    if ca != cb:
        return _cmp(_after_or_zero(ca, cb))
    return 0


def compare_active_pods(a: KubeObject, b: KubeObject) -> int:
    """``cmp``-style comparison of ``kubecontroller.ActivePods.Less`` (negative: ``a`` first):
    :func:`compare_pods_head`, then not ready < ready, then :func:`compare_pods_tail`."""
    head = compare_pods_head(a, b)
    if head:
        return head
    if is_ready(a) != is_ready(b):
        return _cmp(not is_ready(a))
    return compare_pods_tail(a, b)


@dataclass(frozen=True)
class PodScheduling:
    """Whether a pod is stuck unscheduled: the facts the Adaptive strategies of UnitedDeployment and
    WorkloadSpread read.

    Attributes:
        created: ``metadata.creationTimestamp`` (``None`` reads as the zero time).
        pending: ``status.phase`` is Pending.
        bound: ``spec.nodeName`` is set.
        deleting: ``metadata.deletionTimestamp`` is set.
        unschedulable: it carries ``PodScheduled=False`` with reason ``Unschedulable``.
    """

    created: datetime | None
    pending: bool = True
    bound: bool = False
    deleting: bool = False
    unschedulable: bool = True

    @classmethod
    def of(cls, pod: KubeObject) -> PodScheduling:
        """Read these facts from a pod as the API server returns it."""
        scheduled = get_condition(pod, "PodScheduled") or {}
        return cls(
            created=creation_time(pod),
            pending=phase(pod) == "Pending",
            bound=node_name(pod) != "",
            deleting=is_being_deleted(pod),
            unschedulable=scheduled.get("status") == "False" and scheduled.get("reason") == "Unschedulable",
        )

    def pending_timeout(self, timeout: timedelta, now: datetime) -> tuple[bool, timedelta | None]:
        """Upstream ``GetTimeBeforePendingTimeout``: ``(timed out, check again after)``.

        Only an unbound, not deleting, Pending pod that failed to schedule can time out, once
        ``created + timeout`` is strictly before ``now``; before that the wait is returned.
        """
        if self.deleting or not self.pending or self.bound or not self.unschedulable:
            return False, None
        deadline = as_utc(self.created or datetime.min) + timeout
        if deadline < now:
            return True, None
        return False, deadline - now
