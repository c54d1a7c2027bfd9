"""Rollouts at fleet scale, side by side with Argo Rollouts (issue 28, item 2).

Not a test. For each N of ``--sizes`` and each side of ``--side``, on a FRESH embedded control
plane (etcd, kube-apiserver, kube-controller-manager, kube-scheduler, KWOK nodes, no stage
delays):

- **ours**: ``kruise manager`` (``ManagerProcess``: client QPS 500, burst 1000) and N kruise
  Rollouts (``rollouts.kruise.io/v1beta1``), each over its own CloneSet of 4 KWOK pods, canary
  partition style, no traffic routing: ``replicas 25%`` + pause 10 s, ``50%`` + pause 10 s,
  ``100%``. Released by an image change of every CloneSet's template.
- **argo**: Argo Rollouts v1.10.1's ``rollouts-controller`` (``make argo-rollouts``) and N Argo
  Rollouts (``argoproj.io/v1alpha1``, their own pod template of 4 replicas, so ReplicaSets made
  by the Rollout and pods by kube-controller-manager), canary without traffic routing:
  ``setWeight 25``, ``pause 10s``, ``setWeight 50``, ``pause 10s``, ``setWeight 100``. Released
  by an image change of every Rollout's template.

The release: one merge PATCH per workload, all N from one client with 64 in flight (QPS 2000),
so all are sent within about a second (the spread is printed). A list + watch on the Rollouts
records every status with the local monotonic time its event arrived; ``bench/steptimes.py``
turns them into per-Rollout timelines. Reported per side:

- step lateness: for each Rollout and each of its two pauses, the time the next step was first
  seen minus (the time the pause was first seen + 10 s), p50/p99/max (2N samples);
- completion: seconds from the first PATCH until the last Rollout's release completed;
- the controller's CPU seconds from the first PATCH to the last completion, and its peak RSS
  (``VmHWM`` at the end) — our ``kruise manager`` process vs ``rollouts-controller``; and the
  control plane's CPU seconds over the same window (etcd, kube-apiserver, kube-controller-manager,
  kube-scheduler, KWOK: what serving each controller's requests cost the shared cores);
- API requests per minute at rest: ``apiserver_request_total`` deltas by verb and resource over
  ``--rest`` seconds (60) after all completed, watches, leases and non-resource URLs left out.
  These are the whole control plane's (kube-controller-manager, scheduler and KWOK included,
  the same on both sides), so the difference between the sides is the controller's. The API
  server itself LISTs services every 3 minutes (its NodePort allocation repair loop, seen with no
  controller running), so a 60 s window shows 0 or 1 ``LIST services`` on either side.

Running Argo's controller out of cluster (found by trying; ``--help``): its CRDs from the build
directory applied at start; ``--kubeconfig`` (no in-cluster config); ``--metricsPort`` and
``--healthzPort`` on free ports (8090 and 8080 by default, taken on a shared machine); its
namespace ``argo-rollouts`` (the default of ``POD_NAMESPACE``) must exist, since its leader
election Lease lives there (leader election left on, as ours has it; leases are excluded from
the at-rest count); the notifications ConfigMap (``argo-rollouts-notification-configmap``) is
optional: without it nothing is sent and nothing is logged. Its log carries a harmless
``Unable to Process Create request: invalid character 'k'`` warning per create (its request
metrics hook reading a protobuf answer, ``k8s\\0...``, as JSON). ``--qps 500 --burst 1000``
give it our manager's client limits (its defaults, 40 and 80, would throttle it at fleet
sizes); its worker counts stay at their defaults (``--rollout-threads`` 10). Ours runs as many
concurrent Rollout reconciles (``--rollout-workers=10``, :data:`OURS_ARGS`; upstream's and our
default is 3, which at 500 simultaneous pause ends gave a step lateness p99 of 6.4 s against
0.7 s with 10); its other worker counts stay at their defaults.

    .venv/bin/python bench/rollouts_scale.py --sizes 100 --side both
    .venv/bin/python bench/rollouts_scale.py --sizes 10 --side both --no-doc   # smoke
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import datetime
import math
import os
import shlex
import subprocess
import tempfile
import time
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from baselines import ObjectStream
from procstat import cpu_seconds, rss_mib
from profiling import profiled
from prometheus_client.parser import text_string_to_metric_families
from rich.console import Console
from steptimes import Mark, Timeline, argo_mark, kruise_mark, percentile

from kruise.core.kube import KubeClient
from kruise.core.kube.resources import CLONESETS, NAMESPACES, Resource
from kruise.core.localcluster import LocalCluster
from kruise.core.localcluster.cluster import free_port
from kruise.core.localcluster.processes import spawn, terminate
from kruise.rollouts.crds import write_crds
from kruise.rollouts.manager.process import ManagerProcess
from kruise.rollouts.resources import ROLLOUTS

console = Console()
JSON = dict[str, Any]
NS = "bench"
REPLICAS = 4
PAUSE = 10.0
IMAGE_V1 = "registry.example.com/bench/app:1.0"
IMAGE_V2 = "registry.example.com/bench/app:2.0"
ARGO_ROLLOUTS = Resource("argoproj.io", "v1alpha1", "rollouts", "Rollout")
ARGO_NAMESPACE = "argo-rollouts"
OURS_ARGS = ("--rollout-workers=10",)
"""Our manager's flags in every run, before ``--manager-args``: Argo's concurrent Rollout
reconciles (its ``--rollout-threads`` default, 10)."""
ARGO_STEPS: list[JSON] = [
    {"setWeight": 25},
    {"pause": {"duration": f"{PAUSE:.0f}s"}},
    {"setWeight": 50},
    {"pause": {"duration": f"{PAUSE:.0f}s"}},
    {"setWeight": 100},
]
IN_FLIGHT = 64
REPO = Path(__file__).resolve().parents[1]
DOC = REPO / "docs" / "benchmarks.md"


def template(name: str, image: str = IMAGE_V1) -> JSON:
    return {
        "metadata": {"labels": {"app": name}},
        "spec": {"containers": [{"name": "app", "image": image}], "terminationGracePeriodSeconds": 0},
    }


def image_patch(image: str = IMAGE_V2) -> JSON:
    """The release: a merge patch of the pod template's one container image (both sides)."""
    return {"spec": {"template": {"spec": {"containers": [{"name": "app", "image": image}]}}}}


def kruise_objects(name: str) -> tuple[JSON, JSON]:
    """Our CloneSet of :data:`REPLICAS` pods and its Rollout (25%/50%/100%, 10 s pauses)."""
    cloneset = {
        "apiVersion": "apps.kruise.io/v1alpha1",
        "kind": "CloneSet",
        "metadata": {"name": name},
        "spec": {
            "replicas": REPLICAS,
            "selector": {"matchLabels": {"app": name}},
            "template": template(name),
            "updateStrategy": {"type": "ReCreate"},
        },
    }
    pause = {"duration": int(PAUSE)}
    rollout = {
        "apiVersion": "rollouts.kruise.io/v1beta1",
        "kind": "Rollout",
        "metadata": {"name": name},
        "spec": {
            "workloadRef": {"apiVersion": "apps.kruise.io/v1alpha1", "kind": "CloneSet", "name": name},
            "strategy": {
                "canary": {
                    "steps": [
                        {"replicas": "25%", "pause": pause},
                        {"replicas": "50%", "pause": pause},
                        {"replicas": "100%"},
                    ]
                }
            },
        },
    }
    return cloneset, rollout


def argo_rollout(name: str) -> JSON:
    """An Argo Rollout of :data:`REPLICAS` pods with :data:`ARGO_STEPS`, no traffic routing."""
    return {
        "apiVersion": "argoproj.io/v1alpha1",
        "kind": "Rollout",
        "metadata": {"name": name},
        "spec": {
            "replicas": REPLICAS,
            "selector": {"matchLabels": {"app": name}},
            "template": template(name),
            "strategy": {"canary": {"steps": ARGO_STEPS}},
        },
    }


# ---------------------------------------------------------------------- API requests at rest
Requests = dict[tuple[str, str], float]
"""(verb, resource as ``group/resource[/subresource]``) -> apiserver_request_total."""


def request_totals(metrics_text: str) -> Requests:
    """``apiserver_request_total`` summed by verb and resource (codes, scopes, components
    merged); watches, leases and non-resource URLs (``/metrics``, ``/healthz``) left out."""
    out: Requests = {}
    for family in text_string_to_metric_families(metrics_text):
        if family.name != "apiserver_request":
            continue
        for sample in family.samples:
            if sample.name != "apiserver_request_total":
                continue
            lab = sample.labels
            verb, resource = lab.get("verb", ""), lab.get("resource", "")
            if verb in ("WATCH", "CONNECT") or resource in ("", "leases"):
                continue
            what = "/".join(p for p in (lab.get("group", ""), resource, lab.get("subresource", "")) if p)
            out[(verb, what)] = out.get((verb, what), 0.0) + sample.value
    return out


def per_minute(before: Requests, after: Requests, seconds: float) -> Requests:
    """What each series gained between two :func:`request_totals`, per minute; zeros dropped."""
    rates = {k: (v - before.get(k, 0.0)) * 60 / seconds for k, v in after.items()}
    return {k: v for k, v in sorted(rates.items()) if v > 0}


# ---------------------------------------------------------------------- one side
@dataclass
class Result:
    side: str
    n: int
    lateness: list[float]
    release_spread: float
    completion: float
    cpu: float
    rss: float
    plane_cpu: float  # etcd, kube-apiserver, kcm, scheduler and KWOK over the same window
    at_rest: Requests
    incomplete: int
    load: tuple[float, float, float] = field(default_factory=os.getloadavg)


@dataclass
class Side:
    """How one side is set up, released and read."""

    name: str
    rollouts: Resource
    classify: Callable[[JSON], Mark | None]
    workload: Resource  # what the release patches


async def bounded(n: int, one: Callable[[int], Any]) -> None:
    """``one(i)`` for i in 0..n-1, :data:`IN_FLIGHT` at a time."""
    sem = asyncio.Semaphore(IN_FLIGHT)

    async def run(i: int) -> None:
        async with sem:
            await one(i)

    await asyncio.gather(*(run(i) for i in range(n)))


def name_of(i: int) -> str:
    return f"app-{i:04d}"


async def run_side(
    side: Side, n: int, cluster: LocalCluster, pid: int, rest: float, timeout: float, probe: Probe
) -> Result:
    assert cluster.state is not None
    kube = await KubeClient.from_kubeconfig(cluster.state.kubeconfig, qps=2000, burst=4000)
    timelines = {name_of(i): Timeline() for i in range(n)}

    def observe(at: float, obj: JSON) -> None:
        line = timelines.get(obj["metadata"]["name"])
        if line is not None:
            line.observe(at, side.classify(obj.get("status") or {}))

    try:
        await kube.create(NAMESPACES, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}})

        async def create(i: int) -> None:
            if side.name == "ours":
                cloneset, rollout = kruise_objects(name_of(i))
                await kube.create(CLONESETS, cloneset, NS)
                await kube.create(ROLLOUTS, rollout, NS)
            else:
                await kube.create(ARGO_ROLLOUTS, argo_rollout(name_of(i)), NS)

        await bounded(n, create)
        async with ObjectStream(kube, side.rollouts, NS, observer=observe) as stream:
            await stream.wait(
                lambda items: len(items) == n and all(healthy(side, o) for o in items.values()),
                timeout=timeout,
            )
            if side.name == "ours":
                async with ObjectStream(kube, CLONESETS, NS) as sets:
                    await sets.wait(lambda items: all(ready(o) for o in items.values()), timeout=timeout)
            console.print(f"{side.name} N={n}: {n} Rollouts healthy; releasing")
            cpu0, plane0, t0 = cpu_seconds(pid), plane_cpu_by(cluster), time.monotonic()
            for line in timelines.values():
                line.start(t0)
            patch = image_patch()

            async def release(i: int) -> None:
                await kube.patch(side.workload, name_of(i), patch, NS, patch_type="merge")

            def all_done(_: dict[str, JSON]) -> bool:
                return all(line.complete(2) for line in timelines.values())

            with profiled(probe.out, pid, metrics_url=probe.metrics_url, apiserver=probe.apiserver):
                await bounded(n, release)
                spread = time.monotonic() - t0
                try:
                    await stream.wait(all_done, timeout=timeout)
                except TimeoutError:
                    console.print(f"[red]{side.name} N={n}: not all completed after {timeout:.0f}s")
            done_times = [line.done_at for line in timelines.values() if line.done_at is not None]
            completion = (max(done_times) - t0) if done_times else float("nan")
            cpu, plane_by = cpu_seconds(pid) - cpu0, plane_cpu_since(cluster, plane0)
            plane = sum(plane_by.values())
            console.print(f"{side.name} N={n}: completed in {completion:.1f}s; {rest:.0f}s at rest")
            console.print(f"{side.name} N={n}: control plane CPU (s) by process: {by_process(plane_by)}")
            before, r0 = request_totals(cluster.kubectl("get", "--raw", "/metrics")), time.monotonic()
            await asyncio.sleep(rest)
            after = request_totals(cluster.kubectl("get", "--raw", "/metrics"))
            at_rest = per_minute(before, after, time.monotonic() - r0)
            print_marks(f"{side.name} N={n}", timelines, t0)
    finally:
        await kube.close()
    return Result(
        side=side.name,
        n=n,
        lateness=[x for line in timelines.values() for x in line.lateness(PAUSE)],
        release_spread=spread,
        completion=completion,
        cpu=cpu,
        rss=rss_mib(pid, "VmHWM"),
        plane_cpu=plane,
        at_rest=at_rest,
        incomplete=sum(not line.complete(2) for line in timelines.values()),
    )


def print_marks(title: str, timelines: dict[str, Timeline], t0: float) -> None:
    """The first Rollout's marks, and the latest one's (where a lateness outlier comes from), in
    seconds after the release."""
    latest = max(timelines, key=lambda k: max(timelines[k].lateness(PAUSE), default=-math.inf))
    for name in dict.fromkeys((name_of(0), latest)):
        console.print(
            f"{title}: {name} marks (s after release): "
            + ", ".join(f"{at - t0:.2f} {tuple(m)}" for at, m in timelines[name].seen),
            markup=False,
        )


def plane_cpu_by(cluster: LocalCluster) -> dict[str, float]:
    """CPU seconds so far of each control-plane process the cluster started, by its name."""
    assert cluster.state is not None
    return {name: cpu_seconds(pid) for name, pid in cluster.state.pids.items()}


def plane_cpu_since(cluster: LocalCluster, before: dict[str, float]) -> dict[str, float]:
    """CPU seconds of each control-plane process since ``before`` (a :func:`plane_cpu_by`)."""
    return {name: used - before.get(name, 0.0) for name, used in plane_cpu_by(cluster).items()}


def by_process(used: dict[str, float]) -> str:
    """``kube-apiserver 109.8, etcd 14.7, ...``: the largest first."""
    return ", ".join(f"{name} {cpu:.1f}" for name, cpu in sorted(used.items(), key=lambda kv: -kv[1]))


def healthy(side: Side, obj: JSON) -> bool:
    status = obj.get("status") or {}
    if side.name == "ours":
        return status.get("phase") == "Healthy"
    return status.get("phase") == "Healthy" and status.get("availableReplicas") == REPLICAS


def ready(obj: JSON) -> bool:
    return (obj.get("status") or {}).get("readyReplicas") == REPLICAS


def argo_dir() -> Path:
    """The directory with ``rollouts-controller`` and ``crds/`` (``make argo-rollouts``; builds
    it when missing, ~6 min)."""
    out = subprocess.run(
        [str(REPO / "hack" / "build-argo-rollouts.sh")], check=True, capture_output=True, text=True
    )
    return Path(out.stdout.strip().splitlines()[-1])


def wait_healthz(url: str, proc: subprocess.Popen[bytes], log: Path, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"exited with {proc.returncode}: {log.read_text()[-3000:]}")
        try:
            with urllib.request.urlopen(url, timeout=1):
                return
        except OSError:
            time.sleep(0.2)
    raise RuntimeError(f"{url} not answering after {timeout}s: {log.read_text()[-3000:]}")


@dataclass
class Probe:
    """``--profile``: where the release phase's profile and metric snapshots go (None: not taken),
    the controller's metrics URL and a reader of the API server's ``/metrics``."""

    out: Path | None
    metrics_url: str | None
    apiserver: Callable[[], str]


async def measure(
    side_name: str,
    n: int,
    workdir: Path,
    rest: float,
    timeout: float,
    profile: Path | None = None,
    manager_args: tuple[str, ...] = (),
) -> Result:
    """One side at one size on a fresh control plane; stops everything it started."""
    cluster = LocalCluster(workdir / "cluster", nodes=3, attached=True)
    if side_name == "ours":
        crds = workdir / "crds"
        crds.mkdir(parents=True, exist_ok=True)
        write_crds(crds)
        state = cluster.start([crds])
    else:
        argo = argo_dir()
        state = cluster.start([argo / "crds"])
    try:
        if side_name == "ours":
            cluster.kubectl("create", "namespace", "kruise-system")
            manager = ManagerProcess(state.kubeconfig, workdir / "manager", extra_args=manager_args)
            manager.start()
            assert manager.proc is not None
            try:
                side = Side("ours", ROLLOUTS, kruise_mark, CLONESETS)
                probe = Probe(
                    profile and profile / f"ours-{n}",
                    f"http://127.0.0.1:{manager.metrics_port}/metrics",
                    lambda: cluster.kubectl("get", "--raw", "/metrics"),
                )
                return await run_side(side, n, cluster, manager.proc.pid, rest, timeout, probe)
            finally:
                manager.stop()
        cluster.kubectl("create", "namespace", ARGO_NAMESPACE)
        healthz, metrics = free_port(), free_port()
        log = workdir / "argo" / "rollouts-controller.log"
        argv = [
            str(argo / "rollouts-controller"),
            f"--kubeconfig={state.kubeconfig}",
            f"--healthzPort={healthz}",
            f"--metricsPort={metrics}",
            "--qps=500",
            "--burst=1000",
        ]
        proc = spawn(argv, log, attached=True, env={**os.environ, "POD_NAMESPACE": ARGO_NAMESPACE})
        try:
            wait_healthz(f"http://127.0.0.1:{healthz}/healthz", proc, log)
            side = Side("argo", ARGO_ROLLOUTS, argo_mark, ARGO_ROLLOUTS)
            probe = Probe(
                profile and profile / f"argo-{n}",
                f"http://127.0.0.1:{metrics}/metrics",
                lambda: cluster.kubectl("get", "--raw", "/metrics"),
            )
            return await run_side(side, n, cluster, proc.pid, rest, timeout, probe)
        finally:
            terminate(proc.pid, proc, 10)
    finally:
        cluster.stop()


# ---------------------------------------------------------------------- report
def summary_table(results: list[Result]) -> list[str]:
    """The side-by-side markdown table (one row per side and size), then ours against argo:
    ratios for completion, CPU and RSS; a difference for lateness, which is signed and near zero
    (a ratio of two values near zero says nothing)."""
    lines = [
        "| side | N | lateness min (s) | p50 (s) | p99 (s) | max (s) | completion (s) | release sent in (s) "
        "| controller CPU (s) | control plane CPU (s) | peak RSS (MiB) | incomplete |",
        "|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|",
    ]
    for r in results:
        lines.append(
            f"| {r.side} | {r.n} | {min(r.lateness, default=float('nan')):.2f} "
            f"| {percentile(r.lateness, 50):.2f} | {percentile(r.lateness, 99):.2f} "
            f"| {max(r.lateness, default=float('nan')):.2f} | {r.completion:.1f} | {r.release_spread:.2f} "
            f"| {r.cpu:.1f} | {r.plane_cpu:.1f} | {r.rss:.0f} | {r.incomplete} |"
        )
    by = {(r.side, r.n): r for r in results}
    sizes = sorted({r.n for r in results})
    pairs = [(by[("ours", n)], by[("argo", n)]) for n in sizes if ("ours", n) in by and ("argo", n) in by]
    if pairs:
        lines += [
            "",
            "| N | lateness p99 ours - argo (s) | completion ours/argo | CPU ours/argo "
            "| peak RSS ours/argo |",
            "|--:|--:|--:|--:|--:|",
        ]
        for o, a in pairs:
            lines.append(
                f"| {o.n} | {percentile(o.lateness, 99) - percentile(a.lateness, 99):+.2f} "
                f"| {ratio(o.completion, a.completion)} | {ratio(o.cpu, a.cpu)} | {ratio(o.rss, a.rss)} |"
            )
    return lines


def ratio(a: float, b: float) -> str:
    return f"{a / b:.2f}x" if b > 0 else "n/a"


def rest_table(results: list[Result], rest: float) -> list[str]:
    """API requests per minute at rest, by verb and resource, one column per run."""
    keys = sorted({k for r in results for k in r.at_rest})
    head = " | ".join(f"{r.side} N={r.n}" for r in results)
    lines = [
        f"API requests per minute over {rest:.0f} s at rest after all completed "
        "(`apiserver_request_total`, whole control plane; watches, leases, non-resource URLs excluded):",
        "",
        f"| verb | resource | {head} |",
        "|---|---|" + "--:|" * len(results),
    ]
    for verb, what in keys:
        cells = " | ".join(f"{r.at_rest.get((verb, what), 0.0):.1f}" for r in results)
        lines.append(f"| {verb} | {what} | {cells} |")
    totals = " | ".join(f"{sum(r.at_rest.values()):.1f}" for r in results)
    lines.append(f"| **all** | | {totals} |")
    return lines


def write_doc(results: list[Result], rest: float, command: str) -> None:
    """Append a section to ``docs/benchmarks.md`` for the sizes actually run."""
    sizes = ", ".join(str(n) for n in sorted({r.n for r in results}))
    today = datetime.date.today().isoformat()
    loads = "; ".join(f"{r.side} N={r.n}: {r.load[0]:.2f} {r.load[1]:.2f} {r.load[2]:.2f}" for r in results)
    body = [
        "",
        f"## Rollouts at fleet scale vs Argo Rollouts v1.10.1: N = {sizes} ({today})",
        "",
        f"`{command}` — each side on a fresh embedded control plane (3 KWOK nodes, no stage delays), "
        f"{REPLICAS} pods per workload, steps 25% / pause {PAUSE:.0f} s / 50% / pause {PAUSE:.0f} s / 100%, "
        f"no traffic routing, all N released by one image PATCH each ({IN_FLIGHT} in flight). "
        "Lateness: next step first seen minus (pause first seen + 10 s), from a Rollout watch, 2 samples "
        "per Rollout. CPU: the controller process from the first PATCH to the last completion. "
        f"Load average (1/5/15 min) at the end of each run: {loads} ({os.cpu_count()} CPUs, shared).",
        "",
        *summary_table(results),
        "",
        *rest_table(results, rest),
        "",
    ]
    with DOC.open("a") as f:
        f.write("\n".join(body))


async def main(args: argparse.Namespace) -> None:
    sizes = [int(s) for s in args.sizes.split(",") if s]
    sides = ["ours", "argo"] if args.side == "both" else [args.side]
    results: list[Result] = []
    with contextlib.ExitStack() as stack:
        tmp = args.workdir or stack.enter_context(
            tempfile.TemporaryDirectory(prefix="kruise-bench-rollouts-")
        )
        for n in sizes:
            for side in sides:
                profile = args.profile and Path(args.profile)
                extra = (*OURS_ARGS, *shlex.split(args.manager_args))
                workdir = Path(tmp) / f"{side}-{n}"
                result = await measure(side, n, workdir, args.rest, args.timeout, profile, extra)
                results.append(result)
                console.print(f"{side} N={n}: load average {' '.join(f'{x:.2f}' for x in result.load)}")
    for line in [*summary_table(results), "", *rest_table(results, args.rest)]:
        console.print(line, markup=False, highlight=False)
    if not args.no_doc:
        write_doc(
            results,
            args.rest,
            f".venv/bin/python bench/rollouts_scale.py --sizes {args.sizes} --side {args.side}",
        )
        console.print(f"section written to {DOC}")


def parse(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sizes", default="100,500,1000", help="N Rollouts per run, comma-separated")
    parser.add_argument("--side", choices=("ours", "argo", "both"), default="both")
    parser.add_argument("--rest", type=float, default=60.0, help="seconds at rest after completion")
    parser.add_argument("--timeout", type=float, default=1800.0, help="seconds to wait for set-up or release")
    parser.add_argument("--workdir", default=None, help="keep clusters' and controllers' logs here")
    parser.add_argument("--no-doc", action="store_true", help="print only; leave docs/benchmarks.md alone")
    parser.add_argument("--manager-args", default="", help="extra flags of our manager (e.g. worker counts)")
    parser.add_argument(
        "--profile", default=None, help="py-spy profile and metric snapshots of the release phase here"
    )
    return parser.parse_args(argv)


if __name__ == "__main__":
    asyncio.run(main(parse()))
