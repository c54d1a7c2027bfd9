"""An in-process fake API server for namespaced kinds, for the informer's and runtime's tests only.

It keeps objects with a global resourceVersion counter and an event log, and serves what an
informer uses: paged LIST (``limit``/``continue``) and WATCH (``resourceVersion``,
``allowWatchBookmarks``, ``timeoutSeconds``). Tests steer its failures:

- :meth:`compact` forgets the log up to the current resourceVersion: a watch or a continue
  token from before it gets ``410 Gone`` (as an ERROR event, or as the HTTP status when
  :attr:`gone_as_status` is set);
- :meth:`drop_watches` closes every open watch connection mid-stream;
- :attr:`bookmark_every` sends a BOOKMARK after that many events;
- :attr:`fail_next` answers the next requests with the given HTTP statuses.
"""

from __future__ import annotations

import asyncio
import copy
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import orjson
from aiohttp import web

from kruise.core.kube import KubeClient
from kruise.core.kube.config import KubeConfig
from kruise.core.kube.resources import PODS, Resource

JSON = dict[str, Any]


@dataclass
class Event:
    rv: int
    type: str
    obj: JSON
    plural: str


@dataclass
class FakeApiServer:
    kinds: dict[str, dict[str, JSON]] = field(default_factory=dict)  # plural -> ns/name -> object
    log: list[Event] = field(default_factory=list)
    rv: int = 1
    compacted: int = 0
    bookmark_every: int = 0
    gone_as_status: bool = False
    expire_continue_once: bool = False
    abort_on_drop: bool = False
    fail_next: list[int] = field(default_factory=list)
    requests: list[str] = field(default_factory=list)
    _changed: asyncio.Condition = field(default_factory=asyncio.Condition)
    _generation: int = 0
    _runner: web.AppRunner | None = None
    port: int = 0
    open_watches: int = 0

    @property
    def objects(self) -> dict[str, JSON]:
        """The pods, by ``namespace/name``."""
        return self.kinds.setdefault(PODS.plural, {})

    # ------------------------------------------------------------------ state changes
    async def _record(self, type_: str, obj: JSON, plural: str) -> None:
        self.log.append(Event(self.rv, type_, copy.deepcopy(obj), plural))
        async with self._changed:
            self._changed.notify_all()

    def _next_rv(self, obj: JSON) -> None:
        self.rv += 1
        obj["metadata"]["resourceVersion"] = str(self.rv)

    async def create(self, name: str, namespace: str = "ns", *, res: Resource = PODS, **fields: Any) -> JSON:
        obj: JSON = {
            "apiVersion": res.api_version,
            "kind": res.kind,
            "metadata": {
                "name": name,
                "namespace": namespace,
                "uid": f"uid-{name}",
                "managedFields": [{"manager": "test", "fieldsV1": {"f:spec": {}}}],
                **fields.pop("metadata", {}),
            },
            **fields,
        }
        self._next_rv(obj)
        self.kinds.setdefault(res.plural, {})[f"{namespace}/{name}"] = obj
        await self._record("ADDED", obj, res.plural)
        return obj

    async def update(self, name: str, namespace: str = "ns", *, res: Resource = PODS, **fields: Any) -> JSON:
        obj = self.kinds[res.plural][f"{namespace}/{name}"]
        meta = fields.pop("metadata", None)
        if meta:
            obj["metadata"].update(meta)
        obj.update(fields)
        self._next_rv(obj)
        await self._record("MODIFIED", obj, res.plural)
        return obj

    async def delete(self, name: str, namespace: str = "ns", *, res: Resource = PODS) -> JSON:
        obj = self.kinds[res.plural].pop(f"{namespace}/{name}")
        self._next_rv(obj)
        await self._record("DELETED", obj, res.plural)
        return obj

    def compact(self) -> None:
        """Forget every event so far: older resourceVersions are Gone."""
        self.compacted = self.rv
        self.log.clear()

    async def drop_watches(self) -> None:
        """Close every watch open now (the clients see the connection end mid-stream)."""
        self._generation += 1
        async with self._changed:
            self._changed.notify_all()

    # ------------------------------------------------------------------ HTTP
    async def start(self) -> None:
        app = web.Application()
        app.router.add_get("/api/v1/{plural}", self._serve)
        app.router.add_get("/apis/{group}/{version}/{plural}", self._serve)
        self._runner, self.port = await serve_local(
            app, access_log=None, handler_cancellation=True, shutdown_timeout=1
        )

    async def stop(self) -> None:
        await self.drop_watches()
        if self._runner is not None:
            await self._runner.cleanup()

    def client(self) -> KubeClient:
        return local_client(self.port)

    def _gone(self, message: str) -> web.Response:
        body = {"kind": "Status", "apiVersion": "v1", "status": "Failure", "reason": "Expired", "code": 410}
        return web.json_response({**body, "message": message}, status=410)

    async def _serve(self, request: web.Request) -> web.StreamResponse:
        q = request.query
        self.requests.append(request.query_string)
        if self.fail_next:
            return web.json_response({"kind": "Status", "code": 500}, status=self.fail_next.pop(0))
        plural = request.match_info["plural"]
        if q.get("watch") in ("true", "1"):
            return await self._watch(request, plural)
        return self._list(q, self.kinds.setdefault(plural, {}))

    def _list(self, q: Any, objects: dict[str, JSON]) -> web.Response:
        limit = int(q.get("limit") or 0) or len(objects) or 1
        cont = q.get("continue")
        after, snapshot = "", self.rv
        if cont:
            snap, _, after = cont.partition(":")
            snapshot = int(snap)
            if self.expire_continue_once or (snapshot <= self.compacted and self.compacted):
                self.expire_continue_once = False
                return self._gone("continue token expired")
        # a continue token names the last key sent, as etcd's does (an offset would skip an
        # object when an earlier one is deleted between two pages)
        keys = [k for k in sorted(objects) if k > after]
        page = [
            {k: v for k, v in copy.deepcopy(objects[key]).items() if k not in ("apiVersion", "kind")}
            for key in keys[:limit]
        ]
        meta: JSON = {"resourceVersion": str(snapshot)}
        if len(keys) > limit:
            meta["continue"] = f"{snapshot}:{keys[limit - 1]}"
        return web.json_response({"kind": "List", "apiVersion": "v1", "metadata": meta, "items": page})

    async def _watch(self, request: web.Request, plural: str) -> web.StreamResponse:
        since = int(request.query.get("resourceVersion") or 0)
        bookmarks = request.query.get("allowWatchBookmarks") == "true"
        if since < self.compacted and self.gone_as_status:
            return self._gone(f"too old resource version: {since} ({self.compacted})")
        resp = web.StreamResponse()
        resp.content_type = "application/json"
        await resp.prepare(request)
        self.open_watches += 1
        generation = self._generation
        try:
            if since < self.compacted:
                status = {
                    "kind": "Status",
                    "code": 410,
                    "reason": "Expired",
                    "message": "too old resource version",
                }
                await resp.write(orjson.dumps({"type": "ERROR", "object": status}) + b"\n")
                return resp
            sent = 0
            async for event in self._events_after(since, generation, plural):
                await resp.write(orjson.dumps({"type": event.type, "object": event.obj}) + b"\n")
                sent += 1
                if bookmarks and self.bookmark_every and sent % self.bookmark_every == 0:
                    # what the API server promises with a bookmark: every event up to this
                    # resourceVersion was sent (self.rv may already be ahead of this stream)
                    mark = {"metadata": {"resourceVersion": str(event.rv)}}
                    await resp.write(orjson.dumps({"type": "BOOKMARK", "object": mark}) + b"\n")
            if self.abort_on_drop and generation != self._generation and request.transport is not None:
                request.transport.abort()  # a reset connection, not a clean end of the stream
        finally:
            self.open_watches -= 1
        return resp

    async def _events_after(self, since: int, generation: int, plural: str) -> AsyncIterator[Event]:
        last = since
        while generation == self._generation:
            pending = [e for e in self.log if e.rv > last and e.plural == plural]
            for event in pending:
                yield event
                last = event.rv
            if pending:
                continue
            async with self._changed:
                if generation != self._generation:
                    return
                await self._changed.wait()
            if last < self.compacted:  # compacted while we waited: the client must relist
                return


async def serve_local(app: web.Application, **runner_args: Any) -> tuple[web.AppRunner, int]:
    """Serve ``app`` over plain HTTP on a free loopback port: its runner (``cleanup()`` stops it)
    and the port."""
    runner = web.AppRunner(app, **runner_args)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    return runner, site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]


def local_client(port: int) -> KubeClient:
    """A client of the plain-HTTP server on ``port`` of loopback, unthrottled."""
    return KubeClient(KubeConfig(server=f"http://127.0.0.1:{port}", ssl_context=False, qps=0))
