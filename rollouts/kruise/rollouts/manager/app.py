"""Compose and run kruise-manager.

Every replica serves admission webhooks and health/metrics endpoints; only the
leader (a coordination.k8s.io Lease, as kruise-manager's ``--enable-leader-election``)
runs the controllers. A leader that loses its lease exits, so that two replicas
never act at once.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import logging
import os
import signal
import socket
import uuid
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import kopf
import prometheus_client
from aiohttp import web

from kruise.analysis import handlers as analysis_handlers
from kruise.analysis.controller import AnalysisRunController
from kruise.core.certs import CertificateAuthority, cert_pem, key_pem
from kruise.core.events import EventRecorder
from kruise.core.kube import KubeClient
from kruise.core.leader import LeaderElectionConfig, LeaderElector
from kruise.core.webhook import WebhookServer
from kruise.core.webhook.configuration import ClientTarget, ensure_configurations, ensure_crd_conversion
from kruise.rollouts.advanceddeployment import handlers as advanced_deployment_handlers
from kruise.rollouts.advanceddeployment.controller import AdvancedDeploymentController
from kruise.rollouts.batchrelease.controller import BatchReleaseController
from kruise.rollouts.manager.certsecret import webhook_certificates
from kruise.rollouts.manager.logformat import configure_logging
from kruise.rollouts.manager.options import ManagerOptions
from kruise.rollouts.manager.webhooks import register_webhooks, webhook_specs
from kruise.rollouts.rollout import handlers as rollout_handlers
from kruise.rollouts.rollout.controller import RolloutController
from kruise.rollouts.rollout.rollout_webhooks import CONVERT_PATH, CONVERTED_CRDS
from kruise.rollouts.rollout.traffic import KubeTraffic
from kruise.workloads.cloneset import handlers as cloneset_handlers
from kruise.workloads.cloneset.controller import CloneSetController, CloneSetOptions

log = logging.getLogger("kruise.manager")


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


class NoDiffBaseStorage(kopf.DiffBaseStorage):
    """A kopf diff-base storage that records nothing.

    kopf builds an "essence" (a deep copy of the body) of every object on every watch event to
    feed ``on.create``/``on.update`` handlers; the controllers here use only indices and
    ``on.event`` handlers and reconcile from the cache, so that copy is pure overhead (it was
    the largest single cost of a 500-pod scale-up). Install with
    ``settings.persistence.diffbase_storage = NoDiffBaseStorage()``; do not combine with
    change-detecting handlers.
    """

    def build(self, *, body: kopf.Body, extra_fields: Iterable[Any] | None = None) -> Any:
        return None

    def fetch(self, *, body: kopf.Body) -> Any:
        return None

    def store(self, *, body: kopf.Body, patch: kopf.Patch, essence: Any) -> None:
        return None


class Manager:
    """One kruise-manager process."""

    def __init__(self, options: ManagerOptions) -> None:
        self.options = options
        self.identity = options.identity or f"{socket.gethostname()}_{uuid.uuid4().hex[:8]}"
        self.kube: KubeClient | None = None
        self.leading = asyncio.Event()
        self.stop = asyncio.Event()

    async def run(self) -> int:
        opts = self.options
        self.kube = await KubeClient.from_kubeconfig(
            opts.kubeconfig, qps=opts.kube_client_qps, burst=opts.kube_client_burst
        )
        runners: list[web.AppRunner] = []
        webhook = None
        try:
            cert, key, ca = await webhook_certificates(self.kube, opts, ensure_webhook_certs)
            webhook = WebhookServer(
                host=opts.webhook_host, port=opts.webhook_port, cert_file=cert, key_file=key
            )
            register_webhooks(webhook, self.kube, opts)
            await webhook.start()
            if opts.manage_webhook_configurations:
                target = (
                    ClientTarget(url_base=opts.webhook_url_base)
                    if opts.webhook_url_base
                    else ClientTarget(
                        service_namespace=opts.webhook_service_namespace,
                        service_name=opts.webhook_service_name,
                    )
                )
                bundle = base64.b64encode(ca).decode()
                await ensure_configurations(self.kube, webhook_specs(opts), target=target, ca_bundle=bundle)
                await ensure_crd_conversion(
                    self.kube, CONVERTED_CRDS, target=target, path=CONVERT_PATH, ca_bundle=bundle
                )
            runners.append(await self._serve_probes())
            runners.append(await self._serve_metrics())
            return await self._lead_and_run()
        finally:
            for runner in runners:
                await runner.cleanup()
            if webhook is not None:
                await webhook.stop()
            await self.kube.close()

    async def _lead_and_run(self) -> int:
        assert self.kube is not None
        opts = self.options
        elector: LeaderElector | None = None
        if opts.enable_leader_election:
            elector = LeaderElector(
                self.kube,
                LeaderElectionConfig(
                    opts.leader_election_namespace, opts.leader_election_name, self.identity
                ),
            )
            acquire = asyncio.create_task(elector.acquire())
            stopped = asyncio.create_task(self.stop.wait())
            await asyncio.wait({acquire, stopped}, return_when=asyncio.FIRST_COMPLETED)
            if self.stop.is_set():
                acquire.cancel()
                return 0
            stopped.cancel()
        self.leading.set()
        log.info("%s leads; starting controllers", self.identity)
        operator = asyncio.create_task(self._operator())
        waiters = {operator, asyncio.create_task(self.stop.wait())}
        if elector is not None:
            waiters.add(asyncio.create_task(elector.hold()))
        done, pending = await asyncio.wait(waiters, return_when=asyncio.FIRST_COMPLETED)
        lost = not self.stop.is_set() and operator not in done
        for task in pending:
            task.cancel()
        for task in pending:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        if elector is not None:
            if lost:
                log.error("leader election lost")
                return 1
            await elector.release()
        if operator in done and operator.exception() is not None:
            raise operator.exception()  # type: ignore[misc]
        return 0

    async def _operator(self) -> None:
        assert self.kube is not None
        opts = self.options
        registry = kopf.OperatorRegistry()
        settings = kopf.OperatorSettings()
        settings.posting.enabled = False
        settings.peering.standalone = True
        settings.watching.server_timeout = 300
        settings.persistence.diffbase_storage = NoDiffBaseStorage()
        settings.networking.request_timeout = 60
        cfg = self.kube.config.source
        assert cfg is not None

        @kopf.on.login(registry=registry)
        def login(**_: Any) -> kopf.ConnectionInfo:
            token = cfg.api_key.get("authorization") or cfg.api_key.get("BearerToken")
            scheme = None
            if token and " " in token:
                scheme, token = token.split(" ", 1)
            return kopf.ConnectionInfo(
                server=self.kube.config.server if self.kube else str(cfg.host),
                ca_path=cfg.ssl_ca_cert,
                insecure=not cfg.verify_ssl,
                certificate_path=cfg.cert_file,
                private_key_path=cfg.key_file,
                scheme=scheme or ("Bearer" if token else None),
                token=token,
            )

        recorder = EventRecorder(self.kube, "cloneset-controller")
        cache = cloneset_handlers.KopfCloneSetCache()
        gates = opts.feature_gates
        controller = CloneSetController(
            self.kube,
            recorder,
            cache,
            CloneSetOptions(
                workers=opts.cloneset_workers,
                expectation_timeout=opts.expectation_timeout,
                short_hash_label=gates.get("CloneSetShortHash", False),
                partition_rollback=gates.get("CloneSetPartitionRollback", False),
                preparing_update_as_update=gates.get("PreparingUpdateAsUpdate", False),
                exclude_preparing_delete=opts.cloneset_scaling_exclude_preparing_delete,
            ),
        )
        cloneset_handlers.register(registry, controller, cache)
        rollout_cache = rollout_handlers.KopfRolloutCache()
        rollouts = RolloutController(
            self.kube,
            EventRecorder(self.kube, "rollout-controller"),
            rollout_cache,
            KubeTraffic(self.kube, opts.rollout_configuration_namespace),
            workers=opts.rollout_workers,
        )
        batches = BatchReleaseController(
            self.kube,
            rollout_cache,
            workers=opts.batchrelease_workers,
            advanced_deployment=gates.get("AdvancedDeployment", True),
        )
        rollout_handlers.register(registry, rollouts, batches, rollout_cache)
        if gates.get("AdvancedDeployment", True):
            advanced = AdvancedDeploymentController(
                self.kube, rollout_cache, EventRecorder(self.kube, "advanced-deployment-controller")
            )
            advanced_deployment_handlers.register(registry, advanced, rollout_cache)
        analysis_cache = analysis_handlers.KopfAnalysisRunCache()
        analysis = AnalysisRunController(
            self.kube,
            EventRecorder(self.kube, "analysisrun-controller"),
            analysis_cache,
            workers=opts.analysisrun_workers,
        )
        analysis_handlers.register(registry, analysis, analysis_cache)
        await kopf.operator(registry=registry, settings=settings, clusterwide=True, standalone=True)

    async def _serve_probes(self) -> web.AppRunner:
        async def healthz(_: web.Request) -> web.Response:
            return web.Response(text="ok")

        app = web.Application()
        app.router.add_get("/healthz", healthz)
        app.router.add_get("/readyz", healthz)
        return await _start(app, self.options.health_probe_addr)

    async def _serve_metrics(self) -> web.AppRunner:
        async def metrics(_: web.Request) -> web.Response:
            return web.Response(body=prometheus_client.generate_latest(), content_type="text/plain")

        app = web.Application()
        app.router.add_get("/metrics", metrics)
        return await _start(app, self.options.metrics_addr)


async def _start(app: web.Application, addr: str) -> web.AppRunner:
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    host, port = _split_addr(addr)
    if port:
        await web.TCPSite(runner, host, port).start()
    return runner


def run(options: ManagerOptions) -> int:
    """Run the manager until SIGTERM/SIGINT; returns the process exit code."""
    configure_logging(os.environ.get("KRUISE_LOG_LEVEL", "INFO"), options.logging_format)
    logging.getLogger("kopf").setLevel(logging.WARNING)

    async def main() -> int:
        manager = Manager(options)
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, manager.stop.set)
        return await manager.run()

    return asyncio.run(main())
