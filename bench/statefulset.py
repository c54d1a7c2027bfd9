"""Advanced StatefulSet benchmark: kruise's StatefulSet vs kube-controller-manager's StatefulSet.

Not a test. Runs on the embedded control plane (one for scaling, one with KWOK delays for
updates), with kcm's ``statefulset-controller`` as the baseline, and prints tables with ratios:

- scale 0 -> N Ready pods, ``podManagementPolicy: Parallel``: the Advanced StatefulSet
  (``apps.kruise.io/v1beta1``) and an ``apps/v1`` StatefulSet of the same template;
- image update of N pods, maxUnavailable 20%, Parallel: Advanced StatefulSet
  ``InPlaceIfPossible`` and ``ReCreate``, native ``RollingUpdate`` (kcm honours ``maxUnavailable``
  when its ``MaxUnavailableStatefulSet`` gate is on, beta since 1.35; otherwise one pod at a
  time), against ``ceil(N / maxUnavailable) x step`` where the step is KWOK's simulated in-place
  restart or new-pod start;
- peak RSS of the manager process.

Pods have no volume claims: kcm and kruise would both wait on the same PV binder.

    .venv/bin/python bench/statefulset.py --sizes 100,500 --update-sizes 100
"""

from __future__ import annotations

import argparse
import asyncio
import math
import tempfile
import time
from pathlib import Path
from typing import Any

import cloneset as common  # bench/cloneset.py: namespaces, polling, the control-plane phase
from rich.table import Table

from kruise.core.kube import KubeClient
from kruise.core.kube.resources import NATIVE_STATEFULSETS, STATEFULSETS, Resource
from kruise.core.localcluster.stages import StageDelays

console = common.console
WORKERS = "--statefulset-workers=4"


def template(app: str, *, gated: bool) -> dict[str, Any]:
    out = common.template(app)
    if gated:  # an in-place update needs the gate in the template (upstream's validation)
        out["spec"]["readinessGates"] = [{"conditionType": "InPlaceUpdateReady"}]
    return out


def advanced(name: str, replicas: int, strategy: str = "InPlaceIfPossible") -> dict[str, Any]:
    return {
        "apiVersion": "apps.kruise.io/v1beta1",
        "kind": "StatefulSet",
        "metadata": {"name": name},
        "spec": {
            "replicas": replicas,
            "serviceName": name,
            "podManagementPolicy": "Parallel",
            "selector": {"matchLabels": {"app": name}},
            "template": template(name, gated=strategy != "ReCreate"),
            "updateStrategy": {
                "type": "RollingUpdate",
                "rollingUpdate": {"podUpdatePolicy": strategy, "maxUnavailable": "20%"},
            },
        },
    }


def native(name: str, replicas: int) -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": {"name": name},
        "spec": {
            "replicas": replicas,
            "serviceName": name,
            "podManagementPolicy": "Parallel",
            "selector": {"matchLabels": {"app": name}},
            "template": template(name, gated=False),
            "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": "20%"}},
        },
    }


async def scale(kube: KubeClient, res: Resource, body: dict[str, Any], n: int, ns_name: str) -> float:
    ns = await common.fresh_namespace(kube, ns_name)
    t0 = time.monotonic()
    await kube.create(res, body, ns)
    await common.until(lambda: common._eq(common.status_of(kube, res, "app", ns), "readyReplicas", n))
    elapsed = time.monotonic() - t0
    await common.drop_namespace(kube, ns)
    return elapsed


async def scale_advanced(kube: KubeClient, n: int, ns_name: str = "") -> float:
    return await scale(kube, STATEFULSETS, advanced("app", n), n, ns_name or f"scale-asts-{n}")


async def scale_native(kube: KubeClient, n: int, ns_name: str = "") -> float:
    return await scale(kube, NATIVE_STATEFULSETS, native("app", n), n, ns_name or f"scale-sts-{n}")


def updated(st: dict[str, Any], generation: int, n: int, *, advanced: bool) -> bool:
    """The whole set runs the new revision and is Ready (per kind's own status fields)."""
    done = st.get("observedGeneration") == generation and st.get("readyReplicas") == n
    done = done and st.get("replicas") == n
    if advanced:
        return done and st.get("updatedReadyReplicas") == n
    return done and st.get("updatedReplicas") == n and st.get("currentRevision") == st.get("updateRevision")


async def update(kube: KubeClient, res: Resource, body: dict[str, Any], n: int, ns_name: str) -> float:
    ns = await common.fresh_namespace(kube, ns_name)
    await kube.create(res, body, ns)
    await common.until(lambda: common._eq(common.status_of(kube, res, "app", ns), "readyReplicas", n))
    t0 = time.monotonic()
    patch = {"spec": {"template": {"spec": {"containers": [{"name": "app", "image": common.IMAGE_V2}]}}}}
    await kube.patch(res, "app", patch, ns, patch_type="merge")

    async def done() -> bool:
        obj = await kube.get(res, "app", ns)
        return updated(
            obj.get("status") or {}, obj["metadata"]["generation"], n, advanced=res == STATEFULSETS
        )

    await common.until(done)
    elapsed = time.monotonic() - t0
    await common.drop_namespace(kube, ns)
    return elapsed


async def main(sizes: list[int], update_sizes: list[int], start_ms: int, restart_ms: int) -> None:
    scale_rows: list[tuple[int, float, float]] = []
    update_rows: list[tuple[int, float, float, float, float, float]] = []
    rss: list[float] = []
    load = [Path("/proc/loadavg").read_text().split()[:3]]
    with tempfile.TemporaryDirectory(prefix="kruise-bench-") as tmp:

        async def scale_work(kube: KubeClient) -> None:
            await scale_advanced(kube, 2, "warmup-asts")  # first-use costs (webhook TLS, first syncs)
            await scale_native(kube, 2, "warmup-sts")
            for n in sizes:
                asts = await scale_advanced(kube, n)
                sts = await scale_native(kube, n)
                scale_rows.append((n, asts, sts))
                console.print(f"scale {n}: Advanced StatefulSet {asts:.1f}s, StatefulSet (kcm) {sts:.1f}s")

        if sizes:
            rss.append(await common.run_phase(StageDelays(), scale_work, Path(tmp) / "scale", WORKERS))
            load.append(Path("/proc/loadavg").read_text().split()[:3])

        async def update_work(kube: KubeClient) -> None:
            for n in update_sizes:
                batches = math.ceil(n / max(1, math.ceil(n * 0.2)))
                inplace = await update(kube, STATEFULSETS, advanced("app", n), n, f"upd-asts-inplace-{n}")
                recreate = await update(
                    kube, STATEFULSETS, advanced("app", n, "ReCreate"), n, f"upd-asts-recreate-{n}"
                )
                sts = await update(kube, NATIVE_STATEFULSETS, native("app", n), n, f"upd-sts-{n}")
                update_rows.append(
                    (n, inplace, batches * restart_ms / 1000, recreate, sts, batches * start_ms / 1000)
                )
                console.print(
                    f"update {n}: in-place {inplace:.1f}s, recreate {recreate:.1f}s, "
                    f"StatefulSet (kcm) {sts:.1f}s"
                )

        if update_sizes:
            delays = StageDelays(pod_start_ms=start_ms, inplace_restart_ms=restart_ms)
            rss.append(await common.run_phase(delays, update_work, Path(tmp) / "update", WORKERS))
            load.append(Path("/proc/loadavg").read_text().split()[:3])

    table = Table(title="Scale 0 -> N Ready, Parallel (seconds; lower is better)")
    for col in ("N", "Advanced StatefulSet", "StatefulSet (kcm)", "ratio"):
        table.add_column(col, justify="right")
    for n, asts, sts in scale_rows:
        table.add_row(str(n), f"{asts:.1f}", f"{sts:.1f}", f"{asts / sts:.2f}x")
    console.print(table)
    table = Table(
        title=f"Image update, maxUnavailable 20% (new pod {start_ms} ms, in-place restart {restart_ms} ms)"
    )
    for col in ("N", "in-place", "in-place min", "ratio", "ReCreate", "StatefulSet (kcm)", "recreate min"):
        table.add_column(col, justify="right")
    for n, inplace, inplace_min, recreate, sts, recreate_min in update_rows:
        table.add_row(
            str(n),
            f"{inplace:.1f}",
            f"{inplace_min:.1f}",
            f"{inplace / inplace_min:.2f}x",
            f"{recreate:.1f}",
            f"{sts:.1f}",
            f"{recreate_min:.1f}",
        )
    console.print(table)
    console.print(f"manager peak RSS: {max(rss) if rss else float('nan'):.0f} MiB")
    console.print(
        "load average (1/5/15 min) at start and after each phase: " + "; ".join(" ".join(x) for x in load)
    )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sizes", default="100,500", help="scale benchmark sizes ('' to skip)")
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
