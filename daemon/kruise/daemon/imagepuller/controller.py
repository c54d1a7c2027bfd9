"""The daemon's image puller controller: its node's NodeImage in, pull workers and status out.

Wiring (upstream ``K:pkg/daemon/imagepuller/imagepuller_controller.go``): the daemon watches
only its own NodeImage (field selector ``metadata.name=<node>``); an add, or an update that
changes ``spec``, wakes it (status-only updates, i.e. its own writes, do not), and so does
every state a worker reports. Each reconcile

1. decides from the object alone (:mod:`kruise.daemon.imagepuller.plan`) which workers to stop
   and start, and starts them with the credentials of the tag's pull secrets;
2. rebuilds ``status`` from the finished tags the object already reports and the workers'
   latest states, and writes it with ``PUT .../status`` only when it changed, at most 0.5 writes
   a second with bursts of 5 (upstream's status updater), so a fast succession of worker states
   becomes one write.

Nothing is polled: upstream also requeues every 3 s while pulling and every ~20 min at rest; here
the workers' reports wake the controller instead, so a daemon at rest sends no request.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from kruise.core.errors import NotFoundError
from kruise.core.informer.store import JSON, Delta, EventType
from kruise.core.jsoncopy import json_copy
from kruise.core.kube.resources import SECRETS
from kruise.core.runtime import CacheReader, ControllerSpec, primary
from kruise.core.workqueue import Result
from kruise.daemon.api.nodeimage import NODEIMAGES
from kruise.daemon.cri.auth import pull_auths
from kruise.daemon.cri.port import PullAuth
from kruise.daemon.imagepuller import metrics
from kruise.daemon.imagepuller.plan import (
    FAILED,
    TagJob,
    TagKey,
    TagState,
    finished_states,
    node_status,
    plan_workers,
    tag_jobs,
)
from kruise.daemon.imagepuller.worker import PullWorker
from kruise.daemon.node import NodeDeps

__all__ = ["ImagePullerController", "StatusRateLimit", "spec_changed"]

log = logging.getLogger("kruise.daemon.imagepuller")

PULL_SUCCEEDED = "PullImageSucceed"
PULL_FAILED = "PullImageFailed"


def spec_changed(delta: Delta) -> bool:
    """Wake on adds and spec changes only (upstream skips updates with an equal spec)."""
    if delta.type is EventType.MODIFIED and delta.old is not None:
        return bool(delta.old.get("spec") != delta.obj.get("spec"))
    return delta.type is EventType.ADDED


class StatusRateLimit:
    """A token bucket that says how long to wait instead of waiting: ``qps`` tokens a second,
    at most ``burst`` saved (upstream's NodeImage status updater: 0.5 and 5)."""

    def __init__(self, qps: float = 0.5, burst: int = 5, clock: Callable[[], float] = time.monotonic) -> None:
        self.qps, self.burst, self._clock = qps, burst, clock
        self._tokens = float(burst)
        self._at = clock()

    def take(self) -> float:
        """0.0 and one token taken, or the seconds until a token is there (none taken)."""
        now = self._clock()
        self._tokens = min(float(self.burst), self._tokens + (now - self._at) * self.qps)
        self._at = now
        if self._tokens >= 1.0:
            self._tokens -= 1.0
            return 0.0
        return (1.0 - self._tokens) / self.qps


class ImagePullerController:
    """Pull workers for one node's NodeImage (``node_name``), through ``cri``."""

    name = "imagepuller"

    def __init__(
        self,
        node: NodeDeps,
        cache: CacheReader,
        *,
        max_workers: int = -1,
        rate: StatusRateLimit | None = None,
    ) -> None:
        self.kube, self.cri, self.node_name = node.kube, node.cri, node.node_name
        self.recorder = node.recorder(self.name)
        self.cache = cache
        self.rate = rate or StatusRateLimit()
        self._limit = asyncio.Semaphore(max_workers) if max_workers > 0 else None
        self._workers: dict[TagKey, PullWorker] = {}
        self._states: dict[TagKey, TagState] = {}
        self._wake: Callable[[str], None] = lambda key: None

    def spec(self) -> ControllerSpec:
        return ControllerSpec(name=self.name, watches=(primary(NODEIMAGES, accept=spec_changed),))

    def bind(self, enqueue: Callable[[str], None]) -> None:
        """How worker reports wake the controller (the runtime's queue of this controller)."""
        self._wake = enqueue

    @property
    def running(self) -> Mapping[TagKey, int]:
        """Tags with a live worker -> the version it pulls."""
        return {key: w.job.version for key, w in self._workers.items()}

    async def stop(self) -> None:
        for key in list(self._workers):
            await self._workers.pop(key).stop()

    async def reconcile(self, key: str) -> Result | None:
        obj = self.cache.get(NODEIMAGES, key)
        if obj is None or (obj.get("metadata") or {}).get("deletionTimestamp"):
            await self.stop()
            self._states.clear()
            return None
        spec, status = obj.get("spec") or {}, obj.get("status") or {}
        jobs = tag_jobs(spec)
        finished = finished_states(jobs, status)
        plan = plan_workers(jobs, finished, self.running)
        for stale in plan.stop:
            await self._workers.pop(stale).stop()
            if stale not in jobs:
                self._states.pop(stale, None)
        for job in plan.start:
            worker = PullWorker(
                job,
                self.cri,
                await self._auths(job),
                self._report,
                limit=self._limit,
                on_finished=self._finished,
            )
            self._workers[job.key] = worker
            worker.start()
        for gone in [k for k in self._states if k not in jobs]:
            del self._states[gone]
        states = {**self._states, **finished}
        new_status = node_status(spec, states, status)
        if new_status == status:
            return None
        wait = self.rate.take()
        if wait > 0:
            return Result(requeue_after=wait)
        body = json_copy(obj)
        body["status"] = new_status
        await self.kube.replace(NODEIMAGES, body, subresource="status")
        return None

    def _report(self, key: TagKey, state: TagState) -> None:
        self._states[key] = state
        self._wake(self.node_name)

    def _finished(self, job: TagJob, state: TagState, seconds: float) -> None:
        metrics.observe_pull(state.phase, seconds)
        node_image = self.cache.get(NODEIMAGES, self.node_name)
        if state.phase == FAILED:
            message = f"Image {job.image} {state.message}"
            for owner in job.owners:
                self.recorder.event(_as_object(owner), "Warning", PULL_FAILED, message)
            if node_image is not None:
                self.recorder.event(node_image, "Warning", PULL_FAILED, message)
        elif node_image is not None:
            self.recorder.event(
                node_image, "Normal", PULL_SUCCEEDED, f"Image {job.image}, elapsedTime {seconds:.3f}s"
            )

    async def _auths(self, job: TagJob) -> Sequence[PullAuth]:
        """Credentials from the tag's pull secrets (missing ones are skipped with a log line, as
        the pull may still succeed anonymously)."""
        secrets: list[JSON] = []
        for namespace, name in job.pull_secrets:
            try:
                secrets.append(await self.kube.get(SECRETS, name, namespace))
            except NotFoundError:
                log.warning("pull secret %s/%s of %s not found", namespace, name, job.image)
        return pull_auths(secrets, job.image) if secrets else ()


def _as_object(ref: Mapping[str, Any]) -> JSON:
    """An ``ObjectReference`` as the object shape events are recorded on."""
    return {
        "apiVersion": ref.get("apiVersion", ""),
        "kind": ref.get("kind", ""),
        "metadata": {k: ref[k] for k in ("name", "namespace", "uid") if ref.get(k)},
    }
