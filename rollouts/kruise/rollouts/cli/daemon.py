"""``kruise daemon``: run kruise-daemon on one node (image pre-pull through CRI)."""

from __future__ import annotations

import logging
import os
from typing import Annotated

import typer

from kruise.daemon.app import run
from kruise.daemon.options import DEFAULT_ADDR, DEFAULT_VAR_RUN, DaemonOptions
from kruise.rollouts.manager.logformat import configure_logging
from kruise.rollouts.manager.options import parse_feature_gates


def daemon(
    kubeconfig: Annotated[
        str | None, typer.Option(help="kubeconfig (default $KUBECONFIG, then in-cluster).")
    ] = None,
    addr: Annotated[
        str, typer.Option("--addr", help="host:port serving /healthz and /metrics.")
    ] = DEFAULT_ADDR,
    socket_file: Annotated[
        str,
        typer.Option(
            "--socket-file",
            help="CRI socket: a path under --var-run-dir, or absolute. Default: the first of "
            "containerd.sock, containerd/containerd.sock, crio.sock, crio/crio.sock, cri-dockerd.sock, "
            "cri-dockerd/cri-dockerd.sock found there (upstream's probe order).",
        ),
    ] = "",
    var_run_dir: Annotated[
        str,
        typer.Option(
            "--var-run-dir", help="Where the host's /var/run is mounted (upstream's chart: /hostvarrun)."
        ),
    ] = DEFAULT_VAR_RUN,
    max_workers_for_pull_image: Annotated[
        int, typer.Option("--max-workers-for-pull-image", help="Image pulls at once; <= 0: no limit.")
    ] = -1,
    rest_config_qps: Annotated[
        float, typer.Option("--rest-config-qps", help="API client QPS; 0: client-go's default (5).")
    ] = 0.0,
    rest_config_burst: Annotated[
        int, typer.Option("--rest-config-burst", help="API client burst; 0: client-go's default (10).")
    ] = 0,
    feature_gates: Annotated[str, typer.Option("--feature-gates", help="e.g. ImagePullJobGate=true")] = "",
    pprof_addr: Annotated[
        str, typer.Option("--pprof-addr", help="Accepted for upstream's chart; unused.")
    ] = ":10222",
    enable_pprof: Annotated[bool, typer.Option("--enable-pprof", help="Accepted; unused.")] = True,
    plugin_config_file: Annotated[
        str, typer.Option("--plugin-config-file", help="Accepted; credential provider plugins are not run.")
    ] = "/kruise/CredentialProviderPlugin.yaml",
    plugin_bin_dir: Annotated[
        str, typer.Option("--plugin-bin-dir", help="Accepted; unused.")
    ] = "/kruise/plugins",
) -> None:
    """Run kruise-daemon for the node named by $NODE_NAME: through the node's CRI runtime it pulls
    the images its NodeImage lists, recreates containers for ContainerRecreateRequests, restarts
    containers whose env from pod metadata changed, and runs PodProbeMarker probes."""
    del pprof_addr, enable_pprof, plugin_config_file, plugin_bin_dir
    node = os.environ.get("NODE_NAME", "")
    if not node:
        raise typer.BadParameter("NODE_NAME must name this daemon's node", param_hint="NODE_NAME")
    try:
        gates = parse_feature_gates(feature_gates)
    except ValueError as err:
        raise typer.BadParameter(str(err), param_hint="--feature-gates") from err
    configure_logging(os.environ.get("KRUISE_LOG_LEVEL", "INFO"), "text")
    logging.getLogger("kruise.daemon").info("kruise-daemon starting on node %s", node)
    options = DaemonOptions(
        node_name=node,
        kubeconfig=kubeconfig,
        addr=addr,
        socket_file=socket_file,
        var_run=var_run_dir,
        max_workers_for_pull_image=max_workers_for_pull_image,
        qps=rest_config_qps,
        burst=rest_config_burst,
        feature_gates=gates,
    )
    raise typer.Exit(run(options))
