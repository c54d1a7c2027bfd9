"""Is the manager fair under load? A CloneSet scale-up beside N running Rollouts (issue 28, item 5).

Not a test. On one fresh embedded control plane (etcd, kube-apiserver, kube-controller-manager,
kube-scheduler, 3 KWOK nodes, no stage delays) and one ``kruise manager``:

1. **idle**: a bystander CloneSet in namespace ``bystander`` is scaled 0 -> ``--pods`` (500) and
   timed until ``readyReplicas`` reaches it; then scaled back to 0 and its pods waited gone;
2. **busy**: N Rollouts, each over its own CloneSet of 4 pods in namespace ``bench`` (the
   workload of ``bench/rollouts_scale.py``: 25% + pause 10 s, 50% + pause 10 s, 100%), are
   released together; as soon as the release PATCHes are sent the bystander is scaled
   0 -> ``--pods`` again and timed the same way, while the releases run;
3. **idle again** once every release completed (the first idle figure warms caches; the mean of
   the two is the reference).

``--raw``: the bystander is ``--pods`` bare pods created by the bench itself (64 in flight) and
timed until all are Ready, with no controller of ours in the way: the control plane's own
slowdown under the releases, the floor for the CloneSet's figure.

Printed: both idle times, the busy time, busy / idle mean (target: at most 1.2x), the releases'
completion and whether the busy scale-up finished before the releases did (if not, the figure
says little about fairness). The knobs that share the manager between kinds are its per-kind
worker flags (``--cloneset-workers``, ``--rollout-workers``, ``--batchrelease-workers``) and
the client's rate limit (``--kube-client-qps``/``--kube-client-burst``): pass them with
``--manager-args``.

    .venv/bin/python bench/fairness.py --rollouts 1000 --pods 500 [--raw]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import shlex
import tempfile
import time
from pathlib import Path
from typing import Any

from baselines import ObjectStream
from rich.console import Console
from rollouts_scale import (
    IMAGE_V1,
    NS,
    bounded,
    image_patch,
    kruise_objects,
    name_of,
    ready,
    template,
)
from steptimes import kruise_mark

from kruise.core.kube import KubeClient
from kruise.core.kube.resources import CLONESETS, NAMESPACES, PODS
from kruise.core.localcluster import LocalCluster
from kruise.rollouts.crds import write_crds
from kruise.rollouts.manager.process import ManagerProcess
from kruise.rollouts.resources import ROLLOUTS

console = Console()
JSON = dict[str, Any]
BYSTANDER_NS = "bystander"
BYSTANDER = "bystander"


def bystander(pods: int) -> JSON:
    """The bystander CloneSet: ``pods`` replicas of an image no Rollout touches."""
    return {
        "apiVersion": "apps.kruise.io/v1alpha1",
        "kind": "CloneSet",
        "metadata": {"name": BYSTANDER},
        "spec": {
            "replicas": 0,
            "selector": {"matchLabels": {"app": BYSTANDER}},
            "template": template(BYSTANDER, IMAGE_V1),
        },
    }


async def scale_up(kube: KubeClient, pods: int, timeout: float) -> float:
    """Seconds from the scale PATCH to a status of that generation with ``readyReplicas == pods``."""
    async with ObjectStream(kube, CLONESETS, BYSTANDER_NS) as sets:
        t0 = time.monotonic()
        patched = await kube.patch(
            CLONESETS, BYSTANDER, {"spec": {"replicas": pods}}, BYSTANDER_NS, patch_type="merge"
        )
        generation = patched["metadata"]["generation"]

        def done(items: dict[str, JSON]) -> bool:
            status = items[BYSTANDER].get("status") or {}
            return status.get("observedGeneration", 0) >= generation and status.get("readyReplicas") == pods

        await sets.wait(done, timeout=timeout)
        return time.monotonic() - t0


async def scale_down(kube: KubeClient, timeout: float) -> None:
    """Back to 0: every bystander pod gone and the CloneSet's status saying so."""
    async with (
        ObjectStream(kube, PODS, BYSTANDER_NS) as pods,
        ObjectStream(kube, CLONESETS, BYSTANDER_NS) as sets,
    ):
        await kube.patch(CLONESETS, BYSTANDER, {"spec": {"replicas": 0}}, BYSTANDER_NS, patch_type="merge")
        await pods.wait(lambda items: not items, timeout=timeout)
        await sets.wait(
            lambda items: not (items[BYSTANDER].get("status") or {}).get("replicas"), timeout=timeout
        )


def pod_ready(obj: JSON) -> bool:
    conditions = (obj.get("status") or {}).get("conditions") or []
    return any(c.get("type") == "Ready" and c.get("status") == "True" for c in conditions)


async def create_raw(kube: KubeClient, pods: int, timeout: float) -> float:
    """``--raw``: seconds from the first of ``pods`` bare pod CREATEs (:data:`IN_FLIGHT` at a
    time, no controller) until all are Ready: what the control plane alone takes."""
    async with ObjectStream(kube, PODS, BYSTANDER_NS) as stream:
        t0 = time.monotonic()

        async def one(i: int) -> None:
            pod = {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {"name": f"raw-{i:04d}", "labels": {"app": "raw"}},
                "spec": template("raw", IMAGE_V1)["spec"],
            }
            await kube.create(PODS, pod, BYSTANDER_NS)

        await bounded(pods, one)
        await stream.wait(lambda items: sum(pod_ready(o) for o in items.values()) == pods, timeout=timeout)
        return time.monotonic() - t0


async def delete_raw(kube: KubeClient, pods: int, timeout: float) -> None:
    """Every ``--raw`` pod deleted and gone."""
    async with ObjectStream(kube, PODS, BYSTANDER_NS) as stream:
        await bounded(pods, lambda i: kube.delete(PODS, f"raw-{i:04d}", BYSTANDER_NS))
        await stream.wait(lambda items: not items, timeout=timeout)


def released(obj: JSON) -> bool:
    """A Rollout whose release completed, as ``bench/steptimes.py`` reads it."""
    mark = kruise_mark(obj.get("status") or {})
    return mark is not None and mark.done


async def run(kube: KubeClient, n: int, pods: int, timeout: float, raw: bool) -> dict[str, float]:
    async def up() -> float:
        return await (create_raw(kube, pods, timeout) if raw else scale_up(kube, pods, timeout))

    async def down() -> None:
        await (delete_raw(kube, pods, timeout) if raw else scale_down(kube, timeout))

    await kube.create(
        NAMESPACES, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": BYSTANDER_NS}}
    )
    await kube.create(NAMESPACES, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}})
    await kube.create(CLONESETS, bystander(pods), BYSTANDER_NS)
    out: dict[str, float] = {}
    out["idle"] = await up()
    console.print(f"idle: {pods} pods Ready in {out['idle']:.1f}s")
    await down()

    async def create(i: int) -> None:
        cloneset, rollout = kruise_objects(name_of(i))
        await kube.create(CLONESETS, cloneset, NS)
        await kube.create(ROLLOUTS, rollout, NS)

    await bounded(n, create)
    async with ObjectStream(kube, ROLLOUTS, NS) as rollouts, ObjectStream(kube, CLONESETS, NS) as sets:
        await rollouts.wait(
            lambda items: (
                len(items) == n
                and all((o.get("status") or {}).get("phase") == "Healthy" for o in items.values())
            ),
            timeout=timeout,
        )
        await sets.wait(
            lambda items: len(items) == n and all(ready(o) for o in items.values()), timeout=timeout
        )
        console.print(f"{n} Rollouts healthy; releasing them and scaling the bystander")
        patch = image_patch()
        t0 = time.monotonic()
        await bounded(n, lambda i: kube.patch(CLONESETS, name_of(i), patch, NS, patch_type="merge"))
        out["busy"] = await up()
        out["busy_ended_at"] = time.monotonic() - t0
        console.print(f"busy: {pods} pods Ready in {out['busy']:.1f}s")
        await rollouts.wait(lambda items: all(released(o) for o in items.values()), timeout=timeout)
        out["releases"] = time.monotonic() - t0
        console.print(f"releases completed {out['releases']:.1f}s after the first PATCH")
    await down()
    out["idle_after"] = await up()
    console.print(f"idle again: {pods} pods Ready in {out['idle_after']:.1f}s")
    return out


async def main(args: argparse.Namespace) -> None:
    with contextlib.ExitStack() as stack:
        tmp = Path(
            args.workdir or stack.enter_context(tempfile.TemporaryDirectory(prefix="kruise-bench-fair-"))
        )
        cluster = LocalCluster(tmp / "cluster", nodes=3, attached=True)
        crds = tmp / "crds"
        crds.mkdir(parents=True, exist_ok=True)
        write_crds(crds)
        state = cluster.start([crds])
        try:
            cluster.kubectl("create", "namespace", "kruise-system")
            manager = ManagerProcess(
                state.kubeconfig, tmp / "manager", extra_args=tuple(shlex.split(args.manager_args))
            )
            manager.start()
            kube = await KubeClient.from_kubeconfig(state.kubeconfig, qps=2000, burst=4000)
            try:
                out = await run(kube, args.rollouts, args.pods, args.timeout, args.raw)
            finally:
                await kube.close()
                manager.stop()
        finally:
            cluster.stop()
    idle = (out["idle"] + out["idle_after"]) / 2
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    console.print(
        f"| {args.rollouts} | {args.pods} | {out['idle']:.1f} | {out['idle_after']:.1f} | {out['busy']:.1f} "
        f"| {out['busy'] / idle:.2f}x | {out['releases']:.1f} "
        f"| {'yes' if out['busy_ended_at'] < out['releases'] else 'no'} | {load} |",
        markup=False,
        highlight=False,
    )


def parse(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rollouts", type=int, default=1000, help="N Rollouts released together")
    parser.add_argument("--pods", type=int, default=500, help="the bystander CloneSet's scale-up")
    parser.add_argument("--timeout", type=float, default=1800.0, help="seconds to wait for any phase")
    parser.add_argument(
        "--raw",
        action="store_true",
        help="the bystander is bare pods created by the bench (the control plane's floor)",
    )
    parser.add_argument("--workdir", default=None, help="keep the cluster's and manager's logs here")
    parser.add_argument(
        "--manager-args", default="", help="extra flags of our manager (worker counts, client QPS)"
    )
    return parser.parse_args(argv)


if __name__ == "__main__":
    asyncio.run(main(parse()))
