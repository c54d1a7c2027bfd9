"""The ContainerRecreateRequest manager controller's pure core: one reconcile's writes, in order.

Mirrors ``pkg/controller/containerrecreaterequest/crr_controller.go`` (v1.8.4). The daemon on
the pod's node does the recreating; the manager keeps the pod's side and the CRR's life:

1. A CRR being deleted or completed: give the pod its readiness back when this CRR took it
   (finalizer :data:`UNREADY_ACQUIRED_KEY` present: remove our ``KruisePodReady`` key, then the
   finalizer); stop there if it is being deleted; else remove the ``active`` label (one write per
   pass, upstream returns after it); else delete it ``ttlSecondsAfterFinished`` after
   ``completionTime`` (requeue until then).
2. The pod is gone (absent, deleting, or another UID than the ``pod-uid`` label): complete with
   ``pod has gone``.
3. No phase one minute (:data:`RESPONSE_TIMEOUT`) after creation: complete with ``daemon has not
   responded for a long time``.
4. ``activeDeadlineSeconds`` after creation: complete with ``recreating has exceeded the
   activeDeadlineSeconds``.
5. Only while ``Recreating``: write :data:`SYNC_CONTAINER_STATUSES_ANNOTATION` (the pod's
   running containers of the CRR that started at or after the CRR's creation: name, ready,
   restartCount, containerID; upstream's compact JSON) when it changed, then, with
   ``unreadyGracePeriodSeconds`` set and no ``unready-acquired`` annotation yet, take the pod's
   readiness: finalizer, our key, then the annotation (RFC 3339 now). Without the
   ``KruisePodReady`` gate only the annotation is written (the daemon waits on it all the same).

The requeue is the sooner of the response timeout and the deadline (each while pending).
Completion writes ``phase: Completed``, ``completionTime`` and ``message``.
"""

from __future__ import annotations

import datetime
import json
from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from kruise.core.api import format_time, parse_time
from kruise.daemon.api.containerrecreaterequest import (
    ACTIVE_LABEL,
    POD_UID_LABEL,
    SYNC_CONTAINER_STATUSES_ANNOTATION,
    UNREADY_ACQUIRED_KEY,
    ContainerRecreateRequestPhase,
)

__all__ = [
    "DAEMON_SILENT",
    "DEADLINE_EXCEEDED",
    "POD_GONE",
    "READINESS_USER_AGENT",
    "RESPONSE_TIMEOUT",
    "Action",
    "Decision",
    "Step",
    "decide",
    "readiness_key",
    "sync_container_statuses",
]

RESPONSE_TIMEOUT = 60.0
"""Seconds the daemon has to give a new CRR a phase (upstream ``responseTimeout``)."""
POD_GONE = "pod has gone"
DAEMON_SILENT = "daemon has not responded for a long time"
DEADLINE_EXCEEDED = "recreating has exceeded the activeDeadlineSeconds"
READINESS_USER_AGENT = "ContainerRecreateRequest"
"""``userAgent`` of the CRR's entry in the ``KruisePodReady`` message (key ``<namespace>/<name>``)."""


class Step(StrEnum):
    """One write of a reconcile."""

    RELEASE_NOT_READY = "ReleaseNotReady"
    """Remove our ``KruisePodReady`` key from the pod (when it has the gate and is not deleting),
    then the ``unready-acquired`` finalizer from the CRR."""
    REMOVE_ACTIVE_LABEL = "RemoveActiveLabel"
    DELETE = "Delete"
    COMPLETE = "Complete"
    """``value``: the message."""
    SYNC_STATUSES = "SyncStatuses"
    """``value``: the annotation's new JSON."""
    ADD_FINALIZER = "AddFinalizer"
    ADD_NOT_READY = "AddNotReady"
    MARK_UNREADY_ACQUIRED = "MarkUnreadyAcquired"
    """``value``: the RFC 3339 time to record."""


@dataclass(frozen=True)
class Action:
    step: Step
    value: str = ""


@dataclass(frozen=True)
class Decision:
    """``actions`` to run in order (stop at the first failure); ``requeue_after`` in seconds."""

    actions: tuple[Action, ...] = ()
    requeue_after: float | None = None


def _map(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def readiness_key(crr: Mapping[str, Any]) -> tuple[str, str]:
    """``(userAgent, key)`` of this CRR's not-ready entry: ``ContainerRecreateRequest``, ``ns/name``."""
    meta = _map(crr.get("metadata"))
    return READINESS_USER_AGENT, f"{meta.get('namespace')}/{meta.get('name')}"


def sync_container_statuses(crr: Mapping[str, Any], pod: Mapping[str, Any]) -> str:
    """The :data:`SYNC_CONTAINER_STATUSES_ANNOTATION` value for ``pod`` (``syncContainerStatuses``):
    the CRR's containers, in spec order, whose status is running and started no earlier than the
    CRR's creation."""
    created = parse_time(_map(crr.get("metadata")).get("creationTimestamp"))
    statuses = {_map(s).get("name"): _map(s) for s in _map(pod.get("status")).get("containerStatuses") or []}
    out: list[dict[str, Any]] = []
    for container in _map(crr.get("spec")).get("containers") or []:
        status = statuses.get(_map(container).get("name"))
        if status is None:
            continue
        running = _map(_map(status.get("state")).get("running"))
        started = parse_time(running.get("startedAt"))
        if not running or (started is not None and created is not None and started < created):
            continue
        entry: dict[str, Any] = {
            "name": status.get("name"),
            "ready": bool(status.get("ready")),
            "restartCount": int(status.get("restartCount") or 0),
        }
        if status.get("containerID"):
            entry["containerID"] = status["containerID"]
        out.append(entry)
    return json.dumps(out, separators=(",", ":"))


def _finished(crr: Mapping[str, Any], now: datetime.datetime, *, deleting: bool) -> Decision:
    meta = _map(crr.get("metadata"))
    release = (
        (Action(Step.RELEASE_NOT_READY),) if UNREADY_ACQUIRED_KEY in (meta.get("finalizers") or []) else ()
    )
    if deleting:
        return Decision(release)
    if ACTIVE_LABEL in _map(meta.get("labels")):
        return Decision((*release, Action(Step.REMOVE_ACTIVE_LABEL)))
    if release:
        return Decision(release)
    ttl = _map(crr.get("spec")).get("ttlSecondsAfterFinished")
    completed = parse_time(_map(crr.get("status")).get("completionTime"))
    if ttl is None or completed is None:
        return Decision()
    left = ttl - (now - completed).total_seconds()
    if left <= 0:
        return Decision((Action(Step.DELETE),))
    return Decision(requeue_after=left)


def decide(
    crr: Mapping[str, Any], pod: Mapping[str, Any] | None, now: datetime.datetime, *, gated: bool
) -> Decision:
    """One reconcile of ``crr`` (the stored object) given its ``pod`` (None when absent) at ``now``
    (aware). ``gated``: the pod has the ``KruisePodReady`` readiness gate. See the module docstring."""
    meta, spec, status = (_map(crr.get(k)) for k in ("metadata", "spec", "status"))
    deleting = bool(meta.get("deletionTimestamp"))
    if deleting or status.get("completionTime"):
        return _finished(crr, now, deleting=deleting)
    pod_meta = _map(_map(pod).get("metadata"))
    if (
        pod is None
        or pod_meta.get("deletionTimestamp")
        or pod_meta.get("uid") != _map(meta.get("labels")).get(POD_UID_LABEL)
    ):
        return Decision((Action(Step.COMPLETE, POD_GONE),))
    created = parse_time(meta.get("creationTimestamp")) or now
    age = (now - created).total_seconds()
    waits: list[float] = []
    if not status.get("phase"):
        left = RESPONSE_TIMEOUT - age
        if left <= 0:
            return Decision((Action(Step.COMPLETE, DAEMON_SILENT),))
        waits.append(left)
    deadline = spec.get("activeDeadlineSeconds")
    if deadline is not None:
        left = deadline - age
        if left <= 0:
            return Decision((Action(Step.COMPLETE, DEADLINE_EXCEEDED),))
        waits.append(left)
    requeue = min(waits) if waits else None
    if status.get("phase") != ContainerRecreateRequestPhase.RECREATING:
        return Decision(requeue_after=requeue)
    actions: list[Action] = []
    synced = sync_container_statuses(crr, pod)
    if _map(meta.get("annotations")).get(SYNC_CONTAINER_STATUSES_ANNOTATION) != synced:
        actions.append(Action(Step.SYNC_STATUSES, synced))
    strategy = _map(spec.get("strategy"))
    if strategy.get("unreadyGracePeriodSeconds") is not None and not _map(meta.get("annotations")).get(
        UNREADY_ACQUIRED_KEY
    ):
        if gated:
            if UNREADY_ACQUIRED_KEY not in (meta.get("finalizers") or []):
                actions.append(Action(Step.ADD_FINALIZER))
            actions.append(Action(Step.ADD_NOT_READY))
        actions.append(Action(Step.MARK_UNREADY_ACQUIRED, format_time(now)))
    return Decision(tuple(actions), requeue)
