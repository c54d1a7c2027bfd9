"""The real node itself: Ready beside the KWOK nodes, left alone by KWOK, running real
containers with a real pod IP, and reachable by ``kubectl logs``/``exec``."""

from __future__ import annotations

import ipaddress

from kruise.core.kube import KubeClient
from kruise.core.kube.resources import NODES, PODS
from kruise.core.localcluster.realnode import TAINT, busybox
from kruise.core.localcluster.realnode.images import SERVE
from tests.integration.realnode.conftest import (
    RealNode,
    condition,
    container_status,
    real_pod_spec,
    wait_pod,
    web_container,
)
from tests.support.cluster import TestCluster
from tests.support.wait import eventually


async def test_real_node_is_ready_beside_the_kwok_nodes(kube: KubeClient, real_node: RealNode) -> None:
    nodes = {n["metadata"]["name"]: n for n in (await kube.list(NODES))["items"]}
    assert all(condition(n, "Ready") == "True" for n in nodes.values())
    kwok = [n for n in nodes if n.startswith("kwok-node-")]
    assert len(kwok) == 3
    node = nodes[real_node.name]
    assert node["metadata"]["labels"]["type"] == "real"
    assert "kwok.x-k8s.io/node" not in (node["metadata"].get("annotations") or {})
    assert [{k: t[k] for k in ("key", "value", "effect")} for t in node["spec"]["taints"]] == [TAINT]
    info = node["status"]["nodeInfo"]
    # the kubelet reports itself; KWOK (which would write kwok-v0.8.0 here) leaves the node alone
    assert info["kubeletVersion"] == "v1.37.2"
    assert info["containerRuntimeVersion"].startswith("containerd://1.6")
    assert "kwok" not in info.get("kubeProxyVersion", "")
    addresses = {a["type"]: a["address"] for a in node["status"]["addresses"]}
    assert addresses["InternalIP"] == real_node.node_ip
    assert ipaddress.ip_address(real_node.node_ip).is_private


async def test_a_pod_without_the_toleration_never_lands_on_the_real_node(
    kube: KubeClient, namespace: str, real_node: RealNode
) -> None:
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "plain"},
        "spec": {"containers": [{"name": "app", "image": "registry.example.com/app:1"}]},
    }
    for i in range(6):
        pod["metadata"]["name"] = f"plain-{i}"
        await kube.create(PODS, pod, namespace)

    async def scheduled() -> list[str] | None:
        items = (await kube.list(PODS, namespace))["items"]
        nodes = [p["spec"].get("nodeName") for p in items]
        return nodes if all(nodes) else None

    nodes = await eventually(scheduled, what="6 pods scheduled")
    assert real_node.name not in nodes


async def test_pod_runs_real_containers_with_logs_and_exec(
    kube: KubeClient, namespace: str, real_node: RealNode, cluster: TestCluster
) -> None:
    container = web_container(command=["/bin/sh", "-c", f"echo hello from $(cat /VERSION); {SERVE}"])
    body = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "real"},
        "spec": real_pod_spec(container),
    }
    await kube.create(PODS, body, namespace)
    pod = await wait_pod(kube, namespace, "real")
    assert pod["spec"]["nodeName"] == real_node.name
    pod_ip = pod["status"]["podIP"]
    assert ipaddress.ip_address(pod_ip) in ipaddress.ip_network(f"{real_node.node_ip}/24", strict=False)
    assert pod_ip != real_node.node_ip
    status = container_status(pod, "web")
    assert status["image"] == busybox("v1")
    assert status["imageID"].startswith("kruise.local/busybox@sha256:")
    assert status["containerID"].startswith("containerd://")
    # the container really runs in containerd, in the pod's one sandbox
    (sandbox,) = real_node.sandboxes(pod["metadata"]["uid"])
    (running,) = real_node.containers(sandbox["id"], "web")
    assert status["containerID"] == f"containerd://{running['id']}"
    assert running["state"] == "CONTAINER_RUNNING"
    # the API server reaches the kubelet (InternalIP, client certificate) for logs and exec
    logs = cluster.kubectl("logs", "-n", namespace, "real", "-c", "web")
    assert logs.stdout.strip() == "hello from v1"
    version = cluster.kubectl("exec", "-n", namespace, "real", "-c", "web", "--", "cat", "/VERSION")
    assert version.stdout.strip() == "v1"
    # the pod reaches its subnet only: no default route, so nothing leaves the machine
    routes = cluster.kubectl("exec", "-n", namespace, "real", "-c", "web", "--", "cat", "/proc/net/route")
    destinations = [line.split()[1] for line in routes.stdout.splitlines()[1:]]
    assert destinations and "00000000" not in destinations
