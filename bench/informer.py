"""Informer throughput on a recorded stream of pod events. Not a test.

A stream of ``--events`` watch events (pods of 10-pod CloneSets created, updated three times as
a scale-up and a rolling update would, some deleted; the representative pod of
``tests/support/podfixture.py``, ~3 KB each) is recorded as NDJSON and served by an in-process
HTTP server as one watch response. The shared informer applies it with the manager's indexers
and the CloneSet controller's handler (owner key + enqueue), and the table compares that with a
floor that only reads the same bytes and decodes each line.

    .venv/bin/python bench/informer.py --events 10000
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import time
from pathlib import Path
from typing import Any

import orjson
from aiohttp import web
from rich.console import Console
from rich.table import Table

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from tests.support.podfixture import pod

from kruise.core.informer import Informer
from kruise.core.kube import KubeClient
from kruise.core.kube.config import KubeConfig
from kruise.core.kube.resources import CLONESETS, PODS
from kruise.core.runtime import OWNER_UID, index_by_owner_uid, owner_key
from kruise.core.workqueue import WorkQueue

JSON = dict[str, Any]


def record(events: int) -> bytes:
    """The stream: for every pod ADDED, then 3 MODIFIED, and every fifth pod DELETED."""
    lines: list[bytes] = []
    rv = 1000
    i = 0
    while len(lines) < events:
        obj = pod(i, owner=f"cs{i // 10}")
        for kind in ("ADDED", "MODIFIED", "MODIFIED", "MODIFIED", "DELETED"):
            if kind == "DELETED" and i % 5:
                break
            rv += 1
            obj["metadata"]["resourceVersion"] = str(rv)
            lines.append(orjson.dumps({"type": kind, "object": obj}))
        i += 1
    return b"\n".join(lines[:events]) + b"\n"


async def serve(stream: bytes) -> tuple[web.AppRunner, int]:
    async def handler(request: web.Request) -> web.StreamResponse:
        if request.query.get("watch") != "true":
            return web.json_response({"kind": "PodList", "metadata": {"resourceVersion": "1"}, "items": []})
        resp = web.StreamResponse()
        await resp.prepare(request)
        for start in range(0, len(stream), 64 * 1024):
            await resp.write(stream[start : start + 64 * 1024])
        await asyncio.sleep(3600)
        return resp

    app = web.Application()
    app.router.add_get("/api/v1/pods", handler)
    runner = web.AppRunner(app, access_log=None, handler_cancellation=True, shutdown_timeout=0.1)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    return runner, site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]


async def floor(port: int, events: int) -> tuple[float, float]:
    """Read the watch response and decode each line, nothing else: (wall, cpu) seconds."""
    kube = KubeClient(KubeConfig(server=f"http://127.0.0.1:{port}", ssl_context=False, qps=0))
    seen = 0
    wall, cpu = time.perf_counter(), time.process_time()
    buf = b""
    async for chunk in kube.stream("/api/v1/pods", {"watch": "true"}, read_timeout=60):
        *lines, buf = (buf + chunk).split(b"\n")
        for line in lines:
            orjson.loads(line)
            seen += 1
        if seen >= events:
            break
    result = time.perf_counter() - wall, time.process_time() - cpu
    await kube.close()
    return result


async def informer(port: int, events: int) -> tuple[float, float]:
    """The shared informer with the owner index and the CloneSet handler: (wall, cpu) seconds."""
    kube = KubeClient(KubeConfig(server=f"http://127.0.0.1:{port}", ssl_context=False, qps=0))
    inf = Informer(kube, PODS)
    inf.add_indexer(OWNER_UID, index_by_owner_uid)
    queue = WorkQueue()

    def handle(delta: Any) -> None:
        key = owner_key(delta.obj, CLONESETS)
        if key is not None:
            queue.add(key)

    inf.add_handler(handle)
    task = asyncio.create_task(inf.run())
    await inf.wait_synced()
    wall, cpu = time.perf_counter(), time.process_time()
    while inf.stats.events < events:
        await asyncio.sleep(0.001)
    result = time.perf_counter() - wall, time.process_time() - cpu
    task.cancel()
    await asyncio.gather(task, return_exceptions=True)
    await kube.close()
    return result


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    stream = record(args.events)
    runner, port = await serve(stream)
    rows: list[tuple[str, float, float]] = []
    try:
        for _ in range(args.rounds):
            rows.append(("floor (read + decode)", *await floor(port, args.events)))
            rows.append(("informer (decode, store, index, handler)", *await informer(port, args.events)))
    finally:
        await runner.cleanup()
    table = Table(title=f"{args.events} pod events, {len(stream) / 2**20:.1f} MiB, best of {args.rounds}")
    for col in ("path", "wall s", "cpu s", "events/s", "cpu us/event", "cpu vs floor"):
        table.add_column(col, justify="right")
    best = {name: min((r for r in rows if r[0] == name), key=lambda r: r[2]) for name, _, _ in rows}
    base = best["floor (read + decode)"][2]
    for name, wall, cpu in best.values():
        table.add_row(
            name,
            f"{wall:.3f}",
            f"{cpu:.3f}",
            f"{args.events / wall:,.0f}",
            f"{cpu / args.events * 1e6:.1f}",
            f"{cpu / base:.2f}x",
        )
    Console().print(table)
    print(f"load average at the end: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    asyncio.run(main())
