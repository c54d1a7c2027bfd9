"""An HTTPS server answering AdmissionReviews on fixed paths.

Paths follow OpenKruise's (``/mutate-apps-kruise-io-v1alpha1-cloneset``,
``/validate-apps-kruise-io-v1alpha1-cloneset``, ...), so the Helm chart's
webhook configurations and upstream's look alike. A handler that raises is
answered with ``allowed: false`` and code 500, so a bug never admits silently.

Every registered path (admission and conversion) is instrumented as controller-runtime's
``InstrumentedHook``: ``controller_runtime_webhook_requests_total{webhook,code}`` (HTTP status of
the answer; ``200`` and ``500`` exist from registration), ``controller_runtime_webhook_latency_seconds``
and ``controller_runtime_webhook_requests_in_flight`` labelled with the path. Unknown paths are
answered 404 and not counted (no label per probe of a stranger).
"""

from __future__ import annotations

import logging
import ssl
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import orjson
from aiohttp import web

from kruise.core.metrics import WEBHOOK_IN_FLIGHT, WEBHOOK_LATENCY, WEBHOOK_REQUESTS
from kruise.core.webhook.review import AdmissionRequest, AdmissionResponse, Handler

log = logging.getLogger(__name__)


class WebhookServer:
    """Serve registered handlers on ``host:port`` with ``cert_file``/``key_file``."""

    def __init__(self, *, host: str, port: int, cert_file: Path, key_file: Path) -> None:
        self.host = host
        self.port = port
        self.cert_file = cert_file
        self.key_file = key_file
        self.handlers: dict[str, Handler] = {}
        self.conversions: dict[str, Callable[[dict[str, Any]], dict[str, Any]]] = {}
        self._runner: web.AppRunner | None = None

    def register(self, path: str, handler: Handler) -> None:
        if path in self.handlers:
            raise ValueError(f"webhook path {path} registered twice")
        self.handlers[path] = handler
        _init_metrics(path)

    def register_conversion(self, path: str, convert: Callable[[dict[str, Any]], dict[str, Any]]) -> None:
        """Serve ``apiextensions.k8s.io/v1`` ConversionReviews at ``path`` with ``convert(review)``."""
        if path in self.handlers or path in self.conversions:
            raise ValueError(f"webhook path {path} registered twice")
        self.conversions[path] = convert
        _init_metrics(path)

    async def _serve(self, request: web.Request) -> web.Response:
        path = request.path
        if path not in self.handlers and path not in self.conversions:
            return web.Response(status=404, text=f"no webhook at {path}")
        return await _instrumented(path, self._answer(request))

    async def _answer(self, request: web.Request) -> web.Response:
        convert = self.conversions.get(request.path)
        if convert is not None:
            try:
                review = orjson.loads(await request.read())
                return _json(convert(review))
            except Exception as err:
                log.exception("conversion at %s failed", request.path)
                return web.Response(status=500, text=f"conversion failed: {err}")
        handler = self.handlers[request.path]
        try:
            review = orjson.loads(await request.read())
        except orjson.JSONDecodeError:
            return web.Response(status=400, text="request body is not an AdmissionReview")
        adm = AdmissionRequest.from_review(review)
        try:
            response = await handler(adm)
        except Exception as err:  # a crash must deny, never admit
            log.exception(
                "webhook %s failed for %s %s/%s", request.path, adm.operation, adm.namespace, adm.name
            )
            response = AdmissionResponse.deny(f"internal error: {err}", code=500, reason="InternalError")
        return _json(response.to_review(adm.uid))

    async def start(self) -> None:
        app = web.Application()
        app.router.add_post("/{tail:.*}", self._serve)
        app.router.add_get("/healthz", _healthz)
        ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        ctx.load_cert_chain(str(self.cert_file), str(self.key_file))
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, self.host, self.port, ssl_context=ctx)
        await site.start()
        log.info("webhook server listening on https://%s:%d", self.host, self.port)

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None


def _json(body: Any) -> web.Response:
    """``body`` as an ``application/json`` answer (orjson: the review holds the whole pod)."""
    return web.Response(body=orjson.dumps(body), content_type="application/json")


async def _healthz(_: web.Request) -> web.Response:
    return web.Response(text="ok")


def _init_metrics(path: str) -> None:
    """Export the likeliest codes at 0 from registration, as controller-runtime does."""
    WEBHOOK_REQUESTS.labels(path, "200")
    WEBHOOK_REQUESTS.labels(path, "500")
    WEBHOOK_IN_FLIGHT.labels(path)


async def _instrumented(path: str, answer: Awaitable[web.Response]) -> web.Response:
    in_flight = WEBHOOK_IN_FLIGHT.labels(path)
    in_flight.inc()
    started = time.monotonic()
    code = 500  # an exception escaping the handler is answered 500 by aiohttp
    try:
        response = await answer
        code = response.status
        return response
    finally:
        in_flight.dec()
        WEBHOOK_LATENCY.labels(path).observe(time.monotonic() - started)
        WEBHOOK_REQUESTS.labels(path, str(code)).inc()
