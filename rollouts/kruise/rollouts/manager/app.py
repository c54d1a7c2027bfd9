"""Compose and run kruise-manager.

Every replica serves admission webhooks and health/metrics endpoints; only the
leader (a coordination.k8s.io Lease, as kruise-manager's ``--enable-leader-election``)
runs the controllers. A leader that loses its lease exits, so that two replicas
never act at once.

The webhook server runs on its own event loop thread (:class:`~kruise.core.loopthread.LoopThread`)
with its own API client (its own connections and a token bucket of the same ``qps``/``burst``),
reading the informers' stores (thread-safe reads), so an admission request never queues behind
the watch events and reconciles of the main loop. With :data:`GIL_SWITCH_INTERVAL`, sequential
pod creations through ``/mutate-pod`` cost the API server 9-13 ms a call instead of ~32 ms
(issue 16, ``docs/benchmarks.md``).
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import logging
import os
import signal
import socket
import sys
import uuid
from pathlib import Path

from aiohttp import web

from kruise.core import mallocopts, memtrace
from kruise.core.backoff import retry_transient
from kruise.core.certs import CertificateAuthority, cert_pem, key_pem
from kruise.core.kube import KubeClient
from kruise.core.kube.resources import SIDECARSETS
from kruise.core.leader import LeaderElectionConfig, LeaderElector
from kruise.core.loopthread import LoopThread, LoopThreadError
from kruise.core.metrics import LEADER_ELECTION_STATUS
from kruise.core.runtime import Runtime
from kruise.core.webhook import WebhookServer
from kruise.core.webhook.configuration import (
    ClientTarget,
    WebhookSpec,
    ensure_configurations,
    ensure_crd_conversion,
)
from kruise.rollouts.manager import metrics
from kruise.rollouts.manager.certsecret import webhook_certificates
from kruise.rollouts.manager.controllers import build_runtime
from kruise.rollouts.manager.logformat import configure_logging
from kruise.rollouts.manager.options import ManagerOptions
from kruise.rollouts.manager.webhooks import (
    CONVERTED_CRDS,
    register_webhooks,
    webhook_cache,
    webhook_reads_all,
    webhook_specs,
)
from kruise.rollouts.rollout.rollout_webhooks import CONVERT_PATH
from kruise.workloads.api.persistentpodstate import PERSISTENTPODSTATES
from kruise.workloads.api.podunavailablebudget import PUBS
from kruise.workloads.api.workloadspread import WORKLOADSPREADS

log = logging.getLogger("kruise.manager")

GIL_SWITCH_INTERVAL = 0.0005
"""Seconds a thread waiting for the GIL waits before the running one is asked to drop it
(CPython's default is 0.005). Each step of an admission review on the webhooks' thread (wake on
the socket, read, handle, write) waits for the GIL while the main loop works through watch
events; at 5 ms a step, sequential pod creations measured ~16 ms between the API server and the
handler against ~3 ms for a webhook process of its own (issue 16)."""


def ensure_webhook_certs(directory: Path, service: str, namespace: str) -> tuple[Path, Path, bytes]:
    """Reuse or create ``ca.crt``, ``tls.crt``, ``tls.key`` in ``directory`` (as kruise's
    ``--webhook-cert-dir``, default ``/tmp/kruise-webhook-certs``); returns cert, key, CA PEM."""
    directory.mkdir(parents=True, exist_ok=True)
    crt, key, ca_crt, ca_key = (directory / n for n in ("tls.crt", "tls.key", "ca.crt", "ca.key"))
    if not (crt.exists() and key.exists() and ca_crt.exists()):
        ca = CertificateAuthority.create("kruise-webhook-ca")
        ca_crt.write_bytes(cert_pem(ca.cert))
        ca_key.write_bytes(key_pem(ca.key))
        ca_key.chmod(0o600)
        leaf_key, leaf = ca.issue(
            f"{service}.{namespace}.svc",
            server=True,
            dns_names=(
                "localhost",
                service,
                f"{service}.{namespace}",
                f"{service}.{namespace}.svc",
                f"{service}.{namespace}.svc.cluster.local",
            ),
            ip_addresses=("127.0.0.1",),
        )
        crt.write_bytes(cert_pem(leaf))
        key.write_bytes(key_pem(leaf_key))
        key.chmod(0o600)
    return crt, key, ca_crt.read_bytes()


def _split_addr(addr: str) -> tuple[str, int]:
    host, _, port = addr.rpartition(":")
    return host or "0.0.0.0", int(port)


class Manager:
    """One kruise-manager process."""

    def __init__(self, options: ManagerOptions) -> None:
        self.options = options
        self.identity = options.identity or f"{socket.gethostname()}_{uuid.uuid4().hex[:8]}"
        self.kube: KubeClient | None = None
        self.leading = asyncio.Event()
        self.stop = asyncio.Event()
        self.metric_sources = metrics.StateSources()

    async def run(self) -> int:
        opts = self.options
        self.kube = await KubeClient.from_kubeconfig(
            opts.kubeconfig, qps=opts.kube_client_qps, burst=opts.kube_client_burst
        )
        runners: list[web.AppRunner] = []
        socks: list[socket.socket | None] = []
        webhook = None
        webhook_thread = LoopThread("kruise-webhooks")
        webhook_kube = KubeClient(self.kube.config)  # used on (and closed by) the webhooks' loop only
        collectors = self.metric_sources.collectors()
        metrics.register(collectors)
        elector = self._elector()
        writer = KubeClient(self.kube.config, write_guard=elector.fence.check if elector else None)
        runtime = build_runtime(writer, opts, runtime=Runtime(self.kube))
        cache = webhook_cache(runtime)
        try:
            runtime.start_informers()  # a standby keeps warm caches; the webhooks answer from them
            await runtime.informers.wait_synced(r.resource for r in webhook_reads_all())
            kube = self.kube
            cert, key, ca = await retry_transient(
                lambda: webhook_certificates(kube, opts, ensure_webhook_certs), "webhook certificates"
            )
            webhook = WebhookServer(
                host=opts.webhook_host, port=opts.webhook_port, cert_file=cert, key_file=key
            )
            register_webhooks(webhook, webhook_kube, opts, cache)
            sys.setswitchinterval(GIL_SWITCH_INTERVAL)
            webhook_thread.start()
            await webhook_thread.call(webhook.start())
            # Every port is taken before the configurations point the API server here, so a
            # replica that cannot start (a port in use) leaves the cluster's webhooks alone; the
            # probe port answers only after registration (/healthz means "registered").
            socks += (probe_sock := _bind(opts.health_probe_addr), metrics_sock := _bind(opts.metrics_addr))
            if opts.manage_webhook_configurations:
                specs = webhook_specs(
                    opts,
                    cache.list(SIDECARSETS),
                    cache.list(PUBS),
                    cache.list(PERSISTENTPODSTATES),
                    cache.list(WORKLOADSPREADS),
                )
                await self._register_configurations(ca, specs)
            runners.append(await self._serve_probes(probe_sock))
            runners.append(await self._serve_metrics(metrics_sock))
            return await self._lead_and_run(runtime, elector)
        finally:
            for runner in runners:
                await runner.cleanup()
            for sock in socks:
                if sock is not None:
                    sock.close()
            await _stop_webhooks(webhook_thread, webhook, webhook_kube)
            metrics.unregister(collectors)
            await runtime.stop()
            await writer.close()
            await self.kube.close()

    def _elector(self) -> LeaderElector | None:
        opts = self.options
        if not opts.enable_leader_election:
            return None
        assert self.kube is not None
        return LeaderElector(
            self.kube,
            LeaderElectionConfig(opts.leader_election_namespace, opts.leader_election_name, self.identity),
        )

    async def _register_configurations(self, ca: bytes, specs: list[WebhookSpec]) -> None:
        """Write both webhook configurations and the CRD conversion stanzas with our CA."""
        assert self.kube is not None
        opts = self.options
        target = (
            ClientTarget(url_base=opts.webhook_url_base)
            if opts.webhook_url_base
            else ClientTarget(
                service_namespace=opts.webhook_service_namespace,
                service_name=opts.webhook_service_name,
            )
        )
        bundle = base64.b64encode(ca).decode()
        kube = self.kube
        await retry_transient(
            lambda: ensure_configurations(kube, specs, target=target, ca_bundle=bundle),
            "webhook configurations",
        )
        await retry_transient(
            lambda: ensure_crd_conversion(
                kube, CONVERTED_CRDS, target=target, path=CONVERT_PATH, ca_bundle=bundle
            ),
            "CRD conversion webhooks",
        )

    async def _lead_and_run(self, runtime: Runtime, elector: LeaderElector | None) -> int:
        """Wait for the lease, run the controllers while it is held.

        The controllers write through their own client, fenced by the lease
        (:class:`~kruise.core.leader.LeaseFence`): once this replica cannot prove it holds the
        lease, no write leaves it. On losing it the controllers are cancelled first (in-flight
        reconciles stop), and only then is the loss reported and the process exits 1.
        """
        opts = self.options
        leader = LEADER_ELECTION_STATUS.labels(opts.leader_election_name) if elector is not None else None
        try:
            if leader is not None:
                leader.set(0)
            if elector is not None and not await self._acquire(elector):
                return 0
            self.leading.set()
            log.info("%s leads; starting controllers", self.identity)
            if leader is not None:
                leader.set(1)
            metrics.read_informers(self.metric_sources, runtime.informers)  # state gauges: leader only
            return await self._run_controllers(runtime, elector)
        finally:
            if leader is not None:
                leader.set(0)
            self.metric_sources.clear()

    async def _acquire(self, elector: LeaderElector) -> bool:
        """Block until leader (True) or asked to stop (False)."""
        acquire = asyncio.create_task(elector.acquire())
        stopped = asyncio.create_task(self.stop.wait())
        await asyncio.wait({acquire, stopped}, return_when=asyncio.FIRST_COMPLETED)
        for task in (acquire, stopped):
            task.cancel()
        return not self.stop.is_set()

    async def _run_controllers(self, runtime: Runtime, elector: LeaderElector | None) -> int:
        controllers = asyncio.create_task(runtime.run_controllers(), name="controllers")
        stopped = asyncio.create_task(self.stop.wait())
        lease: set[asyncio.Task[None]] = set()
        if elector is not None:
            lease = {asyncio.create_task(elector.hold()), asyncio.create_task(elector.fence.lapsed())}
        done, _ = await asyncio.wait({controllers, stopped, *lease}, return_when=asyncio.FIRST_COMPLETED)
        lost = not self.stop.is_set() and controllers not in done
        if controllers not in done:
            controllers.cancel()  # in-flight reconciles end here, before anything else happens
            with contextlib.suppress(asyncio.CancelledError):
                await controllers
        for task in (stopped, *lease):
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
        if lost:
            log.error("leader election lost; controllers stopped")
            return 1
        if elector is not None:
            elector.fence.revoke()
            await elector.release()
        if controllers in done and not controllers.cancelled() and controllers.exception() is not None:
            raise controllers.exception()  # type: ignore[misc]
        return 0

    async def _serve_probes(self, sock: socket.socket | None) -> web.AppRunner:
        async def healthz(_: web.Request) -> web.Response:
            return web.Response(text="ok")

        app = web.Application()
        app.router.add_get("/healthz", healthz)
        app.router.add_get("/readyz", healthz)
        return await _start(app, sock)

    async def _serve_metrics(self, sock: socket.socket | None) -> web.AppRunner:
        app = web.Application()
        app.router.add_get("/metrics", metrics.metrics_handler(self.metric_sources))
        return await _start(app, sock)


async def _stop_webhooks(thread: LoopThread, server: WebhookServer | None, kube: KubeClient) -> None:
    """Stop serving (in-flight reviews are answered first), close the webhooks' client, end the thread."""
    with contextlib.suppress(LoopThreadError):
        if server is not None:
            await thread.call(server.stop())
        await thread.call(kube.close())
    await thread.stop()


def _bind(addr: str) -> socket.socket | None:
    """Take ``host:port`` now (bound, not yet listening: connections are refused until served).

    Returns None for port 0 (that server is off). Raises :class:`OSError` (``EADDRINUSE``) when
    the port is taken.
    """
    host, port = _split_addr(addr)
    if not port:
        return None
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
    except OSError as err:
        sock.close()
        raise OSError(err.errno, f"cannot listen on {addr}: {(err.strerror or str(err)).lower()}") from err
    return sock


async def _start(app: web.Application, sock: socket.socket | None) -> web.AppRunner:
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    if sock is not None:
        await web.SockSite(runner, sock).start()
    return runner


def run(options: ManagerOptions) -> int:
    """Run the manager until SIGTERM/SIGINT; returns the process exit code."""
    configure_logging(os.environ.get("KRUISE_LOG_LEVEL", "INFO"), options.logging_format)
    mallocopts.pin_mmap_threshold()  # freed large buffers go back to the system (issue 28)

    async def main() -> int:
        manager = Manager(options)
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, manager.stop.set)
        memtrace.install_from_env(loop)  # off unless KRUISE_MEMTRACE is set (SIGUSR2 reports)
        return await manager.run()

    return asyncio.run(main())
