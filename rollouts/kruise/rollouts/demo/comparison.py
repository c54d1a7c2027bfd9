"""The demo's comparison act: a Deployment vs OpenKruise, updating to a large image on real nodes.

OpenKruise asks adopters to compare update time and disruption with a Deployment first. This act
does it on the cluster's real nodes (kubelet + containerd + kruise-daemon each), with an image of
:data:`PAYLOAD_MIB` MiB built here: ``kruise.local/compare-web:v1`` and, per variant, a fresh
``kruise.local/compare-<variant>-<run>:v2`` with its own payload (different bytes, so no layer is
shared and every node really has to pull it). Each variant runs in its own namespace: three pods
spread over the real nodes (``topologySpreadConstraints`` by hostname, ``ScheduleAnyway``), a
Service ``web``, then the image goes from v1 to v2:

1. ``Deployment``: an apps/v1 Deployment, RollingUpdate (maxSurge 1, maxUnavailable 0, what
   Kubernetes' 25 % defaults give three replicas): new pods, each pulling v2 on its node;
2. ``CloneSet in place``: ``InPlaceIfPossible``, maxUnavailable 1: the same pods restart
   their container on v2, each pulling it first;
3. ``CloneSet in place + ImagePullJob``: the same, after an ImagePullJob pulled v2 on every
   real node (its time is reported, outside the update window);
4. ``Rollout + prepull-next-batch``: the CloneSet under a Kruise Rollout of three one-pod steps
   (pause, pause, 100 %) annotated ``rollouts.kruise.io/prepull-next-batch: "true"``; the act
   approves a paused step once the Rollout's ImagePullJob has put v2 on the nodes of the next
   batch (checked through CRI), as an operator would; the pauses count in its time.

Every pod says ``imagePullPolicy: IfNotPresent``: OpenKruise defaults a CloneSet's containers to
``Always``, with which the kubelet asks the registry on every start even when the node holds the
image, and a Deployment's tagged image defaults to ``IfNotPresent``; the same policy for all
keeps the comparison about the update strategy. Each pod serves HTTP on 8080 (readiness probe
every second) and sleeps 2 s in a ``preStop`` hook, the usual graceful-shutdown practice.

Measured per variant (see :mod:`kruise.rollouts.demo.measure`), with the act's monotonic clock,
from the image patch until the workload reports every pod updated and Ready (for the Rollout,
until the release completed):

- **update time**;
- **longest unready**: the longest time a pod (not terminating) was not Ready: a new pod from
  creation, an updated pod from the moment it went unready, until Ready;
- **pulls inside the window**: the kubelet's ``Pulling`` events for v2 (each a pull a pod waited
  for); for the Rollout also per batch. kruise-daemon's pre-pulls raise no such event and are
  shown in the last column instead;
- **failed requests**: a client in this process sends ``GET /`` to the Service's ready endpoints
  throughout the window. There is no kube-proxy (nor EndpointSlice controller) in the local
  cluster, so the client computes the ready endpoints as the EndpointSlice controller does
  (pods matching the Service's selector, Ready, not terminating, with an IP) from a watch of the
  namespace's pods, and sends each request over a new connection to the next of those pod IPs
  (round robin) on port 8080: the real nodes' bridges make pod IPs reachable from this host.
  Two workers, a request every 50 ms each, 1 s timeout; a request fails on any error, a
  non-200 answer, or when no endpoint is ready. The watch reacts as fast as the API server
  tells it, faster than kube-proxy programs rules, so the counts are a lower bound.
"""

from __future__ import annotations

import asyncio
import functools
import json
import time
import uuid
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from kruise.core.errors import KruiseError
from kruise.core.kube import KubeClient
from kruise.core.kube.resources import (
    CLONESETS,
    DEPLOYMENTS,
    EVENTS,
    IMAGEPULLJOBS,
    NAMESPACES,
    PODS,
    SERVICES,
)
from kruise.core.localcluster.binaries import SYSTEM
from kruise.core.localcluster.realnode.images import ImageSpec, image_ref, payload_spec
from kruise.rollouts.demo.comparison_objects import (
    REPLICAS,
    cloneset,
    deployment,
    pull_job,
    rollout,
    service,
)
from kruise.rollouts.demo.measure import (
    VariantResult,
    kubelet_pulls,
    longest_unready,
    pod_alive,
    pulls_by_batch,
    row,
)
from kruise.rollouts.demo.probes import Client, PodWatch
from kruise.rollouts.resources import ROLLOUTS
from kruise.rollouts.rollout.prepull import PREPULL_LABEL, plan_prepull

JSON = dict[str, Any]
Crictl = Callable[..., str]
Push = Callable[[ImageSpec], str]

PAYLOAD_MIB = 200
TIMEOUT = 180.0
VARIANTS = ("deployment", "inplace", "imagepulljob", "rollout")
TITLES = {
    "deployment": "Deployment rolling update",
    "inplace": "CloneSet in place",
    "imagepulljob": "CloneSet in place + ImagePullJob",
    "rollout": "Rollout (3 one-pod batches) + prepull-next-batch",
}


# ------------------------------------------------------------------------------------ the act
async def _until(probe: Callable[[], Awaitable[Any]], timeout: float, what: str, step: float = 0.2) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = await probe()
        if found:
            return found
        await asyncio.sleep(step)
    raise TimeoutError(f"{what} within {timeout:.0f}s")


async def _settled(kube: KubeClient, kind: str, namespace: str) -> bool:
    if kind == "deployment":
        d = await kube.get(DEPLOYMENTS, "web", namespace)
        st = d.get("status") or {}
        return (
            st.get("observedGeneration", 0) >= d["metadata"]["generation"]
            and st.get("replicas") == st.get("updatedReplicas") == st.get("readyReplicas") == REPLICAS
            and st.get("availableReplicas") == REPLICAS
        )
    cs = await kube.get(CLONESETS, "web", namespace)
    st = cs.get("status") or {}
    return (
        st.get("observedGeneration") == cs["metadata"]["generation"]
        and st.get("replicas") == st.get("updatedReadyReplicas") == st.get("readyReplicas") == REPLICAS
    )


async def _rollout_done(kube: KubeClient, namespace: str) -> bool:
    ro = await kube.get(ROLLOUTS, "web", namespace)
    st = ro.get("status") or {}
    progressing: JSON = next((c for c in st.get("conditions") or [] if c.get("type") == "Progressing"), {})
    return st.get("phase") == "Healthy" and progressing.get("reason") == "Completed"


def _holds(crictl: Crictl, node: str, image: str) -> bool:
    listed = json.loads(crictl(node, "images", "-o", "json"))["images"]
    return image in {tag for held in listed for tag in held.get("repoTags") or ()}


async def _updated(kube: KubeClient, namespace: str, image: str) -> set[str]:
    pods = (await kube.list(PODS, namespace, label_selector="app=web"))["items"]
    return {
        p["metadata"]["name"] for p in pods if pod_alive(p) and p["spec"]["containers"][0]["image"] == image
    }


class Act:
    """One run of the comparison: the images, then each variant in its own namespace."""

    def __init__(
        self,
        kube: KubeClient,
        nodes: list[str],
        crictl: Crictl,
        push: Push,
        console: Console,
        payload_mib: int,
    ) -> None:
        self.kube = kube
        self.nodes = nodes
        self.crictl = crictl
        self.push = push
        self.console = console
        self.payload = payload_mib * 1024 * 1024
        self.busybox = Path(SYSTEM["busybox (static)"]).read_bytes()

    def image(self, repository: str, tag: str) -> str:
        spec = payload_spec(self.busybox, repository, tag, self.payload)
        self.push(spec)
        return image_ref(repository, tag)

    async def variant(self, kind: str, v1: str, v2: str) -> VariantResult:
        result = VariantResult(TITLES[kind])
        namespace = f"compare-{kind}"
        kube = self.kube
        await kube.create(
            NAMESPACES, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}}
        )
        await kube.create(SERVICES, service(), namespace)
        if kind == "deployment":
            await kube.create(DEPLOYMENTS, deployment(v1), namespace)
        else:
            await kube.create(CLONESETS, cloneset(v1), namespace)
        watch = PodWatch(kube, namespace)
        client = Client(watch.endpoints)
        tasks = [asyncio.create_task(watch.run()), asyncio.create_task(client.run())]
        try:
            await _until(lambda: _settled(kube, kind, namespace), TIMEOUT, f"{namespace}: 3 pods Ready on v1")
            held = [n for n in self.nodes if _holds(self.crictl, n, v2)]
            result.before = f"v2 already on {', '.join(held)}" if held else "v2 on no node"
            if kind == "imagepulljob":
                t = time.monotonic()
                await kube.create(IMAGEPULLJOBS, pull_job(v2, self.nodes), namespace)
                await _until(lambda: self._pulled(namespace), TIMEOUT, "the ImagePullJob of v2")
                result.before = (
                    f"v2 on all {len(self.nodes)} nodes: ImagePullJob, {time.monotonic() - t:.1f}s before"
                )
            if kind == "rollout":
                await kube.create(ROLLOUTS, rollout(), namespace)
                await _until(lambda: self._rollout_phase(namespace, "Healthy"), 60, "the Rollout Healthy")
            client.reset()
            start = time.monotonic()
            patch = [{"op": "replace", "path": "/spec/template/spec/containers/0/image", "value": v2}]
            res = DEPLOYMENTS if kind == "deployment" else CLONESETS
            await kube.patch(res, "web", patch, namespace, patch_type="json")
            batches: list[set[str]] | None = None
            if kind == "rollout":
                batches = await self._release(namespace, v2, start)
                if not held:
                    result.before = "v2 on no node; the next batch's node pre-pulled in each pause"
            else:
                await asyncio.sleep(1)
                await _until(
                    lambda: _settled(kube, kind, namespace), TIMEOUT, f"{namespace}: 3 pods Ready on v2"
                )
            end = time.monotonic()
            result.completed = True
            result.seconds = end - start
            result.sent, result.failed = client.sent, client.failed
            result.longest_unready = longest_unready(watch.samples, start, end)
            await asyncio.sleep(1)  # the kubelets' events are sent asynchronously
            events = (await kube.list(EVENTS, namespace))["items"]
            result.pulls = kubelet_pulls(events, v2)
            if batches is not None:
                result.batches = pulls_by_batch(result.pulls, batches)
            if client.reasons:
                result.note = ", ".join(f"{k}: {v}" for k, v in sorted(client.reasons.items()))
        except (TimeoutError, KruiseError) as err:
            result.completed = False
            result.note = str(err)
        finally:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            await kube.delete(NAMESPACES, namespace, missing_ok=True)
        return result

    async def _pulled(self, namespace: str) -> bool:
        job = await self.kube.get(IMAGEPULLJOBS, "web-v2", namespace)
        st = job.get("status") or {}
        if st.get("completionTime") and st.get("succeeded") != len(self.nodes):
            raise TimeoutError(f"the ImagePullJob of v2 failed: {st}")
        return bool(st.get("completionTime"))

    async def _rollout_phase(self, namespace: str, phase: str) -> bool:
        ro = await self.kube.get(ROLLOUTS, "web", namespace)
        return (ro.get("status") or {}).get("phase") == phase

    async def _release(self, namespace: str, v2: str, start: float) -> list[set[str]]:
        """Follow the Rollout to completion, approving each pause once the next batch's nodes
        hold ``v2``; returns the pods of each batch."""
        kube = self.kube
        done: set[str] = set()
        batches: list[set[str]] = []
        deadline = start + TIMEOUT
        while True:
            if await _rollout_done(kube, namespace):
                break
            ro = await kube.get(ROLLOUTS, "web", namespace)
            cs = (ro.get("status") or {}).get("canaryStatus") or {}
            if cs.get("currentStepState") == "StepPaused":
                now = await _updated(kube, namespace, v2)
                batches.append(now - done)
                done = now
                await self._prepulled(namespace, ro, v2, deadline)
                status = {"status": {"canaryStatus": {"currentStepState": "StepReady"}}}
                await kube.patch(ROLLOUTS, "web", status, namespace, patch_type="merge", subresource="status")
                step = int(cs.get("currentStepIndex") or 0)
                await _until(functools.partial(self._left_pause, namespace, step), 30, "approval seen")
            if time.monotonic() > deadline:
                raise TimeoutError(f"{namespace}: the release did not complete within {TIMEOUT:.0f}s")
            await asyncio.sleep(0.2)
        await _until(lambda: _settled(kube, "rollout", namespace), 60, f"{namespace}: 3 pods Ready on v2")
        batches.append(await _updated(kube, namespace, v2) - done)
        return batches

    async def _left_pause(self, namespace: str, step: int) -> bool:
        ro = await self.kube.get(ROLLOUTS, "web", namespace)
        cs = (ro.get("status") or {}).get("canaryStatus") or {}
        return (cs.get("currentStepIndex"), cs.get("currentStepState")) != (step, "StepPaused")

    async def _prepulled(self, namespace: str, ro: JSON, v2: str, deadline: float) -> None:
        """Wait until the Rollout's pre-pull job names the nodes the next step updates (the
        controller's own plan, from the live objects) and each of them holds ``v2``."""
        kube = self.kube
        pods = (await kube.list(PODS, namespace, label_selector="app=web"))["items"]
        plan = plan_prepull(ro, await kube.get(CLONESETS, "web", namespace), pods)
        if plan is None:
            return
        want = sorted(plan.nodes)

        async def ready() -> bool:
            jobs = (await kube.list(IMAGEPULLJOBS, namespace, label_selector=f"{PREPULL_LABEL}=web"))["items"]
            named = [sorted(j["spec"]["selector"]["names"]) for j in jobs]
            return want in named and all(_holds(self.crictl, n, v2) for n in want)

        await _until(ready, max(1.0, deadline - time.monotonic()), f"v2 pre-pulled on {', '.join(want)}")

    async def run(self) -> bool:
        t = time.monotonic()
        what = f"building and pushing {1 + len(VARIANTS)} images of {self.payload >> 20} MiB"
        with self.console.status(f"{what} to the local registry"):
            v1 = await asyncio.to_thread(self.image, "compare-web", "v1")
            run = uuid.uuid4().hex[:6]  # v2 must be new to the nodes, also on a cluster kept from before
            v2s = {
                kind: await asyncio.to_thread(self.image, f"compare-{kind}-{run}", "v2") for kind in VARIANTS
            }
        self.console.print(
            f"[green]images pushed[/] in {time.monotonic() - t:.1f}s: {v1} and one fresh v2 per variant "
            f"({self.payload >> 20} MiB payload layer each, no layer shared)"
        )
        results = []
        for kind in VARIANTS:
            with self.console.status(f"{TITLES[kind]}: v1 -> v2 on {len(self.nodes)} real nodes"):
                result = await self.variant(kind, v1, v2s[kind])
            results.append(result)
            if result.completed:
                update, unready, pulls = row(result)[1:4]
                self.console.print(
                    f"{TITLES[kind]}: [green]done[/]: update {update}, longest unready {unready}, "
                    f"pulls inside {pulls}"
                )
            else:
                self.console.print(f"{TITLES[kind]}: [red]did not complete[/]")
        table = Table(
            title=(
                f"Deployment vs OpenKruise: v1 -> v2 ({self.payload >> 20} MiB layer), {REPLICAS} pods on "
                f"{len(self.nodes)} real node{'s' if len(self.nodes) != 1 else ''}"
            ),
            caption=(
                "pulls: the kubelet's 'Pulling' events of v2 (a pod waited for it); requests: a client "
                "sending GET to the ready pod IPs through the update; IfNotPresent everywhere"
            ),
        )
        for col in ("variant", "update time", "longest unready", "pulls inside", "failed / sent", "before"):
            table.add_column(col)
        for result in results:
            table.add_row(*row(result))
        self.console.print(table)
        for result in results:
            if result.note:
                self.console.print(f"  {result.name}: {result.note}")
        self.console.print(f"comparison act: {time.monotonic() - t:.0f}s (image builds and pushes included)")
        return all(r.completed for r in results)


async def run(
    kubeconfig: str,
    nodes: list[str],
    crictl: Crictl,
    push: Push,
    console: Console,
    payload_mib: int = PAYLOAD_MIB,
) -> bool:
    """Run the act on real nodes ``nodes``; True when every variant completed.

    ``crictl(node, *args)`` runs crictl against a node's containerd; ``push(spec)`` builds an
    image and pushes it to the nodes' registry (``LocalCluster.crictl``, ``push_image``)."""
    kube = await KubeClient.from_kubeconfig(kubeconfig)
    try:
        return await Act(kube, nodes, crictl, push, console, payload_mib).run()
    finally:
        await kube.close()
