"""Fixtures of the analysis integration tests: a real Prometheus and a local HTTP endpoint.

``prometheus`` (session): Debian's ``prometheus`` on loopback with a throw-away TSDB and a 1 s
scrape interval, scraping the exporter of :mod:`tests.support.prometheus` (revisions ``good``
0% errors, ``bad`` 50%, ``idle`` no traffic, ``flip`` settable); queryable when yielded.

``endpoint`` (session): an aiohttp server the web provider and a slow fake Prometheus talk to::

    GET  /json              {"data": {"ok": true, "rate": 0.99, "errors": 3}}
    GET  /text              It worked!
    GET  /status/{code}     an empty answer with that status
    GET  /slow?seconds=N    /json after N seconds
    POST /echo              {"body": <request JSON>, "headers": {...}}
    GET  /secure            /json when "Authorization: Bearer s3cret", else 403
    POST /slow-prometheus/api/v1/query   a Prometheus answer after 3 s
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass

import pytest
from aiohttp import web

from tests.support.prometheus import PrometheusStack, free_port, prometheus_binary


@pytest.fixture(scope="session")
def prometheus() -> Iterator[PrometheusStack]:
    """A running Prometheus whose exporter data is already queryable."""
    binary = prometheus_binary()
    stack = PrometheusStack(prometheus_bin=binary).start()
    try:
        yield stack
    finally:
        stack.stop()


@dataclass(frozen=True)
class Endpoint:
    """The local HTTP server's base URL."""

    url: str


async def _json(_: web.Request) -> web.Response:
    return web.json_response({"data": {"ok": True, "rate": 0.99, "errors": 3}})


async def _text(_: web.Request) -> web.Response:
    return web.Response(text="It worked!")


async def _status(request: web.Request) -> web.Response:
    return web.Response(status=int(request.match_info["code"]))


async def _slow(request: web.Request) -> web.Response:
    await asyncio.sleep(float(request.query.get("seconds", "3")))
    return await _json(request)


async def _echo(request: web.Request) -> web.Response:
    return web.json_response({"body": await request.json(), "headers": dict(request.headers)})


async def _secure(request: web.Request) -> web.Response:
    if request.headers.get("Authorization") != "Bearer s3cret":
        return web.Response(status=403)
    return await _json(request)


async def _slow_prometheus(_: web.Request) -> web.Response:
    await asyncio.sleep(3)
    return web.json_response({"status": "success", "data": {"resultType": "scalar", "result": [0, "1"]}})


@pytest.fixture(scope="session")
async def endpoint() -> AsyncIterator[Endpoint]:
    app = web.Application()
    app.router.add_get("/json", _json)
    app.router.add_get("/text", _text)
    app.router.add_get("/status/{code}", _status)
    app.router.add_get("/slow", _slow)
    app.router.add_post("/echo", _echo)
    app.router.add_get("/secure", _secure)
    app.router.add_post("/slow-prometheus/api/v1/query", _slow_prometheus)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    port = free_port()
    await web.TCPSite(runner, "127.0.0.1", port).start()
    try:
        yield Endpoint(f"http://127.0.0.1:{port}")
    finally:
        await runner.cleanup()
