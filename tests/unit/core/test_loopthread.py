"""LoopThread: coroutines run on the thread's own loop, results and errors come back to the
caller's loop, cancellation crosses over, and stop leaves nothing running. Plus the webhook
server served from a LoopThread over real HTTPS, the way the manager runs it."""

from __future__ import annotations

import asyncio
import ssl
import threading
from pathlib import Path

import aiohttp
import pytest
from prometheus_client import REGISTRY

from kruise.core.localcluster.cluster import free_port
from kruise.core.loopthread import LoopThread, LoopThreadError
from kruise.core.webhook import WebhookServer
from kruise.core.webhook.review import AdmissionRequest, AdmissionResponse
from kruise.rollouts.manager.app import ensure_webhook_certs


async def where() -> tuple[int, asyncio.AbstractEventLoop]:
    return threading.get_ident(), asyncio.get_running_loop()


async def test_a_call_runs_on_the_threads_loop_and_returns_its_result() -> None:
    thread = LoopThread("t-result")
    thread.start()
    try:
        ident, loop = await thread.call(where())
        assert ident != threading.get_ident()
        assert loop is thread.loop and loop is not asyncio.get_running_loop()
    finally:
        await thread.stop()


async def test_an_exception_on_the_thread_reaches_the_caller() -> None:
    async def fail() -> None:
        raise ValueError("boom on the thread")

    thread = LoopThread("t-error")
    thread.start()
    try:
        with pytest.raises(ValueError, match="boom on the thread"):
            await thread.call(fail())
    finally:
        await thread.stop()


async def test_cancelling_the_caller_cancels_the_coroutine_on_the_thread() -> None:
    started, cancelled = threading.Event(), threading.Event()

    async def forever() -> None:
        started.set()
        try:
            await asyncio.sleep(3600)
        except asyncio.CancelledError:
            cancelled.set()
            raise

    thread = LoopThread("t-cancel")
    thread.start()
    try:
        caller = asyncio.create_task(thread.call(forever()))
        await asyncio.to_thread(started.wait, 5)
        caller.cancel()
        with pytest.raises(asyncio.CancelledError):
            await caller
        assert await asyncio.to_thread(cancelled.wait, 5)
    finally:
        await thread.stop()


async def test_stop_cancels_what_is_left_and_ends_the_thread() -> None:
    cancelled = threading.Event()

    async def background() -> None:
        try:
            await asyncio.sleep(3600)
        except asyncio.CancelledError:
            cancelled.set()
            raise

    async def spawn() -> None:
        asyncio.get_running_loop().create_task(background())
        await asyncio.sleep(0)

    thread = LoopThread("t-stop")
    thread.start()
    await thread.call(spawn())
    await thread.stop()
    assert cancelled.is_set()
    assert not any(t.name == "t-stop" for t in threading.enumerate())
    with pytest.raises(LoopThreadError):
        await thread.call(where())
    await thread.stop()  # twice: a no-op


async def test_starting_twice_is_an_error() -> None:
    thread = LoopThread("t-twice")
    thread.start()
    try:
        with pytest.raises(LoopThreadError):
            thread.start()
    finally:
        await thread.stop()


async def test_webhook_server_on_a_loop_thread_answers_while_the_callers_loop_is_blocked(
    tmp_path: Path,
) -> None:
    """The manager's arrangement: a review is answered (and counted on /metrics) even while the
    loop that started the server is busy and never yields."""
    handled_on: list[int] = []

    async def allow(_: AdmissionRequest) -> AdmissionResponse:
        handled_on.append(threading.get_ident())
        return AdmissionResponse.allow()

    cert, key, _ = ensure_webhook_certs(tmp_path, "kruise-webhook-service", "kruise-system")
    server = WebhookServer(host="127.0.0.1", port=free_port(), cert_file=cert, key_file=key)
    path = f"/t-thread-{free_port()}"
    server.register(path, allow)
    thread = LoopThread("t-webhooks")
    thread.start()
    await thread.call(server.start())
    try:
        review = {"request": {"uid": "u1", "operation": "CREATE", "object": {}}}
        got: dict[str, object] = {}
        url = f"https://127.0.0.1:{server.port}{path}"
        worker = threading.Thread(target=lambda: got.update(answer=_post(url, review)))
        worker.start()
        worker.join(15)  # blocks this test's loop throughout: the server must not need it
        assert got.get("answer") == {"uid": "u1", "allowed": True}
        assert handled_on and handled_on[0] != threading.get_ident()
        count = REGISTRY.get_sample_value(
            "controller_runtime_webhook_requests_total", {"webhook": path, "code": "200"}
        )
        assert count == 1
    finally:
        await thread.call(server.stop())
        await thread.stop()


def _post(url: str, review: dict[str, object]) -> object:
    """POST ``review`` from a fresh loop on the calling (worker) thread; the answer's ``response``."""

    async def post() -> object:
        insecure = ssl.create_default_context()
        insecure.check_hostname, insecure.verify_mode = False, ssl.CERT_NONE
        async with (
            aiohttp.ClientSession(connector=aiohttp.TCPConnector(ssl=insecure)) as http,
            http.post(url, json=review, timeout=aiohttp.ClientTimeout(total=10)) as resp,
        ):
            return (await resp.json())["response"]

    return asyncio.run(post())
