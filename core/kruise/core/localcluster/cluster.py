"""Start and stop a local control plane: etcd, kube-apiserver,
kube-controller-manager, kube-scheduler and KWOK with N fake nodes, and optionally real
nodes (a kubelet and containerd each, :mod:`kruise.core.localcluster.realnode`).

Everything listens on loopback ports picked at start. The state (ports, pids,
kubeconfig path) is written to ``<dir>/state.json`` so a later process
(``kruise cluster down``/``env``) can find and stop it. Command lines follow
``shared/reference/control-plane-harness.md`` §2-§5 (envtest and kwokctl's
choices, with admission webhooks left on). KWOK manages only the nodes annotated
``kwok.x-k8s.io/node=fake`` (ours), so it never rewrites a real node or its pods.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import json
import os
import shutil
import ssl
import subprocess
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import yaml

from kruise.core.localcluster.binaries import find_bin_dir
from kruise.core.localcluster.components import (
    DEFAULT_STORAGE_CLASS,
    apiserver_args,
    controller_manager_args,
    etcd_args,
    fake_node,
    kwok_args,
    scheduler_args,
)
from kruise.core.localcluster.errors import ClusterError, ClusterRunningError
from kruise.core.localcluster.pki import write_pki
from kruise.core.localcluster.processes import (
    free_port,
    http_ok,
    log_tail,
    pid_alive,
    spawn,
    terminate,
    wait_for,
)
from kruise.core.localcluster.realnode.images import ImageSpec
from kruise.core.localcluster.realnode.nodes import REGISTRY, RealNodes
from kruise.core.localcluster.realnode.plan import CONTROL_PLANE_IP, NodePlan
from kruise.core.localcluster.stages import StageDelays, write_stages
from kruise.core.localcluster.state import ClusterState, default_cluster_dir

__all__ = ["ClusterError", "ClusterState", "LocalCluster", "default_cluster_dir", "free_port"]

NODE_PREFIX = "kwok-node-"
STOP_ORDER = ("kwok", "kube-scheduler", "kube-controller-manager", "kube-apiserver", "etcd")


class LocalCluster:
    """A local control plane rooted at ``directory``, with ``nodes`` KWOK nodes and
    ``real_nodes`` real ones (kubelet + containerd; needs root and the Debian packages of
    ``hack/install-system-deps.sh``; one cluster per machine may have them).

    ``attached=True`` ties the processes' lifetime to this Python process
    (pytest); ``attached=False`` leaves them running after exit (``cluster up``).
    ``node_daemons=False``: no ``kruise daemon`` process per real node (the chart's DaemonSet
    runs instead, ``cluster up --install``).
    """

    def __init__(
        self,
        directory: Path | None = None,
        *,
        nodes: int = 3,
        real_nodes: int = 0,
        delays: StageDelays | None = None,
        attached: bool = False,
        node_daemons: bool = True,
        log: Any = None,
    ) -> None:
        self.directory = Path(directory) if directory else default_cluster_dir()
        self.nodes = nodes
        self.real_nodes = real_nodes
        self.delays = delays or StageDelays()
        self.attached = attached
        self.node_daemons = node_daemons
        self.state: ClusterState | None = None
        self.real: RealNodes | None = None
        self.undo_problems: list[str] = []
        self._procs: dict[str, subprocess.Popen[bytes]] = {}
        self._log = log or (lambda msg: None)

    # ------------------------------------------------------------------ start
    def start(self, manifests: Iterable[Path] = (), *, wait_for_host: float = 0.0) -> ClusterState:
        """Start every component, create the nodes, apply ``manifests``; returns the state.

        Real nodes are prepared (registry, images, containerd) while the control plane
        starts, and join once the API server is up. A cluster started with real nodes also
        gets working Services (``services``): its API server on the control-plane address
        (:data:`~kruise.core.localcluster.realnode.plan.CONTROL_PLANE_IP`), kube-proxy on the
        host, and EndpointSlice, ServiceAccount and root-CA controllers. Raises
        :class:`ClusterError` (with the failing component's log tail) on failure, after stopping
        what it started. ``wait_for_host``: seconds to wait while another cluster holds the
        machine's real nodes (test sessions sharing a machine take turns).
        """
        t0 = time.monotonic()
        if (self.directory / "state.json").exists():
            existing = ClusterState.load(self.directory)
            if any(pid_alive(p) for p in existing.pids.values()):
                raise ClusterRunningError(f"a cluster is already running in {self.directory}")
            LocalCluster.attach(self.directory).stop(remove=True)  # undoes a dead one's host changes
        self.directory.mkdir(parents=True, exist_ok=True)
        (self.directory / "logs").mkdir(exist_ok=True)
        bin_dir = find_bin_dir()
        shm = Path("/dev/shm")
        data_root = shm if shm.is_dir() and os.access(shm, os.W_OK) else self.directory
        etcd_data = tempfile.mkdtemp(prefix="kruise-etcd-", dir=data_root)
        self.state = ClusterState(
            directory=str(self.directory),
            kubeconfig=str(self.directory / "kubeconfig"),
            api_port=free_port(),
            etcd_port=free_port(),
            nodes=self.nodes,
            bin_dir=str(bin_dir),
            etcd_data=etcd_data,
            api_host=CONTROL_PLANE_IP if self.real_nodes else "127.0.0.1",
            services=self.real_nodes > 0,
            node_daemons=self.node_daemons,
        )
        self.real = self._real_nodes(self.state)
        pool = concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="real-nodes")
        prepared = None
        try:
            if self.real_nodes:
                # the control-plane address, before the API server binds it
                self.real.claim_host(wait_for_host=wait_for_host)
                prepared = pool.submit(self.real.prepare, self.real_nodes)
            self._write_configs()
            self._start_etcd()
            self._start_apiserver()
            self._start_controllers()
            self.create_nodes(self.nodes)
            if prepared is not None:
                plans = prepared.result()
                self._adopt_real_nodes()
                self._join(plans)
            self.kubectl("wait", "--for=condition=Ready", "node", "--all", "--timeout=60s")
            if self.state.services:  # pods are admitted once their namespace's ServiceAccount exists
                self.kubectl("wait", "--for=create", "serviceaccount/default", "--timeout=60s")
            self.kubectl("apply", "-f", "-", input=json.dumps(DEFAULT_STORAGE_CLASS))
            for manifest in manifests:
                self.apply(manifest)
        except BaseException:
            if prepared is not None:
                concurrent.futures.wait([prepared])
            self.stop(remove=False)
            raise
        finally:
            pool.shutdown(wait=True)
        self.state.startup_seconds = round(time.monotonic() - t0, 2)
        self.state.save()
        return self.state

    def _write_configs(self) -> None:
        assert self.state is not None
        d = self.directory
        extra = (self.state.api_host,) if self.state.api_host != "127.0.0.1" else ()
        write_pki(d / "pki", Path(self.state.kubeconfig), self.state.server, extra)
        scheduler_config = {
            "apiVersion": "kubescheduler.config.k8s.io/v1",
            "kind": "KubeSchedulerConfiguration",
            "clientConnection": {"kubeconfig": self.state.kubeconfig, "qps": 1000, "burst": 2000},
            "leaderElection": {"leaderElect": False},
        }
        (d / "scheduler.yaml").write_text(yaml.safe_dump(scheduler_config))
        write_stages(d / "kwok-stages.yaml", self.delays)

    def _spawn(self, name: str, args: Sequence[str]) -> None:
        assert self.state is not None
        argv = [str(Path(self.state.bin_dir) / name), *args]
        proc = spawn(argv, self.directory / "logs" / f"{name}.log", attached=self.attached)
        self._procs[name] = proc
        self.state.pids[name] = proc.pid
        self.state.save()

    def _start_etcd(self) -> None:
        assert self.state is not None
        self._spawn("etcd", etcd_args(self.state.etcd_data, self.state.etcd_port, free_port()))
        url = f"http://127.0.0.1:{self.state.etcd_port}/health"
        self._wait("etcd", lambda: http_ok(url, None), timeout=30, what="etcd to answer /health")

    def _start_apiserver(self) -> None:
        assert self.state is not None
        self._spawn(
            "kube-apiserver",
            apiserver_args(
                self.directory / "pki",
                self.state.etcd_port,
                self.state.api_port,
                host=self.state.api_host,
                services=self.state.services,
            ),
        )
        ctx = self.ssl_context()
        self._wait(
            "kube-apiserver",
            lambda: http_ok(f"{self.state.server}/readyz", ctx) if self.state else False,
            timeout=60,
            what="kube-apiserver /readyz",
        )

    def _start_controllers(self) -> None:
        assert self.state is not None
        kc = self.state.kubeconfig
        kcm = controller_manager_args(kc, free_port(), services=self.state.services)
        self._spawn("kube-controller-manager", kcm)
        self._spawn("kube-scheduler", scheduler_args(self.directory / "scheduler.yaml", kc, free_port()))
        self._spawn("kwok", kwok_args(kc, self.directory / "kwok-stages.yaml"))

    def _wait(self, name: str, probe: Any, *, timeout: float, what: str) -> None:
        log = self.directory / "logs" / f"{name}.log"
        wait_for(name, self._procs.get(name), probe, timeout=timeout, what=what, log=log, error=ClusterError)

    def log_tail(self, name: str, lines: int = 30) -> str:
        return log_tail(self.directory / "logs" / f"{name}.log", lines)

    # ------------------------------------------------------------------ use
    def ssl_context(self) -> ssl.SSLContext:
        """A client TLS context trusting the local CA and presenting the admin cert."""
        pki = self.directory / "pki"
        ctx = ssl.create_default_context(cafile=str(pki / "ca.crt"))
        ctx.load_cert_chain(str(pki / "admin.crt"), str(pki / "admin.key"))
        return ctx

    def kubectl(self, *args: str, input: str | None = None, check: bool = True) -> str:
        """Run the cluster's kubectl against it; returns stdout. Raises ClusterError on failure."""
        assert self.state is not None
        proc = subprocess.run(
            [str(Path(self.state.bin_dir) / "kubectl"), f"--kubeconfig={self.state.kubeconfig}", *args],
            input=input,
            capture_output=True,
            text=True,
        )
        if check and proc.returncode != 0:
            raise ClusterError(f"kubectl {' '.join(args)} failed: {proc.stderr.strip()}")
        return proc.stdout

    def apply(self, manifest: Path) -> None:
        """Server-side apply ``manifest`` (file or directory); waits for CRDs to be Established."""
        self.kubectl(
            "apply",
            "--server-side",
            "--force-conflicts",
            "--field-manager=kruise-harness",
            "-f",
            str(manifest),
        )
        if "CustomResourceDefinition" in _kinds(manifest):
            self.kubectl("wait", "--for=condition=Established", "crd", "--all", "--timeout=60s")

    def create_nodes(self, count: int, start: int = 0) -> list[str]:
        """Create ``count`` fake nodes ``kwok-node-<i>`` that KWOK manages."""
        names = [f"{NODE_PREFIX}{i}" for i in range(start, start + count)]
        docs = [fake_node(name) for name in names]
        self.kubectl("create", "-f", "-", input=yaml.safe_dump_all(docs))
        return names

    # ------------------------------------------------------------------ real nodes
    def add_real_nodes(self, count: int = 1, *, wait_for_host: float = 0.0) -> list[str]:
        """Start ``count`` more real nodes in this running cluster; returns their names.

        ``wait_for_host``: seconds to wait while another cluster holds the machine's real
        nodes (test sessions sharing a machine). Raises
        :class:`~kruise.core.localcluster.errors.RealNodeError` (the cluster keeps running
        without real nodes: every real node is stopped again, those started before too, since
        the machine-wide changes are undone as one)."""
        assert self.state is not None, "start() or attach() first"
        real = self._real_nodes(self.state)
        try:
            plans = real.prepare(count, wait_for_host=wait_for_host)
            self._adopt_real_nodes()
            self._join(plans)
        except BaseException:
            self.remove_real_nodes()
            raise
        return [p.name for p in plans]

    def remove_real_nodes(self) -> None:
        """Stop every real node, undo its host changes, and delete its Node and pods."""
        assert self.state is not None
        real = self._real_nodes(self.state)
        names = [p.name for p in real.plans()]
        self.undo_problems = real.stop()
        for name in names:
            self.kubectl(
                "delete", "pods", "--all-namespaces", f"--field-selector=spec.nodeName={name}",
                "--force", "--grace-period=0", "--wait=false", check=False,
            )  # fmt: skip
            self.kubectl("delete", "node", name, "--ignore-not-found", "--wait=false", check=False)
        self._adopt_real_nodes()

    def real_node_plans(self) -> list[NodePlan]:
        """Names, addresses and paths of the running real nodes."""
        assert self.state is not None
        return self._real_nodes(self.state).plans()

    def crictl(self, node: str, *args: str) -> str:
        """Run crictl against real node ``node``'s containerd; returns stdout."""
        assert self.state is not None
        real = self._real_nodes(self.state)
        plan = next((p for p in real.plans() if p.name == node), None)
        if plan is None:
            raise ClusterError(f"no real node {node!r} in {self.directory}")
        return real.crictl(plan, *args)

    def push_image(self, spec: ImageSpec) -> str:
        """Build ``spec`` and push it to the real nodes' registry (as ``spec.ref``); returns its
        manifest digest there. Needs running real nodes."""
        assert self.state is not None
        return self._real_nodes(self.state).push_image(spec)

    def registry_addr(self) -> str:
        """``127.0.0.1:<port>`` of the real nodes' registry (plain HTTP); pods name its images
        ``kruise.local/<repository>:<tag>``. Needs running real nodes."""
        assert self.state is not None
        return self._real_nodes(self.state).registry

    def daemon_addr(self, node: str) -> str:
        """``127.0.0.1:<port>`` of real node ``node``'s kruise-daemon (``/healthz``, ``/metrics``)."""
        assert self.state is not None
        return self._real_nodes(self.state).daemon_addr(node)

    def node_ready(self, name: str) -> bool:
        """True when Node ``name`` exists and its Ready condition is True."""
        assert self.state is not None
        try:
            with urllib.request.urlopen(
                f"{self.state.server}/api/v1/nodes/{name}", timeout=2, context=self.ssl_context()
            ) as resp:
                node = json.loads(resp.read())
        except (OSError, urllib.error.HTTPError, ValueError):
            return False
        conditions = node.get("status", {}).get("conditions") or []
        return any(c.get("type") == "Ready" and c.get("status") == "True" for c in conditions)

    def _real_nodes(self, state: ClusterState) -> RealNodes:
        if self.real is None:
            pids = {k: v for k, v in state.pids.items() if k == REGISTRY or "/" in k}
            self.real = RealNodes(
                self.directory,
                pids,
                attached=self.attached,
                registry_port=state.registry_port,
                count=state.real_nodes,
                services=state.services,
                daemons=state.node_daemons,
                log=self._log,
            )
            self.real.daemon_ports = dict(state.daemon_ports)
        return self.real

    def _join(self, plans: list[NodePlan]) -> None:
        assert self.state is not None and self.real is not None
        self.real.join(plans, self.state.server, self.directory / "pki", self.node_ready)
        self._adopt_real_nodes()

    def _adopt_real_nodes(self) -> None:
        """Copy the real nodes' processes and numbers into the saved state."""
        assert self.state is not None and self.real is not None
        self.state.pids = {k: v for k, v in self.state.pids.items() if k in STOP_ORDER}
        self.state.pids.update(self.real.pids)
        self.state.real_nodes = self.real.count
        self.state.registry_port = self.real.registry_port if self.real.count else 0
        self.state.real_node_timings = dict(self.real.timings)
        self.state.daemon_ports = dict(self.real.daemon_ports)
        self.state.save()

    def restart_apiserver(self, *, down_seconds: float = 0.0, timeout: float = 10.0) -> float:
        """Stop kube-apiserver (SIGTERM, then SIGKILL), wait ``down_seconds``, start it again on the
        same port and certificates, and wait for ``/readyz``; returns the seconds it was down.

        For fault tests: clients see their connections drop and the server come back.
        """
        assert self.state is not None
        started = time.monotonic()
        pid = self.state.pids["kube-apiserver"]
        terminate(pid, self._procs.get("kube-apiserver"), timeout)
        time.sleep(down_seconds)
        self._start_apiserver()
        return time.monotonic() - started

    # ------------------------------------------------------------------ stop
    def stop(self, *, remove: bool = True, timeout: float = 10.0) -> None:
        """Stop the real nodes (undoing their host changes), then every control-plane
        component (SIGTERM, then SIGKILL) in reverse start order."""
        state = self.state
        if state is None:
            with contextlib.suppress(ClusterError):
                state = ClusterState.load(self.directory)
        if state is not None:
            real = self._real_nodes(state)
            if real.count or real.pids or real.services:
                self.undo_problems = real.stop(timeout)
            for name in STOP_ORDER:
                pid = state.pids.get(name)
                if pid is not None:
                    terminate(pid, self._procs.get(name), timeout)
            shutil.rmtree(state.etcd_data, ignore_errors=True)
        if remove:
            shutil.rmtree(self.directory, ignore_errors=True)
        self.state = None
        self.real = None

    @classmethod
    def attach(cls, directory: Path | None = None) -> LocalCluster:
        """The cluster recorded in ``directory`` (default :func:`default_cluster_dir`)."""
        cluster = cls(directory)
        cluster.state = ClusterState.load(cluster.directory)
        return cluster

    def running(self) -> bool:
        return self.state is not None and all(pid_alive(p) for p in self.state.pids.values())


def _kinds(manifest: Path) -> set[str]:
    files = sorted(manifest.glob("*.yaml")) if manifest.is_dir() else [manifest]
    kinds: set[str] = set()
    for f in files:
        for doc in yaml.safe_load_all(f.read_text()):
            if isinstance(doc, dict) and "kind" in doc:
                kinds.add(str(doc["kind"]))
    return kinds
