"""The process's shared informers, and the read-only view each controller gets of them.

:class:`Informers` holds one :class:`~kruise.core.informer.Informer` per resource kind, created
on first use and shared by every controller (one pod informer per process however many
controllers read pods). :class:`ScopedCache` is what a controller reads through: it answers
only for the kinds and indices the controller's :class:`~kruise.core.runtime.spec.ControllerSpec`
declares, so a controller cannot silently depend on an index another controller happens to
register; reading anything else raises :class:`UndeclaredReadError` naming the controller.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Iterable
from typing import Protocol

from kruise.core.errors import KruiseError
from kruise.core.informer import Informer
from kruise.core.informer.store import JSON
from kruise.core.kube.client import KubeClient
from kruise.core.kube.resources import Resource
from kruise.core.runtime.spec import ControllerSpec

log = logging.getLogger(__name__)

InformerFactory = Callable[[KubeClient, Resource], Informer]


class CacheReader(Protocol):
    """What controllers read: objects of a kind by key, by a named index, or all of them.
    The objects are shared with the informer: never mutate them. Reads are safe from any thread
    (the webhooks' loop thread reads the manager's informers; see
    :class:`~kruise.core.informer.store.Store`)."""

    def get(self, resource: Resource, key: str) -> JSON | None: ...

    def by_index(self, resource: Resource, index: str, value: str) -> list[JSON]: ...

    def list(self, resource: Resource) -> list[JSON]: ...


class NotRegisteredError(KruiseError, LookupError):
    """A read of a kind (or index) no informer serves: a wiring mistake."""


class UndeclaredReadError(NotRegisteredError):
    """A controller read a kind or index its spec does not declare."""


class Informers:
    """One informer per resource kind for the whole process."""

    def __init__(self, kube: KubeClient, *, factory: InformerFactory | None = None) -> None:
        self.kube = kube
        self._factory = factory or (lambda kube, res: Informer(kube, res))
        self._informers: dict[Resource, Informer] = {}
        self._tasks: dict[Resource, asyncio.Task[None]] = {}
        self._started = False

    def informer(self, resource: Resource) -> Informer:
        """The informer of ``resource``, created (and started, if the others are) on first use."""
        found = self._informers.get(resource)
        if found is None:
            found = self._informers[resource] = self._factory(self.kube, resource)
            if self._started:
                self._start(resource, found)
        return found

    def __contains__(self, resource: object) -> bool:
        return resource in self._informers

    def resources(self) -> list[Resource]:
        return list(self._informers)

    def _served(self, resource: Resource) -> Informer:
        found = self._informers.get(resource)
        if found is None:
            raise NotRegisteredError(f"no informer serves {resource.plural}.{resource.group or 'core'}")
        return found

    # ------------------------------------------------------------------ reads (unscoped)
    def get(self, resource: Resource, key: str) -> JSON | None:
        return self._served(resource).store.get(key)

    def by_index(self, resource: Resource, index: str, value: str) -> list[JSON]:
        store = self._served(resource).store
        if not store.has_index(index):
            raise NotRegisteredError(f"{resource.plural} has no index {index!r}")
        return store.by_index(index, value)

    def list(self, resource: Resource) -> list[JSON]:
        return self._served(resource).store.values()

    # ------------------------------------------------------------------ lifecycle
    def start(self) -> None:
        """Start every informer (and any created later); call inside the running loop."""
        self._started = True
        for resource, informer in self._informers.items():
            if resource not in self._tasks:
                self._start(resource, informer)

    def _start(self, resource: Resource, informer: Informer) -> None:
        self._tasks[resource] = asyncio.create_task(informer.run(), name=f"informer-{informer.name}")

    async def wait_synced(self, resources: Iterable[Resource]) -> None:
        """Wait until every informer of ``resources`` has listed once."""
        await asyncio.gather(*(self._served(r).wait_synced() for r in set(resources)))

    def synced(self) -> bool:
        return all(i.synced for i in self._informers.values())

    async def stop(self) -> None:
        """Cancel every informer (closing its watch connection)."""
        self._started = False
        tasks = list(self._tasks.values())
        self._tasks.clear()
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task


class ScopedCache:
    """A :class:`CacheReader` over :class:`Informers` limited to what one spec declares."""

    def __init__(self, informers: Informers, name: str) -> None:
        self.informers = informers
        self.name = name
        self._kinds: set[Resource] = set()
        self._indices: set[tuple[Resource, str]] = set()

    def declare(self, spec: ControllerSpec) -> None:
        """Allow the reads ``spec`` declares (creating their informers and indices)."""
        for read in spec.all_reads():
            informer = self.informers.informer(read.resource)
            self._kinds.add(read.resource)
            for index, indexer in read.indexers.items():
                informer.add_indexer(index, indexer)
                self._indices.add((read.resource, index))

    def _check(self, resource: Resource, index: str | None = None) -> None:
        if resource not in self._kinds:
            raise UndeclaredReadError(f"{self.name} reads {resource.plural}, which its spec does not declare")
        if index is not None and (resource, index) not in self._indices:
            raise UndeclaredReadError(
                f"{self.name} reads index {index!r} of {resource.plural}, which its spec does not declare"
            )

    def get(self, resource: Resource, key: str) -> JSON | None:
        self._check(resource)
        return self.informers.get(resource, key)

    def by_index(self, resource: Resource, index: str, value: str) -> list[JSON]:
        self._check(resource, index)
        return self.informers.by_index(resource, index, value)

    def list(self, resource: Resource) -> list[JSON]:
        self._check(resource)
        return self.informers.list(resource)
