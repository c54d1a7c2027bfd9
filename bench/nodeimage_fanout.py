"""ImagePullJob fan-out benchmark: one job's tag written into N NodeImages, against a raw client.

Not a test. Needs no real node: starts the embedded control plane, adds ``--nodes`` KWOK nodes
(label ``bench-pool=fanout``), runs ``kruise manager`` with ``--nodeimage-creation-delay=0`` and
its usual benchmark client limits (``ManagerProcess``: ``--kube-client-qps=500
--kube-client-burst=1000``, 64 connections), waits for a NodeImage per node (labels copied), then
alternates ``--rounds`` times:

- **manager**: create one ImagePullJob (``selector.matchLabels: bench-pool=fanout``,
  ``parallelism`` N, ``completionPolicy: Always``) and time until every one of the N NodeImages
  carries the job's tag in ``spec.images`` (with the job among the tag's owners), seen through one
  NodeImage watch; also until the job's status counts them (``desired`` = ``active`` = N: KWOK runs
  no daemon, so no NodeImage status ever arrives and the job stays active);
- **raw client**: the floor a controller that knows its answer could reach through the same
  client limits: a ``KubeClient`` with the manager's QPS/burst (500/1000) and connection pool
  (64 requests in flight) sends one merge PATCH per NodeImage, all at once, each adding a tag entry
  of the same shape (owned by a live ImagePullJob that selects no node, so neither controller
  touches it), timed to the same end condition through the same watch.

Between rounds the job is deleted and the NodeImage controller prunes its tags (waited for), so
every round starts from the same NodeImages. Both sides pay the same webhooks (NodeImage
mutation/validation is served by the manager) and the same controller wake-ups. Prints both p50s
and the ratio (target: at most 1.5x), and the manager's CPU seconds per round.

    .venv/bin/python bench/nodeimage_fanout.py --nodes 1000 --rounds 3
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

from baselines import ObjectStream
from procstat import PIDS, cpu_since, cpu_snapshot, rss_mib
from rich.console import Console
from rich.table import Table

from kruise.core.kube import KubeClient
from kruise.core.kube.resources import NAMESPACES, NODES
from kruise.core.localcluster import LocalCluster
from kruise.core.localcluster.components import fake_node
from kruise.daemon.api.imagepulljob import IMAGEPULLJOBS
from kruise.daemon.api.nodeimage import NODEIMAGES
from kruise.rollouts.crds import write_crds
from kruise.rollouts.manager.process import ManagerProcess

console = Console()
JSON = dict[str, Any]
NS = "bench-fanout"
POOL = ("bench-pool", "fanout")
Metrics = dict[str, float]
"""Metric (summed over label values we do not keep) -> value."""


def delta(after: Metrics, before: Metrics) -> Metrics:
    return {k: v - before.get(k, 0.0) for k, v in after.items()}


def add(total: Metrics, more: Metrics) -> None:
    for k, v in more.items():
        total[k] = total.get(k, 0.0) + v


REPO = "registry.example.com/bench"
QPS, BURST = 500, 1000  # ManagerProcess's --kube-client-qps/--kube-client-burst


class Scrape:
    """The manager's ``/metrics``: reconciles, their seconds, API requests by verb, webhook calls."""

    WANTED = (
        "controller_runtime_reconcile_total{",
        "controller_runtime_reconcile_time_seconds_sum{",
        "rest_client_requests_total{",
        "controller_runtime_webhook_requests_total{",
    )

    def __init__(self, port: int) -> None:
        self.url = f"http://127.0.0.1:{port}/metrics"

    def read(self) -> Metrics:
        out: Metrics = {}
        with urllib.request.urlopen(self.url, timeout=10) as answer:
            for line in answer.read().decode().splitlines():
                if not line.startswith(self.WANTED):
                    continue
                name, _, value = line.rpartition(" ")
                labels = dict(
                    kv.split("=", 1) for kv in name[name.index("{") + 1 : -1].split(",") if "=" in kv
                )
                labels = {k: v.strip('"') for k, v in labels.items()}
                family = name[: name.index("{")]
                if family.startswith("controller_runtime_reconcile"):
                    key = f"{family.removeprefix('controller_runtime_')} {labels.get('controller')}"
                elif family == "rest_client_requests_total":
                    key = f"API {labels.get('method')}"
                else:
                    key = "webhook calls"
                out[key] = out.get(key, 0.0) + float(value)
        return out


class NodeImageStream(ObjectStream):
    """Every NodeImage, from one watch (:class:`baselines.ObjectStream`)."""

    def __init__(self, kube: KubeClient) -> None:
        super().__init__(kube, NODEIMAGES)

    async def wait(self, predicate: Callable[[dict[str, JSON]], bool], timeout: float | None = 900) -> None:
        await super().wait(predicate, timeout)

    def pool(self) -> list[JSON]:
        return [o for o in self.items.values() if (o["metadata"].get("labels") or {}).get(POOL[0]) == POOL[1]]


def owned_tags(nodeimage: JSON, image: str, uid: str) -> bool:
    """Whether ``spec.images[image]`` has a tag whose owners include ``uid``."""
    entry = ((nodeimage.get("spec") or {}).get("images") or {}).get(image) or {}
    return any(
        any(ref.get("uid") == uid for ref in tag.get("ownerReferences") or ())
        for tag in entry.get("tags") or ()
    )


def all_carry(image: str, uid: str, n: int) -> Callable[[dict[str, JSON]], bool]:
    def done(items: dict[str, JSON]) -> bool:
        return sum(1 for o in items.values() if owned_tags(o, image, uid)) >= n

    return done


def none_carry(image: str, uid: str) -> Callable[[dict[str, JSON]], bool]:
    def done(items: dict[str, JSON]) -> bool:
        return not any(owned_tags(o, image, uid) for o in items.values())

    return done


def job_body(name: str, image: str, selector: JSON, parallelism: int) -> JSON:
    return {
        "apiVersion": "apps.kruise.io/v1alpha1",
        "kind": "ImagePullJob",
        "metadata": {"name": name},
        "spec": {
            "image": image,
            "selector": selector,
            "parallelism": parallelism,
            "completionPolicy": {"type": "Always"},
        },
    }


async def drop_job(kube: KubeClient, stream: NodeImageStream, image: str, uid: str) -> None:
    """Delete the job ``image`` and wait until the NodeImage controller pruned its tags everywhere."""
    await kube.delete(IMAGEPULLJOBS, image, NS, missing_ok=True)
    await stream.wait(none_carry(f"{REPO}/{image}", uid))


async def manager_round(
    kube: KubeClient, stream: NodeImageStream, scrape: Scrape, n: int, i: int
) -> tuple[float, float, dict[str, float], Metrics]:
    """Seconds from creating the job until all ``n`` NodeImages carry its tag, and until its
    status reads ``desired`` = ``active`` = ``n``; CPU seconds per role and the manager's
    metrics' increase until the former."""
    image = f"fanout-job-{i}"
    metrics0 = scrape.read()
    cpu0 = cpu_snapshot()
    t0 = time.monotonic()
    job = await kube.create(
        IMAGEPULLJOBS, job_body(image, f"{REPO}/{image}:v1", {"matchLabels": dict([POOL])}, n), NS
    )
    uid = job["metadata"]["uid"]
    await stream.wait(all_carry(f"{REPO}/{image}", uid, n))
    spec_done = time.monotonic() - t0
    cpu = cpu_since(cpu0)
    metrics = delta(scrape.read(), metrics0)
    while True:
        status = (await kube.get(IMAGEPULLJOBS, image, NS)).get("status") or {}
        if status.get("desired") == n and status.get("active") == n:
            break
        await asyncio.sleep(0.05)
    status_done = time.monotonic() - t0
    await drop_job(kube, stream, image, uid)
    return spec_done, status_done, cpu, metrics


async def raw_round(
    kubeconfig: str, kube: KubeClient, stream: NodeImageStream, scrape: Scrape, n: int, i: int
) -> tuple[float, dict[str, float], Metrics]:
    """Seconds for a raw client (the manager's QPS/burst and pool) to PATCH the same tag into all
    ``n`` NodeImages, until the watch shows every one; CPU seconds per role and the manager's
    metrics' increase meanwhile."""
    image = f"fanout-raw-{i}"
    holder = await kube.create(
        IMAGEPULLJOBS, job_body(image, f"{REPO}/{image}:v1", {"names": ["no-such-node"]}, 1), NS
    )
    uid = holder["metadata"]["uid"]
    owner = {"apiVersion": "apps.kruise.io/v1alpha1", "kind": "ImagePullJob", "name": image,
             "namespace": NS, "uid": uid}  # fmt: skip
    now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    tag = {
        "tag": "v1",
        "version": 0,
        "pullPolicy": {"timeoutSeconds": 600, "backoffLimit": 3, "ttlSecondsAfterFinished": 2100},
        "ownerReferences": [owner],
        "createdAt": now,
    }  # fmt: skip
    patch = {"spec": {"images": {f"{REPO}/{image}": {"tags": [tag]}}}}
    names = [o["metadata"]["name"] for o in stream.pool()]
    raw = await KubeClient.from_kubeconfig(kubeconfig, qps=QPS, burst=BURST)
    try:
        await raw.list(NODEIMAGES, label_selector="none=none")  # connect outside the timing
        metrics0 = scrape.read()
        cpu0 = cpu_snapshot()
        t0 = time.monotonic()
        await asyncio.gather(*(raw.patch(NODEIMAGES, name, patch) for name in names))
        await stream.wait(all_carry(f"{REPO}/{image}", uid, n))
        elapsed = time.monotonic() - t0
        cpu = cpu_since(cpu0)
        metrics = delta(scrape.read(), metrics0)
    finally:
        await raw.close()
    await drop_job(kube, stream, image, uid)
    return elapsed, cpu, metrics


async def add_nodes(kube: KubeClient, n: int) -> None:
    gate = asyncio.Semaphore(50)

    async def one(name: str) -> None:
        async with gate:
            await kube.create(NODES, fake_node(name, dict([POOL])))

    await asyncio.gather(*(one(f"fanout-{i}") for i in range(n)))


async def run(args: argparse.Namespace) -> None:
    n = args.nodes
    rows: list[tuple[int, float, float, float, float, float, float, float]] = []
    job_metrics: Metrics = {}
    raw_metrics: Metrics = {}
    with tempfile.TemporaryDirectory(prefix="kruise-bench-fanout-") as tmp:
        workdir = Path(tmp)
        crds = workdir / "crds"
        write_crds(crds)
        cluster = LocalCluster(workdir / "cluster", nodes=1, attached=True)
        state = cluster.start([crds])
        cluster.kubectl("create", "namespace", "kruise-system")
        manager = ManagerProcess(
            state.kubeconfig, workdir / "manager", extra_args=("--nodeimage-creation-delay=0",)
        )
        manager.start()
        assert manager.proc is not None
        PIDS.clear()
        PIDS.update({name: proc.pid for name, proc in cluster._procs.items()})
        PIDS["manager"] = manager.proc.pid  # procstat's roles: manager, control plane
        kube = await KubeClient.from_kubeconfig(state.kubeconfig, qps=1000, burst=2000)
        try:
            await kube.create(NAMESPACES, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}})
            t0 = time.monotonic()
            await add_nodes(kube, n)
            async with NodeImageStream(kube) as stream:
                await stream.wait(lambda _items: len(stream.pool()) >= n)
                console.print(
                    f"{n} KWOK nodes and their NodeImages (labelled) in {time.monotonic() - t0:.1f}s"
                )
                await asyncio.sleep(args.settle)
                scrape = Scrape(manager.metrics_port)
                await manager_round(kube, stream, scrape, n, -1)  # warm-up: first-use costs
                await raw_round(state.kubeconfig, kube, stream, scrape, n, -1)
                for i in range(args.rounds):
                    spec_s, status_s, cpu_m, met_m = await manager_round(kube, stream, scrape, n, i)
                    raw_s, cpu_r, met_r = await raw_round(state.kubeconfig, kube, stream, scrape, n, i)
                    add(job_metrics, met_m)
                    add(raw_metrics, met_r)
                    rows.append((i, spec_s, status_s, raw_s, cpu_m["manager"], cpu_r["manager"],
                                 cpu_m["control plane"], cpu_r["control plane"]))  # fmt: skip
                    console.print(
                        f"round {i}: manager {spec_s:.2f}s (status {status_s:.2f}s), raw client {raw_s:.2f}s"
                    )
            rss = rss_mib(manager.proc.pid, "VmHWM")
        finally:
            await kube.close()
            manager.stop()
            cluster.stop()
    report(n, rows, rss)
    breakdown(len(rows), job_metrics, raw_metrics)


def report(
    n: int, rows: list[tuple[int, float, float, float, float, float, float, float]], rss: float
) -> None:
    table = Table(title=f"One ImagePullJob fanned out to {n} NodeImages (seconds; lower is better)")
    for col in ("round", "manager: all specs", "manager: status counts", "raw client", "ratio",
                "CPU s manager/control plane (job)", "CPU s manager/control plane (raw)"):  # fmt: skip
        table.add_column(col, justify="right")
    for i, spec_s, status_s, raw_s, cpu_m, cpu_r, cp_m, cp_r in rows:
        table.add_row(str(i), f"{spec_s:.2f}", f"{status_s:.2f}", f"{raw_s:.2f}", f"{spec_s / raw_s:.2f}x",
                      f"{cpu_m:.1f} / {cp_m:.1f}", f"{cpu_r:.1f} / {cp_r:.1f}")  # fmt: skip
    p50m = statistics.median(r[1] for r in rows)
    p50s = statistics.median(r[2] for r in rows)
    p50r = statistics.median(r[3] for r in rows)
    met = "met" if p50m <= 1.5 * p50r else "NOT met"
    table.add_row(
        "p50", f"{p50m:.2f}", f"{p50s:.2f}", f"{p50r:.2f}", f"{p50m / p50r:.2f}x ({met}, <= 1.5x)", "", ""
    )
    console.print(table)
    console.print(f"manager peak RSS: {rss:.0f} MiB")


def breakdown(rounds: int, job: Metrics, raw: Metrics) -> None:
    """The manager's metrics per round (mean) over each timed part: where the time goes."""
    table = Table(title="The manager during the timed part (mean per round, from its /metrics)")
    for col in ("metric", "job round", "raw round"):
        table.add_column(col, justify="right")
    for key in sorted(set(job) | set(raw)):
        j, r = job.get(key, 0.0), raw.get(key, 0.0)
        if j or r:
            table.add_row(key, f"{j / rounds:.1f}", f"{r / rounds:.1f}")
    console.print(table)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--nodes", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--settle", type=float, default=5.0, help="seconds to let the cluster settle first")
    asyncio.run(run(parser.parse_args()))


if __name__ == "__main__":
    main()
