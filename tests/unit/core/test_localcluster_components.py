"""Command lines of the local control plane: what the real nodes rely on."""

from __future__ import annotations

import ipaddress
from pathlib import Path

import pytest

from kruise.core.localcluster.components import (
    FAKE_NODE_ANNOTATION,
    KCM_SERVICE_CONTROLLERS,
    apiserver_args,
    controller_manager_args,
    fake_node,
    kwok_args,
)
from kruise.core.localcluster.pki import APISERVER_DNS, FIRST_SERVICE_IP
from kruise.core.localcluster.realnode.plan import CONTROL_PLANE_IP, POD_NETWORK


def _flag(args: list[str], name: str) -> str:
    (value,) = [a.split("=", 1)[1] for a in args if a.startswith(f"--{name}=")]
    return value


def test_kwok_manages_only_the_nodes_the_cluster_creates_for_it() -> None:
    args = kwok_args("/c/kubeconfig", Path("/c/kwok-stages.yaml"))
    assert "--manage-all-nodes=true" not in args
    (selector,) = [a for a in args if a.startswith("--manage-nodes-with-annotation-selector=")]
    key, _, value = selector.partition("=")[2].partition("=")
    assert fake_node("kwok-node-0")["metadata"]["annotations"][key] == value
    labelled = fake_node("n", {"pool": "a"}, [{"key": "k", "effect": "NoSchedule"}])
    assert labelled["metadata"]["labels"]["pool"] == "a" and labelled["spec"]["taints"][0]["key"] == "k"
    assert (key, value) == FAKE_NODE_ANNOTATION


def test_apiserver_reaches_kubelets_by_internal_ip_with_a_client_certificate() -> None:
    args = apiserver_args(Path("/c/pki"), 2379, 6443)
    assert "--kubelet-preferred-address-types=InternalIP,Hostname" in args
    assert "--kubelet-client-certificate=/c/pki/apiserver-kubelet-client.crt" in args
    assert "--kubelet-client-key=/c/pki/apiserver-kubelet-client.key" in args
    assert "--kubelet-certificate-authority=/c/pki/ca.crt" in args
    assert "--authorization-mode=Node,RBAC" in args  # the Node authorizer admits system:node:<name>


def test_a_kwok_only_apiserver_stays_on_loopback_without_service_endpoints_or_tokens() -> None:
    args = apiserver_args(Path("/c/pki"), 2379, 6443)
    assert _flag(args, "bind-address") == _flag(args, "advertise-address") == "127.0.0.1"
    assert _flag(args, "endpoint-reconciler-type") == "none"  # an EndpointSlice may not hold 127.0.0.1
    assert "ServiceAccount" in _flag(args, "disable-admission-plugins").split(",")


def test_with_services_the_apiserver_advertises_the_control_plane_address_and_pods_get_tokens() -> None:
    """Upstream's defaults: the lease reconciler keeps the ``kubernetes`` Service's endpoint on the
    advertised address, and the ServiceAccount admission plugin mounts each pod's token."""
    args = apiserver_args(Path("/c/pki"), 2379, 6443, host=CONTROL_PLANE_IP, services=True)
    assert _flag(args, "bind-address") == _flag(args, "advertise-address") == CONTROL_PLANE_IP
    assert _flag(args, "endpoint-reconciler-type") == "lease"
    assert "ServiceAccount" not in _flag(args, "disable-admission-plugins").split(",")
    assert "--enable-aggregator-routing=true" not in args  # webhooks by ClusterIP, through kube-proxy
    service_range = ipaddress.ip_network(_flag(args, "service-cluster-ip-range"))
    assert ipaddress.ip_address(FIRST_SERVICE_IP) in service_range
    assert not service_range.overlaps(ipaddress.ip_network(POD_NETWORK))
    assert "kubernetes.default.svc" in APISERVER_DNS


@pytest.mark.parametrize("services", [False, True], ids=["kwok-only", "with-services"])
def test_controller_manager_runs_the_service_controllers_only_with_services(services: bool) -> None:
    controllers = set(
        _flag(controller_manager_args("/c/kc", 1234, services=services), "controllers").split(",")
    )
    assert "deployment-controller" in controllers
    assert (set(KCM_SERVICE_CONTROLLERS) <= controllers) is services
    assert not set(KCM_SERVICE_CONTROLLERS) & controllers or services
