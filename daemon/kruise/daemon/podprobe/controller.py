"""The daemon's pod probe controller: its node's NodePodProbe in, probe workers and status out.

Upstream ``K:pkg/daemon/podprobe`` (v1.8.4): the daemon watches only its own NodePodProbe
(``metadata.name=<node>``); an add, or an update that changes ``spec``, wakes it. Each reconcile
starts a worker per probe of the spec (stopping those gone, handing a changed probe to its
worker) and rebuilds ``status`` (:func:`~.results.next_status`), written with
``PUT .../status`` only when it differs: a node at rest sends nothing.

A worker (one asyncio task) waits a random part of its period at first, then every
``periodSeconds``: finds the newest container of that name of the pod (CRI ``ListContainers`` by
pod UID, then ``ContainerStatus``); a new container ID resets its result to ``Unknown``; a
container not running reports ``Failed``; before ``initialDelaySeconds`` since the container
started it waits; otherwise it probes — exec through CRI ``ExecSync`` (exit 0: ``Succeeded``,
the output as message), tcpSocket by connecting to the pod IP, httpGet by a GET to the pod IP
(2xx/3xx) — and reports the result once the success/failure threshold is reached. Each reported
change wakes the controller, which writes the status and records an event on the pod
(``KruiseProbeSucceeded`` / ``KruiseProbeFailed``).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
import time
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from typing import Any

import aiohttp

from kruise.core.errors import ConflictError, NotFoundError
from kruise.core.informer.store import JSON, Delta, EventType
from kruise.core.runtime import CacheReader, ControllerSpec, primary
from kruise.core.workqueue import Result as QueueResult
from kruise.daemon.api.podprobe import NODEPODPROBES, PROBE_FAILED, PROBE_SUCCEEDED, PROBE_UNKNOWN
from kruise.daemon.cri.port import ContainerState, CriContainer, CriError, CriRuntime, CriTimeoutError
from kruise.daemon.node import NodeDeps
from kruise.daemon.podprobe.results import (
    ProbeKey,
    Result,
    Results,
    Thresholds,
    next_status,
    probe_keys,
    timing,
    truncate,
)

__all__ = ["PodProbeController", "spec_changed"]

log = logging.getLogger("kruise.daemon.podprobe")
EVENT_SUCCEEDED = "KruiseProbeSucceeded"
EVENT_FAILED = "KruiseProbeFailed"


def spec_changed(delta: Delta) -> bool:
    """Adds and spec changes (its own status writes do not wake it)."""
    if delta.type is EventType.MODIFIED and delta.old is not None:
        return bool(delta.old.get("spec") != delta.obj.get("spec"))
    return delta.type is EventType.ADDED


def _now_text(t: float | None = None) -> str:
    return datetime.fromtimestamp(time.time() if t is None else t, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


async def run_probe(
    cri: CriRuntime, probe: Mapping[str, Any], key: ProbeKey, container_id: str
) -> tuple[str, str]:
    """One probe: (state, message). Raises :class:`CriError` when exec could not run at all."""
    t = timing(probe)
    if isinstance(probe.get("exec"), Mapping):
        try:
            answer = await cri.exec_sync(container_id, list(probe["exec"].get("command") or ()), t.timeout)
        except CriTimeoutError:
            return PROBE_FAILED, f"command timed out after {t.timeout}s"
        output = (answer.stdout + answer.stderr).decode(errors="replace")
        return (PROBE_SUCCEEDED if answer.exit_code == 0 else PROBE_FAILED), truncate(output)
    if isinstance(probe.get("tcpSocket"), Mapping):
        host = probe["tcpSocket"].get("host") or key.ip
        port = probe["tcpSocket"].get("port")
        try:
            _, writer = await asyncio.wait_for(asyncio.open_connection(host, int(port)), t.timeout)
        except (OSError, TimeoutError, ValueError) as err:
            return PROBE_FAILED, truncate(f"dial tcp {host}:{port}: {err or 'i/o timeout'}")
        writer.close()
        with contextlib.suppress(OSError):
            await writer.wait_closed()
        return PROBE_SUCCEEDED, ""
    if isinstance(probe.get("httpGet"), Mapping):
        get = probe["httpGet"]
        scheme = str(get.get("scheme") or "HTTP").lower()
        url = f"{scheme}://{get.get('host') or key.ip}:{get.get('port')}{get.get('path') or '/'}"
        headers = {h["name"]: h.get("value", "") for h in get.get("httpHeaders") or () if h.get("name")}
        try:
            timeout = aiohttp.ClientTimeout(total=t.timeout)
            async with (
                aiohttp.ClientSession(timeout=timeout) as session,
                session.get(url, headers=headers, ssl=False) as resp,
            ):
                body = await resp.text(errors="replace")
        except (aiohttp.ClientError, TimeoutError, ValueError) as err:
            return PROBE_FAILED, truncate(f"Get {url!r}: {err or 'timeout'}")
        if 200 <= resp.status < 400:
            return PROBE_SUCCEEDED, truncate(body)
        return PROBE_FAILED, truncate(f"HTTP probe failed with statuscode: {resp.status}")
    raise CriError(f"missing probe handler for {key.container}")


class _Worker:
    """One probe's loop (module docstring)."""

    def __init__(self, owner: PodProbeController, key: ProbeKey, probe: JSON) -> None:
        self.owner, self.key, self.probe = owner, key, probe
        self.container_id = ""
        self.thresholds = Thresholds()
        self.task: asyncio.Task[None] | None = None

    def update(self, probe: JSON) -> None:
        handler = ("exec", "tcpSocket", "httpGet")
        if any(probe.get(h) != self.probe.get(h) for h in handler) and self.container_id:
            self.owner.report(self.container_id, self.key, PROBE_UNKNOWN, "")
        self.probe = probe

    async def run(self, first: bool) -> None:
        period = timing(self.probe).period
        if first:
            await asyncio.sleep(random.random() * period)
        try:
            while True:
                try:
                    await self.once()
                except CriError as err:
                    log.warning(
                        "probe %s of pod %s/%s: %s", self.key.probe, self.key.namespace, self.key.pod, err
                    )
                await asyncio.sleep(timing(self.probe).period)
        finally:
            if self.container_id:
                self.owner.results.remove(self.container_id)

    async def _container(self) -> CriContainer | None:
        cri = self.owner.cri
        newest: CriContainer | None = None
        for c in await cri.list_containers(pod_uid=self.key.uid):
            if c.name == self.key.container and (newest is None or c.created_at > newest.created_at):
                newest = c
        return None if newest is None else await cri.container_status(newest.id)

    async def once(self) -> None:
        container = await self._container()
        if container is None:
            return
        if container.id != self.container_id:
            if self.container_id:
                self.owner.results.remove(self.container_id)
            self.container_id = container.id
            self.owner.report(container.id, self.key, PROBE_UNKNOWN, "")
        if container.state is not ContainerState.RUNNING:
            self.owner.report(
                container.id, self.key, PROBE_FAILED, f"Container({self.key.container}) is Non-running"
            )
        t = timing(self.probe)
        if time.time() - container.started_at / 1e9 < t.initial_delay:
            return
        state, message = await run_probe(self.owner.cri, self.probe, self.key, container.id)
        if self.thresholds.observe(state, t):
            self.owner.report(container.id, self.key, state, message)


class PodProbeController:
    """Runs the probes of ``node``'s NodePodProbe (module docstring)."""

    name = "kruise-daemon-podprobe"

    def __init__(self, node: NodeDeps, cache: CacheReader) -> None:
        self.kube, self.cri, self.node = node.kube, node.cri, node.node_name
        self.recorder = node.recorder("podprobe")
        self.cache = cache
        self.results = Results()
        self.workers: dict[ProbeKey, _Worker] = {}
        self._wake: Callable[[str], None] = lambda _key: None
        self._started = time.monotonic()

    def spec(self) -> ControllerSpec:
        return ControllerSpec(name=self.name, watches=(primary(NODEPODPROBES, accept=spec_changed),))

    def bind(self, enqueue: Callable[[str], None]) -> None:
        self._wake = enqueue

    def report(self, container_id: str, key: ProbeKey, state: str, message: str) -> None:
        now = time.time()
        if self.results.set(container_id, Result(key, state, message, now, _now_text(now))):
            self._wake(self.node)

    async def stop(self) -> None:
        tasks = [w.task for w in self.workers.values() if w.task is not None]
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        self.workers.clear()

    async def reconcile(self, key: str) -> QueueResult | None:
        npp = self.cache.get(NODEPODPROBES, key)
        if npp is None:
            await self.stop()
            return None
        wanted = probe_keys(npp)
        first = time.monotonic() - self._started < 60
        for pkey, worker in list(self.workers.items()):
            if pkey not in wanted:
                if worker.task is not None:
                    worker.task.cancel()
                del self.workers[pkey]
        for pkey, probe in wanted.items():
            existing = self.workers.get(pkey)
            if existing is not None:
                existing.update(probe)
                continue
            worker = self.workers[pkey] = _Worker(self, pkey, probe)
            worker.task = asyncio.create_task(worker.run(first), name=f"probe {pkey.uid}/{pkey.probe}")
        results = [r for r in self.results.values() if r.key in wanted]
        status = next_status(npp, results, _now_text())
        if status == (npp.get("status") or {}):
            return None
        try:
            await self.kube.replace(NODEPODPROBES, {**npp, "status": status}, subresource="status")
        except NotFoundError:
            return None
        except ConflictError:
            return QueueResult(requeue_after=1.0)
        for result in results:
            pod = {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {
                    "name": result.key.pod,
                    "namespace": result.key.namespace,
                    "uid": result.key.uid,
                },
            }
            if result.state == PROBE_SUCCEEDED:
                self.recorder.event(pod, "Normal", EVENT_SUCCEEDED, result.message)
            elif result.state == PROBE_FAILED:
                self.recorder.event(pod, "Normal", EVENT_FAILED, result.message)
        return None
