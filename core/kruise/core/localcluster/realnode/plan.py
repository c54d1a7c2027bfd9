"""Names, addresses and paths of the real nodes of one local cluster (pure).

A real node is a kubelet plus its own containerd, both run by the cluster from files
under ``<cluster>/<node>/``. Its node IP is the address of a bridge the cluster makes
(``kruisebr<i>``, ``10.201.<i>.1/24``), which is also the pods' subnet: the kubelet
refuses loopback node IPs (``validateNodeIP``), and a bridge without a gateway route,
masquerading or IP forwarding keeps every packet on this machine. Unix sockets (containerd's,
and the kubelet's root dir, which holds sockets) live under ``/run/kruise/<hash of the
cluster dir>/`` because a socket path must stay under 108 bytes whatever the cluster
directory is.
"""

from __future__ import annotations

import hashlib
import ipaddress
from dataclasses import dataclass
from pathlib import Path

NODE_PREFIX = "real-node-"
#: every real node carries this label (KWOK nodes carry ``type: kwok``)
LABEL = ("type", "real")
#: and this taint, so only pods that ask for a real node land there
TAINT_KEY = "kruise.io/real-node"
TAINT = {"key": TAINT_KEY, "value": "true", "effect": "NoSchedule"}
TOLERATION = {"key": TAINT_KEY, "operator": "Equal", "value": "true", "effect": "NoSchedule"}
NODE_SELECTOR = {LABEL[0]: LABEL[1]}
SUBNET_PREFIX = "10.201"
#: every real node's pods (``10.201.<i>.0/24``) and the control-plane address below: kube-proxy's
#: ``clusterCIDR`` and the range pods route through their node's bridge
POD_NETWORK = f"{SUBNET_PREFIX}.0.0/16"
#: when a cluster starts with real nodes its API server listens (and advertises, so the in-cluster
#: ``kubernetes`` Service points) here: a /32 on ``lo``, which pods reach through their bridge
CONTROL_PLANE_IP = f"{SUBNET_PREFIX}.0.1"
RUN_ROOT = Path("/run/kruise")
MAX_NODES = 50


def pod_placement() -> dict[str, object]:
    """The pod spec fields that put a pod on a real node: ``nodeSelector`` and ``tolerations``."""
    return {"nodeSelector": dict(NODE_SELECTOR), "tolerations": [dict(TOLERATION)]}


@dataclass(frozen=True)
class NodePlan:
    """Where everything of real node ``index`` (1-based) lives."""

    index: int
    cluster_dir: Path
    run_dir: Path

    @property
    def name(self) -> str:
        return f"{NODE_PREFIX}{self.index}"

    @property
    def bridge(self) -> str:
        return f"kruisebr{self.index}"

    @property
    def subnet(self) -> ipaddress.IPv4Network:
        return ipaddress.IPv4Network(f"{SUBNET_PREFIX}.{self.index}.0/24")

    @property
    def node_ip(self) -> str:
        return str(self.subnet.network_address + 1)

    @property
    def cgroup_root(self) -> str:
        """cgroup (relative to every hierarchy's root) holding all of this node's pods."""
        return f"kruise-{self.name}"

    @property
    def dir(self) -> Path:
        return self.cluster_dir / self.name

    @property
    def containerd_socket(self) -> Path:
        return self.run_dir / f"{self.name}.sock"

    @property
    def containerd_config(self) -> Path:
        return self.dir / "containerd.toml"

    @property
    def crictl_config(self) -> Path:
        return self.dir / "crictl.yaml"

    @property
    def cni_conf_dir(self) -> Path:
        return self.dir / "cni"

    @property
    def kubelet_dir(self) -> Path:
        """The kubelet's ``--root-dir`` (pod volumes, plugin and pod-resources sockets; the
        kubelet bind-mounts it on itself): under the short run dir, for its sockets."""
        return self.run_dir / self.name / "kubelet"

    @property
    def pod_logs_dir(self) -> Path:
        return self.dir / "pod-logs"

    @property
    def network_name(self) -> str:
        return f"kruise-{self.name}"


def run_dir_for(cluster_dir: Path) -> Path:
    """``/run/kruise/<12 hex of the cluster dir's path>``."""
    digest = hashlib.sha256(str(cluster_dir.resolve()).encode()).hexdigest()[:12]
    return RUN_ROOT / digest


def plan_nodes(cluster_dir: Path, count: int, start: int = 1) -> list[NodePlan]:
    """Plans of nodes ``start`` .. ``start + count - 1``; ValueError beyond :data:`MAX_NODES`."""
    if count < 0 or start < 1 or start + count - 1 > MAX_NODES:
        raise ValueError(f"real nodes are numbered 1..{MAX_NODES}; asked for {start}..{start + count - 1}")
    run_dir = run_dir_for(cluster_dir)
    return [NodePlan(i, cluster_dir, run_dir) for i in range(start, start + count)]
