"""The informer against an in-process fake API server (tests/support/fakeapi.py): paging,
bookmarks, resuming without a relist, 410 as an event and as a status, what vanished during a
gap, index moves, failing handlers, cancellation, and a Hypothesis property over random
histories with disconnects and compactions."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kruise.core.informer import Backoff, Delta, EventType, Informer
from kruise.core.kube.resources import PODS
from tests.support.fakeapi import FakeApiServer

JSON = dict[str, Any]
FAST = Backoff(initial=0.01, cap=0.05)


@contextlib.asynccontextmanager
async def serving(server: FakeApiServer | None = None) -> AsyncIterator[FakeApiServer]:
    server = server or FakeApiServer()
    await server.start()
    try:
        yield server
    finally:
        await server.stop()


@contextlib.asynccontextmanager
async def running(informer: Informer) -> AsyncIterator[asyncio.Task[None]]:
    task = asyncio.create_task(informer.run())
    try:
        await asyncio.wait_for(informer.wait_synced(), 5)
        yield task
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
        await informer.kube.close()


async def until(check: Callable[[], bool], timeout: float = 5.0) -> None:
    deadline = asyncio.get_running_loop().time() + timeout
    while not check():
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError("condition not reached")
        await asyncio.sleep(0.005)


def recorder(informer: Informer) -> list[Delta]:
    seen: list[Delta] = []
    informer.add_handler(seen.append)
    return seen


def owner_index(obj: JSON) -> list[str]:
    owner = ((obj.get("metadata") or {}).get("labels") or {}).get("owner")
    return [owner] if owner else []


async def test_lists_in_pages_then_watches_and_drops_managed_fields() -> None:
    async with serving() as server:
        for i in range(7):
            await server.create(f"p{i}")
        informer = Informer(server.client(), PODS, page_size=3, backoff=FAST)
        seen = recorder(informer)
        async with running(informer):
            assert sorted(informer.store.keys()) == [f"ns/p{i}" for i in range(7)]
            lists = [r for r in server.requests if "watch" not in r]
            assert len(lists) == 3 and all("limit=3" in r for r in lists)
            # each continue token names the last key of the page before (ns/p2, then ns/p5)
            assert "continue=" in lists[1] and "p2" in lists[1].split("continue=")[1]
            assert "continue=" in lists[2] and "p5" in lists[2].split("continue=")[1]
            assert [d.type for d in seen] == [EventType.ADDED] * 7
            obj = informer.store.get("ns/p0")
            assert obj is not None and "managedFields" not in obj["metadata"]
            assert obj["kind"] == "Pod" and obj["apiVersion"] == "v1"  # list items omit them
            await server.create("new")
            await until(lambda: "ns/new" in informer.store)
            assert seen[-1].type is EventType.ADDED and seen[-1].obj["metadata"]["name"] == "new"


async def test_bookmarks_advance_the_resource_version() -> None:
    async with serving() as server:
        server.bookmark_every = 1
        informer = Informer(server.client(), PODS, backoff=FAST)
        seen = recorder(informer)
        async with running(informer):
            await server.create("a")
            await server.create("b")
            await server.update("a", metadata={"labels": {"v": "2"}})
            bookmark_rv = str(server.rv)
            await until(lambda: len(seen) == 3)
            # the object's own resourceVersion is the same as the bookmark's here; move the
            # server on without an event the informer could see, then bookmark again
            server.rv += 5
            await server.create("c")
            await until(lambda: informer.resource_version == str(server.rv))
            assert informer.resource_version != bookmark_rv
            assert all("allowWatchBookmarks=true" in r for r in server.requests if "watch=" in r)


@pytest.mark.parametrize("abort", [False, True], ids=["clean end of stream", "connection reset"])
async def test_a_dropped_watch_resumes_from_the_last_resource_version_without_relisting(abort: bool) -> None:
    async with serving() as server:
        server.abort_on_drop = abort
        await server.create("a")
        informer = Informer(server.client(), PODS, backoff=FAST)
        async with running(informer):
            await server.update("a", metadata={"labels": {"v": "2"}})
            await until(lambda: informer.resource_version == str(server.rv))
            last = informer.resource_version
            await server.drop_watches()
            await server.create("b")
            await until(lambda: "ns/b" in informer.store)
            watches = [r for r in server.requests if "watch" in r]
            assert len(watches) >= 2 and f"resourceVersion={last}" in watches[-1]
            assert informer.stats.lists == 1
            assert informer.stats.relists_after_gone == 0


@pytest.mark.parametrize("as_status", [False, True], ids=["410 as an ERROR event", "410 as the HTTP status"])
async def test_gone_relists_and_delivers_what_vanished_during_the_gap(as_status: bool) -> None:
    async with serving() as server:
        server.gone_as_status = as_status
        for name in ("a", "b", "c"):
            await server.create(name, metadata={"labels": {"owner": "x"}})
        informer = Informer(server.client(), PODS, backoff=FAST)
        informer.add_indexer("owner", owner_index)
        seen = recorder(informer)
        async with running(informer):
            pass  # synced, then stopped: a gap
        last_b = informer.store.get("ns/b")
        await server.delete("b")
        await server.update("c", metadata={"labels": {"owner": "y"}})
        await server.create("d", metadata={"labels": {"owner": "x"}})
        server.compact()
        del seen[:]
        async with running(informer):
            await until(lambda: informer.stats.relists_after_gone == 1 and "ns/d" in informer.store)
            assert sorted(informer.store.keys()) == ["ns/a", "ns/c", "ns/d"]
            by_type = {(d.type, d.obj["metadata"]["name"]) for d in seen}
            assert by_type == {
                (EventType.DELETED, "b"),
                (EventType.MODIFIED, "c"),
                (EventType.ADDED, "d"),
            }
            deleted = next(d for d in seen if d.type is EventType.DELETED)
            assert deleted.obj is last_b  # the last known state
            assert sorted(o["metadata"]["name"] for o in informer.store.by_index("owner", "x")) == ["a", "d"]
            assert [o["metadata"]["name"] for o in informer.store.by_index("owner", "y")] == ["c"]


async def test_an_expired_continue_token_restarts_the_list() -> None:
    async with serving() as server:
        for i in range(5):
            await server.create(f"p{i}")
        server.expire_continue_once = True
        informer = Informer(server.client(), PODS, page_size=2, backoff=FAST)
        async with running(informer):
            assert len(informer.store) == 5
            lists = [r for r in server.requests if "watch" not in r]
            assert "continue" not in lists[0] and "continue" in lists[1] and "continue" not in lists[2]


async def test_an_owner_change_moves_the_object_between_index_entries() -> None:
    async with serving() as server:
        await server.create("a", metadata={"labels": {"owner": "x"}})
        informer = Informer(server.client(), PODS, backoff=FAST)
        informer.add_indexer("owner", owner_index)
        async with running(informer):
            await server.update("a", metadata={"labels": {"owner": "y"}})
            await until(lambda: bool(informer.store.by_index("owner", "y")))
            assert informer.store.by_index("owner", "x") == []
            assert informer.store.index_values("owner") == ["y"]
            await server.delete("a")
            await until(lambda: "ns/a" not in informer.store)
            assert informer.store.index_values("owner") == []


async def test_a_failing_handler_neither_stops_the_informer_nor_the_other_handlers() -> None:
    async with serving() as server:
        informer = Informer(server.client(), PODS, backoff=FAST)

        def broken(delta: Delta) -> None:
            raise RuntimeError("boom")

        informer.add_handler(broken)
        seen = recorder(informer)
        async with running(informer):
            for name in ("a", "b"):
                await server.create(name)
            await until(lambda: len(seen) == 2)
            assert informer.stats.handler_errors == 2
            await server.create("c")
            await until(lambda: len(seen) == 3)


async def test_a_handler_added_after_sync_is_told_about_every_stored_object() -> None:
    async with serving() as server:
        await server.create("a")
        informer = Informer(server.client(), PODS, backoff=FAST)
        async with running(informer):
            seen = recorder(informer)
            assert [(d.type, d.obj["metadata"]["name"]) for d in seen] == [(EventType.ADDED, "a")]


async def test_cancelling_the_informer_closes_its_watch_connection() -> None:
    async with serving() as server:
        informer = Informer(server.client(), PODS, backoff=FAST)
        async with running(informer):
            await until(lambda: server.open_watches == 1)
        await until(lambda: server.open_watches == 0)


async def test_server_errors_are_retried_with_backoff() -> None:
    async with serving() as server:
        await server.create("a")
        server.fail_next = [500, 503]
        informer = Informer(server.client(), PODS, backoff=FAST)
        async with running(informer):
            assert "ns/a" in informer.store


# ---------------------------------------------------------------------------- property
Op = tuple[str, int]
ops = st.lists(
    st.tuples(
        st.sampled_from(["create", "update", "delete", "drop", "compact", "pause", "outage", "resume"]),
        st.integers(0, 5),
    ),
    max_size=40,
)


async def _history(steps: list[Op], abort: bool) -> None:
    async with serving() as server:
        server.abort_on_drop = abort
        server.bookmark_every = 3
        informer = Informer(server.client(), PODS, page_size=2, backoff=FAST)
        informer.add_indexer("owner", owner_index)
        last: dict[str, Delta] = {}
        informer.add_handler(lambda d: last.__setitem__(f"ns/{d.obj['metadata']['name']}", d))
        await server.create("p0", metadata={"labels": {"owner": "o0"}})
        task = asyncio.create_task(informer.run())
        generation = 0
        try:
            await asyncio.wait_for(informer.wait_synced(), 5)
            for kind, n in steps:
                await asyncio.sleep(0.001)  # let the informer interleave with the changes
                name, key = f"p{n}", f"ns/p{n}"
                generation += 1
                if kind == "create" and key not in server.objects:
                    await server.create(name, metadata={"labels": {"owner": f"o{n % 2}"}})
                elif kind == "update" and key in server.objects:
                    await server.update(name, metadata={"labels": {"owner": f"o{generation % 3}"}})
                elif kind == "delete" and key in server.objects:
                    await server.delete(name)
                elif kind == "drop":
                    await server.drop_watches()
                elif kind == "compact":
                    server.compact()
                    await server.drop_watches()
                elif kind == "pause":
                    await asyncio.sleep(0.01)
                elif kind == "outage" and not task.done():  # the manager's watch is down
                    task.cancel()
                    with contextlib.suppress(asyncio.CancelledError):
                        await task
                elif kind == "resume" and task.done():
                    if n % 2:  # a long outage: what happened meanwhile is compacted away
                        server.compact()
                    task = asyncio.create_task(informer.run())
            if task.done():
                server.compact()
                task = asyncio.create_task(informer.run())
            # converge: a final marker object shows the informer saw everything
            await server.create("zz-end")
            await until(lambda: "ns/zz-end" in informer.store, timeout=10)
        finally:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
            await informer.kube.close()
        want = {k: v for k, v in server.objects.items()}
        assert sorted(informer.store.keys()) == sorted(want)
        for key, obj in want.items():
            stored = informer.store.get(key)
            assert stored is not None
            assert stored["metadata"]["resourceVersion"] == obj["metadata"]["resourceVersion"]
            assert last[key].type is not EventType.DELETED
            assert last[key].obj["metadata"]["resourceVersion"] == obj["metadata"]["resourceVersion"]
        for key, delta in last.items():
            if key not in want:
                assert delta.type is EventType.DELETED, f"{key}: last call {delta.type}, but it is gone"
        for owner in ("o0", "o1", "o2"):
            indexed = sorted(o["metadata"]["name"] for o in informer.store.by_index("owner", owner))
            expected = sorted(
                o["metadata"]["name"]
                for o in want.values()
                if (o["metadata"].get("labels") or {}).get("owner") == owner
            )
            assert indexed == expected


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(steps=ops, abort=st.booleans())
def test_any_history_of_changes_disconnects_and_compactions_ends_with_the_servers_state(
    steps: list[Op], abort: bool
) -> None:
    asyncio.run(_history(steps, abort))
