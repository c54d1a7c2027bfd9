"""The budget arithmetic of a PodUnavailableBudget (pure): upstream's ``pubcontrol`` and the
status half of its controller (``pkg/controller/podunavailablebudget``, v1.8).

- A pod is **available** when it is Running, Ready, not being deleted, carries no
  ``unavailable-pod.kruise.io/*`` label (:func:`is_pod_ready`) and its containers run what its
  spec asks (:func:`is_pod_state_consistent`: no in-place update or sidecar upgrade under way).
- ``desiredAvailable`` (:func:`desired_available`): with ``maxUnavailable``,
  ``expected - ceil-scaled(maxUnavailable)`` (never below 0); with ``minAvailable``, the int, or
  the percentage of ``expected`` rounded **up**.
- ``disruptedPods`` (deleted/evicted through the webhook) and ``unavailablePods`` (updated in
  place through it) count as unavailable until they expire: a disrupted entry after
  :data:`DELETION_TIMEOUT` (the pod "was expected to be deleted but it wasn't"), an unavailable
  one after :data:`UPDATED_DELAY_CHECK` (informer latency); an entry whose pod is gone or no longer
  active is dropped at once (:func:`prune_records`).
- ``unavailableAllowed = max(0, currentAvailable - desiredAvailable)`` (:func:`decide_status`).
- The webhook spends one unit per admitted disruption (:func:`spend`), refusing with upstream's
  messages when none is left or too many pods are recorded.

Time enters only through ``now``; status maps hold RFC 3339 second-resolution times, as
``metav1.Time`` serialises them.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from enum import StrEnum

from kruise.core.api.base import scaled_value_from_int_or_percent
from kruise.workloads.api.podunavailablebudget import (
    NO_PROTECT_ANNOTATION,
    PROTECT_OPERATIONS_ANNOTATION,
    PubSpecView,
    PubStatusView,
)
from kruise.workloads.inplace.state import check_in_place_update_completed
from kruise.workloads.objects import (
    KubeObject,
    annotations_of,
    format_time,
    is_being_deleted,
    mapping,
    name,
    parse_time,
    sequence,
    spec,
    status,
)
from kruise.workloads.pods import has_unavailable_label, is_active, is_ready, is_running
from kruise.workloads.sidecarset.keys import INJECTED_ENV, INJECTED_LIST_ANNOTATION
from kruise.workloads.sidecarset.podstate import sidecar_update_completed

__all__ = [
    "DELETION_TIMEOUT",
    "MAX_RECORDED_PODS",
    "UPDATED_DELAY_CHECK",
    "BudgetRefused",
    "Operation",
    "Records",
    "count_available",
    "decide_status",
    "desired_available",
    "exempt",
    "is_pod_available",
    "is_pod_ready",
    "is_pod_state_consistent",
    "is_protected",
    "prune_records",
    "recorded",
    "spend",
]

DELETION_TIMEOUT = timedelta(seconds=20)
"""A disrupted pod still present this long after the webhook admitted it is counted again."""
UPDATED_DELAY_CHECK = timedelta(seconds=10)
"""An in-place-updated pod is judged by its own state again this long after the webhook admitted it."""
MAX_RECORDED_PODS = 2000
"""``MaxUnavailablePodSize``: more disrupted + unavailable entries than this refuses disruptions."""

EXHAUSTED_MESSAGE = "pub unavailable allowed is negative"
TOO_MANY_MESSAGE = (
    "DisruptedPods and UnavailablePods map too big - too many unavailable not confirmed by PUB controller"
)


class Operation(StrEnum):
    """A disruption the pod webhook guards (``PubOperation``)."""

    DELETE = "DELETE"
    UPDATE = "UPDATE"
    EVICT = "EVICT"


# --------------------------------------------------------------------------- pod predicates


def is_pod_ready(pod: KubeObject) -> bool:
    """``pubcontrol.IsPodReady``: Running, Ready, not being deleted, and no
    ``unavailable-pod.kruise.io/*`` label."""
    return is_running(pod) and is_ready(pod) and not is_being_deleted(pod) and not has_unavailable_label(pod)


def _is_digest(image: str) -> bool:
    return "@sha256:" in image or "@sha512:" in image


def _digest_consistent(pod: KubeObject, container: str, image: str) -> bool:
    """``IsPodContainerDigestEqual``: the container's ``imageID`` ends with the spec's digest."""
    digest = image.rsplit("@", 1)[1]
    for entry in sequence(status(pod).get("containerStatuses")):
        cs = mapping(entry)
        if cs.get("name") == container:
            image_id = str(cs.get("imageID") or "")
            return image_id.endswith("@" + digest)
    return False


def is_pod_state_consistent(pod: KubeObject) -> bool:
    """``pubcontrol.IsPodStateConsistent``: the containers run what the spec asks.

    Containers with digest images must report that digest; if every image is a digest that
    decides. Otherwise injected sidecars must have finished their SidecarSet upgrade and the
    pod's in-place update (if any) must be complete (``DefaultCheckInPlaceUpdateCompleted``).
    """
    all_digest = True
    sidecars: set[str] = set()
    for entry in sequence(spec(pod).get("containers")):
        container = mapping(entry)
        cname, image = str(container.get("name") or ""), str(container.get("image") or "")
        if any(
            mapping(e).get("name") == INJECTED_ENV and mapping(e).get("value") == "true"
            for e in sequence(container.get("env"))
        ):
            sidecars.add(cname)
        if not _is_digest(image):
            all_digest = False
        elif not _digest_consistent(pod, cname, image):
            return False
    if all_digest:
        return True
    text = annotations_of(pod).get(INJECTED_LIST_ANNOTATION)
    sidecarsets = {n for n in text.split(",") if n} if isinstance(text, str) else set()
    if sidecarsets and sidecars and not sidecar_update_completed(pod, sidecarsets, sidecars):
        return False
    return check_in_place_update_completed(pod)


def is_pod_available(pod: KubeObject) -> bool:
    """Counted in ``currentAvailable`` (unless recorded): ready and consistent."""
    return is_pod_ready(pod) and is_pod_state_consistent(pod)


# --------------------------------------------------------------------------- status


def desired_available(budget: PubSpecView, expected: int) -> int:
    """``getDesiredAvailableForPub``: pods that must stay available out of ``expected``.

    ``maxUnavailable`` wins when both are set. Percentages scale against ``expected`` rounding up
    (so ``maxUnavailable: 25%`` of 10 allows 3, ``minAvailable: 25%`` of 10 keeps 3). Neither
    set gives 0 (everything allowed).

    Raises:
        IntOrPercentError: a budget string that is not ``"<digits>%"``.
    """
    if budget.get("maxUnavailable") is not None:
        unavailable = scaled_value_from_int_or_percent(budget.get("maxUnavailable"), expected, True)
        return max(0, expected - unavailable)
    minimum = budget.get("minAvailable")
    if minimum is None:
        return 0
    return scaled_value_from_int_or_percent(minimum, expected, True)


@dataclass(frozen=True)
class Records:
    """``status.disruptedPods``/``unavailablePods`` after expiry (name -> RFC 3339 time).

    ``recheck_at`` is the earliest moment an entry kept will expire (requeue then); ``not_deleted``
    names disrupted pods that outlived :data:`DELETION_TIMEOUT` (upstream's ``NotDeleted`` event).
    """

    disrupted: dict[str, str] = field(default_factory=dict)
    unavailable: dict[str, str] = field(default_factory=dict)
    recheck_at: datetime | None = None
    not_deleted: tuple[str, ...] = ()


def prune_records(pods: Iterable[KubeObject], current: PubStatusView, now: datetime) -> Records:
    """``buildDisruptedAndUnavailablePods``: keep the entries of active pods not yet expired."""
    disrupted_in = current.get("disruptedPods") or {}
    unavailable_in = current.get("unavailablePods") or {}
    disrupted: dict[str, str] = {}
    unavailable: dict[str, str] = {}
    not_deleted: list[str] = []
    recheck: datetime | None = None
    if not disrupted_in and not unavailable_in:
        return Records()
    for pod in pods:
        if not is_active(pod):
            continue
        pod_name = name(pod)
        for source, sink, ttl in (
            (disrupted_in, disrupted, DELETION_TIMEOUT),
            (unavailable_in, unavailable, UPDATED_DELAY_CHECK),
        ):
            raw = source.get(pod_name)
            if raw is None:
                continue
            at = parse_time(raw)
            deadline = (at or now) + ttl
            if deadline < now:
                if source is disrupted_in:
                    not_deleted.append(pod_name)
                continue
            sink[pod_name] = raw
            recheck = deadline if recheck is None or deadline < recheck else recheck
    return Records(disrupted, unavailable, recheck, tuple(not_deleted))


def count_available(pods: Iterable[KubeObject], records: Records) -> int:
    """``countAvailablePods``: active, available pods not recorded as disrupted or unavailable."""
    recorded = records.disrupted.keys() | records.unavailable.keys()
    return sum(1 for p in pods if is_active(p) and name(p) not in recorded and is_pod_available(p))


def decide_status(
    budget: PubSpecView,
    generation: int,
    pods: Sequence[KubeObject],
    expected: int,
    current: PubStatusView,
    now: datetime,
) -> tuple[PubStatusView, Records]:
    """The status the controller writes (``syncPodUnavailableBudget``), and the records kept.

    ``pods`` are the budget's pods, ``expected`` its total replicas, ``current`` the status read.

    Raises:
        IntOrPercentError: a malformed budget (upstream's ``CalculateExpectedPodCountFailed``).
    """
    desired = desired_available(budget, expected)
    records = prune_records(pods, current, now)
    available = count_available(pods, records)
    new: PubStatusView = {
        "observedGeneration": generation,
        "unavailableAllowed": max(0, available - desired),
        "currentAvailable": available,
        "desiredAvailable": desired,
        "totalReplicas": expected,
    }
    if records.disrupted:
        new["disruptedPods"] = records.disrupted
    if records.unavailable:
        new["unavailablePods"] = records.unavailable
    return new, records


# --------------------------------------------------------------------------- webhook side


class BudgetRefused(Exception):
    """The budget cannot take one more disruption; ``str()`` is upstream's reason."""


def is_protected(pub_annotations: Mapping[str, str], operation: Operation) -> bool:
    """``isNeedPubProtection``: every operation unless ``kruise.io/pub-protect-operations`` lists
    some (comma-separated, exact names)."""
    listed = pub_annotations.get(PROTECT_OPERATIONS_ANNOTATION)
    if not listed:
        return True
    return operation.value in listed.split(",")


def exempt(pod: KubeObject) -> bool:
    """A pod the budget never guards: ``pub.kruise.io/no-protect: "true"``, or one not available
    now (not ready, terminating, or mid-update), which cannot lose availability."""
    if annotations_of(pod).get(NO_PROTECT_ANNOTATION) == "true":
        return True
    return not is_pod_available(pod)


def spend(current: PubStatusView, pod_name: str, operation: Operation, now: datetime) -> PubStatusView:
    """``checkAndDecrement``: the status with one unit spent on ``pod_name`` (recorded under
    ``unavailablePods`` for an UPDATE, else ``disruptedPods``, at ``now``).

    Raises:
        BudgetRefused: ``unavailableAllowed`` is not positive (``"pub unavailable allowed is
            negative"``), or more than :data:`MAX_RECORDED_PODS` pods are recorded.
    """
    if int(current.get("unavailableAllowed") or 0) <= 0:
        raise BudgetRefused(EXHAUSTED_MESSAGE)
    disrupted = dict(current.get("disruptedPods") or {})
    unavailable = dict(current.get("unavailablePods") or {})
    if len(disrupted) + len(unavailable) > MAX_RECORDED_PODS:
        raise BudgetRefused(TOO_MANY_MESSAGE)
    (unavailable if operation is Operation.UPDATE else disrupted)[pod_name] = format_time(now)
    out: PubStatusView = {**current, "unavailableAllowed": int(current.get("unavailableAllowed") or 0) - 1}
    for key, entries in (("disruptedPods", disrupted), ("unavailablePods", unavailable)):
        if entries:
            out[key] = entries  # type: ignore[literal-required]
    return out


def recorded(current: PubStatusView, pod_name: str) -> bool:
    """``isPodRecordedInPub``: already spent for (nothing more to take)."""
    return pod_name in (current.get("disruptedPods") or {}) or pod_name in (
        current.get("unavailablePods") or {}
    )
