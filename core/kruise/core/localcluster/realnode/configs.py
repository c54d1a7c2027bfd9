"""Configuration files of a real node (pure renderers; the caller writes them).

- containerd: ``containerd.toml`` next to this module, with the node's paths.
- CNI: one ``bridge`` network on the node's own bridge and subnet, no masquerading and no
  default route: pods route only the real nodes' network (``10.201.0.0/16``: the control-plane
  address and every node's pods) and the Service range through their bridge, so with kube-proxy
  (a cluster started with real nodes) they reach ClusterIPs and the API server, and nothing is
  ever routed off the machine. ``isGateway`` stays off because the plugin would then switch on
  ``net.ipv4.ip_forward`` for the whole machine; the cluster enables forwarding on its bridges
  only. ``host-local`` keeps its leases under the node dir.
- registry mirror: ``certs.d/kruise.local/hosts.toml`` resolves ``kruise.local/*`` to the
  cluster's registry on ``127.0.0.1:<port>`` over plain HTTP.
- kubelet: a ``KubeletConfiguration`` for cgroup v1 + cgroupfs, serving on the node IP with
  a certificate from the cluster CA, x509 client authentication (the API server's kubelet
  client certificate), no iptables chains (``makeIPTablesUtilChains: false``), pods under
  their own cgroup root, logs and volumes under the node dir, and the node's taint.
- registry: ``docker-registry`` (distribution 2.8) on loopback, filesystem storage, no auth.
"""

from __future__ import annotations

import json
import string
from importlib import resources
from pathlib import Path
from typing import Any

import yaml

from kruise.core.certs import CertificateAuthority
from kruise.core.localcluster.components import SERVICE_CIDR
from kruise.core.localcluster.processes import free_port
from kruise.core.localcluster.realnode import kubeproxy
from kruise.core.localcluster.realnode.images import PAUSE_IMAGE, REGISTRY_HOST
from kruise.core.localcluster.realnode.plan import POD_NETWORK, TAINT, NodePlan

CNI_BIN_DIR = "/usr/lib/cni"


def toml_str(value: str | Path) -> str:
    """A TOML basic string (JSON string escapes are a subset TOML accepts)."""
    return json.dumps(str(value))


def containerd_config(plan: NodePlan) -> str:
    """``containerd.toml`` of ``plan``'s containerd."""
    template = resources.files(__package__).joinpath("containerd.toml").read_text()
    d = plan.dir / "containerd"
    values: dict[str, str | Path] = {
        "root": d / "root",
        "state": d / "state",
        "socket": plan.containerd_socket,
        "ttrpc_socket": f"{plan.containerd_socket}.ttrpc",
        "opt_dir": d / "opt",
        "sandbox_image": PAUSE_IMAGE,
        "runc_root": d / "runc",
        "cni_bin_dir": CNI_BIN_DIR,
        "cni_conf_dir": plan.cni_conf_dir,
        "registry_config_dir": plan.dir / "certs.d",
    }
    return string.Template(template).substitute({k: toml_str(v) for k, v in values.items()})


def cni_config(plan: NodePlan) -> dict[str, Any]:
    """The node's CNI network list (``<cni_conf_dir>/10-kruise.conflist``)."""
    return {
        "cniVersion": "1.0.0",
        "name": plan.network_name,
        "plugins": [
            {
                "type": "bridge",
                "bridge": plan.bridge,
                "isGateway": False,
                "isDefaultGateway": False,
                "ipMasq": False,
                "hairpinMode": False,
                "ipam": {
                    "type": "host-local",
                    "dataDir": str(plan.dir / "cni-ipam"),
                    "ranges": [[{"subnet": str(plan.subnet), "gateway": plan.node_ip}]],
                    # through the range's gateway, the node's bridge address
                    "routes": [{"dst": POD_NETWORK}, {"dst": SERVICE_CIDR}],
                },
            }
        ],
    }


def registry_hosts_toml(registry: str) -> str:
    """``hosts.toml`` sending :data:`REGISTRY_HOST` to ``registry`` (``127.0.0.1:PORT``)."""
    url = toml_str(f"http://{registry}")
    return f'server = {url}\n\n[host.{url}]\n  capabilities = ["pull", "resolve"]\n'


def write_runtime_files(plan: NodePlan, registry: str) -> None:
    """Write containerd's config, the CNI network, the registry mirror and a ``crictl.yaml``
    (``crictl --config <node dir>/crictl.yaml ps``) of ``plan``."""
    plan.dir.mkdir(parents=True, exist_ok=True)
    plan.containerd_config.write_text(containerd_config(plan))
    plan.cni_conf_dir.mkdir(exist_ok=True)
    (plan.cni_conf_dir / "10-kruise.conflist").write_text(json.dumps(cni_config(plan), indent=2))
    hosts = plan.dir / "certs.d" / REGISTRY_HOST
    hosts.mkdir(parents=True, exist_ok=True)
    (hosts / "hosts.toml").write_text(registry_hosts_toml(registry))
    endpoint = f"unix://{plan.containerd_socket}"
    crictl = {"runtime-endpoint": endpoint, "image-endpoint": endpoint, "timeout": 20}
    plan.crictl_config.write_text(json.dumps(crictl))  # JSON is YAML


def kubelet_config(plan: NodePlan, *, ca_file: Path, cert_file: Path, key_file: Path) -> dict[str, Any]:
    """The ``KubeletConfiguration`` of ``plan`` (kubelet.config.k8s.io/v1beta1)."""
    return {
        "apiVersion": "kubelet.config.k8s.io/v1beta1",
        "kind": "KubeletConfiguration",
        "address": plan.node_ip,
        "port": 10250,
        "readOnlyPort": 0,
        "healthzPort": 0,
        "tlsCertFile": str(cert_file),
        "tlsPrivateKeyFile": str(key_file),
        "authentication": {
            "anonymous": {"enabled": False},
            "webhook": {"enabled": False},
            "x509": {"clientCAFile": str(ca_file)},
        },
        "authorization": {"mode": "AlwaysAllow"},
        "containerRuntimeEndpoint": f"unix://{plan.containerd_socket}",
        "cgroupDriver": "cgroupfs",
        "cgroupRoot": f"/{plan.cgroup_root}",
        "failCgroupV1": False,
        "failSwapOn": False,
        "protectKernelDefaults": False,
        "makeIPTablesUtilChains": False,
        "podLogsDir": str(plan.pod_logs_dir),
        "registerWithTaints": [dict(TAINT)],
        "serializeImagePulls": False,
        "imageGCHighThresholdPercent": 100,
        "imageGCLowThresholdPercent": 99,
        "evictionHard": {
            "memory.available": "1Mi",
            "nodefs.available": "0%",
            "nodefs.inodesFree": "0%",
            "imagefs.available": "0%",
        },
        "maxPods": 110,
        "syncFrequency": "10s",
        "nodeStatusUpdateFrequency": "10s",
        "volumeStatsAggPeriod": "0s",
        "shutdownGracePeriod": "0s",
        "resolvConf": "/etc/resolv.conf",
    }


def node_kubeconfig(server: str, ca_file: Path, cert_file: Path, key_file: Path) -> dict[str, Any]:
    """A kubeconfig authenticating as the node (``system:node:<name>`` client certificate)."""
    return {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "local", "cluster": {"server": server, "certificate-authority": str(ca_file)}}],
        "users": [
            {"name": "node", "user": {"client-certificate": str(cert_file), "client-key": str(key_file)}}
        ],
        "contexts": [{"name": "node", "context": {"cluster": "local", "user": "node"}}],
        "current-context": "node",
    }


def registry_config(storage: Path, port: int) -> dict[str, Any]:
    """``docker-registry serve`` configuration: loopback, filesystem, no auth (Debian's has htpasswd)."""
    return {
        "version": 0.1,
        "log": {"level": "warn", "accesslog": {"disabled": True}},
        "storage": {"filesystem": {"rootdirectory": str(storage)}, "delete": {"enabled": True}},
        "http": {"addr": f"127.0.0.1:{port}"},
        "health": {"storagedriver": {"enabled": False}},
    }


def write_kube_proxy_files(
    directory: Path, server: str, ca_file: Path, ca: CertificateAuthority, node_name: str
) -> tuple[Path, int]:
    """kube-proxy's client certificate (``system:kube-proxy``, signed by ``ca``), kubeconfig and
    configuration (:func:`~kruise.core.localcluster.realnode.kubeproxy.kube_proxy_config`) in
    ``directory``; returns ``(config path, healthz port)`` (ports picked free on loopback)."""
    directory.mkdir(parents=True, exist_ok=True)
    crt, key = ca.write_leaf(directory, "client", common_name=kubeproxy.USER, client=True)
    (directory / "kubeconfig").write_text(yaml.safe_dump(node_kubeconfig(server, ca_file, crt, key)))
    healthz = free_port()
    config = kubeproxy.kube_proxy_config(
        kubeconfig=directory / "kubeconfig",
        node_name=node_name,
        healthz_port=healthz,
        metrics_port=free_port(),
    )
    (directory / "config.yaml").write_text(yaml.safe_dump(dict(config), sort_keys=False))
    return directory / "config.yaml", healthz
