"""Real-node benchmark: in-place update vs recreate of a CloneSet on a real kubelet.

Not a test. Needs root and ``hack/install-system-deps.sh``. In one run it starts a KWOK-only
control plane (the baseline start-up), then one with a real node, and prints:

- start-up: cluster without / with one real node; the real node's own preparation (registry,
  images, containerd) and its kubelet's start to Node Ready;
- pod start: a CloneSet of N pods on the real node from 0 to N Ready;
- image update of the same N pods (maxUnavailable 20%, a readiness probe every second):
  ``InPlaceIfPossible`` (the kubelet restarts one container in its pod) vs ``ReCreate`` (new
  pods, new sandboxes), side by side, with the per-pod times the watch saw: in place, from the
  ``InPlaceUpdateReady`` gate going False to Ready again; recreate, from a new pod's creation
  to its Ready.

    .venv/bin/python bench/realnode.py --pods 20
"""

from __future__ import annotations

import argparse
import asyncio
import calendar
import json
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from kruise.core.kube import KubeClient
from kruise.core.kube.resources import CLONESETS, NAMESPACES, PODS
from kruise.core.localcluster import LocalCluster
from kruise.core.localcluster.realnode import busybox
from kruise.rollouts.crds import write_crds
from kruise.rollouts.demo.realnode import cloneset
from kruise.rollouts.manager.process import ManagerProcess

console = Console()
JSON = dict[str, Any]


def condition(pod: JSON, ctype: str) -> str | None:
    for cond in (pod.get("status") or {}).get("conditions") or []:
        if cond.get("type") == ctype:
            return str(cond.get("status"))
    return None


class Timeline:
    """Per-pod times (monotonic seconds) of the transitions the benchmark reports."""

    def __init__(self) -> None:
        self.added: dict[str, float] = {}
        self.first_ready: dict[str, float] = {}
        self.gate_false: dict[str, float] = {}
        self.ready_again: dict[str, float] = {}

    def see(self, event: str, pod: JSON, now: float) -> None:
        uid = pod["metadata"]["uid"]
        if event == "ADDED":
            self.added.setdefault(uid, now)
        ready = condition(pod, "Ready") == "True"
        if ready:
            self.first_ready.setdefault(uid, now)
        if condition(pod, "InPlaceUpdateReady") == "False":
            self.gate_false.setdefault(uid, now)
        elif ready and uid in self.gate_false:
            self.ready_again.setdefault(uid, now)

    def inplace_seconds(self) -> list[float]:
        return [self.ready_again[u] - t for u, t in self.gate_false.items() if u in self.ready_again]

    def start_seconds(self, since: float) -> list[float]:
        return [
            self.first_ready[u] - t for u, t in self.added.items() if t >= since and u in self.first_ready
        ]


async def watch(kube: KubeClient, ns: str, timeline: Timeline) -> None:
    listed = await kube.list(PODS, ns)
    rv = str(listed["metadata"]["resourceVersion"])
    while True:
        async for event in kube.watch(PODS, ns, resource_version=rv):
            rv = str(event.object["metadata"].get("resourceVersion") or rv)
            if event.type in ("ADDED", "MODIFIED"):
                timeline.see(event.type, event.object, time.monotonic())


async def settled(kube: KubeClient, ns: str, n: int, timeout: float = 600) -> float:
    t0 = time.monotonic()
    while time.monotonic() - t0 < timeout:
        cs = await kube.get(CLONESETS, "app", ns)
        st = cs.get("status") or {}
        if (
            st.get("observedGeneration") == cs["metadata"]["generation"]
            and st.get("replicas") == n
            and st.get("updatedReadyReplicas") == n
            and st.get("readyReplicas") == n
        ):
            return time.monotonic() - t0
        await asyncio.sleep(0.2)
    raise TimeoutError(f"CloneSet not settled after {timeout}s")


def _ns(stamp: str) -> int:
    """Nanoseconds since the epoch of a CRI timestamp (crictl prints RFC 3339 with ns, or ns)."""
    if stamp.isdigit():
        return int(stamp)
    whole, _, frac = stamp.rstrip("Z").partition(".")
    seconds = calendar.timegm(time.strptime(whole, "%Y-%m-%dT%H:%M:%S"))
    return seconds * 1_000_000_000 + int((frac + "000000000")[:9])


def kubelet_seconds(cluster: LocalCluster, node: str, pod_uids: list[str], inplace: bool) -> list[float]:
    """What containerd recorded per pod: in place, the gap between the old container's exit and
    the new one's start; recreated, the sandbox's creation to its container's start."""
    out = []
    for uid in pod_uids:
        listed = json.loads(
            cluster.crictl(node, "ps", "-a", "--label", f"io.kubernetes.pod.uid={uid}", "-o", "json")
        )
        attempts = sorted(listed["containers"], key=lambda c: int(c["metadata"].get("attempt") or 0))
        status = [json.loads(cluster.crictl(node, "inspect", c["id"]))["status"] for c in attempts]
        if inplace and len(status) == 2:
            out.append((_ns(status[1]["startedAt"]) - _ns(status[0]["finishedAt"])) / 1e9)
        elif not inplace and len(status) == 1:
            sandbox = json.loads(cluster.crictl(node, "inspectp", attempts[0]["podSandboxId"]))["status"]
            out.append((_ns(status[0]["startedAt"]) - _ns(sandbox["createdAt"])) / 1e9)
    return out


async def one_update(kube: KubeClient, n: int, strategy: str, cluster: LocalCluster | None = None) -> JSON:
    ns = f"bench-{strategy.lower()}-{n}"
    await kube.create(NAMESPACES, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})
    timeline = Timeline()
    watcher = asyncio.create_task(watch(kube, ns, timeline))
    t0 = time.monotonic()
    await kube.create(CLONESETS, cloneset("app", n, strategy, "20%"), ns)
    start = await settled(kube, ns, n)
    t1 = time.monotonic()
    patch = [{"op": "replace", "path": "/spec/template/spec/containers/0/image", "value": busybox("v2")}]
    await kube.patch(CLONESETS, "app", patch, ns, patch_type="json")
    update = await settled(kube, ns, n)
    watcher.cancel()
    inplace = strategy == "InPlaceIfPossible"
    per_pod = timeline.inplace_seconds() if inplace else timeline.start_seconds(t1)
    uids = [p["metadata"]["uid"] for p in (await kube.list(PODS, ns))["items"]]
    node = cluster.real_node_plans()[0].name if cluster else ""
    kubelet = kubelet_seconds(cluster, node, uids, inplace) if cluster else []
    await kube.delete(NAMESPACES, ns, missing_ok=True)
    return {
        "start": start,
        "pod_start": statistics.median(timeline.start_seconds(t0)),
        "update": update,
        "per_pod": statistics.median(per_pod) if per_pod else float("nan"),
        "kubelet": statistics.median(kubelet) if kubelet else float("nan"),
        "pods": len(per_pod),
    }


async def run(n: int, workdir: Path) -> None:
    crds = workdir / "crds"
    crds.mkdir()
    write_crds(crds)
    kwok_only = LocalCluster(workdir / "kwok-only", nodes=3, attached=True)
    base = kwok_only.start([crds]).startup_seconds
    kwok_only.stop()
    cluster = LocalCluster(workdir / "real", nodes=3, real_nodes=1, attached=True)
    state = cluster.start([crds])
    cluster.kubectl("create", "namespace", "kruise-system")
    manager = ManagerProcess(state.kubeconfig, workdir / "manager")
    manager.start()
    kube = await KubeClient.from_kubeconfig(state.kubeconfig, qps=1000, burst=2000)
    try:
        await one_update(kube, 2, "InPlaceIfPossible")  # warm-up: first pulls, first TLS connections
        inplace = await one_update(kube, n, "InPlaceIfPossible", cluster)
        recreate = await one_update(kube, n, "ReCreate", cluster)
    finally:
        await kube.close()
        manager.stop()
        cluster.stop()
    timings = state.real_node_timings
    table = Table(title="Start-up (seconds)")
    for col in ("KWOK-only cluster", "with 1 real node", "real node prepare", "kubelet -> Node Ready"):
        table.add_column(col, justify="right")
    table.add_row(
        f"{base:.1f}",
        f"{state.startup_seconds:.1f}",
        f"{timings.get('prepare_seconds', 0):.1f}",
        f"{timings.get('node_ready_seconds', 0):.2f}",
    )
    console.print(table)
    table = Table(title=f"CloneSet of {n} pods on the real node (seconds; maxUnavailable 20%)")
    for col in (
        "strategy",
        "0 -> N Ready",
        "pod start p50",
        "image update",
        "update / in-place",
        "per pod p50 (API)",
        "per pod p50 (containerd)",
    ):
        table.add_column(col, justify="right")
    for name, row in (("InPlaceIfPossible", inplace), ("ReCreate", recreate)):
        table.add_row(
            name,
            f"{row['start']:.1f}",
            f"{row['pod_start']:.2f}",
            f"{row['update']:.1f}",
            f"{row['update'] / inplace['update']:.2f}x",
            f"{row['per_pod']:.2f} ({row['pods']} pods)",
            f"{row['kubelet']:.2f}",
        )
    console.print(table)
    console.print(
        "per pod (API): in place, InPlaceUpdateReady False -> Ready again; "
        "recreate, new pod created -> Ready.\n"
        "per pod (containerd): in place, old container exited -> new one started (same sandbox); "
        "recreate, sandbox created -> container started."
    )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--pods", type=int, default=20)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="kruise-bench-real-") as tmp:
        asyncio.run(run(args.pods, Path(tmp)))
