"""kruise-daemon benchmark on the real node: pre-pull and container restart against their floors.

Not a test. Needs root and ``hack/install-system-deps.sh``. Starts the embedded control plane
with one real node (its ``kruise daemon`` included) and ``kruise manager``, then prints:

- **ImagePullJob to Succeeded vs a direct CRI pull**: ``--pulls`` fresh images of
  ``--image-mib`` MiB each (pushed to the local registry, never seen by the node), half pulled
  through an ImagePullJob (manager -> NodeImage -> daemon -> containerd -> job status), half
  pulled directly through the same CRI adapter; p50 of each and the ratio (target: at most
  1.2x + 1 s);
- **ContainerRecreateRequest to Completed vs a bare stop**: ``--restarts`` CRRs, each of one
  container of a fresh running pod, as the API defaults them (``failurePolicy: Fail``, no unready
  grace, ``minStartedSeconds`` 0), timed from create to ``Completed`` and on to the container
  Ready again (restartCount 1), against stopping the same container of another fresh pod through
  CRI and waiting for the kubelet to report it Ready again; p50 and p99 of each (nearest rank:
  of 50 samples the p99 is the slowest).

    .venv/bin/python bench/daemon.py --pulls 6 --image-mib 50 --restarts 20
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from kruise.core.kube import KubeClient
from kruise.core.kube.resources import CONTAINERRECREATEREQUESTS, NAMESPACES, PODS
from kruise.core.localcluster import LocalCluster
from kruise.core.localcluster.binaries import SYSTEM
from kruise.core.localcluster.realnode import busybox, pod_placement
from kruise.core.localcluster.realnode.images import image_ref, payload_spec
from kruise.daemon.api.imagepulljob import IMAGEPULLJOBS
from kruise.daemon.api.nodeimage import NODEIMAGES
from kruise.daemon.cri.endpoint import resolve_endpoint
from kruise.daemon.cri.grpcclient import GrpcCri
from kruise.rollouts.crds import write_crds
from kruise.rollouts.manager.process import ManagerProcess

console = Console()
NS = "bench-daemon"
JSON = dict[str, Any]


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


async def wait(probe: Any, timeout: float = 600.0, step: float = 0.1) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = await probe()
        if found:
            return found
        await asyncio.sleep(step)
    raise TimeoutError("benchmark step timed out")


def fresh_images(cluster: LocalCluster, count: int, mib: int) -> list[str]:
    busybox_binary = Path(SYSTEM["busybox (static)"]).read_bytes()
    refs = []
    for _ in range(count):
        spec = payload_spec(busybox_binary, f"bench-{uuid.uuid4().hex[:8]}", "v1", mib * 1024 * 1024)
        cluster.push_image(spec)
        refs.append(image_ref(spec.repository, spec.tag))
    return refs


async def by_job(kube: KubeClient, node: str, image: str) -> float:
    name = f"pull-{uuid.uuid4().hex[:8]}"
    job = {
        "apiVersion": "apps.kruise.io/v1alpha1",
        "kind": "ImagePullJob",
        "metadata": {"name": name},
        "spec": {"image": image, "selector": {"names": [node]}, "completionPolicy": {"type": "Always"}},
    }
    t0 = time.monotonic()
    await kube.create(IMAGEPULLJOBS, job, NS)

    async def done() -> bool:
        status = (await kube.get(IMAGEPULLJOBS, name, NS)).get("status") or {}
        if status.get("completionTime") and status.get("succeeded") != 1:
            raise RuntimeError(f"{image}: {status}")
        return bool(status.get("completionTime"))

    await wait(done)
    return time.monotonic() - t0


async def direct(cri: GrpcCri, image: str) -> float:
    t0 = time.monotonic()
    await cri.pull_image(image)
    return time.monotonic() - t0


async def pod_with_two_containers(kube: KubeClient, name: str) -> JSON:
    def web(name: str, port: int) -> JSON:
        return {
            "name": name,
            "image": busybox("v1"),
            "env": [{"name": "PORT", "value": str(port)}],
            "readinessProbe": {
                "httpGet": {"path": "/", "port": port},
                "periodSeconds": 1,
                "failureThreshold": 1,
            },
        }

    body = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name},
        "spec": {**pod_placement(), "terminationGracePeriodSeconds": 2,
                 "containers": [web("web", 8080), web("side", 8081)]},
    }  # fmt: skip
    await kube.create(PODS, body, NS)
    pod: JSON = await wait(lambda: ready_pod(kube, name, 0))
    return pod


def status_of(pod: JSON, name: str) -> JSON:
    return next((s for s in pod["status"].get("containerStatuses") or () if s["name"] == name), {})


async def ready_pod(kube: KubeClient, name: str, restarts: int) -> JSON | None:
    pod = await kube.get(PODS, name, NS)
    web = status_of(pod, "web")
    if not web.get("ready") or web.get("restartCount") != restarts:
        return None
    return pod


async def one_crr(kube: KubeClient, pod: str) -> tuple[float, float]:
    """Seconds from creating the CRR to ``Completed``, and to the container Ready again."""
    name = f"crr-{uuid.uuid4().hex[:8]}"
    body = {
        "apiVersion": "apps.kruise.io/v1alpha1",
        "kind": "ContainerRecreateRequest",
        "metadata": {"name": name},
        "spec": {"podName": pod, "containers": [{"name": "web"}]},
    }
    t0 = time.monotonic()
    await kube.create(CONTAINERRECREATEREQUESTS, body, NS)

    async def done() -> bool:
        crr = await kube.get(CONTAINERRECREATEREQUESTS, name, NS)
        return (crr.get("status") or {}).get("phase") == "Completed"

    await wait(done)
    completed = time.monotonic() - t0
    await wait(lambda: ready_pod(kube, pod, 1))
    return completed, time.monotonic() - t0


async def one_stop(kube: KubeClient, cri: GrpcCri, pod: str) -> float:
    live = await kube.get(PODS, pod, NS)
    container_id = status_of(live, "web")["containerID"].partition("://")[2]
    t0 = time.monotonic()
    await cri.stop_container(container_id, 2)
    await wait(lambda: ready_pod(kube, pod, 1))
    return time.monotonic() - t0


async def run(args: argparse.Namespace) -> None:
    workdir = Path(tempfile.mkdtemp(prefix="kruise-bench-daemon-"))
    crds = workdir / "crds"
    write_crds(crds)
    cluster = LocalCluster(workdir / "cluster", nodes=1, real_nodes=1, attached=True)
    state = cluster.start([crds])
    cluster.kubectl("create", "namespace", "kruise-system")
    manager = ManagerProcess(
        state.kubeconfig, workdir / "manager", extra_args=("--nodeimage-creation-delay=1",)
    )
    manager.start()
    kube = await KubeClient.from_kubeconfig(state.kubeconfig, qps=1000, burst=2000)
    (plan,) = cluster.real_node_plans()
    cri = await GrpcCri.connect(resolve_endpoint(str(plan.containerd_socket), "/hostvarrun"))
    try:
        await kube.create(NAMESPACES, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}})
        await wait(lambda: kube.get_or_none(NODEIMAGES, plan.name), timeout=60)
        images = fresh_images(cluster, 2 * args.pulls, args.image_mib)
        job_times, cri_times = [], []
        for i in range(args.pulls):  # alternate, so both see the same registry and disk state
            job_times.append(await by_job(kube, plan.name, images[2 * i]))
            cri_times.append(await direct(cri, images[2 * i + 1]))
        # a fresh pod for every restart: the kubelet backs off restarting a container that keeps
        # exiting (10 s, 20 s, 40 s, ...), which would measure its back-off instead of ours
        crr_times, crr_ready, stop_times = [], [], []
        for i in range(args.restarts):
            await pod_with_two_containers(kube, f"crr-{i}")
            completed, ready = await one_crr(kube, f"crr-{i}")
            crr_times.append(completed)
            crr_ready.append(ready)
            await pod_with_two_containers(kube, f"stop-{i}")
            stop_times.append(await one_stop(kube, cri, f"stop-{i}"))
            for name in (f"crr-{i}", f"stop-{i}"):
                await kube.delete(PODS, name, NS)
    finally:
        await cri.close()
        await kube.close()
        manager.stop()
        cluster.stop()

    table = Table(
        title=f"kruise-daemon on the real node ({args.image_mib} MiB images, {args.pulls} pulls each)"
    )
    for col in ("measure", "ours p50", "floor p50", "ratio", "ours p99", "floor p99", "target"):
        table.add_column(col)
    p50j, p50c = statistics.median(job_times), statistics.median(cri_times)
    met = "met" if p50j <= 1.2 * p50c + 1 else "NOT met (<= 1.2x + 1 s)"
    table.add_row(
        "pre-pull: ImagePullJob vs direct CRI pull", f"{p50j:.2f}s", f"{p50c:.2f}s", f"{p50j / p50c:.2f}x",
        f"{percentile(job_times, 0.99):.2f}s", f"{percentile(cri_times, 0.99):.2f}s", met,
    )  # fmt: skip
    p50r, p50s = statistics.median(crr_times), statistics.median(stop_times)
    table.add_row(
        f"restart: CRR to Completed vs bare stop ({args.restarts} each)", f"{p50r:.2f}s", f"{p50s:.2f}s",
        f"{p50r / p50s:.2f}x", f"{percentile(crr_times, 0.99):.2f}s",
        f"{percentile(stop_times, 0.99):.2f}s", "-",
    )  # fmt: skip
    p50r = statistics.median(crr_ready)
    table.add_row(
        f"restart: CRR to container Ready again vs bare stop ({args.restarts} each)", f"{p50r:.2f}s",
        f"{p50s:.2f}s", f"{p50r / p50s:.2f}x", f"{percentile(crr_ready, 0.99):.2f}s",
        f"{percentile(stop_times, 0.99):.2f}s", "-",
    )  # fmt: skip
    console.print(table)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--pulls", type=int, default=6)
    parser.add_argument("--image-mib", type=int, default=50)
    parser.add_argument("--restarts", type=int, default=20)
    asyncio.run(run(parser.parse_args()))


if __name__ == "__main__":
    main()
