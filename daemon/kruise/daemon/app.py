"""Compose and run kruise-daemon: the manager's twin on one node (DESIGN §8).

Upstream (``K:pkg/daemon/daemon.go``) runs, on every node, informers scoped to that node and a
set of runnables over one CRI connection. Here the same shape sits on the shared runtime
(:class:`~kruise.core.runtime.Runtime`): one informer per kind, each narrowed by a field selector
(``metadata.name=<node>`` for the node's NodeImage and NodePodProbe, ``spec.nodeName=<node>``
for pods) or label selector (``crr.apps.kruise.io/node-name=<node>,crr.apps.kruise.io/active=true``
for ContainerRecreateRequests), one work queue per controller (image puller, CRR, pod probes,
container meta), and:

- ``/healthz`` on ``--addr``: 200 ``ok`` once every informer has synced, else 500 naming the one
  that has not (upstream registers ``nodeImageInformerSynced`` and fails the same way);
- ``/metrics`` on the same address (the process's default Prometheus registry: workqueue,
  reconcile, REST client and pull metrics).

There is no leader election: each node has exactly one daemon. Everything the daemon knows
lives in API objects (NodeImage status), so a restarted daemon resumes from them.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from aiohttp import web
from prometheus_client import CONTENT_TYPE_LATEST, REGISTRY, generate_latest

from kruise.core.informer import Informer
from kruise.core.kube import KubeClient
from kruise.core.kube.resources import CONTAINERRECREATEREQUESTS, PODS, Resource
from kruise.core.runtime import ControllerRow, Runtime, wire
from kruise.daemon.api.nodeimage import NODEIMAGES
from kruise.daemon.api.podprobe import NODEPODPROBES
from kruise.daemon.containermeta.controller import ContainerMetaController
from kruise.daemon.containerrecreate.controller import ContainerRecreateController, crr_label_selector
from kruise.daemon.cri.endpoint import resolve_endpoint
from kruise.daemon.cri.grpcclient import GrpcCri
from kruise.daemon.cri.port import CriRuntime
from kruise.daemon.imagepuller.controller import ImagePullerController
from kruise.daemon.node import NodeDeps
from kruise.daemon.options import DaemonOptions
from kruise.daemon.podprobe.controller import PodProbeController

__all__ = ["Daemon", "compose", "field_selectors", "label_selectors", "node_informer", "run"]

log = logging.getLogger("kruise.daemon")


def field_selectors(node_name: str) -> dict[Resource, str]:
    """Which objects of each kind this node's daemon may see, by field."""
    return {
        NODEIMAGES: f"metadata.name={node_name}",
        NODEPODPROBES: f"metadata.name={node_name}",
        PODS: f"spec.nodeName={node_name}",
    }


def label_selectors(node_name: str) -> dict[Resource, str]:
    """... and by label: the node's active ContainerRecreateRequests (upstream's CRR informer)."""
    return {CONTAINERRECREATEREQUESTS: crr_label_selector(node_name)}


def node_informer(node_name: str) -> Callable[[KubeClient, Resource], Informer]:
    """The runtime's informer factory: every kind narrowed to ``node_name``'s objects."""
    fields, labels = field_selectors(node_name), label_selectors(node_name)
    return lambda kube, res: Informer(
        kube, res, field_selector=fields.get(res), label_selector=labels.get(res)
    )


@runtime_checkable
class Stoppable(Protocol):
    async def stop(self) -> None: ...


@dataclass(frozen=True)
class NodeWiring:
    """What every daemon row is built from: the node's dependencies and the daemon's options."""

    node: NodeDeps
    opts: DaemonOptions

    def gate(self, name: str) -> bool:
        """Upstream's daemon gates used here (PodProbeMarkerGate, DaemonWatchingPod,
        InPlaceUpdateEnvFromMetadata) all default on."""
        return self.opts.feature_gates.get(name, True)


Row = ControllerRow[NodeWiring]

ROWS: tuple[Row, ...] = (
    Row(
        ImagePullerController.name,
        lambda w, view: ImagePullerController(w.node, view, max_workers=w.opts.max_workers_for_pull_image),
    ),
    Row(ContainerRecreateController.name, lambda w, view: ContainerRecreateController(w.node, view)),
    Row(
        PodProbeController.name,
        lambda w, view: PodProbeController(w.node, view),
        lambda w: w.gate("PodProbeMarkerGate"),
    ),
    Row(
        ContainerMetaController.name,
        lambda w, view: ContainerMetaController(
            w.node, view, env_gate=w.gate("InPlaceUpdateEnvFromMetadata")
        ),
        lambda w: w.gate("DaemonWatchingPod"),
    ),
)
"""Every controller of the daemon: the image puller and the CRR daemon always run (upstream gates
image pulls on the manager side only); pod probes under PodProbeMarkerGate and container meta
under DaemonWatchingPod."""


def compose(kube: KubeClient, cri: CriRuntime, opts: DaemonOptions) -> tuple[Runtime, list[Stoppable]]:
    """Every controller of :data:`ROWS` on a new runtime whose informers see only
    ``opts.node_name``'s objects (no I/O until the runtime starts); returns it and what to stop
    on exit."""
    runtime = Runtime(kube, informer_factory=node_informer(opts.node_name))
    built = wire(runtime, ROWS, NodeWiring(NodeDeps(kube, cri, opts.node_name), opts))
    return runtime, [c for c in built.values() if isinstance(c, Stoppable)]


class Daemon:
    """One kruise-daemon process for ``options.node_name``."""

    def __init__(self, options: DaemonOptions) -> None:
        if not options.node_name:
            raise ValueError("the node name is required (NODE_NAME)")
        self.options = options
        self.stop = asyncio.Event()

    async def run(self) -> int:
        opts = self.options
        endpoint = resolve_endpoint(opts.socket_file, opts.var_run)
        cri = await GrpcCri.connect(endpoint)
        version = await cri.version()
        log.info(
            "node %s: CRI %s %s (API %s) at %s", opts.node_name, version.runtime_name,
            version.runtime_version, version.runtime_api_version, endpoint,
        )  # fmt: skip
        kube = await KubeClient.from_kubeconfig(opts.kubeconfig, qps=opts.client_qps, burst=opts.client_burst)
        runtime, stoppables = compose(kube, cri, opts)
        runner: web.AppRunner | None = None
        try:
            runtime.start_informers()
            runner = await self._serve(runtime)
            controllers = asyncio.create_task(runtime.run_controllers(), name="controllers")
            stopped = asyncio.create_task(self.stop.wait())
            done, _ = await asyncio.wait({controllers, stopped}, return_when=asyncio.FIRST_COMPLETED)
            for task in (controllers, stopped):
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task
            if controllers in done and not controllers.cancelled() and controllers.exception() is not None:
                raise controllers.exception()  # type: ignore[misc]
            return 0
        finally:
            for stoppable in stoppables:
                await stoppable.stop()
            if runner is not None:
                await runner.cleanup()
            await runtime.stop()
            await kube.close()
            await cri.close()

    async def _serve(self, runtime: Runtime) -> web.AppRunner:
        informers = runtime.informers

        async def healthz(_: web.Request) -> web.Response:
            for resource in informers.resources():
                if not informers.informer(resource).synced:
                    return web.Response(status=500, text=f"check {resource.plural}InformerSynced failed")
            return web.Response(text="ok")

        async def metrics(_: web.Request) -> web.Response:
            body = generate_latest(REGISTRY)
            return web.Response(body=body, headers={"Content-Type": CONTENT_TYPE_LATEST})

        app = web.Application()
        app.router.add_get("/healthz", healthz)
        app.router.add_get("/metrics", metrics)
        runner = web.AppRunner(app, access_log=None)
        await runner.setup()
        host, _, port = self.options.addr.rpartition(":")
        await web.TCPSite(runner, host or "0.0.0.0", int(port)).start()
        return runner


def run(options: DaemonOptions) -> int:
    """Run the daemon until SIGTERM/SIGINT; returns the process exit code."""

    async def main() -> int:
        daemon = Daemon(options)
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, daemon.stop.set)
        return await daemon.run()

    return asyncio.run(main())
