"""The ContainerRecreateRequest manager controller (shell over :mod:`.decide`).

Observe: the CRR and its pod from the manager's informers. Decide: :func:`.decide.decide`.
Act: each write in order, against the latest ``resourceVersion`` (a conflict ends the pass and
the queue retries). Woken by CRR events and, as upstream's ``podEventHandler``, by a pod's
creation, deletion, start of deletion or container-status change, for its unfinished CRRs
(index :data:`POD_UID_INDEX` over the ``crr.apps.kruise.io/pod-uid`` label).

The ``KruisePodReady`` condition is written through a :class:`PodReadiness` port: the manager
passes the workloads' implementation (upstream ``pkg/util/podreadiness``), which this layer
cannot import.
"""

from __future__ import annotations

import datetime
import logging
from collections.abc import Callable, Mapping
from typing import Any, Protocol

from kruise.core.api import format_time
from kruise.core.errors import ConflictError, NotFoundError
from kruise.core.informer import Delta, EventType
from kruise.core.informer.store import JSON as StoreJSON
from kruise.core.informer.store import object_key
from kruise.core.kube.client import KubeClient
from kruise.core.kube.resources import CONTAINERRECREATEREQUESTS, PODS
from kruise.core.runtime import CacheReader, ControllerSpec, Watch, primary
from kruise.core.workqueue import Result
from kruise.daemon.api.containerrecreaterequest import (
    ACTIVE_LABEL,
    POD_UID_LABEL,
    SYNC_CONTAINER_STATUSES_ANNOTATION,
    UNREADY_ACQUIRED_KEY,
    ContainerRecreateRequestPhase,
)
from kruise.daemon.crr.decide import Action, Step, decide, readiness_key

__all__ = ["POD_UID_INDEX", "ContainerRecreateRequestController", "PodReadiness"]

log = logging.getLogger(__name__)
JSON = dict[str, Any]
POD_UID_INDEX = "crr-pod-uid"
WORKERS = 3
"""Concurrent reconciles (upstream ``--crr-workers``, default 3)."""
POD_STATUS_RETRIES = 5


class PodReadiness(Protocol):
    """The ``KruisePodReady`` not-ready switch (upstream ``pkg/util/podreadiness``)."""

    def has_gate(self, pod: Mapping[str, Any]) -> bool:
        """``spec.readinessGates`` holds ``KruisePodReady``."""
        ...

    def patch(
        self, pod: Mapping[str, Any], *, add: bool, user_agent: str, key: str, now: datetime.datetime
    ) -> dict[str, Any] | None:
        """The ``pods/status`` strategic-merge patch adding (or removing) the ``(user_agent, key)``
        entry, ``Ready`` recomputed on an add; None when there is nothing to change."""
        ...


def index_pod_uid(crr: StoreJSON) -> tuple[str, ...]:
    """:data:`POD_UID_INDEX`: the CRR's ``pod-uid`` label."""
    value = ((crr.get("metadata") or {}).get("labels") or {}).get(POD_UID_LABEL)
    return (str(value),) if value else ()


def _statuses_changed(delta: Delta) -> bool:
    """``podEventHandler``: creations and deletions, deletion starting, container statuses moving."""
    if delta.type is not EventType.MODIFIED or delta.old is None:
        return True
    old, new = delta.old, delta.obj
    if not (old.get("metadata") or {}).get("deletionTimestamp") and (new.get("metadata") or {}).get(
        "deletionTimestamp"
    ):
        return True
    return (old.get("status") or {}).get("containerStatuses") != (new.get("status") or {}).get(
        "containerStatuses"
    )


def _now() -> datetime.datetime:
    return datetime.datetime.now(datetime.UTC)


class ContainerRecreateRequestController:
    """Reconciles CRRs by ``namespace/name`` (see the module docstring)."""

    name = "containerrecreaterequest-controller"

    def __init__(
        self,
        kube: KubeClient,
        cache: CacheReader,
        readiness: PodReadiness,
        *,
        workers: int = WORKERS,
        clock: Callable[[], datetime.datetime] = _now,
    ) -> None:
        self.kube = kube
        self.cache = cache
        self.readiness = readiness
        self.workers = workers
        self.clock = clock

    def spec(self) -> ControllerSpec:
        """Woken by CRRs and by the pod events of :func:`_statuses_changed`."""
        return ControllerSpec(
            name=self.name,
            watches=(
                primary(CONTAINERRECREATEREQUESTS, indexers={POD_UID_INDEX: index_pod_uid}),
                Watch(PODS, self._pod_keys, accept=_statuses_changed),
            ),
            workers=self.workers,
        )

    def _pod_keys(self, pod: StoreJSON) -> list[str]:
        uid = (pod.get("metadata") or {}).get("uid")
        if not uid:
            return []
        return [
            object_key(crr)
            for crr in self.cache.by_index(CONTAINERRECREATEREQUESTS, POD_UID_INDEX, str(uid))
            if not (crr.get("metadata") or {}).get("deletionTimestamp")
            and not (crr.get("status") or {}).get("completionTime")
        ]

    async def reconcile(self, key: str) -> Result:
        crr = self.cache.get(CONTAINERRECREATEREQUESTS, key)
        if crr is None:
            return Result()
        meta = crr.get("metadata") or {}
        pod = self.cache.get(PODS, f"{meta.get('namespace')}/{(crr.get('spec') or {}).get('podName')}")
        gated = pod is not None and self.readiness.has_gate(pod)
        now = self.clock()
        decision = decide(crr, pod, now, gated=gated)
        current: Mapping[str, Any] = crr
        try:
            for action in decision.actions:
                written = await self._act(current, pod, action, now)
                if written is None:  # the CRR is gone
                    return Result()
                current = written
        except NotFoundError:
            return Result()
        return Result(requeue_after=decision.requeue_after)

    # ------------------------------------------------------------------ act
    async def _act(
        self, crr: Mapping[str, Any], pod: Mapping[str, Any] | None, action: Action, now: datetime.datetime
    ) -> Mapping[str, Any] | None:
        """Run one write; return the CRR as it now stands (None when it was deleted)."""
        meta = crr.get("metadata") or {}
        name, namespace = str(meta.get("name")), str(meta.get("namespace"))
        version = meta.get("resourceVersion")
        finalizers = list(meta.get("finalizers") or [])
        step = action.step
        if step is Step.COMPLETE:
            log.info("completing crr %s/%s: %s", namespace, name, action.value)
            body = {
                "metadata": {"resourceVersion": version},
                "status": {
                    "phase": ContainerRecreateRequestPhase.COMPLETED.value,
                    "completionTime": format_time(now),
                    "message": action.value,
                },
            }
            return await self.kube.patch(
                CONTAINERRECREATEREQUESTS, name, body, namespace, patch_type="merge", subresource="status"
            )
        if step is Step.SYNC_STATUSES:
            return await self._patch(
                crr, {"metadata": {"annotations": {SYNC_CONTAINER_STATUSES_ANNOTATION: action.value}}}
            )
        if step is Step.REMOVE_ACTIVE_LABEL:
            return await self._patch(crr, {"metadata": {"labels": {ACTIVE_LABEL: None}}})
        if step is Step.DELETE:
            log.info("deleting crr %s/%s for ttlSecondsAfterFinished", namespace, name)
            await self.kube.delete(
                CONTAINERRECREATEREQUESTS, name, namespace, uid=meta.get("uid"), missing_ok=True
            )
            return None
        if step is Step.ADD_FINALIZER:
            body = {
                "metadata": {"resourceVersion": version, "finalizers": [*finalizers, UNREADY_ACQUIRED_KEY]}
            }
            return await self._patch(crr, body)
        if step is Step.ADD_NOT_READY:
            if pod is not None:
                await self._set_not_ready(crr, pod, add=True, now=now)
            return crr
        if step is Step.MARK_UNREADY_ACQUIRED:
            return await self._patch(crr, {"metadata": {"annotations": {UNREADY_ACQUIRED_KEY: action.value}}})
        # RELEASE_NOT_READY
        if (
            pod is not None
            and not (pod.get("metadata") or {}).get("deletionTimestamp")
            and self.readiness.has_gate(pod)
        ):
            await self._set_not_ready(crr, pod, add=False, now=now)
        kept = [f for f in finalizers if f != UNREADY_ACQUIRED_KEY]
        return await self._patch(crr, {"metadata": {"resourceVersion": version, "finalizers": kept}})

    async def _patch(self, crr: Mapping[str, Any], body: JSON) -> Mapping[str, Any]:
        meta = crr.get("metadata") or {}
        return await self.kube.patch(
            CONTAINERRECREATEREQUESTS,
            str(meta.get("name")),
            body,
            str(meta.get("namespace")),
            patch_type="merge",
        )

    async def _set_not_ready(
        self, crr: Mapping[str, Any], pod: Mapping[str, Any], *, add: bool, now: datetime.datetime
    ) -> None:
        """Add or remove this CRR's ``KruisePodReady`` entry, with the pod's resourceVersion as
        precondition, reading the pod again after a conflict (upstream ``RetryOnConflict``)."""
        user_agent, key = readiness_key(crr)
        current: Mapping[str, Any] = pod
        meta = pod.get("metadata") or {}
        for attempt in range(POD_STATUS_RETRIES):
            patch = self.readiness.patch(current, add=add, user_agent=user_agent, key=key, now=now)
            if patch is None:
                return
            version = (current.get("metadata") or {}).get("resourceVersion")
            if version:
                patch["metadata"] = {"resourceVersion": version}
            try:
                await self.kube.patch(
                    PODS,
                    str(meta.get("name")),
                    patch,
                    str(meta.get("namespace")),
                    patch_type="strategic",
                    subresource="status",
                )
                return
            except ConflictError:
                if attempt == POD_STATUS_RETRIES - 1:
                    raise
                current = await self.kube.get(PODS, str(meta.get("name")), str(meta.get("namespace")))
            except NotFoundError:
                return
