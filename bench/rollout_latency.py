"""Rollout benchmark: approve -> partition patched latency.

Not a test. Starts the embedded control plane and a ``kruise manager``, creates a CloneSet of
``steps + 1`` pods and a Rollout whose steps release one more pod each and wait for approval
(``replicas: 1, 2, ..., steps``, ``pause: {}``), changes the image, and then, at every paused
step, sends what ``kruise rollout approve`` sends (a merge patch of
``status.canaryStatus.currentStepState=StepReady`` on the status subresource) and measures the
time until a watch on the CloneSet sees ``spec.updateStrategy.partition`` change (the next
step's partition; after the last step, the partition released by finalisation). Prints the
distribution over all approvals.

The path measured: Rollout status event -> StepReady -> next step (BeforeStepUpgrade ->
StepUpgrade, the BatchRelease updated) -> BatchRelease reconcile -> CloneSet patch -> watch.

    .venv/bin/python bench/rollout_latency.py --steps 50
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table
from steptimes import percentile

from kruise.core.errors import KruiseError
from kruise.core.kube import KubeClient
from kruise.core.kube.resources import CLONESETS, NAMESPACES
from kruise.core.localcluster import LocalCluster
from kruise.rollouts.crds import write_crds
from kruise.rollouts.manager.process import ManagerProcess
from kruise.rollouts.resources import ROLLOUTS

console = Console()
NS = "bench-rollout"
IMAGE_V1 = "registry.example.com/bench/app:1.0"
IMAGE_V2 = "registry.example.com/bench/app:2.0"


def cloneset(replicas: int) -> dict[str, Any]:
    return {
        "apiVersion": "apps.kruise.io/v1alpha1",
        "kind": "CloneSet",
        "metadata": {"name": "app"},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": "app"}},
            "template": {
                "metadata": {"labels": {"app": "app"}},
                "spec": {
                    "containers": [{"name": "app", "image": IMAGE_V1}],
                    "terminationGracePeriodSeconds": 0,
                },
            },
            "updateStrategy": {"type": "InPlaceIfPossible", "maxUnavailable": "20%"},
        },
    }


def rollout(steps: int) -> dict[str, Any]:
    return {
        "apiVersion": "rollouts.kruise.io/v1beta1",
        "kind": "Rollout",
        "metadata": {"name": "app"},
        "spec": {
            "workloadRef": {"apiVersion": "apps.kruise.io/v1alpha1", "kind": "CloneSet", "name": "app"},
            "strategy": {"canary": {"steps": [{"replicas": i, "pause": {}} for i in range(1, steps + 1)]}},
        },
    }


async def until(probe: Any, timeout: float = 120, interval: float = 0.05) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if await probe():
            return
        await asyncio.sleep(interval)
    raise TimeoutError("condition not reached")


class PartitionWatch:
    """Every change of the CloneSet's partition, with the monotonic time the watch delivered it."""

    def __init__(self, kube: KubeClient) -> None:
        self.kube = kube
        self.changes: list[tuple[float, Any]] = []
        self.changed = asyncio.Event()
        self._last: Any = object()

    async def run(self) -> None:
        while True:
            listing = await self.kube.list(CLONESETS, NS)
            version = listing["metadata"]["resourceVersion"]
            with contextlib.suppress(KruiseError):
                async for event in self.kube.watch(CLONESETS, NS, resource_version=version):
                    partition = (event.object.get("spec") or {}).get("updateStrategy", {}).get("partition")
                    if partition != self._last:
                        self._last = partition
                        self.changes.append((time.monotonic(), partition))
                        self.changed.set()

    async def next_change(self, after: float, timeout: float = 60) -> tuple[float, Any]:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for at, partition in self.changes:
                if at >= after:
                    return at, partition
            self.changed.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.changed.wait(), timeout=1)
        raise TimeoutError("no partition change")


async def paused_at(kube: KubeClient, step: int) -> bool:
    sub = ((await kube.get(ROLLOUTS, "app", NS)).get("status") or {}).get("canaryStatus") or {}
    return bool(sub.get("currentStepIndex") == step and sub.get("currentStepState") == "StepPaused")


async def measure(kube: KubeClient, steps: int) -> list[float]:
    await kube.create(NAMESPACES, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}})
    await kube.create(CLONESETS, cloneset(steps + 1), NS)

    async def ready() -> bool:
        st = (await kube.get(CLONESETS, "app", NS)).get("status") or {}
        return st.get("readyReplicas") == steps + 1

    await until(ready)
    await kube.create(ROLLOUTS, rollout(steps), NS)

    async def healthy() -> bool:
        return ((await kube.get(ROLLOUTS, "app", NS)).get("status") or {}).get("phase") == "Healthy"

    await until(healthy)
    watch = PartitionWatch(kube)
    watcher = asyncio.create_task(watch.run())
    try:
        patch = {"spec": {"template": {"spec": {"containers": [{"name": "app", "image": IMAGE_V2}]}}}}
        await kube.patch(CLONESETS, "app", patch, NS, patch_type="merge")
        latencies: list[float] = []
        approve = {"status": {"canaryStatus": {"currentStepState": "StepReady"}}}
        for step in range(1, steps + 1):
            await until(lambda s=step: paused_at(kube, s))
            t0 = time.monotonic()
            await kube.patch(ROLLOUTS, "app", approve, NS, patch_type="merge", subresource="status")
            at, partition = await watch.next_change(t0)
            latencies.append(at - t0)
            console.print(f"approve step {step:2d} -> partition {partition!s:>6}: {1000 * (at - t0):7.1f} ms")
        return latencies
    finally:
        watcher.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await watcher


async def main(steps: int, kubeconfig: str | None) -> None:
    with tempfile.TemporaryDirectory(prefix="kruise-bench-rollout-") as tmp:
        workdir = Path(tmp)
        cluster = None
        if kubeconfig is None:
            crd_dir = workdir / "crds"
            crd_dir.mkdir()
            write_crds(crd_dir)
            cluster = LocalCluster(workdir / "cluster", nodes=3, attached=True)
            kubeconfig = cluster.start([crd_dir]).kubeconfig
            cluster.kubectl("create", "namespace", "kruise-system")
        manager = ManagerProcess(kubeconfig, workdir / "manager")
        manager.start()
        kube = await KubeClient.from_kubeconfig(kubeconfig, qps=500, burst=1000)
        try:
            latencies = await measure(kube, steps)
        finally:
            await kube.close()
            manager.stop()
            if cluster is not None:
                cluster.stop()
    ms = [1000 * v for v in latencies]
    table = Table(title=f"approve -> CloneSet partition patched, {len(ms)} approvals (ms)")
    for col in ("p50", "p90", "p99", "mean", "min", "max"):
        table.add_column(col, justify="right")
    table.add_row(
        *(
            f"{v:.1f}"
            for v in (
                percentile(ms, 50),
                percentile(ms, 90),
                percentile(ms, 99),
                statistics.fmean(ms),
                min(ms),
                max(ms),
            )
        )
    )
    console.print(table)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--steps", type=int, default=50, help="approvals to measure (Rollout steps, max 50)")
    parser.add_argument("--kubeconfig", default=None, help="use this cluster instead of an embedded one")
    args = parser.parse_args()
    asyncio.run(main(min(max(args.steps, 1), 50), args.kubeconfig))
