"""Advanced DaemonSet benchmark: kruise's DaemonSet vs kube-controller-manager's DaemonSet.

Not a test. Runs on the embedded control plane (one without KWOK delays for creation, one with
delays for updates), with kcm's ``daemonset-controller`` as the baseline, and prints tables with
ratios. Every DaemonSet selects a pool of KWOK nodes the script adds (label ``bench-pool``), so
the cluster's own three nodes never count:

- create -> one Ready pod on each of N nodes: the Advanced DaemonSet and an ``apps/v1``
  DaemonSet of the same template (both let kube-scheduler bind through node affinity);
- N nodes added at once under an existing DaemonSet -> a Ready pod on each;
- image update on N nodes, maxUnavailable 10%: Advanced DaemonSet ``InPlaceIfPossible`` and
  ``Standard``, native ``RollingUpdate``, against ``ceil(N / maxUnavailable) x step`` where the
  step is KWOK's simulated in-place restart (in place) or new-pod start (recreate);
- peak RSS of the manager process.

Done means what ``kubectl rollout status`` waits for: ``desiredNumberScheduled`` = N and
``updatedNumberScheduled`` = ``numberAvailable`` = N for the current generation.

    .venv/bin/python bench/daemonset.py --sizes 100,1000 --added 100 --update-sizes 100
"""

from __future__ import annotations

import argparse
import asyncio
import math
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import cloneset as common  # bench/cloneset.py: namespaces, polling, the control-plane phase
from rich.table import Table

from kruise.core.kube import KubeClient
from kruise.core.kube.resources import DAEMONSETS, NATIVE_DAEMONSETS, NODES, Resource
from kruise.core.localcluster.components import fake_node
from kruise.core.localcluster.stages import StageDelays

console = common.console
WORKERS = "--daemonset-workers=4"
POOL = "bench-pool"
KINDS: dict[str, tuple[Resource, str | None]] = {
    "ADS InPlaceIfPossible": (DAEMONSETS, "InPlaceIfPossible"),
    "ADS Standard": (DAEMONSETS, "Standard"),
    "DaemonSet (kcm)": (NATIVE_DAEMONSETS, None),
}


def daemonset(res: Resource, pool: str, update_type: str | None) -> dict[str, Any]:
    """A DaemonSet ``app`` on the nodes of ``pool``, maxUnavailable 10%; ``update_type`` is the
    Advanced DaemonSet's ``rollingUpdateType`` (``None`` for the native kind)."""
    template = common.template("app")
    template["spec"]["nodeSelector"] = {POOL: pool}
    rolling: dict[str, Any] = {"maxUnavailable": "10%"}
    if update_type is not None:
        rolling["rollingUpdateType"] = update_type
    return {
        "apiVersion": f"{res.group}/{res.version}",
        "kind": "DaemonSet",
        "metadata": {"name": "app"},
        "spec": {
            "selector": {"matchLabels": {"app": "app"}},
            "template": template,
            "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": rolling},
        },
    }


async def _bounded(jobs: list[Callable[[], Awaitable[Any]]], limit: int = 50) -> None:
    gate = asyncio.Semaphore(limit)

    async def run(job: Callable[[], Awaitable[Any]]) -> None:
        async with gate:
            await job()

    await asyncio.gather(*(run(j) for j in jobs))


async def add_nodes(kube: KubeClient, pool: str, n: int) -> None:
    """``n`` KWOK nodes labelled ``bench-pool=<pool>``, created concurrently."""
    names = [f"{pool}-{i}" for i in range(n)]
    await _bounded([lambda name=name: kube.create(NODES, fake_node(name, {POOL: pool})) for name in names])


async def remove_nodes(kube: KubeClient, pool: str) -> None:
    listed = await kube.list(NODES, label_selector=f"{POOL}={pool}")
    names = [str(n["metadata"]["name"]) for n in listed["items"]]
    await _bounded([lambda name=name: kube.delete(NODES, name, missing_ok=True) for name in names])


def rolled_out(obj: dict[str, Any], n: int) -> bool:
    """``kubectl rollout status``: the current generation observed, N desired, all updated and
    available (and Ready)."""
    st = obj.get("status") or {}
    counts = ("desiredNumberScheduled", "updatedNumberScheduled", "numberAvailable", "numberReady")
    observed = st.get("observedGeneration") == obj["metadata"]["generation"]
    return observed and all(int(st.get(k) or 0) == n for k in counts)  # zeros may be omitted


async def wait_rolled_out(kube: KubeClient, res: Resource, ns: str, n: int) -> None:
    async def done() -> bool:
        return rolled_out(await kube.get(res, "app", ns), n)

    await common.until(done)


async def create(kube: KubeClient, res: Resource, pool: str, n: int, ns_name: str) -> float:
    """Seconds from creating the DaemonSet to a Ready pod on each of the pool's ``n`` nodes."""
    ns = await common.fresh_namespace(kube, ns_name)
    t0 = time.monotonic()
    await kube.create(res, daemonset(res, pool, "Standard" if res == DAEMONSETS else None), ns)
    await wait_rolled_out(kube, res, ns, n)
    elapsed = time.monotonic() - t0
    await common.drop_namespace(kube, ns)
    return elapsed


async def nodes_added(kube: KubeClient, res: Resource, n: int, ns_name: str) -> float:
    """Seconds from adding ``n`` nodes at once (under a settled DaemonSet) to a Ready pod on each."""
    ns = await common.fresh_namespace(kube, ns_name)
    pool = ns_name
    await kube.create(res, daemonset(res, pool, "Standard" if res == DAEMONSETS else None), ns)
    await wait_rolled_out(kube, res, ns, 0)
    t0 = time.monotonic()
    await add_nodes(kube, pool, n)
    await wait_rolled_out(kube, res, ns, n)
    elapsed = time.monotonic() - t0
    await common.drop_namespace(kube, ns)
    await remove_nodes(kube, pool)
    return elapsed


async def update(
    kube: KubeClient, res: Resource, update_type: str | None, pool: str, n: int, ns_name: str
) -> float:
    """Seconds from an image change to every pod of the pool's ``n`` nodes updated and available."""
    ns = await common.fresh_namespace(kube, ns_name)
    await kube.create(res, daemonset(res, pool, update_type), ns)
    await wait_rolled_out(kube, res, ns, n)
    t0 = time.monotonic()
    patch = {"spec": {"template": {"spec": {"containers": [{"name": "app", "image": common.IMAGE_V2}]}}}}
    await kube.patch(res, "app", patch, ns, patch_type="merge")
    await wait_rolled_out(kube, res, ns, n)
    elapsed = time.monotonic() - t0
    await common.drop_namespace(kube, ns)
    return elapsed


async def main(sizes: list[int], added: int, update_sizes: list[int], start_ms: int, restart_ms: int) -> None:
    create_rows: list[tuple[str, float, float]] = []
    update_rows: list[tuple[int, dict[str, float], float, float]] = []
    rss: list[float] = []
    load = [Path("/proc/loadavg").read_text().split()[:3]]
    with tempfile.TemporaryDirectory(prefix="kruise-bench-") as tmp:

        async def create_work(kube: KubeClient) -> None:
            await add_nodes(kube, "warmup", 2)  # first-use costs (webhook TLS, first syncs)
            await create(kube, DAEMONSETS, "warmup", 2, "warmup-ads")
            await create(kube, NATIVE_DAEMONSETS, "warmup", 2, "warmup-ds")
            await remove_nodes(kube, "warmup")
            for n in sizes:
                pool = f"create-{n}"
                await add_nodes(kube, pool, n)
                ads = await create(kube, DAEMONSETS, pool, n, f"create-ads-{n}")
                ds = await create(kube, NATIVE_DAEMONSETS, pool, n, f"create-ds-{n}")
                await remove_nodes(kube, pool)
                create_rows.append((f"create on {n} nodes", ads, ds))
                console.print(
                    f"create on {n} nodes: Advanced DaemonSet {ads:.1f}s, DaemonSet (kcm) {ds:.1f}s"
                )
            if added:
                ads = await nodes_added(kube, DAEMONSETS, added, f"added-ads-{added}")
                ds = await nodes_added(kube, NATIVE_DAEMONSETS, added, f"added-ds-{added}")
                create_rows.append((f"{added} nodes added at once", ads, ds))
                console.print(
                    f"{added} nodes added: Advanced DaemonSet {ads:.1f}s, DaemonSet (kcm) {ds:.1f}s"
                )

        if sizes or added:
            rss.append(await common.run_phase(StageDelays(), create_work, Path(tmp) / "create", WORKERS))
            load.append(Path("/proc/loadavg").read_text().split()[:3])

        async def update_work(kube: KubeClient) -> None:
            for n in update_sizes:
                pool = f"upd-{n}"
                await add_nodes(kube, pool, n)
                batches = math.ceil(n / max(1, math.ceil(n * 0.1)))
                times: dict[str, float] = {}
                for label, (res, update_type) in KINDS.items():
                    slug = (update_type or "native").lower()
                    times[label] = await update(kube, res, update_type, pool, n, f"upd-{slug}-{n}")
                await remove_nodes(kube, pool)
                update_rows.append((n, times, batches * restart_ms / 1000, batches * start_ms / 1000))
                console.print(f"update on {n} nodes: " + ", ".join(f"{k} {v:.1f}s" for k, v in times.items()))

        if update_sizes:
            delays = StageDelays(pod_start_ms=start_ms, inplace_restart_ms=restart_ms)
            rss.append(await common.run_phase(delays, update_work, Path(tmp) / "update", WORKERS))
            load.append(Path("/proc/loadavg").read_text().split()[:3])

    report(create_rows, update_rows, start_ms, restart_ms)
    console.print(f"manager peak RSS: {max(rss) if rss else float('nan'):.0f} MiB")
    console.print(
        "load average (1/5/15 min) at start and after each phase: " + "; ".join(" ".join(x) for x in load)
    )


def report(
    create_rows: list[tuple[str, float, float]],
    update_rows: list[tuple[int, dict[str, float], float, float]],
    start_ms: int,
    restart_ms: int,
) -> None:
    table = Table(title="Placement: a Ready pod on every node (seconds; lower is better)")
    for col in ("case", "Advanced DaemonSet", "DaemonSet (kcm)", "ratio"):
        table.add_column(col, justify="right")
    for case, ads, ds in create_rows:
        table.add_row(case, f"{ads:.1f}", f"{ds:.1f}", f"{ads / ds:.2f}x")
    console.print(table)
    table = Table(
        title=f"Image update, maxUnavailable 10% (new pod {start_ms} ms, in-place restart {restart_ms} ms)"
    )
    for col in ("N", *KINDS, "in-place min", "in-place ratio", "recreate min"):
        table.add_column(col, justify="right")
    for n, times, inplace_min, recreate_min in update_rows:
        table.add_row(
            str(n),
            *(f"{times[k]:.1f}" for k in KINDS),
            f"{inplace_min:.1f}",
            f"{times['ADS InPlaceIfPossible'] / inplace_min:.2f}x",
            f"{recreate_min:.1f}",
        )
    console.print(table)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sizes", default="100,1000", help="creation benchmark node counts ('' to skip)")
    parser.add_argument("--added", type=int, default=100, help="nodes added at once (0 to skip)")
    parser.add_argument("--update-sizes", default="100", help="update benchmark node counts ('' to skip)")
    parser.add_argument("--pod-start-ms", type=int, default=5000)
    parser.add_argument("--inplace-restart-ms", type=int, default=1000)
    args = parser.parse_args()
    asyncio.run(
        main(
            [int(s) for s in args.sizes.split(",") if s],
            args.added,
            [int(s) for s in args.update_sizes.split(",") if s],
            args.pod_start_ms,
            args.inplace_restart_ms,
        )
    )
