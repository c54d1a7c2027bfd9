"""Start and stop the real nodes of a local cluster: a registry, and per node a containerd,
a kubelet and a kruise-daemon (recipe: ``shared/reference/real-kubelet.md``).

:meth:`RealNodes.prepare` needs no API server (host lock, bridges, cgroup roots, the
registry and its images, the containerds), so the cluster runs it beside the control
plane's start; :meth:`RealNodes.join` then starts the kubelets, waits for their Nodes to be
Ready and starts a ``kruise daemon`` per node against that node's containerd, as the chart's
DaemonSet would. With ``services`` (a cluster started with real nodes) the host is claimed
first (:meth:`RealNodes.claim_host`: the control-plane address the API server then binds),
the bridges forward and, once the first node is Ready, kube-proxy runs on the host
(:mod:`~kruise.core.localcluster.realnode.kubeproxy`). :meth:`RealNodes.stop` stops
kube-proxy, daemons and kubelets, removes every pod sandbox through CRI, stops containerd and
the registry (each by PID) and undoes the host changes
(:mod:`kruise.core.localcluster.realnode.host`).
"""

from __future__ import annotations

import functools
import json
import os
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

from kruise.core.certs import CertificateAuthority
from kruise.core.localcluster.binaries import REAL_NODE as REAL_NODE_BINARIES
from kruise.core.localcluster.binaries import SYSTEM, find_bin_dir, missing_system_tools
from kruise.core.localcluster.components import SERVICE_CIDR
from kruise.core.localcluster.errors import RealNodeError
from kruise.core.localcluster.processes import free_port, http_ok, pid_alive, spawn, terminate, wait_for
from kruise.core.localcluster.realnode import host, kubeproxy, mounts, network, registry
from kruise.core.localcluster.realnode.configs import (
    kubelet_config,
    node_kubeconfig,
    registry_config,
    write_kube_proxy_files,
    write_runtime_files,
)
from kruise.core.localcluster.realnode.images import ImageSpec, catalogue, write_oci_layout
from kruise.core.localcluster.realnode.plan import LABEL, NodePlan, plan_nodes, run_dir_for

PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
REGISTRY = "registry"
KUBE_PROXY = "kube-proxy/host"
NodeReady = Callable[[str], bool]


def containerd_key(plan: NodePlan) -> str:
    return f"containerd/{plan.name}"


def kubelet_key(plan: NodePlan) -> str:
    return f"kubelet/{plan.name}"


def daemon_key(plan: NodePlan) -> str:
    return f"daemon/{plan.name}"


def daemon_command() -> list[str] | None:
    """The ``kruise`` console script installed beside this interpreter (``kruise daemon`` runs
    each real node's kruise-daemon, as the chart's DaemonSet would), or None without it."""
    script = Path(sys.executable).parent / "kruise"
    return [str(script)] if script.exists() else None


def answers(url: str) -> bool:
    """True when an HTTP server answers ``url`` at all (any status)."""
    try:
        with urllib.request.urlopen(url, timeout=2):
            return True
    except urllib.error.HTTPError:
        return True
    except OSError:
        return False


class RealNodes:
    """The real nodes of the cluster in ``cluster_dir``; ``pids`` is the cluster's process
    table (shared with the control plane, saved by the caller)."""

    def __init__(
        self,
        cluster_dir: Path,
        pids: dict[str, int],
        *,
        attached: bool,
        registry_port: int = 0,
        count: int = 0,
        services: bool = False,
        daemons: bool = True,
        log: Callable[[str], None] = lambda msg: None,
    ) -> None:
        self.cluster_dir = cluster_dir
        self.pids = pids
        self.attached = attached
        self.registry_port = registry_port
        self.count = count
        self.services = services
        self.daemons = daemons
        self.timings: dict[str, float] = {}
        self.log = log
        self._procs: dict[str, subprocess.Popen[bytes]] = {}
        self._bin_dir: Path | None = None
        self.daemon_ports: dict[str, int] = {}

    @property
    def registry(self) -> str:
        return f"127.0.0.1:{self.registry_port}"

    def plans(self) -> list[NodePlan]:
        return plan_nodes(self.cluster_dir, self.count)

    def log_path(self, key: str) -> Path:
        return self.cluster_dir / "logs" / f"{key.replace('/', '-')}.log"

    # ------------------------------------------------------------------ start
    def claim_host(self, *, wait_for_host: float = 0.0) -> None:
        """Take the machine for this cluster's real nodes before its API server starts and, with
        ``services``, make and record the Service plumbing that needs no node yet
        (:mod:`~kruise.core.localcluster.realnode.network`: the control-plane address on ``lo``,
        ``bridge-nf-call-iptables``). Raises :class:`RealNodeError`."""
        self._bin_dir = self._bin_dir or self._find_binaries()
        record = host.acquire_waiting(
            self.cluster_dir, run_dir_for(self.cluster_dir), teardown_stale, wait=wait_for_host, log=self.log
        )
        if self.services:
            network.claim_for_services(record, self._bin_dir / "kube-proxy")

    def _find_binaries(self) -> Path:
        try:
            return find_bin_dir(names=REAL_NODE_BINARIES)
        except Exception as err:
            raise RealNodeError(str(err)) from err

    def prepare(self, count: int, *, wait_for_host: float = 0.0) -> list[NodePlan]:
        """Everything but the kubelets for ``count`` more nodes; returns their plans.

        Raises :class:`RealNodeError` (missing packages or binaries, not root, another
        cluster's real nodes still there after ``wait_for_host`` seconds, a component that
        does not start)."""
        t0 = time.monotonic()
        missing = missing_system_tools()
        if missing:
            raise RealNodeError(
                f"real nodes need {', '.join(missing)} ({', '.join(SYSTEM[m] for m in missing)}): "
                "run hack/install-system-deps.sh"
            )
        self._bin_dir = self._bin_dir or self._find_binaries()
        new = plan_nodes(self.cluster_dir, count, start=self.count + 1)
        record = host.acquire_waiting(
            self.cluster_dir, run_dir_for(self.cluster_dir), teardown_stale, wait=wait_for_host, log=self.log
        )
        record.nodes = sorted({*record.nodes, *(p.index for p in new)})
        record.save()
        self.count += count
        run_dir = run_dir_for(self.cluster_dir)
        run_dir.mkdir(parents=True, exist_ok=True)
        if REGISTRY not in self.pids:
            self._start_registry()
        for plan in new:
            host.create_bridge(plan)
            if self.services:
                network.enable_bridge_forwarding(plan)
                if plan.index == 1:
                    network.route_service_range(plan, SERVICE_CIDR)
            mounts.ensure_cgroup_root(plan.cgroup_root)
            write_runtime_files(plan, self.registry)
            self._spawn(
                containerd_key(plan), ["/usr/bin/containerd", "--config", str(plan.containerd_config)]
            )
        for plan in new:
            self._wait(containerd_key(plan), functools.partial(self._cri_ready, plan), 30, "containerd's CRI")
        self._record_pids(record)
        self.timings["prepare_seconds"] = round(time.monotonic() - t0, 2)
        return new

    def join(self, plans: list[NodePlan], server: str, pki: Path, node_ready: NodeReady) -> None:
        """Start a kubelet per plan, authenticated by a certificate of the CA in ``pki``,
        and wait until ``node_ready(name)`` holds for each."""
        t0 = time.monotonic()
        ca = CertificateAuthority.load(pki / "ca.crt", pki / "ca.key")
        assert self._bin_dir is not None, "prepare() first"
        for plan in plans:  # one after another: they share the device-plugin socket
            before = host.socket_identity(host.DEVICE_PLUGIN_SOCKET)
            self._spawn(kubelet_key(plan), self._kubelet_argv(plan, server, pki, ca))
            made = functools.partial(host.made_again, host.DEVICE_PLUGIN_SOCKET, before)
            self._wait(kubelet_key(plan), made, 60, f"{plan.name}'s device-plugin socket")
        for plan in plans:
            self._wait(kubelet_key(plan), functools.partial(node_ready, plan.name), 60, f"{plan.name} Ready")
        self.timings["node_ready_seconds"] = round(time.monotonic() - t0, 2)
        if self.daemons:
            self._start_daemons(plans)
        if self.services and KUBE_PROXY not in self.pids:
            self._start_kube_proxy(server, pki, ca)
        self._record_pids(host.load_record())

    def _start_kube_proxy(self, server: str, pki: Path, ca: CertificateAuthority) -> None:
        """kube-proxy on the host as ``system:kube-proxy``, for the first real node's InternalIP;
        waits for its first sync of the rules (``/healthz`` 200)."""
        t0 = time.monotonic()
        config, healthz = write_kube_proxy_files(
            self.cluster_dir / "kube-proxy", server, pki / "ca.crt", ca, self.plans()[0].name
        )
        assert self._bin_dir is not None
        self._spawn(KUBE_PROXY, kubeproxy.kube_proxy_argv(self._bin_dir / "kube-proxy", config))
        url = kubeproxy.healthz_url(healthz)
        self._wait(KUBE_PROXY, lambda: http_ok(url, None), 60, "kube-proxy's first sync (/healthz)")
        self.timings["kube_proxy_ready_seconds"] = round(time.monotonic() - t0, 2)

    def _start_daemons(self, plans: list[NodePlan]) -> None:
        """One ``kruise daemon`` per node against the node's containerd, with the cluster's
        admin kubeconfig, serving ``/healthz`` and ``/metrics`` on a free loopback port
        (:meth:`daemon_addr`). It lists its NodeImage until the CRDs are installed."""
        command = daemon_command()
        if command is None:
            self.log("no kruise console script beside this Python: real nodes run without kruise-daemon")
            return
        for plan in plans:
            port = free_port()
            self.daemon_ports[plan.name] = port
            argv = [
                *command, "daemon", f"--kubeconfig={self.cluster_dir / 'kubeconfig'}",
                f"--socket-file={plan.containerd_socket}", f"--addr=127.0.0.1:{port}",
            ]  # fmt: skip
            self._spawn(daemon_key(plan), argv, env={"NODE_NAME": plan.name})
        for plan in plans:
            url = f"http://{self.daemon_addr(plan.name)}/healthz"
            self._wait(daemon_key(plan), functools.partial(answers, url), 30, "kruise-daemon's /healthz")

    def daemon_addr(self, node: str) -> str:
        """``127.0.0.1:<port>`` of node ``node``'s kruise-daemon (``/healthz``, ``/metrics``)."""
        return f"127.0.0.1:{self.daemon_ports[node]}"

    def _kubelet_argv(self, plan: NodePlan, server: str, pki: Path, ca: CertificateAuthority) -> list[str]:
        d = plan.dir / "kubelet-config"
        d.mkdir(parents=True, exist_ok=True)
        client_crt, client_key = ca.write_leaf(
            d, "node-client", common_name=f"system:node:{plan.name}", organization="system:nodes", client=True
        )
        serving_crt, serving_key = ca.write_leaf(
            d,
            "serving",
            common_name=plan.name,
            server=True,
            dns_names=(plan.name,),
            ip_addresses=(plan.node_ip,),
        )
        (d / "kubeconfig").write_text(
            yaml.safe_dump(node_kubeconfig(server, pki / "ca.crt", client_crt, client_key))
        )
        config = kubelet_config(plan, ca_file=pki / "ca.crt", cert_file=serving_crt, key_file=serving_key)
        (d / "config.yaml").write_text(yaml.safe_dump(config, sort_keys=False))
        assert self._bin_dir is not None
        return [
            str(self._bin_dir / "kubelet"),
            f"--config={d / 'config.yaml'}",
            f"--kubeconfig={d / 'kubeconfig'}",
            f"--root-dir={plan.kubelet_dir}",
            f"--hostname-override={plan.name}",
            f"--node-ip={plan.node_ip}",
            f"--node-labels={LABEL[0]}={LABEL[1]}",
            "--v=1",
        ]

    def _start_registry(self) -> None:
        self.registry_port = free_port()
        root = self.cluster_dir / "registry"
        root.mkdir(parents=True, exist_ok=True)
        config = root / "config.yaml"
        config.write_text(yaml.safe_dump(registry_config(root / "storage", self.registry_port)))
        self._spawn(REGISTRY, ["/usr/bin/docker-registry", "serve", str(config)])
        self._wait(REGISTRY, lambda: http_ok(f"http://{self.registry}/v2/", None), 30, "the registry")
        self.push_images()

    def push_images(self) -> dict[str, str]:
        """:func:`~kruise.core.localcluster.realnode.registry.push_catalogue` to this cluster's
        registry; returns ``{ref: digest in the registry}``."""
        assert self._bin_dir is not None
        busybox_binary = Path(SYSTEM["busybox (static)"]).read_bytes()
        specs = catalogue((self._bin_dir / "pause").read_bytes(), busybox_binary)
        digests = registry.push_catalogue(specs, self.cluster_dir / "images", self.registry)
        (self.cluster_dir / "images.json").write_text(json.dumps(digests, indent=2))
        return digests

    def push_image(self, spec: ImageSpec, *, layout: Path | None = None) -> str:
        """Build ``spec`` into the OCI layout ``layout`` (default ``<cluster>/images``) and push it
        to the local registry as ``spec.ref`` (``kruise.local/<repository>:<tag>``); returns the
        registry's manifest digest. Raises :class:`RealNodeError`."""
        layout = layout or self.cluster_dir / "images"
        write_oci_layout(spec, layout)
        return registry.copy_to_registry(spec, layout, self.registry)

    # ------------------------------------------------------------------ use
    def crictl(self, plan: NodePlan, *args: str, timeout: float = 60) -> str:
        """Run crictl against ``plan``'s containerd; returns stdout, raises RealNodeError."""
        bin_dir = self._bin_dir or find_bin_dir(names=REAL_NODE_BINARIES, build=False)
        proc = subprocess.run(
            [
                str(bin_dir / "crictl"),
                f"--config={plan.crictl_config}",
                *args,
            ],
            capture_output=True,
            text=True,
            timeout=timeout,
        )
        if proc.returncode != 0:
            raise RealNodeError(f"crictl {' '.join(args)} on {plan.name}: {proc.stderr.strip()}")
        return proc.stdout

    def crictl_json(self, plan: NodePlan, *args: str) -> Any:
        return json.loads(self.crictl(plan, *args, "-o", "json"))

    def _cri_ready(self, plan: NodePlan) -> bool:
        if not plan.containerd_socket.exists():
            return False
        try:
            self.crictl(plan, "version", timeout=10)
        except (RealNodeError, subprocess.TimeoutExpired):
            return False
        return True

    # ------------------------------------------------------------------ stop
    def stop(self, timeout: float = 10.0) -> list[str]:
        """Stop every real-node process and undo the host changes; returns what failed. Holds the
        host lock throughout (:func:`host.locked`): once the processes are gone the record looks
        dead, and another cluster must not take the machine before it is undone."""
        plans = self.plans()
        problems: list[str] = []
        with host.locked():
            self._stop(KUBE_PROXY, timeout)  # first: it would rewrite the rules the record removes
            for plan in plans:
                self._stop(daemon_key(plan), timeout)
                self.daemon_ports.pop(plan.name, None)
            for plan in plans:
                self._stop(kubelet_key(plan), timeout)
            for plan in plans:
                self._remove_pods(plan)
                self._stop(containerd_key(plan), timeout)
            self._stop(REGISTRY, timeout)
            record = host.load_record()
            if record is not None and record.owner == str(self.cluster_dir):
                problems = host.release_locked(record)
        self.count = 0
        return problems

    def _remove_pods(self, plan: NodePlan) -> None:
        """Stop and remove every pod sandbox through CRI, so containerd unmounts rootfs and
        shm and deletes the network namespaces; a dead containerd is started again for it."""
        key = containerd_key(plan)
        temporary = False
        if not (key in self.pids and pid_alive(self.pids[key])):
            if not plan.containerd_config.exists() or missing_system_tools():
                return
            self._spawn(key, ["/usr/bin/containerd", "--config", str(plan.containerd_config)])
            temporary = True
        try:
            deadline = time.monotonic() + 15
            while not self._cri_ready(plan) and time.monotonic() < deadline:
                time.sleep(0.1)
            self.crictl(plan, "rmp", "--all", "--force")
        except (RealNodeError, subprocess.TimeoutExpired, OSError):
            pass  # host.undo kills and unmounts what is left
        if temporary:
            self._stop(key, 10)

    # ------------------------------------------------------------------ processes
    def _spawn(self, key: str, argv: list[str], env: dict[str, str] | None = None) -> None:
        proc = spawn(
            argv,
            self.log_path(key),
            attached=self.attached,
            env={"PATH": PATH, "HOME": os.environ.get("HOME", "/root"), **(env or {})},
        )
        self._procs[key] = proc
        self.pids[key] = proc.pid

    def _stop(self, key: str, timeout: float) -> None:
        pid = self.pids.pop(key, None)
        if pid is not None:
            terminate(pid, self._procs.pop(key, None), timeout)

    def _wait(self, key: str, probe: Callable[[], bool], timeout: float, what: str) -> None:
        proc = self._procs.get(key)
        wait_for(key, proc, probe, timeout=timeout, what=what, log=self.log_path(key), error=RealNodeError)

    def _record_pids(self, record: host.HostRecord | None) -> None:
        if record is not None and record.owner == str(self.cluster_dir):
            record.pids = {k: v for k, v in self.pids.items() if k == REGISTRY or "/" in k}
            record.save()


def teardown_stale(record: host.HostRecord) -> None:
    """Remove the pods of a dead owner's real nodes through their own containerd (started once
    more from the config left in their directories), so containerd itself releases the network
    namespaces, shm and rootfs mounts; :func:`host.undo` then kills and unmounts the rest."""
    stale = RealNodes(Path(record.owner), {}, attached=False)
    for plan in record.plans():
        stale._remove_pods(plan)
