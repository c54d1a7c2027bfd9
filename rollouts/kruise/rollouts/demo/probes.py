"""What the comparison act observes while a variant updates: :class:`PodWatch` keeps the
``app=web`` pods current from a watch and stamps every change, :class:`Client` sends ``GET /``
to the ready pod IPs (there is no kube-proxy: the endpoints come from the pod watch)."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable
from typing import Any

import httpx

from kruise.core.errors import GoneError
from kruise.core.kube import KubeClient
from kruise.core.kube.resources import PODS
from kruise.rollouts.demo.comparison_objects import PORT
from kruise.rollouts.demo.measure import PodSample, pod_alive, pod_ready, ready_endpoints

JSON = dict[str, Any]


class PodWatch:
    """The namespace's ``app=web`` pods, kept current by a watch; every change is a
    :class:`PodSample` stamped with ``time.monotonic()``."""

    def __init__(self, kube: KubeClient, namespace: str) -> None:
        self.kube = kube
        self.namespace = namespace
        self.pods: dict[str, JSON] = {}
        self.samples: list[PodSample] = []

    def _see(self, pod: JSON, deleted: bool = False) -> None:
        name = pod["metadata"]["name"]
        if deleted:
            self.pods.pop(name, None)
        else:
            self.pods[name] = pod
        alive = not deleted and pod_alive(pod)
        self.samples.append(PodSample(time.monotonic(), name, alive, alive and pod_ready(pod)))

    async def run(self) -> None:
        while True:
            listed = await self.kube.list(PODS, self.namespace, label_selector="app=web")
            seen = {p["metadata"]["name"] for p in listed["items"]}
            for gone in set(self.pods) - seen:
                self._see(self.pods[gone], deleted=True)
            for pod in listed["items"]:
                self._see(pod)
            with contextlib.suppress(GoneError):
                async for event in self.kube.watch(
                    PODS,
                    self.namespace,
                    resource_version=listed["metadata"]["resourceVersion"],
                    label_selector="app=web",
                    timeout_seconds=60,
                ):
                    if event.type in ("ADDED", "MODIFIED", "DELETED"):
                        self._see(event.object, deleted=event.type == "DELETED")

    def endpoints(self) -> list[str]:
        return ready_endpoints(self.pods.values())


class Client:
    """Sends ``GET /`` to the ready endpoints until stopped; counts sent and failed requests.

    ``workers`` concurrent senders, each waiting ``every`` seconds between requests; a request
    that gets no answer within ``timeout`` seconds counts as failed (``ReadTimeout``...)."""

    def __init__(
        self,
        endpoints: Callable[[], list[str]],
        workers: int = 2,
        every: float = 0.05,
        port: int = PORT,
        timeout: float = 1.0,
    ) -> None:
        self.endpoints = endpoints
        self.port = port
        self.workers = workers
        self.every = every
        self.timeout = timeout
        self.sent = 0
        self.failed = 0
        self.reasons: dict[str, int] = {}
        self._next = 0

    async def _worker(self, http: httpx.AsyncClient) -> None:
        while True:
            ips = self.endpoints()
            self.sent += 1
            if not ips:
                self._fail("no ready endpoint")
            else:
                ip = ips[self._next % len(ips)]
                self._next += 1
                try:
                    answer = await http.get(f"http://{ip}:{self.port}/")
                    if answer.status_code != 200:
                        self._fail(f"HTTP {answer.status_code}")
                except httpx.HTTPError as err:
                    self._fail(type(err).__name__)
            await asyncio.sleep(self.every)

    def _fail(self, reason: str) -> None:
        self.failed += 1
        self.reasons[reason] = self.reasons.get(reason, 0) + 1

    async def run(self) -> None:
        limits = httpx.Limits(max_keepalive_connections=0)
        async with httpx.AsyncClient(timeout=self.timeout, limits=limits, trust_env=False) as http:
            await asyncio.gather(*(self._worker(http) for _ in range(self.workers)))

    def reset(self) -> None:
        self.sent, self.failed, self.reasons = 0, 0, {}
