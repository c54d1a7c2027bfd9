"""A list+watch informer for one resource kind, as client-go's reflector + shared informer.

Life of an :class:`Informer` (``run()`` until cancelled):

1. **List** in pages (``limit``/``continue``; an expired continue token restarts the list),
   replace the store with the result (:meth:`~kruise.core.informer.store.Store.replace`: objects
   that vanished since the last list are delivered as ``DELETED`` with their last known state and
   leave every index), remember the list's ``resourceVersion`` and mark the informer synced.
2. **Watch** from that resourceVersion with ``allowWatchBookmarks``. Each chunk of the response is
   split into lines and every complete event in it is decoded (orjson), transformed, stored and
   handed to the handlers without an ``await`` in between. BOOKMARKs only advance the
   resourceVersion.
3. The server ends a watch after ``timeoutSeconds``; a dropped connection, a timeout or a 5xx
   ends it early. Either way the watch **resumes from the last resourceVersion seen**, with no
   relist (after a capped, jittered backoff when it failed).
4. ``410 Gone`` (as an ERROR event in the stream or as the HTTP status of the watch request) means
   the resourceVersion was compacted away: back to 1, and the relist diff cleans up.

Handlers (``Callable[[Delta], None]``, synchronous: they should only enqueue) run after the store
holds the change, so a handler reading the store sees it. A handler that raises is logged and
counted; the informer and the other handlers go on. A handler added after the informer synced
first receives an ``ADDED`` for every stored object, as client-go delivers to a late handler.

``transform`` runs on every object before it is stored; the default drops
``metadata.managedFields`` (several KiB per object that nothing here reads).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

import orjson

from kruise.core.backoff import Backoff
from kruise.core.errors import ApiError, GoneError, TransientError
from kruise.core.informer.store import JSON, Delta, EventType, Indexer, Store, resource_version
from kruise.core.kube.answers import watch_error
from kruise.core.kube.client import KubeClient
from kruise.core.kube.resources import Resource

log = logging.getLogger(__name__)

Handler = Callable[[Delta], None]
Transform = Callable[[JSON], JSON]


def strip_managed_fields(obj: JSON) -> JSON:
    """The default transform: drop ``metadata.managedFields`` (in place; returns ``obj``)."""
    meta = obj.get("metadata")
    if meta is not None:
        meta.pop("managedFields", None)
    return obj


@dataclass
class InformerStats:
    """Counters for benchmarks and logs: events applied, lists, watch restarts, handler errors."""

    events: int = 0
    lists: int = 0
    relists_after_gone: int = 0
    watch_restarts: int = 0
    handler_errors: int = 0


class Informer:
    """Keeps :attr:`store` equal to the API server's objects of ``resource`` (optionally one
    namespace / a label or field selector) and tells :meth:`add_handler` handlers every change."""

    def __init__(
        self,
        kube: KubeClient,
        resource: Resource,
        *,
        namespace: str | None = None,
        label_selector: str | None = None,
        field_selector: str | None = None,
        transform: Transform | None = strip_managed_fields,
        page_size: int = 500,
        watch_timeout: int = 300,
        backoff: Backoff | None = None,
    ) -> None:
        self.kube = kube
        self.resource = resource
        self.namespace = namespace
        self.store = Store()
        self.stats = InformerStats()
        self._selectors: dict[str, str] = {}
        if label_selector:
            self._selectors["labelSelector"] = label_selector
        if field_selector:
            self._selectors["fieldSelector"] = field_selector
        self._transform = transform
        self._page_size = page_size
        self._watch_timeout = watch_timeout
        self._backoff = backoff or Backoff()
        self._handlers: list[Handler] = []
        self._synced = asyncio.Event()
        self._rv: str | None = None

    @property
    def name(self) -> str:
        """``plural.group`` (``pods`` for the core group), for logs."""
        res = self.resource
        return f"{res.plural}.{res.group}" if res.group else res.plural

    # ------------------------------------------------------------------ wiring
    def add_indexer(self, name: str, indexer: Indexer) -> None:
        """Add a named index to the store (see :meth:`Store.add_indexer`)."""
        self.store.add_indexer(name, indexer)

    def add_handler(self, handler: Handler) -> None:
        """Call ``handler`` for every change from now on (after replaying the store if synced)."""
        self._handlers.append(handler)
        if self.synced:
            for obj in self.store.values():
                self._call(handler, Delta(EventType.ADDED, obj, None))

    @property
    def synced(self) -> bool:
        """True once the first list is in the store and its events were handled."""
        return self._synced.is_set()

    async def wait_synced(self) -> None:
        await self._synced.wait()

    @property
    def resource_version(self) -> str | None:
        """The last resourceVersion seen (list, event or bookmark)."""
        return self._rv

    # ------------------------------------------------------------------ loop
    async def run(self) -> None:
        """List, then watch and resume, until cancelled (never returns otherwise)."""
        while True:
            try:
                if self._rv is None:
                    await self._list()
                await self._watch()
                self._backoff.reset()
            except GoneError as err:
                if self._rv is None:  # the list itself was refused: not a compaction to recover from
                    await self._pause(err)
                else:
                    log.info("%s: resourceVersion %s expired; relisting", self.name, self._rv)
                    self.stats.relists_after_gone += 1
                    self._rv = None
            except (TransientError, ApiError) as err:
                await self._pause(err)
            self.stats.watch_restarts += 1

    async def _pause(self, err: Exception) -> None:
        delay = self._backoff.next()
        log.warning("%s: list/watch failed (%s); retrying in %.1fs", self.name, err, delay)
        await asyncio.sleep(delay)

    async def _list(self) -> None:
        path = self.resource.path(self.namespace)
        params = {**self._selectors, "limit": str(self._page_size)}
        items: list[JSON] = []
        while True:
            try:
                page = await self.kube.request("GET", path, params=params)
            except GoneError:
                if "continue" not in params:
                    raise
                log.info("%s: list continue token expired; listing again", self.name)
                params.pop("continue")
                items.clear()
                continue
            for item in page.get("items") or ():
                item.setdefault("apiVersion", self.resource.api_version)
                item.setdefault("kind", self.resource.kind)
                items.append(self._transform(item) if self._transform else item)
            meta = page.get("metadata") or {}
            if not meta.get("continue"):
                break
            params["continue"] = str(meta["continue"])
        self.stats.lists += 1
        self._dispatch(self.store.replace(items))
        self._rv = str(meta.get("resourceVersion") or "") or None
        self._synced.set()

    async def _watch(self) -> None:
        params = {
            **self._selectors,
            "watch": "true",
            "allowWatchBookmarks": "true",
            "timeoutSeconds": str(self._watch_timeout),
        }
        if self._rv:
            params["resourceVersion"] = self._rv
        buf = b""
        stream = self.kube.stream(
            self.resource.path(self.namespace), params, read_timeout=self._watch_timeout + 30
        )
        async with contextlib.aclosing(stream) as chunks:
            async for chunk in chunks:
                *lines, buf = (buf + chunk).split(b"\n") if buf else chunk.split(b"\n")
                for line in lines:
                    if line:
                        self._apply(orjson.loads(line))

    def _apply(self, event: dict[str, Any]) -> None:
        """One watch event: store it, advance the resourceVersion, tell the handlers."""
        kind = event.get("type")
        obj: JSON = event.get("object") or {}
        if kind == "BOOKMARK":
            self._rv = resource_version(obj) or self._rv
            return
        if kind == "ERROR":
            raise watch_error(obj)
        if self._transform is not None:
            obj = self._transform(obj)
        delta = self.store.remove(obj) if kind == "DELETED" else self.store.upsert(obj)
        self._rv = resource_version(obj) or self._rv
        self.stats.events += 1
        if delta is not None:
            self._dispatch((delta,))

    def _dispatch(self, deltas: Iterable[Delta]) -> None:
        handlers = self._handlers
        for delta in deltas:
            for handler in handlers:
                self._call(handler, delta)

    def _call(self, handler: Handler, delta: Delta) -> None:
        try:
            handler(delta)
        except Exception:
            self.stats.handler_errors += 1
            log.exception("%s: handler %r failed on %s", self.name, handler, delta.type)
