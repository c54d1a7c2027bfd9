"""The CloneSet status a reconcile writes (pure), as ``cloneset_status.go``.

- ``replicas``: active owned pods; ``readyReplicas``: Running, Ready and
  ``InPlaceUpdateReady`` not False; ``availableReplicas``: additionally lifecycle
  ``""``/``Normal`` and available for ``minReadySeconds``;
- ``updated*``: the same counts among pods at ``updateRevision``;
- ``expectedUpdatedReplicas = replicas - partition`` (calculated);
- ``currentRevision`` becomes ``updateRevision`` once
  ``updatedReplicas == status.replicas == spec.replicas`` (readiness not needed);
- ``labelSelector``: the selector in ``metav1.FormatLabelSelector`` form;
- written only when one of those (or ``observedGeneration``) changed, with this round's
  ``FailedScale`` / ``FailedUpdate`` conditions (:func:`status_to_write`);
- shaped as upstream serialises it: the ``omitempty`` fields (:data:`OMIT_EMPTY`) are left out
  when zero or empty (Argo CD's CloneSet health script tells a CloneSet scaled to 0 by the
  absence of ``updatedAvailableReplicas``), the others always written;
- plus the additive kstatus conditions ``Ready``/``Reconciling``/``Stalled``
  (:mod:`kruise.workloads.cloneset.readiness`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime, timedelta
from typing import Any

from kruise.core.kstatus import KSTATUS_TYPES, Health, kstatus_changed, with_kstatus
from kruise.workloads.cloneset.arith import strategy_numbers
from kruise.workloads.cloneset.podstate import (
    is_cloneset_available,
    is_pod_update_ready,
)
from kruise.workloads.objects import (
    KubeObject,
    as_utc,
    format_time,
    mapping,
    metadata,
    sequence,
    spec,
)
from kruise.workloads.pods import (
    equal_to_revision_hash,
    ready_time,
)
from kruise.workloads.selector import format_label_selector

COUNTERS = (
    "replicas",
    "readyReplicas",
    "availableReplicas",
    "updatedReplicas",
    "updatedReadyReplicas",
    "updatedAvailableReplicas",
    "expectedUpdatedReplicas",
)


def calculate_status(
    cloneset: KubeObject,
    active_pods: Sequence[KubeObject],
    *,
    update_revision: str,
    current_revision: str,
    collision_count: int,
    now: datetime,
) -> dict[str, Any]:
    """The new ``status`` (conditions carried over from the old one)."""
    min_ready = int(spec(cloneset).get("minReadySeconds") or 0)
    numbers = strategy_numbers(cloneset)
    new: dict[str, Any] = {
        "observedGeneration": int(metadata(cloneset).get("generation") or 0),
        "replicas": len(active_pods),
        "readyReplicas": 0,
        "availableReplicas": 0,
        "updatedReplicas": 0,
        "updatedReadyReplicas": 0,
        "updatedAvailableReplicas": 0,
        "expectedUpdatedReplicas": max(numbers.replicas - numbers.partition, 0),
        "updateRevision": update_revision,
        "collisionCount": collision_count,
        "labelSelector": format_label_selector(mapping(spec(cloneset).get("selector"))),
    }
    for pod in active_pods:
        ready = is_pod_update_ready(pod, 0, now)
        available = is_cloneset_available(pod, min_ready, now)
        updated = equal_to_revision_hash(pod, update_revision)
        new["readyReplicas"] += ready
        new["availableReplicas"] += available
        if updated:
            new["updatedReplicas"] += 1
            new["updatedReadyReplicas"] += ready
            new["updatedAvailableReplicas"] += available
    if new["updatedReplicas"] == new["replicas"] == numbers.replicas:
        new["currentRevision"] = update_revision
    else:
        new["currentRevision"] = current_revision
    return new


#: The fields whose change makes upstream write the status (``inconsistentStatus``).
TRIGGERS = (*COUNTERS, "updateRevision", "currentRevision", "labelSelector")

#: ``CloneSetStatus`` fields tagged ``omitempty`` (``collisionCount`` is a pointer upstream sets
#: on every write, so it is always present; ``conditions`` is handled apart).
OMIT_EMPTY = (
    "observedGeneration",
    "expectedUpdatedReplicas",
    "updatedAvailableReplicas",
    "updateRevision",
    "currentRevision",
    "labelSelector",
)


def omit_empty(new: Mapping[str, Any]) -> dict[str, Any]:
    """``new`` without the :data:`OMIT_EMPTY` fields that are 0 or empty, as upstream's JSON."""
    return {k: v for k, v in new.items() if not (k in OMIT_EMPTY and v in (0, "", None))}


def status_to_write(
    old: Mapping[str, Any],
    new: Mapping[str, Any],
    errors: Mapping[str, str],
    now: datetime,
    health: Health | None = None,
) -> dict[str, Any] | None:
    """The status to write after a reconcile, or ``None`` (``UpdateCloneSetStatus``).

    Upstream writes only when ``observedGeneration`` grew or a counter, a revision or the
    selector changed, and then replaces the whole status: its ``conditions`` are exactly this
    round's failures, ``FailedScale`` / ``FailedUpdate`` (status True, message = the error).
    A failure alone does not cause a write. ``conditions`` is ``None`` when there is none, which
    removes old ones in a merge patch; so is every :data:`OMIT_EMPTY` field that is left out.

    ``health``: the kstatus conditions to carry as well (their change also writes the status;
    unchanged ones keep their ``lastTransitionTime``). The comparison is made on the shaped
    status, so a status once written compares equal to the next round's and nothing is
    rewritten until the world changes.
    """
    shaped = omit_empty(new)
    conditions: list[dict[str, Any]] = [
        {"type": kind, "status": "True", "lastTransitionTime": format_time(now), "message": errors[kind]}
        for kind in ("FailedScale", "FailedUpdate")
        if kind in errors
    ]
    old_conditions = [dict(c) for c in sequence(old.get("conditions")) if isinstance(c, Mapping)]
    if health is not None:
        kept = [c for c in old_conditions if c.get("type") in KSTATUS_TYPES]
        conditions = with_kstatus([*conditions, *kept], health, format_time(now))
    grew = int(new.get("observedGeneration") or 0) > int(old.get("observedGeneration") or 0)
    same = all(old.get(k) == shaped.get(k) for k in TRIGGERS)
    if not grew and same and not kstatus_changed(old_conditions, conditions):
        return None
    out: dict[str, Any] = {**shaped, "conditions": conditions or None}
    out.update({k: None for k in OMIT_EMPTY if k not in shaped})
    return out


def seconds_until_available(
    cloneset: KubeObject, active_pods: Sequence[KubeObject], now: datetime
) -> float | None:
    """When the next ready pod turns available by ``minReadySeconds``, in seconds from ``now``.

    Upstream requeues a full ``minReadySeconds`` after any reconcile that finds
    ``availableReplicas != readyReplicas``; this is the same wake-up, only aimed at the moment
    the earliest such pod crosses the threshold (its Ready ``lastTransitionTime`` plus
    ``minReadySeconds``, judged strictly as ``IsPodAvailable`` does), so a CloneSet paced by
    ``scaleStrategy.maxUnavailable`` creates the next pod as soon as upstream's check allows.
    ``None`` when no pod is waiting.
    """
    min_ready = int(spec(cloneset).get("minReadySeconds") or 0)
    if min_ready <= 0:
        return None
    waits = []
    for pod in active_pods:
        since = ready_time(pod)
        if since is None or not is_pod_update_ready(pod, 0, now) or is_pod_update_ready(pod, min_ready, now):
            continue
        waits.append((since + timedelta(seconds=min_ready) - as_utc(now)).total_seconds())
    if not waits:
        return None
    return max(min(waits), 0.0) + 0.05  # just past the threshold: availability is a strict ">"
