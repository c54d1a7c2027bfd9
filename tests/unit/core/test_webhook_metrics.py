"""Webhook server metrics (controller-runtime's ``controller_runtime_webhook_*``), over real HTTPS."""

from __future__ import annotations

import asyncio
import ssl
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from prometheus_client import REGISTRY

from kruise.core.localcluster.cluster import free_port
from kruise.core.webhook import WebhookServer
from kruise.core.webhook.review import AdmissionRequest, AdmissionResponse
from kruise.rollouts.manager.app import ensure_webhook_certs

GATE = asyncio.Event()


async def allow(_: AdmissionRequest) -> AdmissionResponse:
    return AdmissionResponse.allow()


async def wait_for_gate(_: AdmissionRequest) -> AdmissionResponse:
    await GATE.wait()
    return AdmissionResponse.allow()


async def crash(_: AdmissionRequest) -> AdmissionResponse:
    raise RuntimeError("handler bug")


@pytest.fixture
async def server(tmp_path: Path) -> AsyncIterator[tuple[str, str]]:
    """A webhook server with three handlers under a fresh path prefix; yields (base URL, prefix)."""
    cert, key, _ = ensure_webhook_certs(tmp_path, "kruise-webhook-service", "kruise-system")
    srv = WebhookServer(host="127.0.0.1", port=free_port(), cert_file=cert, key_file=key)
    prefix = f"/t-{uuid.uuid4().hex[:6]}"
    srv.register(f"{prefix}/allow", allow)
    srv.register(f"{prefix}/slow", wait_for_gate)
    srv.register(f"{prefix}/crash", crash)
    srv.register_conversion(f"{prefix}/convert", lambda review: review)
    await srv.start()
    try:
        yield f"https://127.0.0.1:{srv.port}", prefix
    finally:
        await srv.stop()


def review() -> dict[str, Any]:
    return {
        "apiVersion": "admission.k8s.io/v1",
        "kind": "AdmissionReview",
        "request": {"uid": "u1", "operation": "CREATE", "namespace": "ns", "name": "n", "object": {}},
    }


def sample(name: str, **labels: str) -> float | None:
    return REGISTRY.get_sample_value(name, labels)


async def test_requests_are_counted_by_path_and_code(server: tuple[str, str]) -> None:
    base, prefix = server
    assert sample("controller_runtime_webhook_requests_total", webhook=f"{prefix}/allow", code="200") == 0
    assert sample("controller_runtime_webhook_requests_total", webhook=f"{prefix}/allow", code="500") == 0
    insecure = ssl.create_default_context()
    insecure.check_hostname, insecure.verify_mode = False, ssl.CERT_NONE
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(ssl=insecure)) as http:
        for _ in range(2):
            async with http.post(f"{base}{prefix}/allow", json=review()) as resp:
                assert resp.status == 200
        async with http.post(f"{base}{prefix}/crash", json=review()) as resp:
            assert resp.status == 200 and not (await resp.json())["response"]["allowed"]
        async with http.post(f"{base}{prefix}/allow", data=b"not json") as resp:
            assert resp.status == 400
        async with http.post(f"{base}{prefix}/convert", json={"request": {}}) as resp:
            assert resp.status == 200
        async with http.post(f"{base}{prefix}/nowhere", json=review()) as resp:
            assert resp.status == 404

        GATE.clear()
        slow = asyncio.create_task(http.post(f"{base}{prefix}/slow", json=review()))
        await asyncio.sleep(0.2)
        assert sample("controller_runtime_webhook_requests_in_flight", webhook=f"{prefix}/slow") == 1
        GATE.set()
        (await slow).release()
    assert sample("controller_runtime_webhook_requests_in_flight", webhook=f"{prefix}/slow") == 0
    assert sample("controller_runtime_webhook_requests_total", webhook=f"{prefix}/allow", code="200") == 2
    assert sample("controller_runtime_webhook_requests_total", webhook=f"{prefix}/allow", code="400") == 1
    # a crashing handler denies inside a 200 AdmissionReview, as controller-runtime answers
    assert sample("controller_runtime_webhook_requests_total", webhook=f"{prefix}/crash", code="200") == 1
    assert sample("controller_runtime_webhook_requests_total", webhook=f"{prefix}/convert", code="200") == 1
    assert sample("controller_runtime_webhook_latency_seconds_count", webhook=f"{prefix}/allow") == 3
    slow_latency = sample("controller_runtime_webhook_latency_seconds_sum", webhook=f"{prefix}/slow")
    assert slow_latency is not None and slow_latency >= 0.2
    assert (
        sample("controller_runtime_webhook_requests_total", webhook=f"{prefix}/nowhere", code="404") is None
    )
