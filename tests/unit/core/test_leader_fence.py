"""The leader lease fence: held for renew_deadline seconds after the last successful renew was
*sent*, refused writes once lapsed (however the process got there), reads and dry runs allowed."""

from __future__ import annotations

import asyncio
import datetime
from collections.abc import Callable

import pytest
from aiohttp import web

from kruise.core.errors import FencedError
from kruise.core.kube import KubeClient
from kruise.core.kube.resources import PODS
from kruise.core.leader import LeaderElectionConfig, LeaderElector, LeaseFence, micro_time
from tests.support.fakeapi import FakeApiServer, local_client, serve_local


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_the_fence_holds_until_the_renew_deadline_after_the_renew_was_sent() -> None:
    clock = Clock()
    fence = LeaseFence(10.0, clock=clock)
    assert not fence.held, "never renewed: not held"
    fence.renewed(sent_at=95.0)  # the answer came back at 100; the lease counts from 95
    assert fence.held and fence.remaining() == pytest.approx(5.0)
    clock.now = 104.9
    fence.check()
    clock.now = 105.0
    assert not fence.held
    with pytest.raises(FencedError, match="lease not held"):
        fence.check()


def test_an_older_renew_never_shortens_the_fence_and_revoke_ends_it() -> None:
    clock = Clock()
    fence = LeaseFence(10.0, clock=clock)
    fence.renewed(sent_at=100.0)
    fence.renewed(sent_at=90.0)  # a slow answer to an earlier attempt
    assert fence.remaining() == pytest.approx(10.0)
    fence.revoke()
    assert not fence.held


async def test_lapsed_returns_when_the_deadline_passes_without_a_renew() -> None:
    fence = LeaseFence(0.05)
    fence.renewed(sent_at=fence.clock())
    waiter = asyncio.create_task(fence.lapsed())
    await asyncio.sleep(0.02)
    fence.renewed(sent_at=fence.clock())  # a renew in time moves the deadline
    await asyncio.sleep(0.04)
    assert not waiter.done()
    await asyncio.wait_for(waiter, 1)
    assert not fence.held


async def test_a_fenced_client_sends_no_write_once_the_fence_lapsed_but_still_reads() -> None:
    server = FakeApiServer()
    await server.start()
    clock = Clock()
    fence = LeaseFence(10.0, clock=clock)
    fence.renewed(sent_at=clock.now)
    kube = server.client()
    kube.write_guard = fence.check
    try:
        clock.now += 11  # frozen past the renew deadline
        with pytest.raises(FencedError):
            await kube.delete(PODS, "p", "ns")
        with pytest.raises(FencedError):
            await kube.patch(PODS, "p", {"metadata": {"labels": {"a": "b"}}}, "ns")
        assert server.requests == [], "nothing reached the API server"
        assert (await kube.list(PODS))["items"] == []  # reads are not fenced
    finally:
        await kube.close()
        await server.stop()


class LeaseServer:
    """Answers GET and PUT of one Lease held by ``me``; ``on_get`` runs while a GET is being
    answered (a freeze of the leader while its read is in flight)."""

    def __init__(self, on_get: Callable[[], None]) -> None:
        self.on_get = on_get
        self.methods: list[str] = []
        self.lease = {
            "apiVersion": "coordination.k8s.io/v1",
            "kind": "Lease",
            "metadata": {"name": "kruise-manager", "namespace": "kruise-system", "resourceVersion": "7"},
            "spec": {
                "holderIdentity": "me",
                "leaseDurationSeconds": 15,
                "acquireTime": micro_time(datetime.datetime.now(datetime.UTC)),
                "renewTime": micro_time(datetime.datetime.now(datetime.UTC)),
                "leaseTransitions": 0,
            },
        }
        self.runner: web.AppRunner | None = None

    async def _serve(self, request: web.Request) -> web.Response:
        self.methods.append(request.method)
        if request.method == "GET":
            self.on_get()
        return web.json_response(self.lease)

    async def client(self) -> KubeClient:
        app = web.Application()
        app.router.add_route("*", "/apis/coordination.k8s.io/v1/namespaces/{ns}/leases/{name}", self._serve)
        self.runner, port = await serve_local(app)
        return local_client(port)


async def test_a_leader_frozen_while_reading_its_lease_does_not_write_the_renew_after_waking() -> None:
    clock = Clock()

    def freeze() -> None:
        clock.now += 11  # past the renew deadline while the GET was in flight

    server = LeaseServer(on_get=lambda: None)
    kube = await server.client()
    elector = LeaderElector(kube, LeaderElectionConfig("kruise-system", "kruise-manager", "me"))
    elector.fence = LeaseFence(10.0, clock=clock)
    try:
        assert await elector._attempt(), "a renew in time is sent"
        assert server.methods == ["GET", "PUT"] and elector.fence.held
        elector.is_leader = True
        server.on_get = freeze
        with pytest.raises(FencedError):
            await elector._attempt()
        assert server.methods == ["GET", "PUT", "GET"], "the renew read before the freeze is not written back"
        assert not elector.fence.held
    finally:
        await kube.close()
        assert server.runner is not None
        await server.runner.cleanup()
