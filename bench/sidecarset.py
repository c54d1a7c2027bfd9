"""SidecarSet benchmark: what the pod webhook costs a pod creation, and how fast an upgrade runs.

Not a test. Runs on the embedded control plane with a manager and prints tables with ratios:

1. Pod CREATE latency (client round trip, p50/p99, from a burst that interleaves the scenarios
   pod by pod, so the shared machine's load hits them alike) and throughput (pods/s of a burst
   of one scenario alone), with 50 parallel creators (``--creators``):

   - (a) no pod webhook: a namespace labelled ``control-plane: openkruise``, which the webhook's
     namespace selector leaves out, as upstream's;
   - (b) webhook registered, no SidecarSet: the pod webhook's CEL condition is ``false``, so the
     API server does not call it;
   - (b') webhook called, nothing injected: a SidecarSet whose ``namespaceSelector`` selects
     nothing makes the API server send the pods (CEL cannot read namespace labels), and the
     handler finds nothing to inject (upstream's (b): every pod reaches its webhook);
   - (c) one matching SidecarSet;
   - (d) 100 SidecarSets, 10 of them matching;
   - (f) the floor: a trivial always-allow webhook (``bench/allow_webhook.py``, a process of its
     own on the same TLS stack, no informers) called for every pod of its namespace.

   After the latency bursts, a breakdown of the pod webhook's calls: the API server's mean
   call duration (``apiserver_admission_webhook_admission_duration_seconds``) against the
   manager's mean handling time (``controller_runtime_webhook_latency_seconds``).

   Pods are bound to a node that does not exist, so no scheduler or KWOK work competes.

   ``--standby``: a second manager starts after the first has the lease and registers the
   webhooks at its own address, so the API server calls a replica that runs informers and
   webhooks but no controller (as the chart's standby replica does for half the calls): what
   serving the webhooks from a process of their own would give.
2. Upgrade of N pods (a Deployment) by a SidecarSet image change, ``maxUnavailable: 10%``, until
   ``updatedReadyPods == N``, against the theoretical minimum ``ceil(N / maxUnavailable) x``
   KWOK's in-place restart delay.

    .venv/bin/python bench/sidecarset.py --pods 300 --rounds 3 --upgrade-pods 1000
"""

from __future__ import annotations

import argparse
import asyncio
import math
import os
import shutil
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table
from webhookprobe import (
    FLOOR_WEBHOOK,
    Probes,
    Sums,
    breakdown,
    floor_webhook,
    spent,
    start_floor_webhook,
)  # bench/webhookprobe.py

from kruise.core.kube import KubeClient
from kruise.core.kube.resources import DEPLOYMENTS, LEASES, MUTATING_WEBHOOKS, NAMESPACES, PODS, SIDECARSETS
from kruise.core.localcluster import LocalCluster
from kruise.core.localcluster.stages import StageDelays
from kruise.rollouts.crds import write_crds
from kruise.rollouts.manager.options import ManagerOptions
from kruise.rollouts.manager.process import ManagerProcess

console = Console(width=160)  # tables whole when the output is a file
JSON = dict[str, Any]
CREATORS = 50
"""Parallel pod creators (``--creators``; 1 shows a call's own cost without the burst's queueing)."""
SCENARIOS = ("a", "b", "b'", "c", "d", "f")
TITLES = {
    "a": "(a) no pod webhook",
    "b": "(b) webhook, no SidecarSet",
    "b'": "(b') webhook called, none injects",
    "c": "(c) one matching SidecarSet",
    "d": "(d) 100 SidecarSets, 10 matching",
    "f": "(f) floor: trivial allow webhook",
}


def pod(name: str, app: str) -> JSON:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "labels": {"app": app}},
        "spec": {
            "nodeName": "bench-nowhere",  # never scheduled, never run: only admission is measured
            "terminationGracePeriodSeconds": 0,
            "containers": [{"name": "app", "image": "registry.example.com/bench/app:1"}],
        },
    }


def sidecarset(name: str, app: str, *, container: str, namespace_selector: JSON | None = None) -> JSON:
    spec: JSON = {
        "selector": {"matchLabels": {"app": app}},
        "containers": [{"name": container, "image": "registry.example.com/bench/sidecar:1"}],
        "updateStrategy": {"type": "RollingUpdate", "maxUnavailable": "10%"},
    }
    if namespace_selector is not None:
        spec["namespaceSelector"] = namespace_selector
    return {
        "apiVersion": "apps.kruise.io/v1alpha1",
        "kind": "SidecarSet",
        "metadata": {"name": name},
        "spec": spec,
    }


async def until(probe: Callable[[], Awaitable[bool]], timeout: float = 1800, interval: float = 0.25) -> float:
    t0 = time.monotonic()
    while time.monotonic() - t0 < timeout:
        if await probe():
            return time.monotonic() - t0
        await asyncio.sleep(interval)
    raise TimeoutError(f"not done after {timeout}s")


async def namespace(kube: KubeClient, name: str, labels: JSON | None = None) -> str:
    body = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name, "labels": labels or {}}}
    await kube.create(NAMESPACES, body)
    return name


async def observed(kube: KubeClient, name: str) -> None:
    async def done() -> bool:
        obj = await kube.get(SIDECARSETS, name)
        return (obj.get("status") or {}).get("observedGeneration") == obj["metadata"]["generation"]

    await until(done, timeout=120)


Job = tuple[str, str, str, str]
"""(scenario, namespace, app label, pod name)."""


async def burst(kube: KubeClient, jobs: list[Job]) -> tuple[dict[str, list[float]], float]:
    """Create the pods with :data:`CREATORS` in parallel, in ``jobs`` order; per-scenario request
    latencies and the wall time."""
    latencies: dict[str, list[float]] = {}
    todo = iter(jobs)

    async def creator() -> None:
        for scenario, ns, app, name in todo:
            t0 = time.perf_counter()
            await kube.create(PODS, pod(name, app), ns)
            latencies.setdefault(scenario, []).append(time.perf_counter() - t0)

    t0 = time.perf_counter()
    await asyncio.gather(*(creator() for _ in range(CREATORS)))
    return latencies, time.perf_counter() - t0


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, math.ceil(q * len(ordered)) - 1)]


async def create_latency(
    kube: KubeClient, n: int, rounds: int, probes: Probes
) -> dict[str, tuple[list[float], float, int]]:
    """Scenario -> (latencies, summed wall seconds, pods); prints :func:`breakdown`."""
    ns = {
        "a": await namespace(kube, "bench-a", {"control-plane": "openkruise"}),
        "b": await namespace(kube, "bench-b"),
        "b'": await namespace(kube, "bench-b2"),
        "c": await namespace(kube, "bench-c"),
        "d": await namespace(kube, "bench-d"),
        "f": await namespace(kube, "bench-f"),
    }
    apps = {"a": "plain", "b": "plain", "b'": "nowhere", "c": "one", "d": "ten", "f": "plain"}
    certs = probes.manager.workdir / "certs"
    floor, port = start_floor_webhook(certs)
    try:
        await kube.create(MUTATING_WEBHOOKS, floor_webhook(ns["f"], port, (certs / "ca.crt").read_bytes()))
        return await _create_latency(kube, n, rounds, probes, ns, apps)
    finally:
        await kube.delete(MUTATING_WEBHOOKS, FLOOR_WEBHOOK, missing_ok=True)
        floor.terminate()
        floor.wait(10)


async def _create_latency(
    kube: KubeClient, n: int, rounds: int, probes: Probes, ns: dict[str, str], apps: dict[str, str]
) -> dict[str, tuple[list[float], float, int]]:
    await kube.create(
        SIDECARSETS,
        sidecarset(
            "bench-nowhere",
            "nowhere",
            container="nowhere",
            namespace_selector={"matchLabels": {"bench": "none"}},
        ),
    )
    await kube.create(SIDECARSETS, sidecarset("bench-one", "one", container="one"))
    for i in range(100):
        await kube.create(
            SIDECARSETS, sidecarset(f"bench-d-{i}", "ten" if i < 10 else f"other-{i}", container=f"d{i}")
        )
    for name in ("bench-nowhere", "bench-one", *(f"bench-d-{i}" for i in range(100))):
        await observed(kube, name)
    results: dict[str, tuple[list[float], float, int]] = {s: ([], 0.0, 0) for s in SCENARIOS}
    for scenario in SCENARIOS:  # warm-up: connections, first webhook calls
        await burst(kube, [(scenario, ns[scenario], apps[scenario], f"warm-{i}") for i in range(CREATORS)])
    calls: Sums = {}
    for r in range(rounds):
        # latency: the scenarios interleaved pod by pod, so the machine's load hits them alike
        mixed = [(sc, ns[sc], apps[sc], f"m{r}-{i}") for i in range(n) for sc in SCENARIOS]
        before = probes.sums()
        latencies, _ = await burst(kube, mixed)
        spent(before, probes.sums(), calls)
        # throughput: each scenario alone
        for scenario in SCENARIOS:
            jobs = [(scenario, ns[scenario], apps[scenario], f"t{r}-{i}") for i in range(n)]
            _, wall = await burst(kube, jobs)
            old = results[scenario]
            results[scenario] = (old[0] + latencies[scenario], old[1] + wall, old[2] + n)
            console.print(
                f"round {r} {scenario}: p50 {percentile(latencies[scenario], 0.5) * 1000:.1f} ms, "
                f"p99 {percentile(latencies[scenario], 0.99) * 1000:.1f} ms, {n / wall:.0f} pods/s"
            )
    console.print(breakdown(calls))
    for name in ns.values():
        await kube.delete(NAMESPACES, name, missing_ok=True)
    for item in (await kube.list(SIDECARSETS))["items"]:
        await kube.delete(SIDECARSETS, item["metadata"]["name"], missing_ok=True)
    return results


async def upgrade(kube: KubeClient, n: int) -> float:
    """Seconds from the image change to every pod updated and ready."""
    ns = await namespace(kube, "bench-upgrade")
    await kube.create(SIDECARSETS, sidecarset("bench-upgrade", "upgrade", container="log"))
    await observed(kube, "bench-upgrade")
    deployment = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "upgrade"},
        "spec": {
            "replicas": n,
            "selector": {"matchLabels": {"app": "upgrade"}},
            "template": {
                "metadata": {"labels": {"app": "upgrade"}},
                "spec": {
                    "terminationGracePeriodSeconds": 0,
                    "containers": [{"name": "app", "image": "registry.example.com/bench/app:1"}],
                },
            },
        },
    }
    await kube.create(DEPLOYMENTS, deployment, ns)

    async def status_is(**want: int) -> bool:
        obj = await kube.get(SIDECARSETS, "bench-upgrade")
        status = obj.get("status") or {}
        current = status.get("observedGeneration") == obj["metadata"]["generation"]
        return current and all(status.get(k) == v for k, v in want.items())

    await until(lambda: status_is(matchedPods=n, readyPods=n), interval=1)
    obj = await kube.get(SIDECARSETS, "bench-upgrade")
    obj["spec"]["containers"][0]["image"] = "registry.example.com/bench/sidecar:2"
    t0 = time.monotonic()
    await kube.replace(SIDECARSETS, obj)
    await until(lambda: status_is(matchedPods=n, updatedPods=n, updatedReadyPods=n))
    elapsed = time.monotonic() - t0
    await kube.delete(NAMESPACES, ns, missing_ok=True)
    await kube.delete(SIDECARSETS, "bench-upgrade", missing_ok=True)
    return elapsed


async def run_phase(
    delays: StageDelays,
    work: Callable[[KubeClient, Probes], Awaitable[None]],
    workdir: Path,
    *,
    standby: bool = False,
) -> None:
    """``work`` on a fresh cluster and manager; with ``standby``, the webhooks (and the probes)
    are a second manager's, which waits for the lease the first one holds."""
    cluster = LocalCluster(workdir / "cluster", nodes=3, delays=delays, attached=True)
    crd_dir = workdir / "crds"
    crd_dir.mkdir(parents=True, exist_ok=True)
    write_crds(crd_dir)
    state = cluster.start([crd_dir])
    cluster.kubectl("create", "namespace", "kruise-system")
    managers = [ManagerProcess(state.kubeconfig, workdir / "manager", log_level="WARNING")]
    managers[0].start()
    kube = await KubeClient.from_kubeconfig(state.kubeconfig, qps=2000, burst=4000)
    try:
        if standby:
            await until(lambda: leads(kube), timeout=60)
            managers.append(ManagerProcess(state.kubeconfig, workdir / "standby", name="standby"))
            managers[1].start()  # registers the webhooks at its own address, last
            console.print("webhooks served by the standby replica (no controller running)")
        await work(kube, Probes(cluster, managers[-1]))
    finally:
        await kube.close()
        for manager in reversed(managers):
            manager.stop()
        cluster.stop()


async def leads(kube: KubeClient) -> bool:
    """The first manager holds the lease (so the next one is a standby)."""
    defaults = ManagerOptions()
    lease = await kube.get_or_none(LEASES, defaults.leader_election_name, defaults.leader_election_namespace)
    return bool(lease and (lease.get("spec") or {}).get("holderIdentity"))


def latency_table(results: dict[str, tuple[list[float], float, int]]) -> Table:
    table = Table(title=f"Pod CREATE, {CREATORS} parallel creators (client round trip)", width=140)
    for col in ("scenario", "pods", "p50 ms", "p99 ms", "pods/s", "p50 - (a)", "p99 - (a)", "pods/s vs (a)"):
        table.add_column(col, justify="right")
    base = results["a"]
    base_p50, base_p99 = percentile(base[0], 0.5), percentile(base[0], 0.99)
    base_rate = base[2] / base[1]
    for scenario in SCENARIOS:
        latencies, wall, count = results[scenario]
        p50, p99, rate = percentile(latencies, 0.5), percentile(latencies, 0.99), count / wall
        table.add_row(
            TITLES[scenario],
            str(count),
            f"{p50 * 1000:.1f}",
            f"{p99 * 1000:.1f}",
            f"{rate:.0f}",
            f"{(p50 - base_p50) * 1000:+.1f}",
            f"{(p99 - base_p99) * 1000:+.1f}",
            f"{rate / base_rate:.2f}x",
        )
    return table


async def main(
    pods: int, rounds: int, upgrade_pods: int, restart_ms: int, workdir: str | None, standby: bool
) -> None:
    console.print(f"load average before: {os.getloadavg()}")
    results: dict[str, tuple[list[float], float, int]] = {}
    upgrade_rows: list[tuple[int, float, float]] = []
    tmp = Path(tempfile.mkdtemp(prefix="kruise-bench-sidecarset-", dir=workdir))
    if workdir:
        console.print(f"files kept under {tmp} (manager logs: */manager/)")
    try:
        if pods:

            async def latency_work(kube: KubeClient, probes: Probes) -> None:
                results.update(await create_latency(kube, pods, rounds, probes))

            await run_phase(StageDelays(), latency_work, tmp / "latency", standby=standby)
            console.print(f"load average after the latency phase: {os.getloadavg()}")
        if upgrade_pods:

            async def upgrade_work(kube: KubeClient, _: Probes) -> None:
                elapsed = await upgrade(kube, upgrade_pods)
                batches = math.ceil(upgrade_pods / math.ceil(upgrade_pods * 0.1))
                upgrade_rows.append((upgrade_pods, elapsed, batches * restart_ms / 1000))

            await run_phase(StageDelays(inplace_restart_ms=restart_ms), upgrade_work, tmp / "upgrade")
    finally:
        if not workdir:
            shutil.rmtree(tmp, ignore_errors=True)
    if results:
        console.print(latency_table(results))
    if upgrade_rows:
        table = Table(title=f"Sidecar upgrade, maxUnavailable 10%, in-place restart {restart_ms} ms")
        for col in ("pods", "seconds", "minimum", "ratio"):
            table.add_column(col, justify="right")
        for n, elapsed, minimum in upgrade_rows:
            table.add_row(str(n), f"{elapsed:.1f}", f"{minimum:.1f}", f"{elapsed / minimum:.2f}x")
        console.print(table)
    console.print(f"load average at the end: {os.getloadavg()}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--pods", type=int, default=300, help="pods per scenario per round (0 to skip)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--upgrade-pods", type=int, default=1000, help="pods upgraded (0 to skip)")
    parser.add_argument("--inplace-restart-ms", type=int, default=2000)
    parser.add_argument("--creators", type=int, default=CREATORS, help="parallel pod creators")
    parser.add_argument("--workdir", help="keep the clusters' and managers' files under this directory")
    parser.add_argument("--standby", action="store_true", help="a standby manager serves the webhooks")
    args = parser.parse_args()
    CREATORS = args.creators
    asyncio.run(
        main(args.pods, args.rounds, args.upgrade_pods, args.inplace_restart_ms, args.workdir, args.standby)
    )
