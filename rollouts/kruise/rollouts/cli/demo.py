"""``kruise demo``: the main job, end to end, on the embedded control plane.

Starts the local control plane, installs the CRDs, runs ``kruise manager``, deploys a CloneSet of
10 replicas behind a Service and a Gateway API HTTPRoute with a three-step canary Rollout, then releases a
new image and shows the release live: step, pods per revision, traffic weights. With real
nodes (``--real-nodes 3``, the default) it ends with two acts on real containers: an in-place
update of a CloneSet (``kruise.rollouts.demo.realnode``), then the comparison OpenKruise asks
adopters to make first, a Deployment vs CloneSet in place vs in place after an ImagePullJob vs a
Rollout that pre-pulls its next batch, updating to a large image
(``kruise.rollouts.demo.comparison``).
Everything it started is stopped at the end; the exit code says whether the release
reached its expected outcome.

``--no-cluster`` runs the two releases on ``$KUBECONFIG``'s cluster against the manager installed
there (``helm install charts/kruise``, e.g. ``kruise cluster up --real-nodes 1 --install``): no
manager is started; Prometheus and the traffic simulator run on this machine, Prometheus where the
in-cluster manager reaches it (:mod:`kruise.rollouts.demo.backends`).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated, Any

import typer
import yaml
from rich.console import Console, Group
from rich.live import Live
from rich.panel import Panel
from rich.table import Table

from kruise.analysis.resources import ANALYSIS_RUNS
from kruise.core.errors import InvalidError
from kruise.core.kube import KubeClient, Resource
from kruise.core.kube.resources import CLONESETS, CRDS, MUTATING_WEBHOOKS, NAMESPACES, PODS
from kruise.core.localcluster import LocalCluster, default_cluster_dir
from kruise.core.localcluster.binaries import source_root
from kruise.core.webhook.configuration import MUTATING_NAME
from kruise.rollouts.crds import write_crds
from kruise.rollouts.demo import comparison as compare_act
from kruise.rollouts.demo import realnode as real_act
from kruise.rollouts.demo.backends import LOOPBACK, analysis_backends, kubeconfig_server, prometheus_host
from kruise.rollouts.manager.process import ManagerProcess
from kruise.rollouts.resources import ROLLOUTS

console = Console(width=max(Console().width, 110))
HTTPROUTES = Resource("gateway.networking.k8s.io", "v1", "httproutes", "HTTPRoute")
NAMESPACE = "shop"
V1 = "registry.example.com/shop/web:1.4.0"
V2 = "registry.example.com/shop/web:1.5.0"  # healthy: 0.5% errors
V3 = "registry.example.com/shop/web:1.6.0"  # broken: 40% errors
ERROR_RATES = {V1: 0.005, V2: 0.005, V3: 0.4}


def _examples() -> Path:
    root = source_root()
    if root is None:
        raise typer.BadParameter("kruise demo needs a source checkout (examples/demo/)")
    return root / "examples" / "demo"


def _third_party_crds() -> list[Path]:
    """Gateway API CRDs vendored in ``hack/crds`` (the demo's HTTPRoute needs them)."""
    root = source_root()
    path = root / "hack" / "crds" / "gateway-api-standard-install.yaml" if root else None
    return [path] if path and path.exists() else []


async def _apply(kube: KubeClient, manifest: Path, prometheus: str = "") -> None:
    for doc in yaml.safe_load_all(manifest.read_text()):
        if not doc:
            continue
        api_version, kind = doc["apiVersion"], doc["kind"]
        group, _, version = api_version.rpartition("/")
        plural = {
            "Service": "services",
            "HTTPRoute": "httproutes",
            "CloneSet": "clonesets",
            "Rollout": "rollouts",
            "AnalysisTemplate": "analysistemplates",
        }[kind]
        if kind == "AnalysisTemplate" and prometheus:
            for metric in doc["spec"]["metrics"]:
                metric["provider"]["prometheus"]["address"] = prometheus
        res = Resource(group, version, plural, kind)
        await kube.create(res, doc, NAMESPACE)


async def _snapshot(kube: KubeClient) -> dict[str, Any]:
    ro = await kube.get_or_none(ROLLOUTS, "web", NAMESPACE) or {}
    route = await kube.get_or_none(HTTPROUTES, "web", NAMESPACE) or {}
    pods = (await kube.list(PODS, NAMESPACE, label_selector="app=web"))["items"]
    images: dict[str, int] = {}
    for pod in pods:
        if pod["metadata"].get("deletionTimestamp"):
            continue
        statuses = (pod.get("status") or {}).get("containerStatuses") or [{}]
        image = statuses[0].get("image", "(starting)")
        images[image] = images.get(image, 0) + 1
    weights = {
        ref["name"]: ref.get("weight", 1)
        for rule in (route.get("spec") or {}).get("rules") or []
        for ref in rule.get("backendRefs") or []
    }
    status = ro.get("status") or {}
    cs = status.get("canaryStatus") or {}
    runs = []
    for run in (await kube.list(ANALYSIS_RUNS, NAMESPACE))["items"]:
        results = (run.get("status") or {}).get("metricResults") or []
        values = [m.get("value", "") for r in results for m in r.get("measurements") or []]
        runs.append((run["metadata"]["name"], (run.get("status") or {}).get("phase", "Pending"), values[-3:]))
    return {
        "runs": sorted(runs),
        "phase": status.get("phase", ""),
        "step": cs.get("currentStepIndex", 0),
        "state": cs.get("currentStepState", ""),
        "message": status.get("message", ""),
        "images": images,
        "weights": weights,
        "conditions": {c["type"]: c for c in status.get("conditions") or []},
    }


def _view(snap: dict[str, Any], elapsed: float, title: str) -> Panel:
    table = Table.grid(padding=(0, 2))
    table.add_column(style="bold")
    table.add_column()
    aborted = snap["conditions"].get("Aborted") or {}
    # after an abort the step state stays where the abort found it: say what happened instead
    state = f"aborted ({aborted.get('reason', '')})" if aborted.get("status") == "True" else snap["state"]
    table.add_row("Rollout", f"{snap['phase']}  step {snap['step']}/3  {state}")
    table.add_row("", snap["message"])
    pods = Table(show_header=True, header_style="bold")
    pods.add_column("revision (image)")
    pods.add_column("pods", justify="right")
    for image, count in sorted(snap["images"].items()):
        pods.add_row(image, "#" * count + f" {count}")
    traffic = Table(show_header=True, header_style="bold")
    traffic.add_column("HTTPRoute backend")
    traffic.add_column("weight", justify="right")
    total = sum(int(w) for w in snap["weights"].values()) or 1
    for name, weight in snap["weights"].items():
        traffic.add_row(name, f"{int(weight) * 100 // total}%")
    analysis = Table(show_header=True, header_style="bold")
    analysis.add_column("AnalysisRun")
    analysis.add_column("phase")
    analysis.add_column("success rate (last measurements)")
    for name, phase, values in snap["runs"]:
        shown = ", ".join(_fmt(v) for v in values)
        analysis.add_row(name, phase, shown)
    return Panel(Group(table, pods, traffic, analysis), title=f"{title}  ({elapsed:.0f}s)")


def _fmt(value: str) -> str:
    try:
        return f"{float(value.strip('[]')):.1%}"
    except ValueError:
        return value


async def _release(kube: KubeClient, image: str, title: str, timeout: float = 240) -> dict[str, Any]:
    # a JSON patch of the image alone: a merge patch would replace the whole containers list (and
    # drop the container's ports), a change the CloneSet can only make by recreating the pods
    patch = [{"op": "replace", "path": "/spec/template/spec/containers/0/image", "value": image}]
    await kube.patch(CLONESETS, "web", patch, NAMESPACE, patch_type="json")
    start = time.monotonic()
    seen_progress = False
    with Live(console=console, refresh_per_second=4) as live:
        while time.monotonic() - start < timeout:
            snap = await _snapshot(kube)
            live.update(_view(snap, time.monotonic() - start, title))
            seen_progress = seen_progress or snap["phase"] == "Progressing"
            if seen_progress and snap["phase"] == "Healthy":
                snap["seconds"] = time.monotonic() - start
                live.stop()
                console.print()  # piped output keeps only each panel's last frame: one blank line apart
                return snap
            await asyncio.sleep(0.5)
    raise TimeoutError(f"{title} did not finish within {timeout:.0f}s")


async def _run(kubeconfig: str, prometheus: str) -> bool:
    kube = await KubeClient.from_kubeconfig(kubeconfig)
    try:
        if await kube.get_or_none(NAMESPACES, NAMESPACE) is None:
            await kube.create(
                NAMESPACES, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}}
            )
        await _apply(kube, _examples() / "app.yaml")
        await _apply(kube, _examples() / "analysis-template.yaml", prometheus)

        async def ready() -> bool:
            st = (await kube.get(CLONESETS, "web", NAMESPACE)).get("status") or {}
            return st.get("readyReplicas") == 10

        while not await ready():
            await asyncio.sleep(0.5)
        console.print(f"[green]CloneSet shop/web: 10 pods Ready[/] on {V1}")
        await _apply(kube, _examples() / "rollout.yaml")
        await asyncio.sleep(2)
        first = await _release(kube, V2, f"release 1 (healthy): {_tag(V1)} -> {_tag(V2)}")
        ok1 = first["conditions"].get("Succeeded", {}).get("status") == "True" and first["images"] == {V2: 10}
        second = await _release(kube, V3, f"release 2 (40% errors): {_tag(V2)} -> {_tag(V3)}")
        await _settle(kube, V2)
        second = {**await _snapshot(kube), "seconds": second["seconds"]}
        ok2 = (
            second["conditions"].get("Succeeded", {}).get("status") == "False"
            and second["conditions"].get("Aborted", {}).get("reason") == "AnalysisFailed"
            and second["images"] == {V2: 10}
            and list(second["weights"]) == ["web"]
        )
        summary = Table(title="Summary", expand=False)
        for col in ("release", "outcome", "pods", "traffic", "analysis (success rate)", "time"):
            summary.add_column(col)
        first_runs = {name for name, _, _ in first["runs"]}
        second = {**second, "runs": [r for r in second["runs"] if r[0] not in first_runs]}
        for label, _expected, snap, ok in (
            (f"1: {_tag(V1)} -> {_tag(V2)}", "complete", first, ok1),
            (f"2: {_tag(V2)} -> {_tag(V3)}", "roll back", second, ok2),
        ):
            total = sum(int(w) for w in snap["weights"].values()) or 1
            weights = ", ".join(f"{k} {int(v) * 100 // total}%" for k, v in snap["weights"].items())
            pods = ", ".join(f"{n} x {_tag(i)}" for i, n in snap["images"].items())
            decided = (
                "completed"
                if snap["conditions"].get("Succeeded", {}).get("status") == "True"
                else "rolled back"
            )
            runs = ", ".join(
                f"{name.rsplit('-', 1)[-1]} {_fmt(values[-1]) if values else ''} {phase}".replace("  ", " ")
                for name, phase, values in snap["runs"]
            )
            verdict = decided if ok else f"{decided} (UNEXPECTED)"
            summary.add_row(label, verdict, pods, weights, runs, f"{snap['seconds']:.0f}s")
        console.print(summary)
        return bool(ok1 and ok2)
    finally:
        await kube.close()


async def _settle(kube: KubeClient, image: str, timeout: float = 120) -> None:
    """After an aborted release, wait until every pod runs ``image`` again."""
    start = time.monotonic()
    while time.monotonic() - start < timeout:
        if (await _snapshot(kube))["images"] == {image: 10}:
            return
        await asyncio.sleep(0.5)


def _tag(image: str) -> str:
    return image.rsplit(":", 1)[-1]


def demo(
    no_cluster: Annotated[
        bool,
        typer.Option(
            "--no-cluster",
            help="Use $KUBECONFIG's cluster, whose kruise manager is installed there (helm install "
            "charts/kruise; kruise cluster up --real-nodes 1 --install), instead of starting one: "
            "the two releases only, Prometheus and the traffic simulator on this machine.",
        ),
    ] = False,
    keep: Annotated[bool, typer.Option("--keep", help="Leave the control plane running at the end.")] = False,
    real_nodes: Annotated[
        int,
        typer.Option(
            help="Real nodes (kubelet + containerd + kruise-daemon) beside the KWOK nodes; with any, the "
            "demo ends with an in-place update on real containers and the Deployment vs OpenKruise "
            "comparison (three pods spread over them). Needs root and hack/install-system-deps.sh; "
            "0 to skip."
        ),
    ] = 3,
) -> None:
    """Run the demo; exits non-zero if the release does not reach its expected outcome."""
    if no_cluster:
        kubeconfig = os.environ.get("KUBECONFIG")
        if not kubeconfig:
            raise typer.BadParameter("--no-cluster needs KUBECONFIG")
        raise typer.Exit(0 if _run_on_existing(kubeconfig) else 1)
    with tempfile.TemporaryDirectory(prefix="kruise-demo-") as tmp:
        where = default_cluster_dir() if keep else Path(tmp) / "cluster"
        cluster = LocalCluster(where, nodes=3, real_nodes=real_nodes, attached=not keep)
        parts = "etcd, kube-apiserver, kcm, scheduler, KWOK" + (
            f", {real_nodes} real nodes" if real_nodes else ""
        )
        with console.status(f"starting the local control plane ({parts})"):
            crd_dir = Path(tmp) / "crds"
            crd_dir.mkdir()
            write_crds(crd_dir)
            state = cluster.start([*_third_party_crds(), crd_dir])
        console.print(f"[green]control plane up[/] in {state.startup_seconds:.1f}s at {state.server}")
        cluster.kubectl("create", "namespace", "kruise-system")
        # NodeImages 1 s after a node is Ready (upstream waits 30 s), for the comparison's pre-pulls
        extra = ("--partition-percent-limit=100", "--nodeimage-creation-delay=1")
        manager = ManagerProcess(state.kubeconfig, Path(tmp) / "manager", extra_args=extra)
        ok = False
        try:
            with console.status("starting kruise manager"):
                manager.start()
            console.print("[green]kruise manager running[/] (controllers + webhooks)")
            with _backends(state.kubeconfig, Path(tmp)) as prometheus:
                ok = asyncio.run(_run(state.kubeconfig, prometheus))
                if ok and real_nodes:
                    nodes = [plan.name for plan in cluster.real_node_plans()]
                    ok = asyncio.run(real_act.run(state.kubeconfig, NAMESPACE, cluster.crictl, console))
                    compared = asyncio.run(
                        compare_act.run(state.kubeconfig, nodes, cluster.crictl, cluster.push_image, console)
                    )
                    ok = ok and compared
        finally:
            manager.stop()
            if keep:
                console.print(f"control plane left running: export KUBECONFIG={state.kubeconfig}")
            else:
                cluster.stop()
        raise typer.Exit(0 if ok else 1)


@contextlib.contextmanager
def _backends(kubeconfig: str, workdir: Path, host: str = LOOPBACK) -> Iterator[str]:
    """The traffic simulator and Prometheus for the block (``analysis_backends``), with the
    console's status lines; yields Prometheus' address."""
    with contextlib.ExitStack() as stack:
        with console.status("starting Prometheus and the traffic simulator"):
            backends = analysis_backends(kubeconfig, NAMESPACE, ERROR_RATES, workdir, host=host)
            address = stack.enter_context(backends)
        console.print(f"[green]Prometheus[/] at {address}, scraping the traffic simulator")
        yield address


def _run_on_existing(kubeconfig: str) -> bool:
    """``--no-cluster``: both releases against the manager already running in ``kubeconfig``'s
    cluster (e.g. installed by ``helm install charts/kruise``), the simulator and Prometheus on
    this machine where that manager reaches them (:func:`prometheus_host`), the Gateway API CRDs
    applied when the cluster has none. ``KRUISE_DEMO_PROMETHEUS`` overrides the address the
    AnalysisTemplate gets."""
    if not asyncio.run(_manager_present(kubeconfig)):
        console.print(
            "[red]no kruise manager in this cluster[/] (no webhook configuration "
            f"{MUTATING_NAME}): install it first (helm install kruise charts/kruise, or "
            "kruise cluster up --real-nodes 1 --install)"
        )
        return False
    with tempfile.TemporaryDirectory(prefix="kruise-demo-") as tmp:
        host = prometheus_host(kubeconfig_server(kubeconfig))
        with _backends(kubeconfig, Path(tmp), host) as address:
            try:
                return asyncio.run(_run(kubeconfig, os.environ.get("KRUISE_DEMO_PROMETHEUS", address)))
            except InvalidError as err:
                if "partition-percent-limit" not in str(err):
                    raise
                console.print(
                    "[red]the manager refused the demo's Rollout[/]: its last step moves 100% of the "
                    "pods with 100% of the traffic, above the manager's --partition-percent-limit "
                    "(upstream's default 50). Raise it and run again:\n  helm upgrade kruise "
                    "charts/kruise -n kruise-system --reuse-values --set manager.partitionPercentLimit=100"
                    "\n  kubectl delete namespace shop"
                )
                return False


async def _manager_present(kubeconfig: str) -> bool:
    """True when a kruise manager registered its webhooks here; applies the vendored Gateway API
    CRDs (the demo's HTTPRoute) when the cluster has no ``httproutes.gateway.networking.k8s.io``."""
    kube = await KubeClient.from_kubeconfig(kubeconfig)
    try:
        if await kube.get_or_none(MUTATING_WEBHOOKS, MUTATING_NAME) is None:
            return False
        if await kube.get_or_none(CRDS, "httproutes.gateway.networking.k8s.io") is None:
            await _create_crds(kube, _third_party_crds())
        return True
    finally:
        await kube.close()


async def _create_crds(kube: KubeClient, manifests: list[Path], timeout: float = 60) -> None:
    """Create the CRDs in ``manifests`` that do not exist and wait until they are Established.
    Raises :class:`TimeoutError`."""
    names = []
    for manifest in manifests:
        for doc in yaml.safe_load_all(manifest.read_text()):
            if doc and doc.get("kind") == "CustomResourceDefinition":
                names.append(doc["metadata"]["name"])
                if await kube.get_or_none(CRDS, doc["metadata"]["name"]) is None:
                    await kube.create(CRDS, doc)
    deadline = time.monotonic() + timeout
    for name in names:
        while not any(
            c["type"] == "Established" and c["status"] == "True"
            for c in ((await kube.get(CRDS, name)).get("status") or {}).get("conditions") or []
        ):
            if time.monotonic() > deadline:
                raise TimeoutError(f"CRD {name} not Established within {timeout:.0f}s")
            await asyncio.sleep(0.2)
