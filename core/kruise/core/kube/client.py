"""The async Kubernetes adapter: JSON dicts in and out over one aiohttp session.

Every call is rate limited by a token bucket (``qps``/``burst``, as client-go's
flowcontrol and kruise-manager's ``--kube-client-qps``/``--kube-client-burst``).
Errors become :mod:`kruise.core.errors` exceptions; connection failures are
:class:`~kruise.core.errors.TransientError`.

Metrics as client-go's (:mod:`kruise.core.metrics`): every request and every watch counts in
``rest_client_requests_total{code,method,host}`` (``code`` ``<error>`` without an HTTP answer);
requests other than watches also observe ``rest_client_request_duration_seconds{verb,host}``
from before the rate limiter to the end of the answer, as client-go measures it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal
from urllib.parse import urlsplit

import aiohttp
import orjson

from kruise.core.errors import NotFoundError, TransientError
from kruise.core.kube.answers import error_of, watch_error
from kruise.core.kube.config import KubeConfig, load_kube_config
from kruise.core.kube.recorded import record_answer
from kruise.core.kube.resources import Resource
from kruise.core.metrics import REST_ERROR_CODE, RestClientMetrics

JSON = dict[str, Any]
PatchType = Literal["merge", "strategic", "json", "apply"]
_PATCH_CONTENT_TYPES = {
    "merge": "application/merge-patch+json",
    "strategic": "application/strategic-merge-patch+json",
    "json": "application/json-patch+json",
    "apply": "application/apply-patch+yaml",
}
FIELD_MANAGER = "kruise-manager"
writes_log = logging.getLogger("kruise.core.kube.writes")
"""Every write this client sends, at DEBUG (``sent PATCH /api/v1/...``), after the write guard."""


@dataclass(frozen=True)
class WatchEvent:
    """One watch event: ``type`` is ADDED, MODIFIED, DELETED or BOOKMARK."""

    type: str
    object: JSON


class TokenBucket:
    """Client-side rate limit: ``qps`` tokens per second, at most ``burst`` banked."""

    def __init__(self, qps: float, burst: int) -> None:
        self.qps = qps
        self.burst = max(1, burst)
        self._tokens = float(self.burst)
        self._last = time.monotonic()
        self._lock = asyncio.Lock()

    async def acquire(self) -> None:
        if self.qps <= 0:
            return
        async with self._lock:
            now = time.monotonic()
            self._tokens = min(self.burst, self._tokens + (now - self._last) * self.qps)
            self._last = now
            if self._tokens < 1:
                await asyncio.sleep((1 - self._tokens) / self.qps)
                self._tokens = 0.0
                self._last = time.monotonic()
            else:
                self._tokens -= 1


WriteGuard = Callable[[], None]
"""Called right before a write (POST/PUT/PATCH/DELETE, not a dry run) is sent; raising
(e.g. :class:`~kruise.core.errors.FencedError`) stops the write."""
_READS = frozenset({"GET", "HEAD", "OPTIONS"})


class KubeClient:
    """Async client for any API resource, objects as JSON dicts.

    Create with :meth:`from_kubeconfig` and close with :meth:`close` (or ``async with``).
    ``write_guard`` is consulted after rate limiting and credential refresh, with no await
    between it and handing the request to the connection, so a client fenced by the leader
    lease cannot send a write once the fence has lapsed, however long the process was frozen.
    """

    CONNECTIONS = 64
    """HTTP/1.1 connections kept to the API server (client-go multiplexes one HTTP/2 connection).
    Each new one costs a TLS handshake with a client certificate; 64 requests in flight are more
    than the API server answers at once on this kind of machine, and a burst (a slow-start batch
    of 256 pod creations) waits for a free connection instead of opening hundreds."""

    def __init__(self, config: KubeConfig, *, write_guard: WriteGuard | None = None) -> None:
        self.config = config
        self.write_guard = write_guard
        self._session: aiohttp.ClientSession | None = None
        self._bucket = TokenBucket(config.qps, config.burst)
        self._metrics = RestClientMetrics(urlsplit(config.server).netloc or "none")

    @classmethod
    async def from_kubeconfig(
        cls, kubeconfig: str | None = None, *, context: str | None = None, qps: float = 50.0, burst: int = 100
    ) -> KubeClient:
        return cls(await load_kube_config(kubeconfig, context=context, qps=qps, burst=burst))

    async def __aenter__(self) -> KubeClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    def _sess(self) -> aiohttp.ClientSession:
        if self._session is None or self._session.closed:
            connector = aiohttp.TCPConnector(ssl=self.config.ssl_context, limit=self.CONNECTIONS)
            self._session = aiohttp.ClientSession(base_url=self.config.server, connector=connector)
        return self._session

    async def close(self) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None

    # ------------------------------------------------------------------ raw
    async def request(
        self,
        method: str,
        path: str,
        *,
        params: Mapping[str, str] | None = None,
        body: Any = None,
        content_type: str = "application/json",
        timeout: float = 60.0,
        guard: WriteGuard | None = None,
    ) -> JSON:
        """One API call; returns the decoded JSON answer. Raises ApiError / TransientError.
        A write is checked by ``guard`` (this call's) and :attr:`write_guard` (the client's)
        right before it is sent."""
        started = time.monotonic()
        code = REST_ERROR_CODE
        await self._bucket.acquire()
        headers = dict(await self.config.refresh_headers())
        data: bytes | None = None
        if body is not None:
            headers["Content-Type"] = content_type
            data = orjson.dumps(body)
        if method not in _READS:
            if not (params and "dryRun" in params):
                for check in (guard, self.write_guard):
                    if check is not None:
                        check()
            writes_log.debug("sent %s %s", method, path)
        try:
            async with self._sess().request(
                method,
                path,
                params=params,
                data=data,
                headers=headers,
                timeout=aiohttp.ClientTimeout(total=timeout),
            ) as resp:
                code = str(resp.status)
                raw = await resp.read()
                if resp.status >= 400:
                    raise error_of(resp.status, raw, method, path)
                answer: JSON = orjson.loads(raw) if raw else {}
                record_answer(method, params, answer)
                return answer
        except (aiohttp.ClientConnectionError, TimeoutError) as err:
            raise TransientError(f"{method} {path}: {transport_error(err)}") from err
        finally:
            self._metrics.observe(method, code, time.monotonic() - started)

    async def stream(
        self, path: str, params: Mapping[str, str], *, read_timeout: float
    ) -> AsyncGenerator[bytes, None]:
        """The body of a long-running GET (a watch) as raw chunks, as they arrive.

        Rate limited like any call. An error status raises its :class:`ApiError` before the
        first chunk; a dropped connection or ``read_timeout`` seconds without data raises
        :class:`TransientError`. Closing the generator (or cancelling its reader) closes the
        connection. Use with ``contextlib.aclosing``.
        """
        await self._bucket.acquire()
        headers = dict(await self.config.refresh_headers())
        answered = False
        try:
            async with self._sess().get(
                path,
                params=params,
                headers=headers,
                timeout=aiohttp.ClientTimeout(total=None, sock_read=read_timeout),
            ) as resp:
                answered = True
                self._metrics.count("GET", str(resp.status))
                if resp.status >= 400:
                    raise error_of(resp.status, await resp.read(), "GET", path)
                async for chunk in resp.content.iter_any():
                    yield chunk
        except (aiohttp.ClientConnectionError, aiohttp.ClientPayloadError, TimeoutError) as err:
            if not answered:
                self._metrics.count("GET", REST_ERROR_CODE)
            raise TransientError(f"GET {path}: {transport_error(err)}") from err

    # ------------------------------------------------------------------ verbs
    async def get(
        self, res: Resource, name: str, namespace: str | None = None, *, subresource: str | None = None
    ) -> JSON:
        return await self.request("GET", res.path(namespace, name, subresource))

    async def get_or_none(self, res: Resource, name: str, namespace: str | None = None) -> JSON | None:
        try:
            return await self.get(res, name, namespace)
        except NotFoundError:
            return None

    async def list(
        self,
        res: Resource,
        namespace: str | None = None,
        *,
        label_selector: str | None = None,
        field_selector: str | None = None,
        resource_version: str | None = None,
    ) -> JSON:
        """The List object (``items`` plus ``metadata.resourceVersion``), all pages joined."""
        params: dict[str, str] = {"limit": "500"}
        if label_selector:
            params["labelSelector"] = label_selector
        if field_selector:
            params["fieldSelector"] = field_selector
        if resource_version is not None:
            params["resourceVersion"] = resource_version
        items: list[JSON] = []
        while True:
            page = await self.request("GET", res.path(namespace), params=params)
            items.extend(page.get("items") or [])
            cont = (page.get("metadata") or {}).get("continue")
            if not cont:
                page["items"] = items
                for item in items:  # list items omit kind/apiVersion
                    item.setdefault("apiVersion", res.api_version)
                    item.setdefault("kind", res.kind)
                return page
            params = {**params, "continue": cont}

    async def create(
        self,
        res: Resource,
        body: JSON,
        namespace: str | None = None,
        *,
        dry_run: bool = False,
        field_manager: str = FIELD_MANAGER,
    ) -> JSON:
        """POST ``body``; the fields it sets are ``field_manager``'s in ``managedFields``."""
        ns = namespace or (body.get("metadata") or {}).get("namespace")
        params = {"fieldManager": field_manager, **({"dryRun": "All"} if dry_run else {})}
        return await self.request("POST", res.path(ns if res.namespaced else None), body=body, params=params)

    async def replace(
        self,
        res: Resource,
        body: JSON,
        *,
        subresource: str | None = None,
        dry_run: bool = False,
        field_manager: str = FIELD_MANAGER,
        guard: WriteGuard | None = None,
    ) -> JSON:
        """PUT the whole object; ``metadata.resourceVersion`` in ``body`` is the precondition. The
        fields it changes become ``field_manager``'s in ``managedFields`` (without it the API server
        names the writer after the HTTP client's User-Agent), which the GitOps fight guards tell
        apart from other writers by."""
        meta = body["metadata"]
        params = {"fieldManager": field_manager, **({"dryRun": "All"} if dry_run else {})}
        path = res.path(meta.get("namespace"), meta["name"], subresource)
        return await self.request("PUT", path, body=body, params=params, guard=guard)

    async def patch(
        self,
        res: Resource,
        name: str,
        patch: Any,
        namespace: str | None = None,
        *,
        patch_type: PatchType = "merge",
        subresource: str | None = None,
        field_manager: str = FIELD_MANAGER,
        force: bool = False,
        dry_run: bool = False,
    ) -> JSON:
        """PATCH with the given type; for ``apply`` (server-side apply) ``force`` takes ownership."""
        params: dict[str, str] = {"fieldManager": field_manager}
        if patch_type == "apply" and force:
            params["force"] = "true"
        if dry_run:
            params["dryRun"] = "All"
        return await self.request(
            "PATCH",
            res.path(namespace, name, subresource),
            body=patch,
            params=params,
            content_type=_PATCH_CONTENT_TYPES[patch_type],
        )

    async def delete(
        self,
        res: Resource,
        name: str,
        namespace: str | None = None,
        *,
        uid: str | None = None,
        resource_version: str | None = None,
        propagation: str | None = "Background",
        grace_period_seconds: int | None = None,
        missing_ok: bool = False,
    ) -> JSON | None:
        """DELETE with optional ``uid``/``resourceVersion`` preconditions."""
        body: JSON = {"apiVersion": "v1", "kind": "DeleteOptions"}
        pre: dict[str, str] = {}
        if uid:
            pre["uid"] = uid
        if resource_version:
            pre["resourceVersion"] = resource_version
        if pre:
            body["preconditions"] = pre
        if propagation:
            body["propagationPolicy"] = propagation
        if grace_period_seconds is not None:
            body["gracePeriodSeconds"] = grace_period_seconds
        try:
            return await self.request("DELETE", res.path(namespace, name), body=body)
        except NotFoundError:
            if missing_ok:
                return None
            raise

    async def watch(
        self,
        res: Resource,
        namespace: str | None = None,
        *,
        resource_version: str | None = None,
        label_selector: str | None = None,
        field_selector: str | None = None,
        timeout_seconds: int = 300,
    ) -> AsyncIterator[WatchEvent]:
        """Stream watch events from ``resource_version`` until the server closes the watch.

        An ERROR event (e.g. 410 Gone for a compacted resourceVersion) raises ApiError.
        """
        params = {
            "watch": "true",
            "allowWatchBookmarks": "true",
            "timeoutSeconds": str(timeout_seconds),
        }
        if resource_version:
            params["resourceVersion"] = resource_version
        if label_selector:
            params["labelSelector"] = label_selector
        if field_selector:
            params["fieldSelector"] = field_selector
        buf = b""
        async with contextlib.aclosing(
            self.stream(res.path(namespace), params, read_timeout=timeout_seconds + 30)
        ) as chunks:
            async for chunk in chunks:
                *lines, buf = (buf + chunk).split(b"\n")
                for line in lines:
                    if not line.strip():
                        continue
                    event = orjson.loads(line)
                    if event.get("type") == "ERROR":
                        raise watch_error(event.get("object") or {})
                    yield WatchEvent(event["type"], event["object"])


def transport_error(err: BaseException) -> str:
    """A failed connection or read as a user reads it: aiohttp's message ("Cannot connect to host
    127.0.0.1:1 ssl:True [Connect call failed ...]"), or the error's type when it has none (a
    timeout), never the connection key's repr."""
    return str(err) or type(err).__name__
