"""Running controllers from their specs: one way to wire every controller.

:class:`Runtime` owns the shared :class:`~kruise.core.runtime.cache.Informers` and the
controllers added to it. For each :class:`~kruise.core.runtime.spec.ControllerSpec` it

- declares the spec's reads on the controller's :class:`~kruise.core.runtime.cache.ScopedCache`
  (creating informers and named indices),
- adds one handler per :class:`~kruise.core.runtime.spec.Watch` that runs ``observe`` and
  enqueues the keys of the new object and, on an update, of the old one too (an owner change
  wakes both owners, as controller-runtime's owner handler does),
- builds a :class:`~kruise.core.workqueue.WorkQueue` with the spec's pacing, and
- runs ``spec.workers`` workers once every informer the spec reads has synced.

Informers can start before the controllers (a standby replica keeps warm caches and takes over
without a relist); controllers start only when :meth:`Runtime.run_controllers` is called, i.e.
after the leader lease is held, and stop when that call is cancelled.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable

from kruise.core.informer.store import Delta, EventType
from kruise.core.kube.client import KubeClient
from kruise.core.runtime.cache import InformerFactory, Informers, ScopedCache
from kruise.core.runtime.spec import ControllerSpec, Watch
from kruise.core.workqueue import Result, WorkQueue

log = logging.getLogger(__name__)
Reconcile = Callable[[str], Awaitable[Result | None]]


class Controller:
    """One controller's queue and workers, fed by handlers on the shared informers."""

    def __init__(self, spec: ControllerSpec, reconcile: Reconcile, cache: ScopedCache) -> None:
        self.spec = spec
        self.reconcile = reconcile
        self.cache = cache
        self.queue = WorkQueue(name=spec.name, pace=spec.pace, max_pace=spec.max_pace)
        cache.declare(spec)
        for watch in spec.watches:
            cache.informers.informer(watch.resource).add_handler(self._handler(watch))

    @property
    def name(self) -> str:
        return self.spec.name

    def _handler(self, watch: Watch) -> Callable[[Delta], None]:
        keys, observe, accept, add = watch.keys, watch.observe, watch.accept, self.queue.add
        delta_keys = watch.delta_keys

        def handle(delta: Delta) -> None:
            if observe is not None:
                observe(delta)
            if accept is not None and not accept(delta):
                return
            if delta_keys is not None:
                for key in delta_keys(delta):
                    add(key)
                return
            for key in keys(delta.obj):
                add(key)
            if delta.type is EventType.MODIFIED and delta.old is not None:
                for key in keys(delta.old):
                    add(key)

        return handle

    def enqueue(self, key: str) -> None:
        self.queue.add(key)

    async def run(self) -> None:
        """Wait for every informer the spec reads, then reconcile until cancelled."""
        await self.cache.informers.wait_synced(r.resource for r in self.spec.all_reads())
        log.info("%s: caches synced; starting %d workers", self.name, self.spec.workers)
        await self.queue.run(self.reconcile, workers=self.spec.workers, name=self.name)


class Runtime:
    """The shared informers and every controller of one manager process."""

    def __init__(self, kube: KubeClient, *, informer_factory: InformerFactory | None = None) -> None:
        self.informers = Informers(kube, factory=informer_factory)
        self.controllers: list[Controller] = []

    def cache(self, name: str) -> ScopedCache:
        """A read view for the controller ``name``; its reads are allowed once it is added."""
        return ScopedCache(self.informers, name)

    def add(self, spec: ControllerSpec, reconcile: Reconcile, cache: ScopedCache | None = None) -> Controller:
        """Wire a controller; ``cache`` is the view its reconcile reads (from :meth:`cache`)."""
        if any(c.name == spec.name for c in self.controllers):
            raise ValueError(f"controller {spec.name!r} is added twice")
        controller = Controller(spec, reconcile, cache or self.cache(spec.name))
        self.controllers.append(controller)
        return controller

    def controller(self, name: str) -> Controller:
        for controller in self.controllers:
            if controller.name == name:
                return controller
        raise KeyError(name)

    def start_informers(self) -> None:
        """Start listing and watching (safe before the lease is held)."""
        self.informers.start()

    async def run_controllers(self) -> None:
        """Run every controller until cancelled; cancelling stops their in-flight reconciles."""
        tasks = [asyncio.create_task(c.run(), name=c.name) for c in self.controllers]
        try:
            done, _ = await asyncio.wait(tasks, return_when=asyncio.FIRST_EXCEPTION)
            for task in done:
                task.result()  # a controller that died takes the manager down with its error
        finally:
            for task in tasks:
                task.cancel()
            for task in tasks:
                with contextlib.suppress(asyncio.CancelledError):
                    await task

    async def stop(self) -> None:
        await self.informers.stop()
