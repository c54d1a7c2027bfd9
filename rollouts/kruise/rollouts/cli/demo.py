"""``kruise demo``: the main job, end to end, on the embedded control plane.

Today it starts the local control plane, installs kruise's CRDs, applies the
example CloneSet and shows what the API server stored, then stops everything.
Later stages add the manager, a Rollout, Prometheus and a traffic simulator.
"""

from __future__ import annotations

import json
import tempfile
import time
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from kruise.core.localcluster import LocalCluster, default_cluster_dir
from kruise.core.localcluster.binaries import source_root
from kruise.rollouts.crds import write_crds

console = Console()


def _example() -> Path:
    root = source_root()
    if root is None:
        raise typer.BadParameter("kruise demo needs a source checkout (examples/cloneset-web.yaml)")
    return root / "examples" / "cloneset-web.yaml"


def demo(
    no_cluster: Annotated[
        bool, typer.Option("--no-cluster", help="Use $KUBECONFIG instead of starting a control plane.")
    ] = False,
    keep: Annotated[bool, typer.Option("--keep", help="Leave the control plane running at the end.")] = False,
) -> None:
    """Run the demo; exits non-zero if any step fails."""
    t0 = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="kruise-demo-") as tmp:
        where = default_cluster_dir() if keep else Path(tmp) / "cluster"
        cluster = LocalCluster(where, nodes=3, attached=not keep)
        if no_cluster:
            raise typer.BadParameter("--no-cluster arrives with the Rollout demo; use the embedded cluster")
        with console.status("starting the local control plane (etcd, kube-apiserver, kcm, scheduler, KWOK)"):
            state = cluster.start()
        console.print(f"[green]control plane up[/] in {state.startup_seconds:.1f}s at {state.server}")
        try:
            crd_dir = Path(tmp) / "crds"
            crd_dir.mkdir()
            write_crds(crd_dir)
            cluster.apply(crd_dir)
            console.print("[green]CRDs installed[/]: " + ", ".join(p.name for p in sorted(crd_dir.iterdir())))
            cluster.apply(_example())
            obj = json.loads(
                cluster.kubectl("get", "clonesets.apps.kruise.io", "web", "-n", "shop", "-o", "json")
            )
            table = Table(title="CloneSet shop/web as stored by the API server")
            table.add_column("field")
            table.add_column("value")
            spec = obj["spec"]
            table.add_row("replicas", str(spec["replicas"]))
            table.add_row("image", spec["template"]["spec"]["containers"][0]["image"])
            table.add_row("updateStrategy", json.dumps(spec["updateStrategy"]))
            console.print(table)
            nodes = cluster.kubectl("get", "nodes", "-o", "name").split()
            console.print(f"{len(nodes)} KWOK nodes Ready; finished in {time.monotonic() - t0:.1f}s")
        finally:
            if keep:
                console.print(f"control plane left running: export KUBECONFIG={state.kubeconfig}")
            else:
                cluster.stop()
