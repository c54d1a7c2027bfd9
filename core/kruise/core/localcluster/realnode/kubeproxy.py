"""kube-proxy for the real nodes (pure: paths and ports in, configuration and argv out).

A cluster started with real nodes runs one kube-proxy (v1.37.2, ``hack/kube-proxy-bin``) in
**iptables mode on the host**, as every node of a real cluster runs one: all real nodes share
the host's network namespace, so one proxy programs the rules for all of them. Its rules apply
to packets the pods route to the host through their bridge (``PREROUTING``) and to the host's
own connections (``OUTPUT``), so the API server reaches webhook Services by their ClusterIP as
a control-plane node with kube-proxy does (upstream's default; ``--enable-aggregator-routing``
stays off).

What it is told, and why:

- ``clusterCIDR`` = the real nodes' network (``10.201.0.0/16``) with ``detectLocalMode:
  ClusterCIDR``: traffic to a ClusterIP from outside it is masqueraded, as upstream does.
- ``nodePortAddresses`` = that network too, and ``localhostNodePorts: false``: NodePorts open
  only on the bridges' addresses, never on the machine's own interfaces, and kube-proxy leaves
  ``route_localnet`` alone.
- conntrack limits and timeouts ``0`` ("leave the kernel's value"), so it changes no sysctl;
  ``oomScoreAdj: 0`` (raising it needs ``CAP_SYS_RESOURCE``, which this machine lacks).
- healthz and metrics on loopback ports picked at start (upstream binds ``0.0.0.0:10256``).
- the identity of upstream's ``system:kube-proxy`` user (bound to ``system:node-proxier`` by
  the API server's bootstrap RBAC), from a client certificate of the cluster CA.

``kube-proxy --cleanup`` (upstream's own flag) removes every chain and rule it made, in
iptables and ip6tables; the host record runs it when the cluster goes down.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal, TypedDict

from kruise.core.localcluster.realnode.plan import POD_NETWORK

#: the user upstream's bootstrap RBAC binds to ``system:node-proxier``
USER = "system:kube-proxy"
MODE = "iptables"


class ClientConnection(TypedDict):
    kubeconfig: str
    qps: int
    burst: int


class IPTablesConfig(TypedDict):
    masqueradeAll: bool
    localhostNodePorts: bool
    syncPeriod: str
    minSyncPeriod: str


class ConntrackConfig(TypedDict):
    maxPerCore: int
    min: int
    tcpEstablishedTimeout: str
    tcpCloseWaitTimeout: str


class KubeProxyConfiguration(TypedDict):
    """``kubeproxy.config.k8s.io/v1alpha1`` ``KubeProxyConfiguration``, the fields set here."""

    apiVersion: Literal["kubeproxy.config.k8s.io/v1alpha1"]
    kind: Literal["KubeProxyConfiguration"]
    clientConnection: ClientConnection
    hostnameOverride: str
    mode: str
    clusterCIDR: str
    detectLocalMode: str
    nodePortAddresses: list[str]
    healthzBindAddress: str
    metricsBindAddress: str
    iptables: IPTablesConfig
    conntrack: ConntrackConfig
    oomScoreAdj: int


def kube_proxy_config(
    *, kubeconfig: Path, node_name: str, healthz_port: int, metrics_port: int
) -> KubeProxyConfiguration:
    """The proxy's configuration: ``node_name`` is the Node whose InternalIP it takes as its own
    (the first real node; they all share the host's network namespace); ports are TCP ports on
    127.0.0.1."""
    return {
        "apiVersion": "kubeproxy.config.k8s.io/v1alpha1",
        "kind": "KubeProxyConfiguration",
        "clientConnection": {"kubeconfig": str(kubeconfig), "qps": 50, "burst": 100},
        "hostnameOverride": node_name,
        "mode": MODE,
        "clusterCIDR": POD_NETWORK,
        "detectLocalMode": "ClusterCIDR",
        "nodePortAddresses": [POD_NETWORK],
        "healthzBindAddress": f"127.0.0.1:{healthz_port}",
        "metricsBindAddress": f"127.0.0.1:{metrics_port}",
        "iptables": {
            "masqueradeAll": False,
            "localhostNodePorts": False,
            "syncPeriod": "30s",
            "minSyncPeriod": "0s",
        },
        "conntrack": {"maxPerCore": 0, "min": 0, "tcpEstablishedTimeout": "0s", "tcpCloseWaitTimeout": "0s"},
        "oomScoreAdj": 0,
    }


def kube_proxy_argv(binary: Path, config: Path) -> list[str]:
    """``kube-proxy --config=<config>`` (verbosity 1)."""
    return [str(binary), f"--config={config}", "--v=1"]


def cleanup_argv(binary: Path) -> list[str]:
    """``kube-proxy --cleanup``: remove its iptables/ip6tables (and nftables, ipvs) state and exit."""
    return [str(binary), "--cleanup"]


def healthz_url(port: int) -> str:
    """kube-proxy's ``/healthz`` (200 once its first sync of the rules is done)."""
    return f"http://127.0.0.1:{port}/healthz"
