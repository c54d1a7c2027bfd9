"""CloneSet benchmark: kruise's CloneSet vs kube-controller-manager's Deployment vs raw pods.

Not a test. Runs on the embedded control plane (one for scaling, one with KWOK
delays for updates) and prints tables with ratios, side by side in one run:

- scale 0 -> N Ready pods for a CloneSet, a Deployment of the same template
  (kube-controller-manager), and a raw client creating N pods in parallel;
- image update of N pods (maxUnavailable 20%): CloneSet InPlaceIfPossible,
  CloneSet ReCreate, Deployment RollingUpdate, against the theoretical minimum
  ``ceil(N / maxUnavailable) x step`` where the step is KWOK's simulated in-place
  restart or new-pod start, and against a raw client doing the same in-place steps
  (``bench/baselines.py``);
- peak RSS of the manager process;
- CPU seconds each process spent on each scale-up (the manager for the CloneSet,
  kube-controller-manager for the Deployment, and the shared control plane: API server, etcd,
  scheduler, KWOK), and the load average, since on a small shared machine CPU time is the floor
  under every wall-clock number.

    .venv/bin/python bench/cloneset.py --sizes 100,500,1000 --update-sizes 100
"""

from __future__ import annotations

import argparse
import asyncio
import math
import os
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import baselines  # bench/baselines.py (this script's directory is on sys.path)
from procstat import PIDS, cpu_since, cpu_snapshot, rss_mib
from rich.console import Console
from rich.table import Table

from kruise.core.kube import KubeClient
from kruise.core.kube.resources import CLONESETS, DEPLOYMENTS, EVENTS, NAMESPACES
from kruise.core.localcluster import LocalCluster
from kruise.core.localcluster.stages import StageDelays
from kruise.rollouts.crds import write_crds
from kruise.rollouts.manager.process import ManagerProcess

console = Console()
IMAGE_V1 = "registry.example.com/bench/app:1.0"
IMAGE_V2 = "registry.example.com/bench/app:2.0"


def template(app: str, image: str = IMAGE_V1) -> dict[str, Any]:
    return {
        "metadata": {"labels": {"app": app}},
        "spec": {"containers": [{"name": "app", "image": image}], "terminationGracePeriodSeconds": 0},
    }


def cloneset(name: str, replicas: int, strategy: str = "InPlaceIfPossible") -> dict[str, Any]:
    return {
        "apiVersion": "apps.kruise.io/v1alpha1",
        "kind": "CloneSet",
        "metadata": {"name": name},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": name}},
            "template": template(name),
            "updateStrategy": {"type": strategy, "maxUnavailable": "20%"},
        },
    }


def deployment(name: str, replicas: int) -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": name}},
            "template": template(name),
            "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": "20%", "maxSurge": 0}},
        },
    }


async def until(probe: Callable[[], Awaitable[bool]], timeout: float = 900, interval: float = 0.25) -> float:
    """Seconds until ``probe()`` is true (monotonic clock)."""
    t0 = time.monotonic()
    while time.monotonic() - t0 < timeout:
        if await probe():
            return time.monotonic() - t0
        await asyncio.sleep(interval)
    raise TimeoutError(f"not done after {timeout}s")


async def status_of(kube: KubeClient, res: Any, name: str, ns: str) -> dict[str, Any]:
    return (await kube.get(res, name, ns)).get("status") or {}


async def fresh_namespace(kube: KubeClient, name: str) -> str:
    await kube.create(NAMESPACES, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})
    return name


async def drop_namespace(kube: KubeClient, ns: str) -> None:
    await kube.delete(NAMESPACES, ns, missing_ok=True)

    async def gone() -> bool:
        return await kube.get_or_none(NAMESPACES, ns) is None

    await until(gone, timeout=600, interval=1)


# ---------------------------------------------------------------------- scale
Timed = tuple[float, dict[str, float]]
"""Seconds from the create until every pod is Ready, and the CPU seconds each role spent then."""


async def scale_cloneset(kube: KubeClient, n: int, ns_name: str = "") -> Timed:
    ns = await fresh_namespace(kube, ns_name or f"scale-cs-{n}")
    cpu, t0 = cpu_snapshot(), time.monotonic()
    await kube.create(CLONESETS, cloneset("app", n), ns)
    await until(lambda: _eq(status_of(kube, CLONESETS, "app", ns), "readyReplicas", n))
    timed = time.monotonic() - t0, cpu_since(cpu)
    EVENT_WRITES[("CloneSet", n)] = await event_writes(kube, ns)
    await drop_namespace(kube, ns)
    return timed


async def scale_deployment(kube: KubeClient, n: int, ns_name: str = "") -> Timed:
    ns = await fresh_namespace(kube, ns_name or f"scale-deploy-{n}")
    cpu, t0 = cpu_snapshot(), time.monotonic()
    await kube.create(DEPLOYMENTS, deployment("app", n), ns)
    await until(lambda: _eq(status_of(kube, DEPLOYMENTS, "app", ns), "readyReplicas", n))
    timed = time.monotonic() - t0, cpu_since(cpu)
    EVENT_WRITES[("Deployment", n)] = await event_writes(kube, ns)
    await drop_namespace(kube, ns)
    return timed


EVENT_WRITES: dict[tuple[str, int], dict[str, tuple[int, int]]] = {}
"""Per (workload kind, N): Events in the namespace after the scale-up, by reporting component, as
(Event objects, sum of their ``count``): objects are the POSTs, the counts above them the PATCHes
that deduplicated repeats (client-go's EventCorrelator)."""


async def event_writes(kube: KubeClient, ns: str, settle: float = 3.0) -> dict[str, tuple[int, int]]:
    """Events of ``ns`` by component after ``settle`` seconds (events are posted in the background)."""
    await asyncio.sleep(settle)
    writes: dict[str, tuple[int, int]] = {}
    for ev in (await kube.list(EVENTS, ns)).get("items", []):
        who = (ev.get("source") or {}).get("component") or ev.get("reportingComponent") or "?"
        objects, counts = writes.get(who, (0, 0))
        writes[who] = objects + 1, counts + int(ev.get("count") or 1)
    return writes


async def scale_raw(kube: KubeClient, n: int) -> Timed:
    ns = await fresh_namespace(kube, f"scale-raw-{n}")
    cpu = cpu_snapshot()
    timed = await baselines.scale_raw(kube, ns, n, template("raw")), cpu_since(cpu)
    await drop_namespace(kube, ns)
    return timed


async def warm_up(kube: KubeClient) -> None:
    """One small CloneSet, Deployment and raw pod first, so no row pays a first-use cost
    (the webhook's first TLS connection, the manager's first reconcile, kcm's first sync)."""
    await scale_cloneset(kube, 2, "warmup-cs")
    await scale_deployment(kube, 2, "warmup-deploy")
    await scale_raw(kube, 2)


async def _eq(status: Awaitable[dict[str, Any]], key: str, want: int) -> bool:
    return (await status).get(key) == want


# ---------------------------------------------------------------------- update
async def update_cloneset(kube: KubeClient, n: int, strategy: str) -> float:
    ns = await fresh_namespace(kube, f"upd-{strategy.lower()}-{n}")
    await kube.create(CLONESETS, cloneset("app", n, strategy), ns)
    await until(lambda: _eq(status_of(kube, CLONESETS, "app", ns), "readyReplicas", n))
    t0 = time.monotonic()
    patch = {"spec": {"template": {"spec": {"containers": [{"name": "app", "image": IMAGE_V2}]}}}}
    await kube.patch(CLONESETS, "app", patch, ns, patch_type="merge")

    async def done() -> bool:
        cs = await kube.get(CLONESETS, "app", ns)
        st = cs.get("status") or {}
        return (
            st.get("observedGeneration") == cs["metadata"]["generation"]
            and st.get("updatedReadyReplicas") == n
            and st.get("readyReplicas") == n
            and st.get("replicas") == n
        )

    await until(done)
    elapsed = time.monotonic() - t0
    await drop_namespace(kube, ns)
    return elapsed


async def update_deployment(kube: KubeClient, n: int) -> float:
    ns = await fresh_namespace(kube, f"upd-deploy-{n}")
    await kube.create(DEPLOYMENTS, deployment("app", n), ns)
    await until(lambda: _eq(status_of(kube, DEPLOYMENTS, "app", ns), "readyReplicas", n))
    t0 = time.monotonic()
    patch = {"spec": {"template": {"spec": {"containers": [{"name": "app", "image": IMAGE_V2}]}}}}
    await kube.patch(DEPLOYMENTS, "app", patch, ns, patch_type="strategic")

    async def done() -> bool:
        d = await kube.get(DEPLOYMENTS, "app", ns)
        st = d.get("status") or {}
        return (
            st.get("observedGeneration") == d["metadata"]["generation"]
            and st.get("updatedReplicas") == n
            and st.get("readyReplicas") == n
            and st.get("replicas") == n
        )

    await until(done)
    elapsed = time.monotonic() - t0
    await drop_namespace(kube, ns)
    return elapsed


# ---------------------------------------------------------------------- main
async def run_phase(
    delays: StageDelays,
    work: Callable[[KubeClient], Awaitable[None]],
    workdir: Path,
    workers: str = "--cloneset-workers=4",
    *more: str,
) -> float:
    """Start a control plane with ``delays`` and a manager, run ``work``; returns the manager's peak RSS.

    ``workers``: the manager flag giving the benchmarked controller its workers; ``more``: further
    manager flags."""
    cluster = LocalCluster(workdir / "cluster", nodes=3, delays=delays, attached=True)
    crd_dir = workdir / "crds"
    crd_dir.mkdir(parents=True, exist_ok=True)
    write_crds(crd_dir)
    state = cluster.start([crd_dir])
    cluster.kubectl("create", "namespace", "kruise-system")
    # the same client QPS/burst as the cluster's kube-controller-manager (--kube-api-qps/-burst)
    manager = ManagerProcess(
        state.kubeconfig,
        workdir / "manager",
        extra_args=(workers, *more, "--kube-client-qps=1000", "--kube-client-burst=2000"),
    )
    manager.start()
    assert manager.proc is not None
    PIDS.clear()
    PIDS.update({name: proc.pid for name, proc in cluster._procs.items()})
    PIDS["kcm"] = PIDS.pop("kube-controller-manager")
    PIDS["manager"] = manager.proc.pid
    kube = await KubeClient.from_kubeconfig(state.kubeconfig, qps=1000, burst=2000)
    try:
        await work(kube)
        assert manager.proc is not None
        return rss_mib(manager.proc.pid, "VmHWM")
    finally:
        await kube.close()
        manager.stop()
        cluster.stop()


async def main(sizes: list[int], update_sizes: list[int], start_ms: int, restart_ms: int) -> None:
    scale_rows: list[tuple[int, float, float, float]] = []
    cpu_rows: list[tuple[int, dict[str, float], dict[str, float], dict[str, float]]] = []
    update_rows: list[tuple[int, float, float, float, float, float, float]] = []
    rss: list[float] = []
    with tempfile.TemporaryDirectory(prefix="kruise-bench-") as tmp:

        async def scale_work(kube: KubeClient) -> None:
            await warm_up(kube)
            for n in sizes:
                cs, cs_cpu = await scale_cloneset(kube, n)
                dep, dep_cpu = await scale_deployment(kube, n)
                raw, raw_cpu = await scale_raw(kube, n)
                scale_rows.append((n, cs, dep, raw))
                cpu_rows.append((n, cs_cpu, dep_cpu, raw_cpu))
                console.print(
                    f"scale {n}: CloneSet {cs:.1f}s, Deployment {dep:.1f}s, raw {raw:.1f}s "
                    f"(load average {os.getloadavg()[0]:.2f})"
                )

        if sizes:
            rss.append(await run_phase(StageDelays(), scale_work, Path(tmp) / "scale"))

        async def update_work(kube: KubeClient) -> None:
            for n in update_sizes:
                batches = math.ceil(n / max(1, math.ceil(n * 0.2)))
                inplace = await update_cloneset(kube, n, "InPlaceIfPossible")
                raw_ns = await fresh_namespace(kube, f"upd-raw-{n}")
                raw = await baselines.update_raw_inplace(kube, raw_ns, n, template("raw"), IMAGE_V2)
                await drop_namespace(kube, raw_ns)
                recreate = await update_cloneset(kube, n, "ReCreate")
                dep = await update_deployment(kube, n)
                update_rows.append(
                    (n, inplace, batches * restart_ms / 1000, raw, recreate, dep, batches * start_ms / 1000)
                )
                console.print(
                    f"update {n}: in-place {inplace:.1f}s (raw client {raw:.1f}s), recreate {recreate:.1f}s, "
                    f"Deployment {dep:.1f}s"
                )

        if update_sizes:
            delays = StageDelays(pod_start_ms=start_ms, inplace_restart_ms=restart_ms)
            rss.append(await run_phase(delays, update_work, Path(tmp) / "update"))

    table = Table(title="Scale 0 -> N Ready (seconds; lower is better)")
    for col in ("N", "CloneSet", "Deployment (kcm)", "raw client", "CloneSet/Deployment", "CloneSet/raw"):
        table.add_column(col, justify="right")
    for n, cs, dep, raw in scale_rows:
        table.add_row(str(n), f"{cs:.1f}", f"{dep:.1f}", f"{raw:.1f}", f"{cs / dep:.2f}x", f"{cs / raw:.2f}x")
    console.print(table)
    table = Table(title="CPU seconds spent until every pod was Ready")
    for col in (
        "N",
        "manager (CloneSet)",
        "control plane",
        "kcm (Deployment)",
        "control plane",
        "raw: control plane",
    ):
        table.add_column(col, justify="right")
    for n, cs_cpu, dep_cpu, raw_cpu in cpu_rows:
        table.add_row(
            str(n),
            f"{cs_cpu['manager']:.1f}",
            f"{cs_cpu['control plane']:.1f}",
            f"{dep_cpu['kcm']:.1f}",
            f"{dep_cpu['control plane']:.1f}",
            f"{raw_cpu['control plane']:.1f}",
        )
    console.print(table)
    table = Table(
        title=f"Image update, maxUnavailable 20% (new pod {start_ms} ms, in-place restart {restart_ms} ms)"
    )
    for col in (
        "N",
        "in-place",
        "in-place min",
        "ratio",
        "raw in-place",
        "ratio to raw",
        "ReCreate",
        "Deployment",
        "recreate min",
    ):
        table.add_column(col, justify="right")
    for n, inplace, inplace_min, raw, recreate, dep, recreate_min in update_rows:
        table.add_row(
            str(n),
            f"{inplace:.1f}",
            f"{inplace_min:.1f}",
            f"{inplace / inplace_min:.2f}x",
            f"{raw:.1f}",
            f"{inplace / raw:.2f}x",
            f"{recreate:.1f}",
            f"{dep:.1f}",
            f"{recreate_min:.1f}",
        )
    console.print(table)
    table = Table(title="Events written during the scale-up (objects = POSTs; count - objects = PATCHes)")
    for col in ("workload", "N", "component", "Event objects", "sum of count"):
        table.add_column(col, justify="right")
    for (kind, n), writes in EVENT_WRITES.items():
        for who, (objects, counts) in sorted(writes.items()):
            table.add_row(kind, str(n), who, str(objects), str(counts))
    console.print(table)
    console.print(f"manager peak RSS: {max(rss) if rss else float('nan'):.0f} MiB")
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    console.print(f"load average at the end: {load} ({os.cpu_count()} CPUs)")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sizes", default="100,500,1000", help="scale benchmark sizes ('' to skip)")
    parser.add_argument("--update-sizes", default="100", help="update benchmark sizes ('' to skip)")
    parser.add_argument("--pod-start-ms", type=int, default=5000)
    parser.add_argument("--inplace-restart-ms", type=int, default=1000)
    args = parser.parse_args()
    asyncio.run(
        main(
            [int(s) for s in args.sizes.split(",") if s],
            [int(s) for s in args.update_sizes.split(",") if s],
            args.pod_start_ms,
            args.inplace_restart_ms,
        )
    )
