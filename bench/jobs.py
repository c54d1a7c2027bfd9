"""Job benchmarks: a BroadcastJob against a raw client and a native Job; AdvancedCronJob lateness.

Not a test. Runs on the embedded control plane with ``kruise manager`` (``--broadcastjob-workers=4``,
client QPS/burst 1000/2000 as kube-controller-manager's; ``cloneset.run_phase``), in two phases:

- **BroadcastJob**: ``--nodes`` KWOK nodes (label ``bench-pool=jobs``); every pod runs
  ``--run`` (KWOK's completion stages: annotations ``kwok.kruise.local/exit-code: "0"`` and
  ``kwok.kruise.local/run-duration``) and exits 0. For each parallelism (unlimited, then
  ``--parallelism``), side by side on the same control plane, the seconds from the create until:

  - the BroadcastJob (``completionPolicy`` Always, pods on the pool's nodes; placed by
    kube-scheduler through node affinity, upstream's default ``AssignBcjPodsByScheduler``, or
    given ``nodeName`` with ``--bcj-node-name``) reads ``status.phase: completed``;
  - a raw client (the same KubeClient limits, 64 requests in flight) that creates one pod per
    node with ``spec.nodeName`` set (at most ``parallelism`` unfinished at once, each slot refilled
    when its pod Succeeded) sees every pod Succeeded, through one pod watch;
  - a ``batch/v1`` Job of N completions at the same parallelism (kcm's job-controller, pods
    placed by kube-scheduler on the pool) has its ``Complete`` condition.

- **AdvancedCronJob**: ``--acjs`` AdvancedCronJobs on ``@every 10s`` (a ``jobTemplate`` whose
  pod finishes at once, on ``--acj-nodes`` KWOK nodes; history limits left at their defaults),
  watched for ``--acj-seconds``: each child Job's *start lateness* is the wall-clock time its
  ADDED event reached the watch minus its ``apps.kruise.io/scheduled-at`` (whole seconds, as the
  schedule's), the same quantity as kcm's ``cronjob_controller_job_creation_skew_duration_seconds``
  plus one watch delivery. Prints p50/p99/max and the runs expected but never seen.

Targets (issue 25): BroadcastJob <= 1.3x the raw client; lateness p99 <= 1 s.

    .venv/bin/python bench/jobs.py --nodes 1000 --parallelism 100 --acjs 200 --acj-seconds 300
"""

from __future__ import annotations

import argparse
import asyncio
import math
import os
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import cloneset as common  # bench/cloneset.py: namespaces, the control-plane phase
from baselines import ObjectStream
from daemonset import POOL, add_nodes
from procstat import cpu_since, cpu_snapshot
from rich.table import Table

from kruise.core.api.base import parse_time
from kruise.core.kube import KubeClient
from kruise.core.kube.resources import ADVANCEDCRONJOBS, BROADCASTJOBS, JOBS, PODS
from kruise.core.localcluster.stages import StageDelays

console = common.console
JSON = dict[str, Any]
WORKERS = "--broadcastjob-workers=4"
EXIT_CODE = "kwok.kruise.local/exit-code"
RUN_DURATION = "kwok.kruise.local/run-duration"
SCHEDULED_AT = "apps.kruise.io/scheduled-at"
Timed = tuple[float, dict[str, float]]
"""Seconds until done, and the CPU seconds each role spent meanwhile (``procstat``)."""


def pod_template(pool: str | None, run: str | None) -> JSON:
    """A pod that exits 0 after ``run`` (``None``: at once, KWOK's ``pod-complete`` for Jobs) on
    the nodes of ``pool`` (``None``: any node)."""
    annotations = {} if run is None else {EXIT_CODE: "0", RUN_DURATION: run}
    spec: JSON = {
        "restartPolicy": "Never",
        "terminationGracePeriodSeconds": 0,
        "containers": [{"name": "job", "image": "busybox", "command": ["true"]}],
    }
    if pool is not None:
        spec["nodeSelector"] = {POOL: pool}
    return {"metadata": {"labels": {"app": "job"}, "annotations": annotations}, "spec": spec}


def broadcastjob(pool: str, run: str, parallelism: int | None) -> JSON:
    spec: JSON = {"template": pod_template(pool, run), "completionPolicy": {"type": "Always"}}
    if parallelism is not None:
        spec["parallelism"] = parallelism
    return {"apiVersion": "apps.kruise.io/v1alpha1", "kind": "BroadcastJob",
            "metadata": {"name": "bcj"}, "spec": spec}  # fmt: skip


def native_job(pool: str, run: str, n: int, parallelism: int | None) -> JSON:
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "job"},
            "spec": {"completions": n, "parallelism": parallelism or n, "backoffLimit": 0,
                     "template": pod_template(pool, run)}}  # fmt: skip


def succeeded(pod: JSON) -> bool:
    return (pod.get("status") or {}).get("phase") == "Succeeded"


def job_complete(job: JSON) -> bool:
    conditions = (job.get("status") or {}).get("conditions") or ()
    return any(c.get("type") == "Complete" and c.get("status") == "True" for c in conditions)


async def timed_object(
    kube: KubeClient, ns: str, body: JSON, res: Any, done: Callable[[JSON], bool]
) -> Timed:
    """Seconds from creating ``body`` in ``ns`` until ``done`` holds for it, seen through one watch."""
    name = body["metadata"]["name"]
    async with ObjectStream(kube, res, ns) as stream:
        cpu, t0 = cpu_snapshot(), time.monotonic()
        await kube.create(res, body, ns)
        await stream.wait(lambda items: name in items and done(items[name]), timeout=1800)
        return time.monotonic() - t0, cpu_since(cpu)


async def raw_client(kube: KubeClient, ns: str, nodes: list[str], run: str, parallelism: int | None) -> Timed:
    """Seconds for a raw client to run one pod per node (``spec.nodeName``), at most
    ``parallelism`` unfinished at once (``None``: all), until every pod Succeeded."""
    finished: set[str] = set()

    def observe(_at: float, pod: JSON) -> None:
        if succeeded(pod):
            finished.add(pod["metadata"]["name"])

    template = pod_template(None, run)
    requests = asyncio.Semaphore(64)
    slots = asyncio.Semaphore(parallelism or len(nodes))
    async with ObjectStream(kube, PODS, ns, observer=observe) as stream:

        async def one(i: int, node: str) -> None:
            name = f"raw-{i}"
            async with slots:
                async with requests:
                    meta, spec = (
                        {"name": name, **template["metadata"]},
                        {**template["spec"], "nodeName": node},
                    )
                    body = {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec}
                    await kube.create(PODS, body, ns)
                if parallelism is not None:
                    await stream.wait(lambda _items: name in finished, timeout=1800)

        cpu, t0 = cpu_snapshot(), time.monotonic()
        await asyncio.gather(*(one(i, node) for i, node in enumerate(nodes)))
        await stream.wait(lambda _items: len(finished) >= len(nodes), timeout=1800)
        return time.monotonic() - t0, cpu_since(cpu)


Row = tuple[str, Timed, Timed, Timed]
"""Parallelism label, then (BroadcastJob, raw client, native Job)."""


async def broadcast_phase(
    kube: KubeClient, n: int, run: str, parallelisms: list[int | None], rows: list[Row]
) -> None:
    pool = "jobs"
    t0 = time.monotonic()
    await add_nodes(kube, pool, n)
    nodes = [f"{pool}-{i}" for i in range(n)]
    console.print(f"{n} KWOK nodes in {time.monotonic() - t0:.1f}s")
    await add_nodes(kube, "warm", 2)  # first-use costs (webhook TLS, first syncs) on 2 other nodes
    for kind, body, res, done in warm_ups(run):
        ns = await common.fresh_namespace(kube, f"warm-{kind}")
        await timed_object(kube, ns, body, res, done)
        await common.drop_namespace(kube, ns)
    for parallelism in parallelisms:
        label = "unlimited" if parallelism is None else str(parallelism)
        slug = "all" if parallelism is None else str(parallelism)
        ns = await common.fresh_namespace(kube, f"bcj-{slug}")
        bcj = await timed_object(kube, ns, broadcastjob(pool, run, parallelism), BROADCASTJOBS, bcj_completed)
        await common.drop_namespace(kube, ns)
        ns = await common.fresh_namespace(kube, f"raw-{slug}")
        raw = await raw_client(kube, ns, nodes, run, parallelism)
        await common.drop_namespace(kube, ns)
        ns = await common.fresh_namespace(kube, f"job-{slug}")
        job = await timed_object(kube, ns, native_job(pool, run, n, parallelism), JOBS, job_complete)
        await common.drop_namespace(kube, ns)
        rows.append((label, bcj, raw, job))
        console.print(
            f"parallelism {label}: BroadcastJob {bcj[0]:.1f}s, raw client {raw[0]:.1f}s, "
            f"Job (kcm) {job[0]:.1f}s (load average {os.getloadavg()[0]:.2f})"
        )


def bcj_completed(job: JSON) -> bool:
    return (job.get("status") or {}).get("phase") == "completed"


def warm_ups(run: str) -> list[tuple[str, JSON, Any, Callable[[JSON], bool]]]:
    return [("bcj", broadcastjob("warm", run, None), BROADCASTJOBS, bcj_completed),
            ("job", native_job("warm", run, 2, None), JOBS, job_complete)]  # fmt: skip


# ---------------------------------------------------------------------- AdvancedCronJob
def cronjob(i: int, pool: str) -> JSON:
    template = {"jobTemplate": {"spec": {"template": pod_template(pool, None)}}}
    spec = {"schedule": "@every 10s", "template": template}
    return {"apiVersion": "apps.kruise.io/v1alpha1", "kind": "AdvancedCronJob",
            "metadata": {"name": f"acj-{i}"}, "spec": spec}  # fmt: skip


async def cron_phase(kube: KubeClient, count: int, nodes: int, seconds: float, out: dict[str, Any]) -> None:
    """Create ``count`` ACJs and record every child Job's start lateness for ``seconds``."""
    pool = "cron"
    await add_nodes(kube, pool, nodes)
    ns = await common.fresh_namespace(kube, "acj")
    lateness: dict[str, float] = {}
    seen_at: dict[str, str] = {}
    window: list[float] = []

    def observe(_at: float, job: JSON) -> None:
        name = job["metadata"]["name"]
        scheduled = parse_time((job["metadata"].get("annotations") or {}).get(SCHEDULED_AT))
        if scheduled is None or name in lateness or not window:
            return
        if window[0] <= scheduled.timestamp() <= window[1]:
            lateness[name] = time.time() - scheduled.timestamp()
            seen_at[name] = job["metadata"].get("creationTimestamp", "")

    async with ObjectStream(kube, JOBS, ns, observer=observe):
        gate = asyncio.Semaphore(32)

        async def create(i: int) -> None:
            async with gate:
                await kube.create(ADVANCEDCRONJOBS, cronjob(i, pool), ns)

        await asyncio.gather(*(create(i) for i in range(count)))
        start = time.time()
        cpu = cpu_snapshot()
        window[:] = [start + 10, start + 10 + seconds]  # each ACJ's first run is due ~10 s after its create
        await asyncio.sleep(10 + seconds + 5)  # runs due in the window, plus time to see the last ones
        out["cpu"] = cpu_since(cpu)
    out["lateness"] = sorted(lateness.values())
    worst = sorted(lateness, key=lambda k: -lateness[k])[:5]
    out["worst"] = [f"{k} {lateness[k]:.2f}s (created {seen_at[k]})" for k in worst]
    out["expected"] = count * math.floor(seconds / 10)
    await common.drop_namespace(kube, ns)


# ---------------------------------------------------------------------- report
def percentile(sorted_values: list[float], p: float) -> float:
    """Nearest-rank percentile of an ascending list (NaN when empty)."""
    if not sorted_values:
        return float("nan")
    return sorted_values[min(len(sorted_values) - 1, max(0, math.ceil(p / 100 * len(sorted_values)) - 1))]


def report(n: int, run: str, rows: list[Row], cron: dict[str, Any], acjs: int, seconds: float) -> None:
    if rows:
        table = Table(title=f"{n} pods of {run} on {n} KWOK nodes: create -> done (seconds; lower is better)")
        for col in ("parallelism", "BroadcastJob", "raw client (nodeName)", "Job (kcm)", "BCJ/raw", "BCJ/Job",
                    "CPU s manager / kcm / control plane (BCJ)", "(raw)", "(Job)"):  # fmt: skip
            table.add_column(col, justify="right")
        for label, bcj, raw, job in rows:
            met = "met" if bcj[0] <= 1.3 * raw[0] else "NOT met"
            table.add_row(label, f"{bcj[0]:.1f}", f"{raw[0]:.1f}", f"{job[0]:.1f}",
                          f"{bcj[0] / raw[0]:.2f}x ({met}, <= 1.3x)", f"{bcj[0] / job[0]:.2f}x",
                          *(cpu_cell(t[1]) for t in (bcj, raw, job)))  # fmt: skip
        console.print(table)
    if cron:
        late = cron["lateness"]
        table = Table(
            title=f"{acjs} AdvancedCronJobs on @every 10s over {seconds:.0f}s: start lateness (seconds)"
        )
        for col in ("runs seen", "runs due", "p50", "p99", "max", "p99 <= 1 s", "CPU s manager / kcm / cp"):
            table.add_column(col, justify="right")
        p99 = percentile(late, 99)
        p50, top = (statistics.median(late), late[-1]) if late else (math.nan, math.nan)
        table.add_row(str(len(late)), str(cron["expected"]), f"{p50:.3f}", f"{p99:.3f}", f"{top:.3f}",
                      "met" if p99 <= 1 else "NOT met", cpu_cell(cron["cpu"]))  # fmt: skip
        console.print(table)
        console.print("latest runs: " + "; ".join(cron["worst"]))
        buckets = (0.1, 0.25, 0.5, 1.0, 2.0, math.inf)
        lows = (-math.inf, *buckets[:-1])
        counts = [sum(1 for x in late if lo < x <= hi) for lo, hi in zip(lows, buckets, strict=True)]
        shown = zip(buckets, counts, strict=True)
        console.print("lateness histogram: " + ", ".join(f"<= {b}s: {c}" for b, c in shown))


def cpu_cell(cpu: dict[str, float]) -> str:
    return " / ".join(f"{cpu.get(role, math.nan):.1f}" for role in ("manager", "kcm", "control plane"))


async def main(args: argparse.Namespace) -> None:
    rows: list[Row] = []
    cron: dict[str, Any] = {}
    parallelisms: list[int | None] = [None, *([args.parallelism] if args.parallelism else [])]
    rss: list[float] = []
    load = [" ".join(f"{x:.2f}" for x in os.getloadavg())]
    with tempfile.TemporaryDirectory(prefix="kruise-bench-jobs-") as tmp:
        if args.nodes:

            async def bcj_work(kube: KubeClient) -> None:
                await broadcast_phase(kube, args.nodes, args.run, parallelisms, rows)

            more = ("--no-assign-bcj-pods-by-scheduler",) if args.bcj_node_name else ()
            rss.append(await common.run_phase(StageDelays(), bcj_work, Path(tmp) / "bcj", WORKERS, *more))
            load.append(" ".join(f"{x:.2f}" for x in os.getloadavg()))
        if args.acjs:

            async def cron_work(kube: KubeClient) -> None:
                await cron_phase(kube, args.acjs, args.acj_nodes, args.acj_seconds, cron)

            workers = f"--advancedcronjob-workers={args.acj_workers}"
            rss.append(await common.run_phase(StageDelays(), cron_work, Path(tmp) / "acj", workers))
            load.append(" ".join(f"{x:.2f}" for x in os.getloadavg()))
    report(args.nodes, args.run, rows, cron, args.acjs, args.acj_seconds)
    console.print(f"manager peak RSS per phase: {', '.join(f'{r:.0f} MiB' for r in rss)}")
    console.print(f"load average (1/5/15 min) at start and after each phase: {'; '.join(load)} "
                  f"({os.cpu_count()} CPUs)")  # fmt: skip


if __name__ == "__main__":
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--nodes", type=int, default=1000, help="BroadcastJob nodes = pods (0 to skip)")
    parser.add_argument(
        "--parallelism", type=int, default=100, help="the limited run's parallelism (0: skip)"
    )
    parser.add_argument("--run", default="2s", help="how long each pod runs (a Go duration)")
    parser.add_argument(
        "--bcj-node-name", action="store_true", help="BroadcastJob pods get nodeName (not the scheduler)"
    )
    parser.add_argument("--acjs", type=int, default=200, help="AdvancedCronJobs (0 to skip)")
    parser.add_argument("--acj-nodes", type=int, default=20, help="KWOK nodes for the ACJs' pods")
    parser.add_argument("--acj-workers", type=int, default=3, help="the manager's ACJ workers (3: default)")
    parser.add_argument("--acj-seconds", type=float, default=300, help="how long to watch the ACJs")
    asyncio.run(main(parser.parse_args()))
