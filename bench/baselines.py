"""Raw-client baselines for ``bench/cloneset.py``: what the API server and KWOK allow at best.

- :func:`scale_raw`: N pods created by a parallel client (64 in flight), timed until all are Ready.
- :func:`update_raw_inplace`: the in-place update of N gated pods done by a client that knows
  everything in advance and never waits for an informer: per pod ``InPlaceUpdateReady=False``
  (pods/status), the image patch, wait for KWOK's simulated restart, ``InPlaceUpdateReady=True``,
  wait for Ready; at most ``ceil(20% x N)`` pods in flight (the CloneSet's maxUnavailable), each
  slot refilled as soon as its pod is Ready. It is the floor the CloneSet controller is compared
  with besides the theoretical ``ceil(N / maxUnavailable) x restart`` minimum, which leaves out
  the API round trips and KWOK's own stage processing.

Both watch the namespace's pods once and wait on that stream (no polling).
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import time
from collections.abc import Callable
from typing import Any, Self

from kruise.core.kube import KubeClient
from kruise.core.kube.resources import PODS, Resource

GATE = "InPlaceUpdateReady"
JSON = dict[str, Any]


def condition(pod: JSON, kind: str) -> str | None:
    for c in (pod.get("status") or {}).get("conditions") or []:
        if c.get("type") == kind:
            return str(c.get("status"))
    return None


class ObjectStream:
    """The latest version of every object of ``resource`` (in ``namespace``, or cluster-wide), from
    one list and watch (a deleted object leaves ``items``); ``wait`` for a predicate over them.

    ``observer``, when given, is called with ``(monotonic seconds at arrival, object)`` for every
    object listed and every watch event but bookmarks and deletions, before waiters wake."""

    def __init__(
        self,
        kube: KubeClient,
        resource: Resource,
        namespace: str | None = None,
        observer: Callable[[float, JSON], None] | None = None,
    ) -> None:
        self.kube, self.resource, self.ns = kube, resource, namespace
        self.observer = observer
        self.items: dict[str, JSON] = {}
        self.changed = asyncio.Condition()
        self.task: asyncio.Task[None] | None = None

    async def __aenter__(self) -> Self:
        listing = await self.kube.list(self.resource, self.ns)
        self.items = {o["metadata"]["name"]: o for o in listing["items"]}
        if self.observer is not None:
            at = time.monotonic()
            for obj in listing["items"]:
                self.observer(at, obj)
        self.task = asyncio.create_task(self._run(listing["metadata"]["resourceVersion"]))
        return self

    async def __aexit__(self, *_: object) -> None:
        assert self.task is not None
        self.task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self.task

    async def _run(self, rv: str) -> None:
        while True:
            async for event in self.kube.watch(self.resource, self.ns, resource_version=rv):
                rv = event.object.get("metadata", {}).get("resourceVersion") or rv
                if event.type == "BOOKMARK":
                    continue
                name = event.object["metadata"]["name"]
                if event.type == "DELETED":
                    self.items.pop(name, None)
                else:
                    self.items[name] = event.object
                    if self.observer is not None:
                        self.observer(time.monotonic(), event.object)
                async with self.changed:
                    self.changed.notify_all()

    async def wait(self, predicate: Callable[[dict[str, JSON]], bool], timeout: float | None = None) -> None:
        """Until ``predicate(items)`` holds; ``asyncio.TimeoutError`` after ``timeout`` seconds."""
        async with self.changed:
            await asyncio.wait_for(self.changed.wait_for(lambda: predicate(self.items)), timeout)


def pod_stream(kube: KubeClient, ns: str) -> ObjectStream:
    """Every pod of ``ns``."""
    return ObjectStream(kube, PODS, ns)


def raw_pod(name: str, template: JSON, *, gated: bool) -> JSON:
    spec = dict(template["spec"])
    if gated:
        spec["readinessGates"] = [{"conditionType": GATE}]
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, **template["metadata"]},
        "spec": spec,
    }


async def set_gate(kube: KubeClient, ns: str, name: str, value: str) -> int:
    """Set the gate condition; returns the pod's new resourceVersion."""
    body = {"status": {"conditions": [{"type": GATE, "status": value}]}}
    pod = await kube.patch(PODS, name, body, ns, patch_type="strategic", subresource="status")
    return int(pod["metadata"]["resourceVersion"])


async def create_pods(kube: KubeClient, ns: str, n: int, template: JSON, *, gated: bool) -> list[str]:
    sem = asyncio.Semaphore(64)
    names = [f"raw-{i}" for i in range(n)]

    async def create(name: str) -> None:
        async with sem:
            await kube.create(PODS, raw_pod(name, template, gated=gated), ns)
            if gated:
                await set_gate(kube, ns, name, "True")

    await asyncio.gather(*(create(name) for name in names))
    return names


def all_ready(names: list[str]) -> Callable[[dict[str, JSON]], bool]:
    return lambda pods: all(condition(pods.get(n) or {}, "Ready") == "True" for n in names)


async def scale_raw(kube: KubeClient, ns: str, n: int, template: JSON) -> float:
    """Seconds from the first create until all ``n`` pods are Ready."""
    async with pod_stream(kube, ns) as stream:
        t0 = time.monotonic()
        names = await create_pods(kube, ns, n, template, gated=False)
        await stream.wait(all_ready(names))
        return time.monotonic() - t0


async def update_raw_inplace(kube: KubeClient, ns: str, n: int, template: JSON, new_image: str) -> float:
    """Seconds for the raw in-place update of ``n`` gated pods (see the module docstring)."""
    async with pod_stream(kube, ns) as stream:
        names = await create_pods(kube, ns, n, template, gated=True)
        await stream.wait(all_ready(names))
        slots = asyncio.Semaphore(max(1, math.ceil(n * 0.2)))
        container = template["spec"]["containers"][0]["name"]

        def restarted(name: str) -> Callable[[dict[str, JSON]], bool]:
            def done(pods: dict[str, JSON]) -> bool:
                statuses = (pods.get(name) or {}).get("status", {}).get("containerStatuses") or []
                return any(s.get("image") == new_image for s in statuses)

            return done

        async def update(name: str) -> None:
            async with slots:
                await set_gate(kube, ns, name, "False")
                patch = {"spec": {"containers": [{"name": container, "image": new_image}]}}
                await kube.patch(PODS, name, patch, ns, patch_type="strategic")
                await stream.wait(restarted(name))
                since = await set_gate(kube, ns, name, "True")

                def ready_again(pods: dict[str, JSON]) -> bool:  # Ready seen at or after the gate write
                    pod = pods.get(name) or {}
                    rv = int((pod.get("metadata") or {}).get("resourceVersion") or 0)
                    return rv >= since and condition(pod, "Ready") == "True"

                await stream.wait(ready_again)

        t0 = time.monotonic()
        await asyncio.gather(*(update(name) for name in names))
        return time.monotonic() - t0
