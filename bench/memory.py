"""Manager memory with many pods: RSS with 10,000 pods (1,000 CloneSets of 10), over update rounds.

Not a test. Starts the embedded control plane and ``kruise manager`` (client QPS/burst as the
cluster's kube-controller-manager), measures the manager's RSS idle (the floor: interpreter,
libraries, empty caches), then creates ``--clonesets`` CloneSets of ``--replicas`` pods, waits
until every pod is Ready, and runs ``--rounds`` in-place image updates of all of them, printing
the RSS after each round (target: at most 300 MiB; issue 28: round 10 within 2% of round 2).

    .venv/bin/python bench/memory.py --clonesets 1000 --replicas 10 --rounds 10

Each point's RSS is the **median of ``--readings`` samples 1 s apart, taken ``--settle`` seconds
after the point** (the work in flight right after a round settles moves a single reading by
several MiB); the table also gives the samples' spread.

``--memtrace FILE`` turns on the manager's memory diagnostics (:mod:`kruise.core.memtrace`): a
report (objects per type, and with ``--tracemalloc N`` allocations by line) is appended to FILE
once all pods are Ready and after every round, each with its change since the previous one.
tracemalloc inflates the RSS and slows the manager: compare RSS only between runs without it.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import signal
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from procstat import rss_mib  # bench/procstat.py (this script's directory is on sys.path)
from rich.console import Console
from rich.table import Table

from kruise.core.kube import KubeClient
from kruise.core.kube.resources import CLONESETS, CONTROLLER_REVISIONS, NAMESPACES
from kruise.core.localcluster import LocalCluster
from kruise.rollouts.crds import write_crds
from kruise.rollouts.manager.process import ManagerProcess

console = Console()
NS = "bench-memory"
IMAGES = ("registry.example.com/bench/app:1.0", "registry.example.com/bench/app:2.0")


def cloneset(name: str, replicas: int) -> dict[str, Any]:
    return {
        "apiVersion": "apps.kruise.io/v1alpha1",
        "kind": "CloneSet",
        "metadata": {"name": name},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {
                    "containers": [{"name": "app", "image": IMAGES[0]}],
                    "terminationGracePeriodSeconds": 0,
                },
            },
            "updateStrategy": {"type": "InPlaceIfPossible", "maxUnavailable": "50%"},
        },
    }


async def gather_bounded(coros: list[Any], limit: int = 64) -> None:
    sem = asyncio.Semaphore(limit)

    async def one(c: Any) -> None:
        async with sem:
            await c

    await asyncio.gather(*(one(c) for c in coros))


async def settled(kube: KubeClient, count: int, replicas: int, image: str, timeout: float = 3600) -> float:
    """Seconds until every CloneSet reports all pods updated and ready on ``image``."""
    started = time.monotonic()
    while time.monotonic() - started < timeout:
        items = (await kube.list(CLONESETS, NS))["items"]
        done = sum(
            1
            for cs in items
            if (cs.get("status") or {}).get("updatedReadyReplicas") == replicas
            and (cs.get("status") or {}).get("readyReplicas") == replicas
            and (cs.get("status") or {}).get("observedGeneration") == cs["metadata"]["generation"]
            and cs["spec"]["template"]["spec"]["containers"][0]["image"] == image
        )
        if done == count:
            return time.monotonic() - started
        await asyncio.sleep(2)
    raise TimeoutError(f"CloneSets not settled after {timeout}s")


async def report(pid: int, memtrace: str | None) -> None:
    """Ask the manager for a memory report (SIGUSR2) and wait until it is appended."""
    if not memtrace:
        return
    path = Path(memtrace)
    before = path.stat().st_size if path.exists() else 0
    os.kill(pid, signal.SIGUSR2)
    for _ in range(600):
        await asyncio.sleep(0.5)
        if path.exists() and path.stat().st_size > before:
            await asyncio.sleep(0.5)  # the rest of the write
            return


async def rss_settled(pid: int, settle: float, readings: int) -> tuple[float, float]:
    """The median RSS (MiB) of ``readings`` samples 1 s apart after ``settle`` seconds, and the
    samples' spread (max - min, MiB)."""
    await asyncio.sleep(settle)
    samples = []
    for i in range(readings):
        if i:
            await asyncio.sleep(1.0)
        samples.append(rss_mib(pid))
    return statistics.median(samples), max(samples) - min(samples)


def print_results(rows: list[tuple[str, float, float, float, float]], title: str) -> None:
    """The table of points (phase, seconds, median RSS, samples' spread, peak RSS), the rounds'
    RSS spread and the last round against round 2."""
    table = Table(title=title)
    for col in (
        "phase",
        "seconds",
        "RSS MiB (median)",
        "samples' spread MiB",
        "peak RSS MiB",
        "vs first loaded",
    ):
        table.add_column(col, justify="right")
    loaded = rows[1][2] if len(rows) > 1 else float("nan")
    for phase, took, rss, spread, peak in rows:
        table.add_row(
            phase,
            f"{took:.0f}",
            f"{rss:.1f}",
            f"{spread:.1f}",
            f"{peak:.1f}",
            f"{rss / loaded:.2f}x" if loaded else "",
        )
    console.print(table)
    after = [r[2] for r in rows[2:]]
    if after:
        console.print(
            f"rounds: RSS min {min(after):.1f} MiB, max {max(after):.1f} MiB, "
            f"spread {(max(after) - min(after)) / min(after) * 100:.1f}%"
        )
    if len(rows) >= 4:
        second, last = rows[3][2], rows[-1][2]
        console.print(f"last round vs round 2: {(last - second) / second * 100:+.1f}% (target within 2%)")


async def main(
    count: int, replicas: int, rounds: int, memtrace: str | None, frames: int, settle: float, readings: int
) -> None:
    with tempfile.TemporaryDirectory(prefix="kruise-bench-mem-") as tmp:
        workdir = Path(tmp)
        cluster = LocalCluster(workdir / "cluster", nodes=3, attached=True)
        crd_dir = workdir / "crds"
        crd_dir.mkdir()
        write_crds(crd_dir)
        state = cluster.start([crd_dir])
        cluster.kubectl("create", "namespace", "kruise-system")
        manager = ManagerProcess(
            state.kubeconfig,
            workdir / "manager",
            extra_args=("--kube-client-qps=1000", "--kube-client-burst=2000"),
            env={"KRUISE_MEMTRACE": memtrace, "KRUISE_TRACEMALLOC": str(frames)} if memtrace else None,
        )
        manager.start()
        kube = await KubeClient.from_kubeconfig(state.kubeconfig, qps=1000, burst=2000)
        rows: list[tuple[str, float, float, float, float]] = []

        async def point(phase: str, took: float) -> None:
            rss, spread = await rss_settled(pid, settle, readings)
            rows.append((phase, took, rss, spread, rss_mib(pid, "VmHWM")))
            console.print(rows[-1])

        try:
            assert manager.proc is not None
            pid = manager.proc.pid
            await point("idle (no pods)", 0.0)
            await kube.create(NAMESPACES, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}})
            await gather_bounded(
                [kube.create(CLONESETS, cloneset(f"cs{i:04d}", replicas), NS) for i in range(count)]
            )
            took = await settled(kube, count, replicas, IMAGES[0])
            await point(f"{count * replicas} pods Ready", took)
            await report(pid, memtrace)
            for r in range(1, rounds + 1):
                image = IMAGES[r % 2]
                patch = [{"op": "replace", "path": "/spec/template/spec/containers/0/image", "value": image}]
                await gather_bounded(
                    [kube.patch(CLONESETS, f"cs{i:04d}", patch, NS, patch_type="json") for i in range(count)]
                )
                took = await settled(kube, count, replicas, image)
                revisions = len((await kube.list(CONTROLLER_REVISIONS, NS))["items"])
                console.print(f"{revisions} ControllerRevisions")
                await point(f"update round {r}", took)
                await report(pid, memtrace)
        finally:
            await kube.close()
            manager.stop()
            cluster.stop()
    print_results(rows, f"kruise manager RSS, {count} CloneSets x {replicas} pods")
    console.print(f"load average at the end: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--clonesets", type=int, default=1000)
    parser.add_argument("--replicas", type=int, default=10)
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--memtrace", help="append the manager's memory reports to this file")
    parser.add_argument("--tracemalloc", type=int, default=0, help="tracemalloc frames (with --memtrace)")
    parser.add_argument(
        "--settle", type=float, default=10.0, help="seconds to wait before a point's readings"
    )
    parser.add_argument("--readings", type=int, default=5, help="RSS samples per point, 1 s apart (median)")
    args = parser.parse_args()
    asyncio.run(
        main(
            args.clonesets,
            args.replicas,
            args.rounds,
            args.memtrace,
            args.tracemalloc,
            args.settle,
            max(args.readings, 1),
        )
    )
