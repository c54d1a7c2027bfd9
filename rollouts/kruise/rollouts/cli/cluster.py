"""``kruise cluster up|down|env``: the embedded local control plane."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from kruise.core.localcluster import LocalCluster, default_cluster_dir
from kruise.core.localcluster.cluster import ClusterError, ClusterState
from kruise.core.localcluster.errors import ClusterRunningError
from kruise.core.localcluster.install import install as install_chart
from kruise.core.localcluster.realnode.images import catalogue_refs
from kruise.core.localcluster.stages import StageDelays

app = typer.Typer(
    help="Run a local control plane (etcd, kube-apiserver, kcm, scheduler, KWOK, optional real nodes).",
    no_args_is_help=True,
)

DirOption = Annotated[
    Path | None,
    typer.Option(
        "--dir", help="State directory (default: $KRUISE_CLUSTER_DIR or ~/.local/state/kruise/cluster)."
    ),
]


@app.command()
def up(
    nodes: Annotated[int, typer.Option(min=0, help="Number of KWOK nodes.")] = 3,
    real_nodes: Annotated[
        int,
        typer.Option(
            min=0,
            help="Number of real nodes (kubelet + containerd, label type=real, taint "
            "kruise.io/real-node=true:NoSchedule). Needs root and hack/install-system-deps.sh; "
            "one cluster per machine may have them.",
        ),
    ] = 0,
    directory: DirOption = None,
    install: Annotated[
        bool,
        typer.Option(
            "--install",
            help="With --real-nodes: build the kruise image (make image), push it to the cluster's "
            "registry and `helm install` charts/kruise (manager and daemon on the real nodes); waits "
            "until it is Ready and its webhooks are served. Needs a source checkout.",
        ),
    ] = False,
    pod_start_delay_ms: Annotated[
        int, typer.Option(min=0, help="Simulated image pull + start of a new pod.")
    ] = 0,
    inplace_restart_delay_ms: Annotated[
        int, typer.Option(min=0, help="Simulated in-place container restart.")
    ] = 0,
) -> None:
    """Start the control plane in the background and print export KUBECONFIG=..."""
    if install and real_nodes < 1:
        typer.echo(
            "error: --install needs --real-nodes 1 or more (the chart's pods run on real nodes)", err=True
        )
        raise typer.Exit(2)
    cluster = LocalCluster(
        directory,
        nodes=nodes,
        real_nodes=real_nodes,
        delays=StageDelays(pod_start_ms=pod_start_delay_ms, inplace_restart_ms=inplace_restart_delay_ms),
        node_daemons=not install,
    )
    try:
        state = cluster.start()
    except ClusterRunningError as err:
        typer.echo(f"error: {err}; it was left running (use it, or pick another --dir)", err=True)
        raise typer.Exit(1) from err
    except ClusterError as err:
        where = cluster.directory
        typer.echo(f"error: {err}", err=True)
        typer.echo(
            f"# what started was stopped; logs kept in {where}/logs (`kruise cluster down --dir {where}`)",
            err=True,
        )
        raise typer.Exit(1) from err
    typer.echo(
        f"# control plane up in {state.startup_seconds:.1f}s: {state.server}, {nodes} KWOK nodes", err=True
    )
    for plan in cluster.real_node_plans():
        typer.echo(
            f"# real node {plan.name} at {plan.node_ip} (containerd unix://{plan.containerd_socket}), "
            f"Ready {state.real_node_timings.get('node_ready_seconds', 0):.1f}s after its kubelet started; "
            f"images: {', '.join(catalogue_refs())}",
            err=True,
        )
    if install:
        try:
            installed = install_chart(cluster, log=lambda msg: typer.echo(f"# {msg}", err=True))
        except ClusterError as err:
            typer.echo(f"error: {err} (the cluster keeps running: `kruise cluster down` stops it)", err=True)
            raise typer.Exit(1) from err
        timings = ", ".join(f"{k.removesuffix('_seconds')} {v:.0f}s" for k, v in installed.timings.items())
        typer.echo(f"# kruise installed from {installed.image}: {timings}", err=True)
        typer.echo("# the demo's releases against it: kruise demo --no-cluster", err=True)
    typer.echo(f"export KUBECONFIG={state.kubeconfig}")


@app.command()
def down(directory: DirOption = None) -> None:
    """Stop every process of the control plane and remove its directory."""
    target = directory or default_cluster_dir()
    if not (target / "state.json").exists():
        typer.echo(f"no local cluster in {target}", err=True)
        raise typer.Exit(0)
    cluster = LocalCluster.attach(target)
    cluster.stop(remove=True)
    for problem in cluster.undo_problems:
        typer.echo(f"warning: could not undo: {problem}", err=True)
    typer.echo(f"stopped and removed {target}", err=True)


@app.command()
def env(
    directory: DirOption = None,
    export: Annotated[
        bool, typer.Option("--export", help="Print `export KUBECONFIG=<path>` for eval.")
    ] = False,
) -> None:
    """Print the kubeconfig path of the running control plane (exit 1 if none)."""
    target = directory or default_cluster_dir()
    try:
        cluster = LocalCluster.attach(target)
    except ClusterError as err:
        typer.echo(str(err), err=True)
        raise typer.Exit(1) from err
    if not cluster.running():
        typer.echo(f"the cluster in {target} is not running (run `kruise cluster down` then `up`)", err=True)
        raise typer.Exit(1)
    state: ClusterState = cluster.state  # type: ignore[assignment]
    sys.stdout.write(f"export KUBECONFIG={state.kubeconfig}\n" if export else f"{state.kubeconfig}\n")
