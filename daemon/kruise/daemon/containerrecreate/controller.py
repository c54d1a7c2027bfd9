"""kruise-daemon's ContainerRecreateRequest controller (shell over :mod:`.decide`).

Runs in the daemon process of one node (``kruise.daemon.app``): ``Runtime.add(ctrl.spec(),
ctrl.reconcile, view)``. Its CRR informer should be narrowed to the node with
:func:`crr_label_selector` (upstream lists ``node-name=<node>,active=true``); the controller
also filters by the node label itself, so an unnarrowed informer is only wasteful.

The work key is the pod, ``namespace/podName`` (upstream ``objectKey``), so the CRRs of one pod
run one at a time. Per pass: :func:`.decide.pick`, then :func:`.decide.decide` on the picked
CRR with the pod's containers from CRI (``list_containers(pod_uid=...)`` and
``container_status`` of each, as the kubelet's ``GetPodStatus``), then at most one write or one
kill. A kill runs the preStop hook (:mod:`.prestop`), then ``stop_container(id, grace)`` with
:func:`.decide.stop_grace`, then writes the container ``Recreating``/killed (or ``Failed``).
Status writes are merge patches of the status subresource; after each, the pass waits for the
cache to show that resourceVersion (upstream's ``resourceVersionExpectation``), so a stale CRR
never leads to a second kill.
"""

from __future__ import annotations

import datetime
import logging
import time
from collections.abc import Callable, Mapping
from typing import Any

from kruise.core.errors import NotFoundError
from kruise.core.events import NORMAL, WARNING
from kruise.core.expectations import ResourceVersionExpectations
from kruise.core.informer.store import JSON as StoreJSON
from kruise.core.kube.resources import CONTAINERRECREATEREQUESTS, PODS
from kruise.core.runtime import CacheReader, ControllerSpec, Read, Watch
from kruise.core.workqueue import Result
from kruise.daemon.api.containerrecreaterequest import (
    ACTIVE_LABEL,
    NODE_NAME_LABEL,
    POD_UID_LABEL,
    ContainerRecreateRequestPhase,
)
from kruise.daemon.containerrecreate.decide import (
    Decision,
    KillOrder,
    decide,
    killed_states,
    pick,
    stop_grace,
)
from kruise.daemon.containerrecreate.prestop import PreStopError, run_pre_stop
from kruise.daemon.cri.port import CriContainer, CriError, CriNotFoundError
from kruise.daemon.node import NodeDeps

__all__ = ["POD_NAME_INDEX", "ContainerRecreateController", "crr_label_selector"]

log = logging.getLogger(__name__)
POD_NAME_INDEX = "crr-pod-name"
EXPECTATION_TIMEOUT = 10.0
"""Seconds to wait for the cache to show our own CRR write (upstream ``maxExpectationWaitDuration``)."""
WORKERS = 32
"""Pods worked on at once (upstream ``workers``)."""


def crr_label_selector(node_name: str) -> str:
    """The CRR informer's label selector on ``node_name``: its active CRRs."""
    return f"{NODE_NAME_LABEL}={node_name},{ACTIVE_LABEL}=true"


def index_pod_name(crr: StoreJSON) -> tuple[str, ...]:
    """:data:`POD_NAME_INDEX`: ``namespace/spec.podName``."""
    meta = crr.get("metadata") or {}
    pod = (crr.get("spec") or {}).get("podName")
    return (f"{meta.get('namespace')}/{pod}",) if pod else ()


def _now() -> datetime.datetime:
    return datetime.datetime.now(datetime.UTC)


class ContainerRecreateController:
    """Executes the CRRs of one node (see the module docstring)."""

    name = "containerrecreaterequest-daemon"

    def __init__(
        self,
        node: NodeDeps,
        cache: CacheReader,
        *,
        workers: int = WORKERS,
        clock: Callable[[], datetime.datetime] = _now,
    ) -> None:
        self.kube, self.cri, self.node_name = node.kube, node.cri, node.node_name
        self.recorder = node.recorder("crr")
        self.cache = cache
        self.workers = workers
        self.clock = clock
        self.expectations = ResourceVersionExpectations(timeout=EXPECTATION_TIMEOUT)

    # ------------------------------------------------------------------ wiring
    def _mine(self, crr: StoreJSON) -> bool:
        labels = (crr.get("metadata") or {}).get("labels") or {}
        return bool(labels.get(NODE_NAME_LABEL) == self.node_name and labels.get(ACTIVE_LABEL) == "true")

    def _keys(self, crr: StoreJSON) -> tuple[str, ...]:
        """Upstream ``enqueue``: the pod's key, for this node's unfinished CRRs."""
        if not self._mine(crr):
            return ()
        if (crr.get("metadata") or {}).get("deletionTimestamp") or (crr.get("status") or {}).get(
            "completionTime"
        ):
            return ()
        return index_pod_name(crr)

    def spec(self) -> ControllerSpec:
        """Woken by this node's CRRs (keyed by pod); reads the node's pods (IP, event target)."""
        return ControllerSpec(
            name=self.name,
            watches=(Watch(CONTAINERRECREATEREQUESTS, self._keys, {POD_NAME_INDEX: index_pod_name}),),
            reads=(Read(PODS),),
            workers=self.workers,
        )

    # ------------------------------------------------------------------ reconcile
    async def reconcile(self, key: str) -> Result:
        crrs = [
            c for c in self.cache.by_index(CONTAINERRECREATEREQUESTS, POD_NAME_INDEX, key) if self._mine(c)
        ]
        for crr in crrs:
            meta = crr.get("metadata") or {}
            if not self.expectations.check(str(meta.get("uid")), meta.get("resourceVersion")):
                return Result(requeue_after=0.2)
        chosen = pick(crrs)
        for other in chosen.to_pending:
            await self._write_status(other, {"phase": ContainerRecreateRequestPhase.PENDING.value})
        picked = chosen.picked
        if picked is None:
            return Result()
        now = self.clock()
        decision = decide(picked, None, now)
        if decision.waiting == "containers":
            decision = decide(picked, await self._containers(picked), now)
        elif decision.waiting:
            log.info("crr %s is waiting for %s", _name(picked), decision.waiting)
        return await self._act(picked, decision)

    async def _containers(self, crr: Mapping[str, Any]) -> list[CriContainer]:
        """The pod's containers on the node, every attempt, in full (``ContainerStatus``)."""
        uid = str(((crr.get("metadata") or {}).get("labels") or {}).get(POD_UID_LABEL) or "")
        out = []
        for listed in await self.cri.list_containers(pod_uid=uid):
            try:
                out.append(await self.cri.container_status(listed.id))
            except CriNotFoundError:  # removed meanwhile
                continue
        return out

    async def _act(self, crr: Mapping[str, Any], decision: Decision) -> Result:
        if decision.phase is not None:
            await self._write_status(crr, {"phase": decision.phase})
        elif decision.complete is not None:
            await self._complete(crr, decision.complete)
        elif decision.kill is not None:
            error = await self._kill(crr, decision.kill)
            states = killed_states(decision, error)
            await self._write_status(crr, {"containerRecreateStates": states}, precondition=False)
        elif decision.states is not None:
            await self._write_status(crr, {"containerRecreateStates": decision.states}, precondition=False)
        return Result(requeue_after=decision.requeue_after)

    # ------------------------------------------------------------------ act
    async def _kill(self, crr: Mapping[str, Any], order: KillOrder) -> str | None:
        """preStop, then ``StopContainer``; the error text, or None when stopped."""
        pod = self._pod(crr)
        self.recorder.event(
            pod,
            NORMAL,
            "Killing",
            f"Stopping container {order.name} by ContainerRecreateRequest {_name(crr)}",
        )
        spent = 0.0
        if order.pre_stop and order.grace_seconds > 0:
            started = time.monotonic()
            try:
                await run_pre_stop(
                    self.cri,
                    order.container_id,
                    order.pre_stop,
                    grace_seconds=order.grace_seconds,
                    pod_ip=(pod.get("status") or {}).get("podIP"),
                    ports=order.ports,
                )
            except PreStopError as err:
                self.recorder.event(pod, WARNING, "FailedPreStopHook", str(err))
            spent = time.monotonic() - started
        grace = stop_grace(order.grace_seconds, spent)
        log.info(
            "crr %s stops container %s (%s) with grace %ss", _name(crr), order.name, order.container_id, grace
        )
        try:
            await self.cri.stop_container(order.container_id, grace)
        except CriError as err:
            log.warning("crr %s failed to stop container %s: %s", _name(crr), order.name, err)
            return str(err)
        return None

    def _pod(self, crr: Mapping[str, Any]) -> Mapping[str, Any]:
        """The pod from the node's informer, or one built from the CRR (name, namespace, uid)."""
        meta = crr.get("metadata") or {}
        name = (crr.get("spec") or {}).get("podName")
        found = self.cache.get(PODS, f"{meta.get('namespace')}/{name}")
        if found is not None:
            return found
        uid = (meta.get("labels") or {}).get(POD_UID_LABEL)
        return {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": name, "namespace": meta.get("namespace"), "uid": uid},
        }

    async def _complete(self, crr: Mapping[str, Any], message: str) -> None:
        body: dict[str, Any] = {
            "phase": ContainerRecreateRequestPhase.COMPLETED.value,
            "completionTime": self.clock().astimezone(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        }
        body["message"] = message or None
        log.info("crr %s completed%s", _name(crr), f": {message}" if message else "")
        await self._write_status(crr, body)

    async def _write_status(
        self, crr: Mapping[str, Any], status: Mapping[str, Any], *, precondition: bool = True
    ) -> None:
        """Merge-patch ``status`` and expect the result in the cache. Phase changes and completion
        carry the CRR's resourceVersion (upstream ``Status().Update``); container states do not
        (upstream ``Status().Patch``), so the outcome of a kill is written even when the manager
        has just touched the CRR's metadata."""
        meta = crr.get("metadata") or {}
        body: dict[str, Any] = {"status": dict(status)}
        if precondition:
            body["metadata"] = {"resourceVersion": meta.get("resourceVersion")}
        try:
            written = await self.kube.patch(
                CONTAINERRECREATEREQUESTS,
                str(meta.get("name")),
                body,
                str(meta.get("namespace")),
                patch_type="merge",
                subresource="status",
            )
        except NotFoundError:
            return
        version = (written.get("metadata") or {}).get("resourceVersion")
        if version:
            self.expectations.expect(str(meta.get("uid")), str(version))


def _name(crr: Mapping[str, Any]) -> str:
    meta = crr.get("metadata") or {}
    return f"{meta.get('namespace')}/{meta.get('name')}"
