"""The controller runtime against the fake API server: a spec's watches enqueue the right keys
(an owner change wakes both owners), ``observe`` runs before the enqueue, reads outside the spec
are refused by name, and workers start only once every informer the spec reads has synced."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator

import pytest

from kruise.core.informer import Backoff, Delta, Informer
from kruise.core.kube.resources import CLONESETS, DEPLOYMENTS, PODS, Resource
from kruise.core.runtime import (
    OWNER_UID,
    ControllerSpec,
    Read,
    Runtime,
    UndeclaredReadError,
    Watch,
    owned,
    primary,
)
from kruise.core.workqueue import Reconcile, Result
from tests.support.fakeapi import FakeApiServer
from tests.unit.core.test_informer import until

FAST = Backoff(initial=0.01, cap=0.05)


def owner_ref(
    name: str, uid: str, kind: str = "CloneSet", api: str = "apps.kruise.io/v1alpha1"
) -> dict[str, object]:
    return {"apiVersion": api, "kind": kind, "name": name, "uid": uid, "controller": True}


@contextlib.asynccontextmanager
async def fake() -> AsyncIterator[FakeApiServer]:
    server = FakeApiServer()
    await server.start()
    try:
        yield server
    finally:
        await server.stop()


def runtime_for(server: FakeApiServer) -> Runtime:
    return Runtime(server.client(), informer_factory=lambda kube, res: Informer(kube, res, backoff=FAST))


def recording() -> tuple[list[str], Reconcile]:
    """A reconcile that records every key it is called with, and the list it records into."""
    reconciled: list[str] = []

    async def reconcile(key: str) -> Result:
        reconciled.append(key)
        return Result()

    return reconciled, reconcile


@contextlib.asynccontextmanager
async def running(runtime: Runtime) -> AsyncIterator[None]:
    runtime.start_informers()
    task = asyncio.create_task(runtime.run_controllers())
    try:
        yield
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
        await runtime.stop()
        await runtime.informers.kube.close()


async def test_owned_pods_wake_their_owner_and_an_owner_change_wakes_both() -> None:
    async with fake() as server:
        await server.create("web", res=CLONESETS, metadata={"uid": "cs-1"})
        await server.create("api", res=CLONESETS, metadata={"uid": "cs-2"})
        await server.create("p", metadata={"ownerReferences": [owner_ref("web", "cs-1")]})
        runtime = runtime_for(server)
        reconciled, reconcile = recording()
        observed: list[tuple[str, str]] = []

        def observe(delta: Delta) -> None:
            observed.append((delta.type, delta.obj["metadata"]["name"]))

        spec = ControllerSpec("test", (primary(CLONESETS), owned(PODS, CLONESETS, observe=observe)))
        view = runtime.cache("test")
        runtime.add(spec, reconcile, view)
        async with running(runtime):
            await until(lambda: {"ns/web", "ns/api"} <= set(reconciled))
            assert [p["metadata"]["name"] for p in view.by_index(PODS, OWNER_UID, "cs-1")] == ["p"]
            reconciled.clear()
            await server.update("p", metadata={"ownerReferences": [owner_ref("api", "cs-2")]})
            await until(lambda: {"ns/web", "ns/api"} <= set(reconciled))
            assert view.by_index(PODS, OWNER_UID, "cs-1") == []
            assert [p["metadata"]["name"] for p in view.by_index(PODS, OWNER_UID, "cs-2")] == ["p"]
            assert observed[-1] == ("MODIFIED", "p")
            reconciled.clear()
            # a pod of another kind's controller wakes nothing
            await server.create(
                "other", metadata={"ownerReferences": [owner_ref("d", "d-1", "Deployment", "apps/v1")]}
            )
            await asyncio.sleep(0.2)
            assert reconciled == []


async def test_a_watch_with_delta_keys_wakes_what_the_whole_event_names() -> None:
    """A node-style route: only an update that changes ``color`` wakes, and it wakes by color."""
    async with fake() as server:
        await server.create("a", res=CLONESETS)
        runtime = runtime_for(server)
        reconciled, reconcile = recording()

        def colors(delta: Delta) -> list[str]:
            new = (delta.obj["metadata"].get("labels") or {}).get("color")
            old = None if delta.old is None else (delta.old["metadata"].get("labels") or {}).get("color")
            return [] if new == old else [f"ns/{new}"]

        watch = Watch(PODS, lambda _: ["ns/never"], delta_keys=colors)
        runtime.add(ControllerSpec("colors", (primary(CLONESETS), watch)), reconcile)
        async with running(runtime):
            await until(lambda: reconciled == ["ns/a"])
            await server.create("p", metadata={"labels": {"color": "blue"}})
            await until(lambda: "ns/blue" in reconciled)
            await server.update("p", metadata={"labels": {"color": "blue"}, "annotations": {"x": "y"}})
            await server.update("p", metadata={"labels": {"color": "red"}})
            await until(lambda: "ns/red" in reconciled)
            assert reconciled == ["ns/a", "ns/blue", "ns/red"]


async def test_a_read_the_spec_does_not_declare_is_refused_by_name() -> None:
    async with fake() as server:
        runtime = runtime_for(server)
        view = runtime.cache("picky")

        async def reconcile(key: str) -> Result:
            return Result()

        runtime.add(ControllerSpec("picky", (primary(CLONESETS),), reads=(Read(PODS),)), reconcile, view)
        assert view.list(PODS) == []
        with pytest.raises(UndeclaredReadError, match="picky reads deployments"):
            view.get(DEPLOYMENTS, "ns/x")
        with pytest.raises(UndeclaredReadError, match="picky reads index 'owner-uid' of pods"):
            view.by_index(PODS, OWNER_UID, "u")
        await runtime.informers.kube.close()


async def test_workers_start_only_when_every_informer_the_spec_reads_has_synced() -> None:
    async with fake() as server:
        slow = Resource("example.io", "v1", "slows", "Slow")
        await server.create("a", res=CLONESETS)
        server.fail_next = [500] * 3  # the first list requests fail: one informer syncs late
        runtime = runtime_for(server)
        reconciled, reconcile = recording()

        runtime.add(ControllerSpec("late", (primary(CLONESETS),), reads=(Read(slow),)), reconcile)
        async with running(runtime):
            await until(lambda: reconciled == ["ns/a"])
            assert runtime.informers.informer(slow).synced
            assert runtime.informers.informer(CLONESETS).synced


async def test_a_controller_name_is_added_once() -> None:
    async with fake() as server:
        runtime = runtime_for(server)

        async def reconcile(key: str) -> Result:
            return Result()

        runtime.add(ControllerSpec("twice", (primary(CLONESETS),)), reconcile)
        with pytest.raises(ValueError, match="added twice"):
            runtime.add(ControllerSpec("twice", (primary(CLONESETS),)), reconcile)
        await runtime.informers.kube.close()


async def test_a_predicate_keeps_rejected_events_out_of_the_queue_but_observers_see_them() -> None:
    async with fake() as server:
        await server.create("web", res=CLONESETS, metadata={"uid": "cs-1", "generation": 1})
        runtime = runtime_for(server)
        reconciled, reconcile = recording()
        observed: list[str] = []

        def generation_changed(delta: Delta) -> bool:
            old = (delta.old or {}).get("metadata") or {}
            return delta.old is None or old.get("generation") != delta.obj["metadata"].get("generation")

        watch = primary(CLONESETS, accept=generation_changed)
        runtime.add(ControllerSpec("picky", (watch,)), reconcile, runtime.cache("picky"))
        runtime.controller("picky").spec.watches[0]
        informer = runtime.informers.informer(CLONESETS)
        informer.add_handler(lambda delta: observed.append(delta.type))
        async with running(runtime):
            await until(lambda: reconciled == ["ns/web"])
            await server.update("web", res=CLONESETS, metadata={"labels": {"x": "1"}})
            await until(lambda: observed.count("MODIFIED") == 1)
            await asyncio.sleep(0.2)
            assert reconciled == ["ns/web"]  # a label change: not accepted
            await server.update("web", res=CLONESETS, metadata={"generation": 2})
            await until(lambda: reconciled == ["ns/web", "ns/web"])


async def test_zero_workers_still_reconcile_as_controller_runtime_does() -> None:
    async with fake() as server:
        await server.create("web", res=CLONESETS)
        runtime = runtime_for(server)
        reconciled, reconcile = recording()

        spec = ControllerSpec("zero", (primary(CLONESETS),), workers=0)
        assert spec.workers == 1
        runtime.add(spec, reconcile)
        async with running(runtime):
            await until(lambda: reconciled == ["ns/web"])
