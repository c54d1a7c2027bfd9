"""Start and stop a local control plane: etcd, kube-apiserver,
kube-controller-manager, kube-scheduler and KWOK with N fake nodes.

Everything listens on loopback ports picked at start. The state (ports, pids,
kubeconfig path) is written to ``<dir>/state.json`` so a later process
(``kruise cluster down``/``env``) can find and stop it. Command lines follow
``shared/reference/control-plane-harness.md`` §2-§5 (envtest and kwokctl's
choices, with admission webhooks left on).
"""

from __future__ import annotations

import base64
import contextlib
import ctypes
import json
import os
import shutil
import signal
import socket
import ssl
import subprocess
import tempfile
import time
import urllib.request
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import yaml

from kruise.core.certs import (
    CertificateAuthority,
    cert_pem,
    key_pem,
    write_service_account_key,
)
from kruise.core.localcluster.binaries import find_bin_dir
from kruise.core.localcluster.stages import StageDelays, write_stages

SERVICE_CIDR = "10.96.0.0/16"
FIRST_SERVICE_IP = "10.96.0.1"
POD_CIDR = "10.244.0.0/16"
NODE_PREFIX = "kwok-node-"
STOP_ORDER = ("kwok", "kube-scheduler", "kube-controller-manager", "kube-apiserver", "etcd")
KCM_CONTROLLERS = (
    "garbage-collector-controller",
    "namespace-controller",
    "deployment-controller",
    "replicaset-controller",
)


class ClusterError(RuntimeError):
    """The local control plane failed to start or is not running."""


def default_cluster_dir() -> Path:
    """``$KRUISE_CLUSTER_DIR`` or ``~/.local/state/kruise/cluster``."""
    env = os.environ.get("KRUISE_CLUSTER_DIR")
    if env:
        return Path(env)
    state_home = Path(os.environ.get("XDG_STATE_HOME", Path.home() / ".local" / "state"))
    return state_home / "kruise" / "cluster"


def free_port() -> int:
    """A TCP port on 127.0.0.1 that is free right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class ClusterState:
    """What ``state.json`` records about a running control plane."""

    directory: str
    kubeconfig: str
    api_port: int
    etcd_port: int
    nodes: int
    bin_dir: str
    etcd_data: str
    pids: dict[str, int] = field(default_factory=dict)
    startup_seconds: float = 0.0

    @property
    def server(self) -> str:
        return f"https://127.0.0.1:{self.api_port}"

    def save(self) -> None:
        Path(self.directory, "state.json").write_text(json.dumps(asdict(self), indent=2))

    @classmethod
    def load(cls, directory: Path) -> ClusterState:
        path = directory / "state.json"
        if not path.exists():
            raise ClusterError(f"no local cluster in {directory} (run `kruise cluster up`)")
        return cls(**json.loads(path.read_text()))


def _die_with_parent() -> None:  # pragma: no cover - runs in the child
    """preexec_fn: SIGKILL this child when the parent process dies (Linux prctl)."""
    libc = ctypes.CDLL("libc.so.6", use_errno=True)
    libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:  # a zombie child is not alive
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(")")[-1].split()[0] != "Z"
    except OSError:
        return False


class LocalCluster:
    """A local control plane rooted at ``directory``.

    ``attached=True`` ties the processes' lifetime to this Python process
    (pytest); ``attached=False`` leaves them running after exit (``cluster up``).
    """

    def __init__(
        self,
        directory: Path | None = None,
        *,
        nodes: int = 3,
        delays: StageDelays | None = None,
        attached: bool = False,
        log: Any = None,
    ) -> None:
        self.directory = Path(directory) if directory else default_cluster_dir()
        self.nodes = nodes
        self.delays = delays or StageDelays()
        self.attached = attached
        self.state: ClusterState | None = None
        self._procs: dict[str, subprocess.Popen[bytes]] = {}
        self._log = log or (lambda msg: None)

    # ------------------------------------------------------------------ start
    def start(self, manifests: Iterable[Path] = ()) -> ClusterState:
        """Start every component, create the nodes, apply ``manifests``; returns the state.

        Raises :class:`ClusterError` (with the failing component's log tail) on failure.
        """
        t0 = time.monotonic()
        if (self.directory / "state.json").exists():
            existing = ClusterState.load(self.directory)
            if any(_pid_alive(p) for p in existing.pids.values()):
                raise ClusterError(f"a cluster is already running in {self.directory}")
            shutil.rmtree(self.directory)
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
        )
        try:
            self._write_pki_and_configs()
            self._start_etcd()
            self._start_apiserver()
            self._start_controllers()
            self.create_nodes(self.nodes)
            self.kubectl("wait", "--for=condition=Ready", "node", "--all", "--timeout=60s")
            for manifest in manifests:
                self.apply(manifest)
        except BaseException:
            self.stop(remove=False)
            raise
        self.state.startup_seconds = round(time.monotonic() - t0, 2)
        self.state.save()
        return self.state

    def _write_pki_and_configs(self) -> None:
        assert self.state is not None
        d = self.directory
        pki = d / "pki"
        pki.mkdir(exist_ok=True)
        ca = CertificateAuthority.create("kruise-local-ca")
        (pki / "ca.crt").write_bytes(cert_pem(ca.cert))
        (pki / "ca.key").write_bytes(key_pem(ca.key))
        ca.write_leaf(
            pki,
            "apiserver",
            common_name="kube-apiserver",
            server=True,
            dns_names=(
                "localhost",
                "kubernetes",
                "kubernetes.default",
                "kubernetes.default.svc",
                "kubernetes.default.svc.cluster.local",
            ),
            ip_addresses=("127.0.0.1", FIRST_SERVICE_IP),
        )
        admin_crt, admin_key = ca.write_leaf(
            pki, "admin", common_name="admin", organization="system:masters", client=True
        )
        write_service_account_key(pki / "sa.key")
        kubeconfig = {
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [
                {
                    "name": "kruise-local",
                    "cluster": {
                        "server": self.state.server,
                        "certificate-authority-data": _b64(pki / "ca.crt"),
                    },
                }
            ],
            "users": [
                {
                    "name": "admin",
                    "user": {
                        "client-certificate-data": _b64(admin_crt),
                        "client-key-data": _b64(admin_key),
                    },
                }
            ],
            "contexts": [{"name": "kruise-local", "context": {"cluster": "kruise-local", "user": "admin"}}],
            "current-context": "kruise-local",
        }
        Path(self.state.kubeconfig).write_text(yaml.safe_dump(kubeconfig, sort_keys=False))
        Path(self.state.kubeconfig).chmod(0o600)
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
        logf = open(self.directory / "logs" / f"{name}.log", "ab")  # noqa: SIM115 - owned by the child
        proc = subprocess.Popen(
            [str(Path(self.state.bin_dir) / name), *args],
            stdout=logf,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
            preexec_fn=_die_with_parent if self.attached else None,
        )
        logf.close()
        self._procs[name] = proc
        self.state.pids[name] = proc.pid
        self.state.save()

    def _start_etcd(self) -> None:
        assert self.state is not None
        peer = free_port()
        url = f"http://127.0.0.1:{self.state.etcd_port}"
        self._spawn(
            "etcd",
            [
                "--name=node0",
                f"--data-dir={self.state.etcd_data}",
                f"--listen-client-urls={url}",
                f"--advertise-client-urls={url}",
                f"--listen-peer-urls=http://127.0.0.1:{peer}",
                f"--initial-advertise-peer-urls=http://127.0.0.1:{peer}",
                f"--initial-cluster=node0=http://127.0.0.1:{peer}",
                "--unsafe-no-fsync=true",
                "--quota-backend-bytes=8589934592",
                "--auto-compaction-retention=1",
                "--log-level=warn",
            ],
        )
        self._wait("etcd", lambda: _http_ok(f"{url}/health", None), timeout=30, what="etcd to answer /health")

    def _start_apiserver(self) -> None:
        assert self.state is not None
        pki = self.directory / "pki"
        self._spawn(
            "kube-apiserver",
            [
                f"--etcd-servers=http://127.0.0.1:{self.state.etcd_port}",
                "--advertise-address=127.0.0.1",
                "--bind-address=127.0.0.1",
                f"--secure-port={self.state.api_port}",
                f"--tls-cert-file={pki / 'apiserver.crt'}",
                f"--tls-private-key-file={pki / 'apiserver.key'}",
                f"--client-ca-file={pki / 'ca.crt'}",
                "--service-account-issuer=https://kubernetes.default.svc.cluster.local",
                f"--service-account-key-file={pki / 'sa.key'}",
                f"--service-account-signing-key-file={pki / 'sa.key'}",
                f"--service-cluster-ip-range={SERVICE_CIDR}",
                "--authorization-mode=Node,RBAC",
                # TaintNodesByCondition would add node.kubernetes.io/not-ready on create, which only the
                # node-lifecycle controller (left out on purpose) removes.
                "--disable-admission-plugins=ServiceAccount,TaintNodesByCondition",
                "--allow-privileged=true",
                "--endpoint-reconciler-type=none",
                # no client-side throttling of our own tests and benchmarks (all three together)
                "--max-requests-inflight=0",
                "--max-mutating-requests-inflight=0",
                "--enable-priority-and-fairness=false",
                "--profiling=false",
                "--v=1",
            ],
        )
        ctx = self.ssl_context()
        self._wait(
            "kube-apiserver",
            lambda: _http_ok(f"{self.state.server}/readyz", ctx) if self.state else False,
            timeout=60,
            what="kube-apiserver /readyz",
        )

    def _start_controllers(self) -> None:
        assert self.state is not None
        kc = self.state.kubeconfig
        common = [
            "--bind-address=127.0.0.1",
            "--authorization-always-allow-paths=/healthz,/readyz,/livez,/metrics",
        ]
        self._spawn(
            "kube-controller-manager",
            [
                f"--kubeconfig={kc}",
                f"--authentication-kubeconfig={kc}",
                f"--authorization-kubeconfig={kc}",
                "--leader-elect=false",
                f"--controllers={','.join(KCM_CONTROLLERS)}",
                f"--secure-port={free_port()}",
                "--kube-api-qps=1000",
                "--kube-api-burst=2000",
                "--v=1",
                *common,
            ],
        )
        self._spawn(
            "kube-scheduler",
            [
                f"--config={self.directory / 'scheduler.yaml'}",
                f"--authentication-kubeconfig={kc}",
                f"--authorization-kubeconfig={kc}",
                f"--secure-port={free_port()}",
                "--v=1",
                *common,
            ],
        )
        self._spawn(
            "kwok",
            [
                f"--kubeconfig={kc}",
                f"--config={self.directory / 'kwok-stages.yaml'}",
                "--manage-all-nodes=true",
                f"--cidr={POD_CIDR}",
                "--node-ip=10.240.0.1",
                "--node-lease-duration-seconds=40",
                "--v=WARN",
            ],
        )

    def _wait(self, name: str, probe: Any, *, timeout: float, what: str) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            proc = self._procs.get(name)
            if proc is not None and proc.poll() is not None:
                raise ClusterError(f"{name} exited with {proc.returncode}:\n{self.log_tail(name)}")
            if probe():
                return
            time.sleep(0.1)
        raise ClusterError(f"timed out after {timeout}s waiting for {what}:\n{self.log_tail(name)}")

    def log_tail(self, name: str, lines: int = 30) -> str:
        path = self.directory / "logs" / f"{name}.log"
        if not path.exists():
            return "(no log)"
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])

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
        docs = [_node(name) for name in names]
        self.kubectl("create", "-f", "-", input=yaml.safe_dump_all(docs))
        return names

    def restart_apiserver(self, *, down_seconds: float = 0.0, timeout: float = 10.0) -> float:
        """Stop kube-apiserver (SIGTERM, then SIGKILL), wait ``down_seconds``, start it again on the
        same port and certificates, and wait for ``/readyz``; returns the seconds it was down.

        For fault tests: clients see their connections drop and the server come back.
        """
        assert self.state is not None
        started = time.monotonic()
        pid = self.state.pids["kube-apiserver"]
        _terminate(pid, self._procs.get("kube-apiserver"), timeout)
        time.sleep(down_seconds)
        self._start_apiserver()
        return time.monotonic() - started

    # ------------------------------------------------------------------ stop
    def stop(self, *, remove: bool = True, timeout: float = 10.0) -> None:
        """Stop all components (SIGTERM, then SIGKILL) in reverse start order."""
        state = self.state
        if state is None:
            with contextlib.suppress(ClusterError):
                state = ClusterState.load(self.directory)
        if state is not None:
            for name in STOP_ORDER:
                pid = state.pids.get(name)
                if pid is not None:
                    _terminate(pid, self._procs.get(name), timeout)
            shutil.rmtree(state.etcd_data, ignore_errors=True)
        if remove:
            shutil.rmtree(self.directory, ignore_errors=True)
        self.state = None

    @classmethod
    def attach(cls, directory: Path | None = None) -> LocalCluster:
        """The cluster recorded in ``directory`` (default :func:`default_cluster_dir`)."""
        cluster = cls(directory)
        cluster.state = ClusterState.load(cluster.directory)
        return cluster

    def running(self) -> bool:
        return self.state is not None and all(_pid_alive(p) for p in self.state.pids.values())


def _b64(path: Path) -> str:
    return base64.b64encode(path.read_bytes()).decode()


def _http_ok(url: str, ctx: ssl.SSLContext | None) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=2, context=ctx) as resp:
            return bool(resp.status == 200)
    except OSError:
        return False


def _kinds(manifest: Path) -> set[str]:
    files = sorted(manifest.glob("*.yaml")) if manifest.is_dir() else [manifest]
    kinds: set[str] = set()
    for f in files:
        for doc in yaml.safe_load_all(f.read_text()):
            if isinstance(doc, dict) and "kind" in doc:
                kinds.add(str(doc["kind"]))
    return kinds


def _node(name: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": name,
            "annotations": {"node.alpha.kubernetes.io/ttl": "0", "kwok.x-k8s.io/node": "fake"},
            "labels": {
                "beta.kubernetes.io/arch": "amd64",
                "beta.kubernetes.io/os": "linux",
                "kubernetes.io/arch": "amd64",
                "kubernetes.io/hostname": name,
                "kubernetes.io/os": "linux",
                "kubernetes.io/role": "agent",
                "node-role.kubernetes.io/agent": "",
                "type": "kwok",
            },
        },
        "spec": {},
        "status": {
            "allocatable": {"cpu": "1000", "memory": "1Ti", "pods": "1000000"},
            "capacity": {"cpu": "1000", "memory": "1Ti", "pods": "1000000"},
        },
    }


def _terminate(pid: int, proc: subprocess.Popen[bytes] | None, timeout: float) -> None:
    if not _pid_alive(pid):
        if proc is not None:
            proc.poll()
        return
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc is not None:
            if proc.poll() is not None:
                return
        elif not _pid_alive(pid):
            return
        time.sleep(0.05)
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGKILL)
    if proc is not None:
        proc.wait(5)
