"""Kubernetes Events for state transitions (DESIGN §3: one Event and one log line each).

Events are best effort, as client-go's recorder: a failure to post one is logged
and never fails the reconcile. Reasons are constants defined next to each
controller (e.g. ``SuccessfulCreate``), matching upstream's.
"""

from __future__ import annotations

import asyncio
import datetime
import logging
import uuid
from collections.abc import Mapping
from typing import Any

from kruise.core.errors import KruiseError
from kruise.core.kube.client import KubeClient
from kruise.core.kube.resources import EVENTS

log = logging.getLogger(__name__)
NORMAL = "Normal"
WARNING = "Warning"


class EventRecorder:
    """Posts core/v1 Events on behalf of ``component`` (e.g. ``cloneset-controller``)."""

    def __init__(self, kube: KubeClient, component: str) -> None:
        self.kube = kube
        self.component = component
        self._tasks: set[asyncio.Task[None]] = set()

    def event(self, obj: Mapping[str, Any], type_: str, reason: str, message: str) -> None:
        """Record an event on ``obj`` in the background and log it bound to the object
        (at WARNING for a ``Warning`` event, else INFO)."""
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
        task = asyncio.get_running_loop().create_task(self._post(obj, type_, reason, message))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _post(self, obj: Mapping[str, Any], type_: str, reason: str, message: str) -> None:
        meta = obj.get("metadata") or {}
        now = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        namespace = meta.get("namespace") or "default"
        body = {
            "apiVersion": "v1",
            "kind": "Event",
            "metadata": {"name": f"{meta.get('name')}.{uuid.uuid4().hex[:16]}", "namespace": namespace},
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
        try:
            await self.kube.create(EVENTS, body, namespace)
        except KruiseError as err:
            log.debug("could not post event %s on %s: %s", reason, meta.get("name"), err)

    async def flush(self) -> None:
        """Wait for events still being posted (tests, shutdown)."""
        if self._tasks:
            await asyncio.gather(*self._tasks, return_exceptions=True)
