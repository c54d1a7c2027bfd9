"""Kubernetes Events for state transitions (DESIGN §3: one Event and one log line each).

Two ways to post, by what the event reports:

- :meth:`EventRecorder.event`, for what an action did (``SuccessfulCreate`` of a pod, a
  ``FailedCreate``): best effort, in the background, as client-go's recorder; a failure to post is
  logged at DEBUG and never fails the reconcile.
- :meth:`EventRecorder.transition`, for a state transition recorded in ``status``: posted and
  awaited **before** the status write that records the transition, under a name derived from the
  transition (the object's uid, the status it leaves, reason and message). A manager that dies
  between the event and the status write decides the same transition again from the unchanged
  status after its restart and posts the same name: the API server answers AlreadyExists, so the
  transition has exactly one Event. One that dies before the event has written neither. If the
  event cannot be posted for a transient reason, the caller leaves the status unwritten and
  decides again, so a recorded transition never lacks its event.

Background events pass through client-go's event correlation (:mod:`kruise.core.eventcorrelator`),
as upstream's recorder does: the tenth and later distinct messages of one object, type and reason
within ten minutes share one ``(combined from similar events): ...`` Event; a repeated event PATCHes
the ``count`` and ``lastTimestamp`` of the Event it repeats; each source + object + type may write
25 events at once, then one per five minutes, and the rest are dropped (their log line is not).
Writes to one Event go out in order.

Transitions are not correlated: their exactly-once contract needs their own Event, posted before the
status write, so the spam filter never drops one. Each posted transition does take a token from its
object's bucket when one is left, as every event does in client-go (whose recorder has a single
path), so an object's background events share the write budget upstream gives it.

Reasons are constants defined next to each controller (e.g. ``SuccessfulCreate``), matching
upstream's.
"""

from __future__ import annotations

import asyncio
import datetime
import functools
import hashlib
import json
import logging
import time
import uuid
from collections.abc import Mapping
from typing import Any

from kruise.core import failpoints
from kruise.core.errors import AlreadyExistsError, KruiseError, NotFoundError, TransientError
from kruise.core.eventcorrelator import Create, Drop, EventCorrelator, Occurrence, Patch
from kruise.core.kube.client import KubeClient
from kruise.core.kube.resources import EVENTS

log = logging.getLogger(__name__)
JSON = dict[str, Any]
NORMAL = "Normal"
WARNING = "Warning"


class EventRecorder:
    """Posts core/v1 Events on behalf of ``component`` (e.g. ``cloneset-controller``)."""

    POSTS_IN_FLIGHT = 4
    """Background writes (POST or PATCH) sent at once: client-go's broadcaster writes events one by
    one; a burst (an event per pod of a 500-pod scale-up) must not take the connections the pod
    writes need."""

    def __init__(self, kube: KubeClient, component: str, correlator: EventCorrelator | None = None) -> None:
        self.kube = kube
        self.component = component
        self.correlator = correlator or EventCorrelator()
        self._tasks: set[asyncio.Task[None]] = set()
        self._writing: dict[str, asyncio.Task[None]] = {}  # the latest write of each Event name
        self._slots = asyncio.Semaphore(self.POSTS_IN_FLIGHT)

    def event(self, obj: Mapping[str, Any], type_: str, reason: str, message: str) -> None:
        """Record an event on ``obj`` in the background and log it bound to the object
        (at WARNING for a ``Warning`` event, else INFO). The write is the correlator's decision:
        a new Event, a PATCH of the one it repeats or aggregates into, or nothing."""
        self._log(obj, type_, reason, message)
        fresh = f"{_object_name(obj)}.{uuid.uuid4().hex[:16]}"
        decision = self.correlator.correlate(self._occurrence(obj, type_, reason, message), fresh)
        if isinstance(decision, Drop):
            log.debug("event %s on %s dropped by the spam filter", reason, _object_name(obj))
            return
        previous = self._writing.get(decision.name)
        task = asyncio.get_running_loop().create_task(
            self._write_later(obj, type_, reason, decision, previous)
        )
        self._writing[decision.name] = task
        self._tasks.add(task)
        task.add_done_callback(functools.partial(self._written, decision.name))

    def _written(self, name: str, task: asyncio.Task[None]) -> None:
        self._tasks.discard(task)
        if self._writing.get(name) is task:
            del self._writing[name]

    async def _write_later(
        self,
        obj: Mapping[str, Any],
        type_: str,
        reason: str,
        decision: Create | Patch,
        previous: asyncio.Task[None] | None,
    ) -> None:
        if previous is not None:  # a PATCH must not overtake the create of its Event
            await asyncio.wait([previous])
        async with self._slots:
            await self._write(obj, type_, reason, decision)

    async def _write(self, obj: Mapping[str, Any], type_: str, reason: str, decision: Create | Patch) -> None:
        namespace = _namespace(obj)
        try:
            if isinstance(decision, Patch):
                change = {
                    "count": decision.count,
                    "lastTimestamp": _time(decision.last_timestamp),
                    "message": decision.message,
                }
                try:
                    await self.kube.patch(EVENTS, decision.name, change, namespace)
                    return
                except NotFoundError:  # expired or never created: create it (client-go does the same)
                    decision = decision.as_create()
            body = self._body(obj, type_, reason, decision.message, decision.name)
            body.update(
                count=decision.count,
                firstTimestamp=_time(decision.first_timestamp),
                lastTimestamp=_time(decision.last_timestamp),
            )
            await self.kube.create(EVENTS, body, namespace)
        except KruiseError as err:
            log.debug("could not write event %s on %s: %s", reason, _object_name(obj), err)

    async def transition(
        self, obj: Mapping[str, Any], type_: str, reason: str, message: str, *, leaving: Any
    ) -> bool:
        """Post the Event of a transition out of state ``leaving`` (the status before it), now.

        Call it before writing the status that records the transition, and write only on True.
        Returns False when the API server could not be reached (a transient error): decide again
        later. An event already posted for this very transition (same object, ``leaving``,
        reason and message) counts as posted and is not logged twice; a permanent refusal (RBAC,
        a terminating namespace) is logged and does not hold the transition back.
        """
        meta = obj.get("metadata") or {}
        identity = json.dumps([meta.get("uid"), leaving, reason, message], sort_keys=True, default=str)
        name = f"{_object_name(obj)}.{hashlib.sha256(identity.encode()).hexdigest()[:16]}"
        try:
            await self.kube.create(EVENTS, self._body(obj, type_, reason, message, name), _namespace(obj))
        except AlreadyExistsError:
            log.debug("event %s (%s) was already posted", name, reason)
            return True
        except TransientError as err:
            log.warning("could not post event %s on %s, will retry: %s", reason, meta.get("name"), err)
            return False
        except KruiseError as err:
            log.warning("could not post event %s on %s: %s", reason, meta.get("name"), err)
        else:
            self.correlator.spend(self._occurrence(obj, type_, reason, message))
        self._log(obj, type_, reason, message)
        failpoints.hit(failpoints.AFTER_TRANSITION_EVENT, reason)
        return True

    def _log(self, obj: Mapping[str, Any], type_: str, reason: str, message: str) -> None:
        meta = obj.get("metadata") or {}
        log.log(
            logging.WARNING if type_ == WARNING else logging.INFO,
            "%s %s/%s %s: %s",
            obj.get("kind"),
            meta.get("namespace"),
            meta.get("name"),
            reason,
            message,
            extra={"object": f"{meta.get('namespace')}/{meta.get('name')}", "reason": reason},
        )

    def _occurrence(self, obj: Mapping[str, Any], type_: str, reason: str, message: str) -> Occurrence:
        meta = obj.get("metadata") or {}
        return Occurrence(
            component=self.component,
            kind=str(obj.get("kind") or ""),
            namespace=str(meta.get("namespace") or ""),
            name=str(meta.get("name") or ""),
            uid=str(meta.get("uid") or ""),
            api_version=str(obj.get("apiVersion") or ""),
            type=type_,
            reason=reason,
            message=message,
        )

    def _body(self, obj: Mapping[str, Any], type_: str, reason: str, message: str, name: str) -> JSON:
        meta = obj.get("metadata") or {}
        now = _time(time.time())
        return {
            "apiVersion": "v1",
            "kind": "Event",
            "metadata": {"name": name, "namespace": _namespace(obj)},
            "involvedObject": {
                "apiVersion": obj.get("apiVersion"),
                "kind": obj.get("kind"),
                "name": meta.get("name"),
                "namespace": meta.get("namespace"),
                "uid": meta.get("uid"),
                "resourceVersion": meta.get("resourceVersion"),
            },
            "reason": reason,
            "message": message,
            "type": type_,
            "source": {"component": self.component},
            "reportingComponent": self.component,
            "firstTimestamp": now,
            "lastTimestamp": now,
            "count": 1,
        }

    async def flush(self) -> None:
        """Wait for events still being posted (tests, shutdown)."""
        if self._tasks:
            await asyncio.gather(*self._tasks, return_exceptions=True)


def _time(seconds: float) -> str:
    """An Event timestamp (RFC 3339, whole seconds, UTC) of ``seconds`` since the epoch."""
    return datetime.datetime.fromtimestamp(seconds, datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _namespace(obj: Mapping[str, Any]) -> str:
    return str((obj.get("metadata") or {}).get("namespace") or "default")


def _object_name(obj: Mapping[str, Any]) -> str:
    """The object's name as an event name prefix (cut so ``<prefix>.<16 hex>`` fits 253)."""
    return str((obj.get("metadata") or {}).get("name"))[:236]
