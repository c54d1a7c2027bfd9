"""Services work for real on a cluster started with a real node: kube-proxy (iptables mode, on
the host) routes a pod's connection to a ClusterIP to a pod behind it, and the in-cluster
``kubernetes`` Service to the API server; the host's own connections (the API server calling a
webhook Service) take the same rules. Nothing is routed off the machine."""

from __future__ import annotations

import ipaddress
import json
import time
import urllib.request

from kruise.core.localcluster import LocalCluster
from kruise.core.localcluster.realnode import busybox, pod_placement
from kruise.core.localcluster.realnode.plan import CONTROL_PLANE_IP
from tests.integration.realcluster.conftest import create_namespace, kubectl_json

SLEEP = ["sh", "-c", "trap 'exit 0' TERM; sleep 3600 & wait"]


def _pod(name: str, labels: dict[str, str], container: dict[str, object]) -> dict[str, object]:
    spec = {**pod_placement(), "terminationGracePeriodSeconds": 2, "containers": [container]}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "labels": labels}, "spec": spec}


def _http_get(local: LocalCluster, namespace: str, pod: str, host: str, port: int, path: str = "/") -> str:
    """``GET path`` sent by busybox ``nc`` from inside ``pod``: the raw answer."""
    request = f"printf 'GET {path} HTTP/1.0\\r\\nHost: {host}\\r\\n\\r\\n' | busybox nc -w 5 {host} {port}"
    return local.kubectl("exec", "-n", namespace, pod, "--", "sh", "-c", request, check=False)


def test_a_pod_reaches_a_cluster_ip_service_and_the_kubernetes_service(
    services_cluster: LocalCluster,
) -> None:
    local = services_cluster
    ns = create_namespace(local, "svc")
    server = {
        "name": "web",
        "image": busybox("v2"),
        "readinessProbe": {"httpGet": {"path": "/", "port": 8080}, "periodSeconds": 1},
    }
    service = {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": "web"},
        "spec": {"selector": {"app": "web"}, "ports": [{"port": 80, "targetPort": 8080}]},
    }
    docs = [
        _pod("web", {"app": "web"}, server),
        _pod("client", {}, {"name": "c", "image": busybox("v1"), "command": SLEEP}),
        service,
    ]
    local.kubectl(
        "apply", "-n", ns, "-f", "-", input=json.dumps({"apiVersion": "v1", "kind": "List", "items": docs})
    )
    local.kubectl("wait", "-n", ns, "--for=condition=Ready", "pod/web", "pod/client", "--timeout=90s")
    web = kubectl_json(local, "get", "-n", ns, "pod", "web")
    cluster_ip = kubectl_json(local, "get", "-n", ns, "service", "web")["spec"]["clusterIP"]
    assert ipaddress.ip_address(cluster_ip) in ipaddress.ip_network("10.96.0.0/16")

    # the EndpointSlice controller publishes the ready pod; kube-proxy programs it
    deadline = time.monotonic() + 30
    answer = ""
    while time.monotonic() < deadline:
        answer = _http_get(local, ns, "client", cluster_ip, 80)
        if "200 OK" in answer:
            break
        time.sleep(0.5)
    assert "HTTP/1.1 200 OK" in answer and "busybox v2" in answer, answer
    slices = kubectl_json(local, "get", "-n", ns, "endpointslices", "-l", "kubernetes.io/service-name=web")
    (endpoint,) = [e for s in slices["items"] for e in s.get("endpoints") or []]
    assert endpoint["addresses"] == [web["status"]["podIP"]]

    # the in-cluster `kubernetes` Service: 10.96.0.1:443 -> the API server on the control-plane
    # address (a plain-HTTP request gets Go's TLS server's answer: routing proven)
    env = local.kubectl("exec", "-n", ns, "client", "--", "env")
    assert "KUBERNETES_SERVICE_HOST=10.96.0.1" in env and "KUBERNETES_SERVICE_PORT=443" in env
    kubernetes = kubectl_json(local, "get", "-n", "default", "endpointslices", "kubernetes")
    assert [a for e in kubernetes["endpoints"] for a in e["addresses"]] == [CONTROL_PLANE_IP]
    answer = _http_get(local, ns, "client", "10.96.0.1", 443, "/version")
    assert "Client sent an HTTP request to an HTTPS server" in answer, answer
    token = local.kubectl(
        "exec", "-n", ns, "client", "--", "cat", "/var/run/secrets/kubernetes.io/serviceaccount/namespace"
    )
    assert token == ns  # the ServiceAccount admission plugin mounted the pod's token volume

    # the host's own connection to the ClusterIP (as the API server's to a webhook Service)
    with urllib.request.urlopen(f"http://{cluster_ip}/", timeout=5) as resp:
        assert resp.status == 200 and b"busybox v2" in resp.read()

    # nothing off the machine: the pod has no default route
    routes = local.kubectl("exec", "-n", ns, "client", "--", "busybox", "ip", "route")
    assert "default" not in routes, routes
    unreachable = _http_get(local, ns, "client", "198.51.100.1", 80)  # TEST-NET-2: no route to it
    assert "200" not in unreachable

    # the Service follows its pods: the server gone, kube-proxy rejects the connection
    local.kubectl("delete", "-n", ns, "pod", "web", "--wait=true")
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and "200 OK" in _http_get(local, ns, "client", cluster_ip, 80):
        time.sleep(0.5)
    assert "200 OK" not in _http_get(local, ns, "client", cluster_ip, 80)
