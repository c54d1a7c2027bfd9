"""Availability benchmark: what PodUnavailableBudget, WorkloadSpread and ResourceDistribution cost.

Not a test. One embedded control plane (3 KWOK nodes), one manager (``ResourceDistributionGate``
on) and a kube-controller-manager running only ``disruption-controller`` (the native PDB's
status). Every comparison runs on the same API server, its sides interleaved, and prints ratios:

1. Eviction (``pods/eviction``, one at a time, client round trip) of Ready pods (run by KWOK) in
   three namespaces, round-robin pod by pod (the first side rotating): no budget; a native
   PodDisruptionBudget (``minAvailable: 0``; the API server checks and decrements its status);
   a PodUnavailableBudget (``maxUnavailable: N``; ``vpodeviction.kb.io`` checks and writes its
   status). Target: PUB p50 <= 1.5x PDB p50.
2. Pod CREATE (client round trip) of pods controlled by a suspended Job, with and without a
   WorkloadSpread targeting that Job (two unlimited subsets), interleaved pod by pod. Without it
   ``mpod.kb.io``'s CEL condition leaves the pod out; with it the webhook reads the
   WorkloadSpread, writes its ``subsetStatuses`` and injects the subset. Pods are bound to a node
   that does not exist and carry none of the Job's selector labels, so neither a scheduler, KWOK
   nor the job controller acts on them. Target: +5 ms p50 at most.
3. A ConfigMap distributed into N labelled namespaces by a ResourceDistribution (create to the
   last copy seen on a ConfigMap watch) against a raw client creating it in each namespace (64
   in flight), the order alternating by round. Target: <= 1.5x the raw client.

    .venv/bin/python bench/availability.py --evictions 300 --creates 300 --namespaces 1000
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import shutil
import subprocess
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from baselines import ObjectStream, all_ready, pod_stream  # bench/baselines.py
from rich.console import Console
from rich.table import Table
from sidecarset import namespace, percentile, until  # bench/sidecarset.py
from webhookprobe import Probes, Sums, spent  # bench/webhookprobe.py

from kruise.core.errors import ConflictError
from kruise.core.kube import KubeClient
from kruise.core.kube.resources import CONFIGMAPS, JOBS, NAMESPACES, PODS, Resource
from kruise.core.localcluster import LocalCluster
from kruise.core.localcluster.cluster import free_port
from kruise.core.localcluster.components import controller_manager_args
from kruise.rollouts.crds import write_crds
from kruise.rollouts.manager.process import ManagerProcess
from kruise.workloads.api.podunavailablebudget import PUBS
from kruise.workloads.api.resourcedistribution import RESOURCEDISTRIBUTIONS
from kruise.workloads.api.workloadspread import WORKLOADSPREADS

console = Console(width=160)
JSON = dict[str, Any]
PDBS = Resource("policy", "v1", "poddisruptionbudgets", "PodDisruptionBudget")
WARM = 5
"""Leading operations per side not counted (connections, first webhook calls)."""
IMAGE = "registry.example.com/bench/app:1"


def pod(name: str, app: str, *, nowhere: bool = False, owner: JSON | None = None) -> JSON:
    spec: JSON = {"terminationGracePeriodSeconds": 0, "containers": [{"name": "app", "image": IMAGE}]}
    if nowhere:
        spec["nodeName"] = "bench-nowhere"  # never scheduled, never run: only admission is measured
    meta: JSON = {"name": name, "labels": {"app": app}}
    if owner is not None:
        meta["ownerReferences"] = [owner]
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec}


def disruption_controller(cluster: LocalCluster) -> subprocess.Popen[bytes]:
    """A kube-controller-manager with only ``disruption-controller`` (LocalCluster's leaves it out)."""
    assert cluster.state is not None
    args = [
        "--controllers=disruption-controller" if a.startswith("--controllers=") else a
        for a in controller_manager_args(cluster.state.kubeconfig, free_port())
    ]
    log = open(cluster.directory / "logs" / "kcm-disruption.log", "ab")  # noqa: SIM115 - the child's
    binary = Path(cluster.state.bin_dir) / "kube-controller-manager"
    return subprocess.Popen([str(binary), *args], stdout=log, stderr=subprocess.STDOUT)


Latencies = dict[str, list[float]]
WEBHOOK = "apiserver_admission_webhook_admission_duration_seconds"
HANDLER = "controller_runtime_webhook_latency_seconds"
SERIES = (
    (WEBHOOK, "name", "vpodeviction.kb.io", "api server: vpodeviction.kb.io"),
    (HANDLER, "webhook", "/validate-pod", "manager: /validate-pod handler"),
    (WEBHOOK, "name", "mpod.kb.io", "api server: mpod.kb.io"),
    (HANDLER, "webhook", "/mutate-pod", "manager: /mutate-pod handler"),
)
"""The pod webhook calls seen by the API server and by the manager during the measured operations."""
CALLS: Sums = {}


def calls_table() -> Table:
    """Mean milliseconds per webhook call over the measured operations (:data:`CALLS`)."""
    table = Table(title="Webhook calls during the measured operations")
    for col in ("seen by", "calls", "mean ms"):
        table.add_column(col, justify="right")
    for *_, title in SERIES:
        total, count = CALLS.get(title, (0.0, 0.0))
        table.add_row(title, f"{count:.0f}", f"{total / count * 1000:.2f}" if count else "-")
    return table


async def interleaved(
    probes: Probes, sides: list[str], n: int, op: Callable[[str, int], Awaitable[None]]
) -> Latencies:
    """``op(side, i)`` for i < n, sides round-robin (the first one rotating), one at a time; the
    first :data:`WARM` of each side are not kept, the webhook calls of the others go to :data:`CALLS`."""
    out: Latencies = {s: [] for s in sides}
    before: Sums = {}
    for i in range(n + WARM):
        if i == WARM:
            before = probes.sums()
        k = i % len(sides)
        for side in sides[k:] + sides[:k]:
            t0 = time.perf_counter()
            await op(side, i)
            if i >= WARM:
                out[side].append(time.perf_counter() - t0)
    spent(before, probes.sums(), CALLS)
    return out


async def eviction(kube: KubeClient, probes: Probes, n: int) -> Latencies:
    """Eviction latencies of ``n`` pods per side (see the module doc)."""
    total = n + WARM
    sides = {"no budget": "ev-none", "native PDB": "ev-pdb", "PUB": "ev-pub"}
    sem = asyncio.Semaphore(32)
    for ns in sides.values():
        await namespace(kube, ns)
        async with pod_stream(kube, ns) as stream:

            async def create(i: int, ns: str = ns) -> None:
                async with sem:
                    await kube.create(PODS, pod(f"p{i}", "guarded"), ns)

            await asyncio.gather(*(create(i) for i in range(total)))
            await stream.wait(all_ready([f"p{i}" for i in range(total)]), timeout=600)
    selector = {"matchLabels": {"app": "guarded"}}
    pdb = {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": "guard"}}
    await kube.create(PDBS, pdb | {"spec": {"selector": selector, "minAvailable": 0}}, "ev-pdb")
    pub = {
        "apiVersion": "policy.kruise.io/v1alpha1",
        "kind": "PodUnavailableBudget",
        "metadata": {"name": "guard", "annotations": {"pub.kruise.io/protect-total-replicas": str(total)}},
        "spec": {"selector": selector, "maxUnavailable": total},
    }
    await kube.create(PUBS, pub, "ev-pub")

    async def settled(resource: Resource, ns: str, field: str) -> bool:
        obj = await kube.get(resource, "guard", ns)
        status = obj.get("status") or {}
        current = status.get("observedGeneration") == obj["metadata"]["generation"]
        return current and status.get(field) == total

    await until(lambda: settled(PDBS, "ev-pdb", "disruptionsAllowed"), timeout=120)
    await until(lambda: settled(PUBS, "ev-pub", "unavailableAllowed"), timeout=120)
    await asyncio.sleep(2)  # the PUB webhook reads the manager's informer

    async def evict(side: str, i: int) -> None:
        ns, name = sides[side], f"p{i}"
        body = {"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": name, "namespace": ns}}
        await kube.request("POST", PODS.path(ns, name, "eviction"), body=body)

    result = await interleaved(probes, list(sides), n, evict)
    for side, ns in sides.items():
        left = len((await kube.list(PODS, ns))["items"])
        console.print(f"{side}: {left} of {total} pods left after {total} evictions")
    for ns in sides.values():
        await kube.delete(NAMESPACES, ns, missing_ok=True)
    return result


def workloadspread(target: str) -> JSON:
    def subset(zone: str) -> JSON:
        term = {
            "matchExpressions": [{"key": "topology.kubernetes.io/zone", "operator": "In", "values": [zone]}]
        }
        return {"name": f"subset-{zone}", "requiredNodeSelectorTerm": term}

    return {
        "apiVersion": "apps.kruise.io/v1alpha1",
        "kind": "WorkloadSpread",
        "metadata": {"name": "spread"},
        "spec": {
            "targetRef": {"apiVersion": "batch/v1", "kind": "Job", "name": target},
            "subsets": [subset("a"), subset("b")],
        },
    }


async def spread_create(kube: KubeClient, probes: Probes, n: int) -> Latencies:
    """Pod CREATE latencies with and without a WorkloadSpread (see the module doc)."""
    sides = {"without WorkloadSpread": "ws-without", "with WorkloadSpread": "ws-with"}
    owners: dict[str, JSON] = {}
    for ns in sides.values():
        await namespace(kube, ns)
        job = {
            "apiVersion": "batch/v1",
            "kind": "Job",
            "metadata": {"name": "spread"},
            "spec": {
                "suspend": True,
                "template": {
                    "spec": {"restartPolicy": "Never", "containers": [{"name": "a", "image": IMAGE}]}
                },
            },
        }
        created = await kube.create(JOBS, job, ns)
        uid = created["metadata"]["uid"]
        owners[ns] = {
            "apiVersion": "batch/v1",
            "kind": "Job",
            "name": "spread",
            "uid": uid,
            "controller": True,
        }
    await kube.create(WORKLOADSPREADS, workloadspread("spread"), "ws-with")

    async def initialised() -> bool:
        ws = await kube.get(WORKLOADSPREADS, "spread", "ws-with")
        return len((ws.get("status") or {}).get("subsetStatuses") or []) == 2

    await until(initialised, timeout=120)
    await asyncio.sleep(3)  # mpod.kb.io's match condition follows the WorkloadSpread

    async def create(side: str, i: int) -> None:
        ns = sides[side]
        await kube.create(PODS, pod(f"p{i}", "spread", nowhere=True, owner=owners[ns]), ns)

    result = await interleaved(probes, list(sides), n, create)
    last = await kube.get(PODS, f"p{n + WARM - 1}", "ws-with")
    injected = "apps.kruise.io/matched-workloadspread" in (last["metadata"].get("annotations") or {})
    ws = await kube.get(WORKLOADSPREADS, "spread", "ws-with")
    creating = sum(len(st.get("creatingPods") or {}) for st in ws.get("status", {}).get("subsetStatuses", []))
    with_ws = result["with WorkloadSpread"]
    tenth = max(1, len(with_ws) // 10)
    console.print(
        f"WorkloadSpread injected into the last pod: {injected}; creatingPods recorded at the end: "
        f"{creating}; with-WorkloadSpread p50 of the first/last tenth: "
        f"{percentile(with_ws[:tenth], 0.5) * 1000:.1f}/{percentile(with_ws[-tenth:], 0.5) * 1000:.1f} ms"
    )
    puts: list[float] = []
    for i in range(min(n, 100)):  # the floor: the webhook's one guarded status write, raw
        ws = await kube.get(WORKLOADSPREADS, "spread", "ws-with")
        status = ws.get("status") or {}
        subsets = [dict(st) for st in status.get("subsetStatuses") or []]
        creating_pods = {**(subsets[0].get("creatingPods") or {}), f"floor-{i}": "2026-12-04T00:00:00Z"}
        subsets[0]["creatingPods"] = creating_pods
        start = time.perf_counter()
        with contextlib.suppress(ConflictError):
            await kube.replace(
                WORKLOADSPREADS, {**ws, "status": {**status, "subsetStatuses": subsets}}, subresource="status"
            )
            puts.append(time.perf_counter() - start)
    console.print(
        f"raw guarded status PUT of the WorkloadSpread (the webhook's floor): n={len(puts)} "
        f"p50 {percentile(puts, 0.5) * 1000:.1f} ms, p90 {percentile(puts, 0.9) * 1000:.1f} ms"
    )
    for ns in sides.values():
        await kube.delete(NAMESPACES, ns, missing_ok=True)
    return result


async def distribution(kube: KubeClient, n: int, rounds: int) -> dict[str, list[float]]:
    """Seconds to N copies, per side and round (see the module doc)."""
    names = [f"rd-{i}" for i in range(n)]
    sem = asyncio.Semaphore(64)

    async def make(ns: str) -> None:
        async with sem:
            await namespace(kube, ns, {"bench-rd": "yes"})

    await asyncio.gather(*(make(ns) for ns in names))
    seen: dict[str, set[str]] = {}

    def observe(_: float, obj: JSON) -> None:
        seen.setdefault(obj["metadata"]["name"], set()).add(obj["metadata"]["namespace"])

    def configmap(name: str) -> JSON:
        return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}, "data": {"k": "v"}}

    def distributor(name: str, targets: JSON) -> JSON:
        spec = {"resource": configmap(name), "targets": targets}
        return {
            "apiVersion": "apps.kruise.io/v1alpha1",
            "kind": "ResourceDistribution",
            "metadata": {"name": name},
            "spec": spec,
        }

    out: dict[str, list[float]] = {"ResourceDistribution": [], "raw client": []}
    async with ObjectStream(kube, CONFIGMAPS, observer=observe) as stream:

        async def copies(name: str, count: int) -> None:
            await stream.wait(lambda _: len(seen.get(name, ())) >= count, timeout=1800)

        # warm-up: one distributor into one namespace
        await kube.create(
            RESOURCEDISTRIBUTIONS,
            distributor("bench-warm", {"includedNamespaces": {"list": [{"name": names[0]}]}}),
        )
        await copies("bench-warm", 1)

        async def by_rd(r: int) -> float:
            t0 = time.monotonic()
            targets = {"namespaceLabelSelector": {"matchLabels": {"bench-rd": "yes"}}}
            await kube.create(RESOURCEDISTRIBUTIONS, distributor(f"bench-rd-{r}", targets))
            await copies(f"bench-rd-{r}", n)
            return time.monotonic() - t0

        async def by_raw(r: int) -> float:
            t0 = time.monotonic()

            async def put(ns: str) -> None:
                async with sem:
                    await kube.create(CONFIGMAPS, configmap(f"bench-raw-{r}"), ns)

            await asyncio.gather(*(put(ns) for ns in names))
            await copies(f"bench-raw-{r}", n)
            return time.monotonic() - t0

        for r in range(rounds):
            order = [("ResourceDistribution", by_rd), ("raw client", by_raw)]
            for side, run in order if r % 2 == 0 else order[::-1]:
                out[side].append(await run(r))
                console.print(f"round {r} {side}: {out[side][-1]:.2f} s")
    return out


async def run(args: argparse.Namespace, workdir: Path) -> tuple[Latencies, Latencies, dict[str, list[float]]]:
    cluster = LocalCluster(workdir / "cluster", nodes=3, attached=True)
    crd_dir = workdir / "crds"
    crd_dir.mkdir(parents=True, exist_ok=True)
    write_crds(crd_dir)
    state = cluster.start([crd_dir])
    cluster.kubectl("create", "namespace", "kruise-system")
    kcm = disruption_controller(cluster)
    gates = ("--feature-gates=ResourceDistributionGate=true",)
    manager = ManagerProcess(state.kubeconfig, workdir / "manager", extra_args=gates, log_level="WARNING")
    manager.start()
    kube = await KubeClient.from_kubeconfig(state.kubeconfig, qps=2000, burst=4000)
    probes = Probes(cluster, manager, series=SERIES)
    evictions: Latencies = {}
    creates: Latencies = {}
    spread: dict[str, list[float]] = {}
    try:
        if args.evictions:
            evictions = await eviction(kube, probes, args.evictions)
            console.print(f"load average after the evictions: {os.getloadavg()}")
        if args.creates:
            creates = await spread_create(kube, probes, args.creates)
            console.print(f"load average after the creates: {os.getloadavg()}")
        if args.namespaces:
            spread = await distribution(kube, args.namespaces, args.rounds)
    finally:
        await kube.close()
        manager.stop()
        kcm.terminate()
        kcm.wait(10)
        cluster.stop()
    return evictions, creates, spread


def latency_table(title: str, results: Latencies, base: str) -> Table:
    table = Table(title=title)
    for col in ("side", "n", "p50 ms", "p99 ms", f"p50 vs {base}", f"p50 - {base}"):
        table.add_column(col, justify="right")
    b50 = percentile(results[base], 0.5)
    for side, values in results.items():
        p50, p99 = percentile(values, 0.5), percentile(values, 0.99)
        table.add_row(
            side,
            str(len(values)),
            f"{p50 * 1000:.1f}",
            f"{p99 * 1000:.1f}",
            f"{p50 / b50:.2f}x",
            f"{(p50 - b50) * 1000:+.1f}",
        )
    return table


async def main(args: argparse.Namespace) -> None:
    console.print(f"load average before: {os.getloadavg()}")
    tmp = Path(tempfile.mkdtemp(prefix="kruise-bench-availability-", dir=args.workdir))
    try:
        evictions, creates, spread = await run(args, tmp)
    finally:
        if not args.workdir:
            shutil.rmtree(tmp, ignore_errors=True)
    if evictions:
        console.print(latency_table("Eviction, one at a time (client round trip)", evictions, "native PDB"))
    if creates:
        console.print(
            latency_table("Pod CREATE, one at a time (client round trip)", creates, "without WorkloadSpread")
        )
    if CALLS:
        console.print(calls_table())
    if spread:
        table = Table(title=f"A ConfigMap into {args.namespaces} namespaces (seconds to the last copy)")
        for col in ("round", "ResourceDistribution", "raw client", "ratio"):
            table.add_column(col, justify="right")
        for r, (rd, raw) in enumerate(zip(spread["ResourceDistribution"], spread["raw client"], strict=True)):
            table.add_row(str(r), f"{rd:.2f}", f"{raw:.2f}", f"{rd / raw:.2f}x")
        console.print(table)
    console.print(f"load average at the end: {os.getloadavg()}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--evictions", type=int, default=300, help="pods evicted per side (0 to skip)")
    parser.add_argument("--creates", type=int, default=300, help="pods created per side (0 to skip)")
    parser.add_argument(
        "--namespaces", type=int, default=1000, help="namespaces distributed into (0 to skip)"
    )
    parser.add_argument("--rounds", type=int, default=2, help="distribution rounds per side")
    parser.add_argument("--workdir", help="keep the cluster's and manager's files under this directory")
    asyncio.run(main(parser.parse_args()))
