"""The host changes that make Services work for real nodes, and undoing them.

Made only by a cluster started with real nodes (``kruise cluster up --real-nodes N``), all
recorded in the host record (:mod:`kruise.core.localcluster.realnode.host`) before they are
made, so ``cluster down`` (or the next cluster, after a crash) undoes them:

- the control-plane address :data:`~kruise.core.localcluster.realnode.plan.CONTROL_PLANE_IP`
  as a /32 on ``lo``: the API server listens and advertises there, so the in-cluster
  ``kubernetes`` Service gets an endpoint pods can reach (an EndpointSlice may not hold a
  loopback address, and pods cannot reach the host's 127.0.0.1);
- IPv4 forwarding **on the cluster's bridges only** (``net.ipv4.conf.kruisebr<i>.forwarding``;
  Linux decides forwarding by the incoming interface), so a pod's packet to a ClusterIP,
  DNATed by kube-proxy to a pod, is routed on; ``net.ipv4.ip_forward`` stays as it is and the
  setting goes away with the bridge;
- a route of the Service range onto the first node's bridge (source: its address), so the
  host's own connections to a ClusterIP (the API server calling a webhook Service) never take
  the default route off the machine, even to an address kube-proxy has no rule for;
- kube-proxy's chains, removed by ``kube-proxy --cleanup``;
- ``net.bridge.bridge-nf-call-iptables`` set to 1 when it was not (bridged pod-to-pod replies
  must pass conntrack for a ClusterIP's DNAT to be undone), restored with the other sysctls.
"""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import TYPE_CHECKING

from kruise.core.localcluster.errors import RealNodeError
from kruise.core.localcluster.realnode import iptables
from kruise.core.localcluster.realnode.kubeproxy import cleanup_argv
from kruise.core.localcluster.realnode.plan import CONTROL_PLANE_IP, NodePlan

if TYPE_CHECKING:
    from kruise.core.localcluster.realnode.host import HostRecord

BRIDGE_NF_CALL_IPTABLES = "net/bridge/bridge-nf-call-iptables"
#: sysctls this module or kube-proxy may change, recorded before and restored after
SERVICE_SYSCTLS = (
    BRIDGE_NF_CALL_IPTABLES,
    "net/ipv4/conf/all/route_localnet",
    "net/netfilter/nf_conntrack_max",
    "net/netfilter/nf_conntrack_tcp_timeout_established",
    "net/netfilter/nf_conntrack_tcp_timeout_close_wait",
    "net/netfilter/nf_conntrack_tcp_be_liberal",
)


def _run(argv: list[str], timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, capture_output=True, text=True, timeout=timeout)


def _ip(*args: str) -> None:
    proc = _run(["ip", *args])
    if proc.returncode != 0:
        raise RealNodeError(f"ip {' '.join(args)}: {proc.stderr.strip()}")


def has_address(ip: str) -> bool:
    """True when ``ip`` is already an address of this machine."""
    return f" {ip}/" in _run(["ip", "-o", "-4", "addr", "show"]).stdout


def add_control_plane_address(ip: str = CONTROL_PLANE_IP) -> None:
    """Put ``ip``/32 on ``lo``. Raises :class:`RealNodeError` when the machine already has it
    (another owner's, never taken over) or it cannot be added."""
    if has_address(ip):
        raise RealNodeError(f"{ip} (the local cluster's control-plane address) is already in use here")
    _ip("addr", "add", f"{ip}/32", "dev", "lo")


def remove_control_plane_address(ip: str = CONTROL_PLANE_IP) -> list[str]:
    """Remove ``ip``/32 from ``lo``; returns what failed."""
    if not has_address(ip):
        return []
    proc = _run(["ip", "addr", "del", f"{ip}/32", "dev", "lo"])
    return [] if proc.returncode == 0 else [f"ip addr del {ip}/32 dev lo: {proc.stderr.strip()}"]


def enable_bridge_forwarding(plan: NodePlan) -> None:
    """``net.ipv4.conf.<bridge>.forwarding=1`` (gone with the bridge)."""
    Path(f"/proc/sys/net/ipv4/conf/{plan.bridge}/forwarding").write_text("1")


def route_service_range(plan: NodePlan, service_cidr: str) -> None:
    """Route ``service_cidr`` onto ``plan``'s bridge, from its address (gone with the bridge)."""
    _ip("route", "replace", service_cidr, "dev", plan.bridge, "src", plan.node_ip)


def ensure_bridge_netfilter() -> None:
    """``net.bridge.bridge-nf-call-iptables=1``; raises :class:`RealNodeError` when the
    ``br_netfilter`` module is not loaded (``modprobe br_netfilter`` as root fixes it)."""
    path = Path("/proc/sys", BRIDGE_NF_CALL_IPTABLES)
    if not path.exists():
        raise RealNodeError(
            "Services on real nodes need the br_netfilter kernel module (`modprobe br_netfilter`)"
        )
    if path.read_text().strip() != "1":
        path.write_text("1")


def kube_proxy_cleanup(binary: str) -> list[str]:
    """``kube-proxy --cleanup``: every chain and rule kube-proxy made; returns what failed."""
    if not binary or not Path(binary).exists():
        return [f"kube-proxy --cleanup: no binary at {binary!r}"] if binary else []
    try:
        proc = _run(cleanup_argv(Path(binary)), timeout=120)
    except subprocess.TimeoutExpired:
        return ["kube-proxy --cleanup timed out"]
    return [] if proc.returncode == 0 else [f"kube-proxy --cleanup: {proc.stderr.strip()[-500:]}"]


def claim_for_services(record: HostRecord, kube_proxy: Path) -> None:
    """Record (sysctls, the address, the kube-proxy binary, iptables' tables and ``KUBE-*``
    chains now), then make the changes that need no node yet: ``bridge-nf-call-iptables`` and
    the control-plane address. Raises :class:`RealNodeError`."""
    from kruise.core.localcluster.realnode.host import read_sysctls

    record.sysctls.update(read_sysctls(SERVICE_SYSCTLS))
    record.control_plane_ip = CONTROL_PLANE_IP
    record.kube_proxy = str(kube_proxy)
    record.iptables_before = iptables.snapshot()
    record.save()
    ensure_bridge_netfilter()
    add_control_plane_address(CONTROL_PLANE_IP)
