"""UnitedDeployment benchmark: N CloneSet pods across 3 subsets vs one CloneSet of N, and an
Adaptive reschedule out of a full subset.

Not a test. Starts the embedded control plane and ``kruise manager`` (``bench/cloneset.py``'s
phase), adds KWOK node pools labelled ``bench.kruise.io/pool``, and prints tables:

- **scale 0 -> N Ready**: a UnitedDeployment (``cloneSetTemplate``, subsets ``a``, ``b``, ``c``
  on their own pools, replicas split evenly by upstream's specific allocator) until its
  ``status.readyReplicas`` is N, against one CloneSet of N pods on the same pools until its own
  ``readyReplicas`` is N. Rounds alternate which goes first; the ratio is UnitedDeployment /
  CloneSet (issue target <= 1.2x). CPU seconds of the manager and the control plane per side.
- **Adaptive reschedule of M pods**: a UnitedDeployment with ``scheduleStrategy: Adaptive``
  (``rescheduleCriticalSeconds`` small) over subset ``full`` (a pool whose nodes hold exactly F
  pods) and subset ``spare``; with F pods Ready in ``full``, ``/scale`` to F + M. The M new pods
  of ``full`` fail to schedule (``PodScheduled=False``, ``Unschedulable``); once they are older
  than ``rescheduleCriticalSeconds`` the controller marks ``full`` unschedulable, holds it to its
  ready pods and gives M to ``spare``. Timed from the ``/scale`` write: all M Pending, all M
  deleted from ``full``, all M Ready in ``spare``. The floor is ``rescheduleCriticalSeconds`` plus
  a CloneSet's 0 -> M Ready measured on the same control plane.

    .venv/bin/python bench/united.py --sizes 1000 --rounds 2 --moved 100 --full 300
"""

from __future__ import annotations

import argparse
import asyncio
import os
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import cloneset as common  # bench/cloneset.py: templates, namespaces, the control-plane phase
from baselines import ObjectStream, condition
from procstat import cpu_since, cpu_snapshot
from rich.console import Console
from rich.table import Table

from kruise.core.kube import KubeClient
from kruise.core.kube.resources import CLONESETS, NODES, PODS, UNITEDDEPLOYMENTS, Resource
from kruise.core.localcluster.components import fake_node
from kruise.core.localcluster.stages import StageDelays

console = Console(width=180)  # the tables are wide
JSON = dict[str, Any]
POOL = "bench.kruise.io/pool"
SUBSET = "apps.kruise.io/subset-name"
WORKERS = "--cloneset-workers=4"
SPREAD = ("a", "b", "c")


# ---------------------------------------------------------------------- manifests
def on_pools(*pools: str) -> JSON:
    """A nodeSelectorTerm for the nodes of ``pools``."""
    return {"matchExpressions": [{"key": POOL, "operator": "In", "values": list(pools)}]}


def united(name: str, replicas: int, subsets: list[JSON], strategy: JSON | None = None) -> JSON:
    """A UnitedDeployment of CloneSets from ``bench/cloneset.py``'s pod template."""
    labels = {"app": name}
    topology: JSON = {"subsets": subsets}
    if strategy:
        topology["scheduleStrategy"] = strategy
    return {
        "apiVersion": "apps.kruise.io/v1alpha1",
        "kind": "UnitedDeployment",
        "metadata": {"name": name},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": labels},
            "template": {
                "cloneSetTemplate": {
                    "metadata": {"labels": labels},
                    "spec": {"selector": {"matchLabels": labels}, "template": common.template(name)},
                }
            },
            "topology": topology,
        },
    }


def subset(pool: str, **extra: Any) -> JSON:
    return {"name": pool, "nodeSelectorTerm": on_pools(pool), **extra}


def pooled_cloneset(name: str, replicas: int) -> JSON:
    """``bench/cloneset.py``'s CloneSet, its pods required onto the UnitedDeployment's pools."""
    body = common.cloneset(name, replicas)
    affinity = {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [on_pools(*SPREAD)]}
        }
    }
    body["spec"]["template"]["spec"]["affinity"] = affinity
    return body


async def add_pool(kube: KubeClient, pool: str, nodes: int, pods_per_node: int | None = None) -> None:
    """``nodes`` KWOK nodes labelled ``POOL: pool``; ``pods_per_node`` caps their pod capacity."""
    for i in range(nodes):
        node = fake_node(f"pool-{pool}-{i}", {POOL: pool})
        if pods_per_node is not None:
            for key in ("allocatable", "capacity"):
                node["status"][key]["pods"] = str(pods_per_node)
        await kube.create(NODES, node)


def ready_workload(n: int) -> Callable[[dict[str, JSON]], bool]:
    """The workload ``app`` reports ``n`` replicas, all Ready."""

    def done(items: dict[str, JSON]) -> bool:
        st = (items.get("app") or {}).get("status") or {}
        return st.get("readyReplicas") == n and st.get("replicas") == n

    return done


# ---------------------------------------------------------------------- scale
SUBSETS_READY: dict[str, float] = {}
"""Per namespace of a UnitedDeployment scale-up: seconds from the create until its subset
CloneSets' ``readyReplicas`` summed to N (the rest, up to the UnitedDeployment's own status, is
its status lag)."""


def summed_ready(n: int) -> Callable[[dict[str, JSON]], bool]:
    return lambda items: sum((o.get("status") or {}).get("readyReplicas") or 0 for o in items.values()) == n


async def scale(kube: KubeClient, res: Resource, body: JSON, n: int, ns_name: str) -> common.Timed:
    """Seconds from the create until ``res``'s status shows ``n`` Ready, and CPU per role; for a
    UnitedDeployment also when its subsets were (``SUBSETS_READY``)."""
    ns = await common.fresh_namespace(kube, ns_name)
    async with ObjectStream(kube, res, ns) as stream, ObjectStream(kube, CLONESETS, ns) as parts:
        cpu, t0 = cpu_snapshot(), time.monotonic()
        await kube.create(res, body, ns)

        async def subsets_ready() -> None:
            await parts.wait(summed_ready(n), timeout=1800)
            SUBSETS_READY[ns] = time.monotonic() - t0

        await asyncio.gather(stream.wait(ready_workload(n), timeout=1800), subsets_ready())
        timed = time.monotonic() - t0, cpu_since(cpu)
    await common.drop_namespace(kube, ns)
    return timed


async def scale_united(kube: KubeClient, n: int, ns_name: str) -> common.Timed:
    body = united("app", n, [subset(pool) for pool in SPREAD])
    return await scale(kube, UNITEDDEPLOYMENTS, body, n, ns_name)


async def scale_cloneset(kube: KubeClient, n: int, ns_name: str) -> common.Timed:
    return await scale(kube, CLONESETS, pooled_cloneset("app", n), n, ns_name)


# ---------------------------------------------------------------------- reschedule
def unschedulable(pod: JSON) -> bool:
    """Pending and refused by the scheduler (what the Adaptive strategy times)."""
    for c in (pod.get("status") or {}).get("conditions") or []:
        if c.get("type") == "PodScheduled":
            return bool(c.get("status") == "False" and c.get("reason") == "Unschedulable")
    return False


def in_subset(pods: dict[str, JSON], name: str) -> list[JSON]:
    return [p for p in pods.values() if (p["metadata"].get("labels") or {}).get(SUBSET) == name]


async def reschedule(kube: KubeClient, full: int, moved: int, critical: int) -> dict[str, float]:
    """Seconds from the ``/scale`` write to: every moved pod Pending (``pending``), every moved
    pod of ``full`` being deleted (``deleting``), every moved pod Ready in ``spare`` (``ready``)."""
    ns = await common.fresh_namespace(kube, f"adaptive-{moved}")
    strategy = {"type": "Adaptive", "adaptive": {"rescheduleCriticalSeconds": critical}}
    body = united("app", full, [subset("full"), subset("spare")], strategy)
    async with ObjectStream(kube, UNITEDDEPLOYMENTS, ns) as uds, ObjectStream(kube, PODS, ns) as pods:
        await kube.create(UNITEDDEPLOYMENTS, body, ns)
        await uds.wait(ready_workload(full), timeout=1800)
        marks: dict[str, float] = {}
        t0 = time.monotonic()
        patch = {"spec": {"replicas": full + moved}}
        await kube.patch(UNITEDDEPLOYMENTS, "app", patch, ns, patch_type="merge", subresource="scale")

        async def mark(name: str, predicate: Callable[[dict[str, JSON]], bool]) -> None:
            await pods.wait(predicate, timeout=1800)
            marks[name] = time.monotonic() - t0

        def pending(items: dict[str, JSON]) -> bool:
            return sum(unschedulable(p) for p in in_subset(items, "full")) >= moved

        def emptied(items: dict[str, JSON]) -> bool:  # the controller's decision: deletion started
            kept = [p for p in in_subset(items, "full") if not p["metadata"].get("deletionTimestamp")]
            return len(kept) == full and "pending" in marks

        def landed(items: dict[str, JSON]) -> bool:
            spare = in_subset(items, "spare")
            return sum(condition(p, "Ready") == "True" for p in spare) >= moved

        await asyncio.gather(mark("pending", pending), mark("deleting", emptied), mark("ready", landed))
    await common.drop_namespace(kube, ns)
    return marks


# ---------------------------------------------------------------------- main
async def main(sizes: list[int], rounds: int, full: int, moved: int, critical: int) -> None:
    scale_rows: list[tuple[int, int, str, common.Timed, common.Timed]] = []
    resched: list[tuple[dict[str, float], float]] = []
    load = [Path("/proc/loadavg").read_text().split()[:3]]

    async def work(kube: KubeClient) -> None:
        for pool in SPREAD:
            await add_pool(kube, pool, 1)
        await scale_united(kube, 3, "warmup-ud")  # first-use costs (webhook TLS, first syncs)
        await scale_cloneset(kube, 3, "warmup-cs")
        for n in sizes:
            for r in range(rounds):
                if r % 2 == 0:
                    ud = await scale_united(kube, n, f"scale-ud-{n}-{r}")
                    cs = await scale_cloneset(kube, n, f"scale-cs-{n}-{r}")
                else:
                    cs = await scale_cloneset(kube, n, f"scale-cs-{n}-{r}")
                    ud = await scale_united(kube, n, f"scale-ud-{n}-{r}")
                scale_rows.append((n, r, "UD first" if r % 2 == 0 else "CloneSet first", ud, cs))
                console.print(
                    f"scale {n} round {r}: UnitedDeployment {ud[0]:.1f}s, CloneSet {cs[0]:.1f}s "
                    f"(load average {os.getloadavg()[0]:.2f})"
                )
        if moved:
            await add_pool(kube, "full", 1, pods_per_node=full)
            await add_pool(kube, "spare", 1)
            marks = await reschedule(kube, full, moved, critical)
            floor, _ = await scale_cloneset(kube, moved, f"floor-cs-{moved}")
            resched.append((marks, critical + floor))
            console.print(f"reschedule {moved}: {marks} (floor {critical + floor:.1f}s)")

    with tempfile.TemporaryDirectory(prefix="kruise-bench-") as tmp:
        rss = await common.run_phase(StageDelays(), work, Path(tmp) / "united", WORKERS)
    load.append(Path("/proc/loadavg").read_text().split()[:3])

    table = Table(title="Scale 0 -> N Ready (seconds, CPU seconds; lower is better)")
    for col in (
        "N",
        "round",
        "order",
        "UnitedDeployment",
        "its subsets Ready",
        "CloneSet",
        "ratio (<= 1.2x)",
        "manager CPU UD / CS",
        "control plane CPU UD / CS",
    ):
        table.add_column(col, justify="right")
    for n, r, order, (ud, ud_cpu), (cs, cs_cpu) in scale_rows:
        table.add_row(
            str(n),
            str(r),
            order,
            f"{ud:.1f}",
            f"{SUBSETS_READY.get(f'scale-ud-{n}-{r}', 0):.1f}",
            f"{cs:.1f}",
            f"{ud / cs:.2f}x",
            f"{ud_cpu.get('manager', 0):.1f} / {cs_cpu.get('manager', 0):.1f}",
            f"{ud_cpu.get('control plane', 0):.1f} / {cs_cpu.get('control plane', 0):.1f}",
        )
    for n in sizes:
        rows = [(ud[0], cs[0]) for size, _, _, ud, cs in scale_rows if size == n]
        if rows:
            total_ud, total_cs = sum(u for u, _ in rows), sum(c for _, c in rows)
            table.add_row(
                str(n),
                "mean",
                "",
                f"{total_ud / len(rows):.1f}",
                "",
                f"{total_cs / len(rows):.1f}",
                f"{total_ud / total_cs:.2f}x",
                "",
                "",
            )
    console.print(table)
    table = Table(
        title=f"Adaptive reschedule of {moved} pods out of a full subset ({full} pods), "
        f"rescheduleCriticalSeconds {critical} (seconds from the /scale write)"
    )
    for col in ("all Pending", "all deleting in full", "all Ready in spare", "floor", "ratio", "over floor"):
        table.add_column(col, justify="right")
    for marks, floor in resched:
        table.add_row(
            f"{marks['pending']:.1f}",
            f"{marks['deleting']:.1f}",
            f"{marks['ready']:.1f}",
            f"{floor:.1f}",
            f"{marks['ready'] / floor:.2f}x",
            f"{marks['ready'] - floor:.1f}",
        )
    console.print(table)
    console.print(f"manager peak RSS: {rss:.0f} MiB")
    console.print("load average (1/5/15 min) at start and end: " + "; ".join(" ".join(x) for x in load))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sizes", default="1000", help="scale benchmark sizes ('' to skip)")
    parser.add_argument("--rounds", type=int, default=2, help="rounds per size, alternating the order")
    parser.add_argument("--full", type=int, default=300, help="pods the full subset's node holds")
    parser.add_argument("--moved", type=int, default=100, help="pods rescheduled (0 to skip)")
    parser.add_argument("--critical", type=int, default=5, help="rescheduleCriticalSeconds")
    args = parser.parse_args()
    asyncio.run(
        main(
            [int(s) for s in args.sizes.split(",") if s],
            args.rounds,
            args.full,
            args.moved,
            args.critical,
        )
    )
