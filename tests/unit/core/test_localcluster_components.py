"""Command lines of the local control plane: what the real nodes rely on."""

from __future__ import annotations

from pathlib import Path

from kruise.core.localcluster.components import FAKE_NODE_ANNOTATION, apiserver_args, fake_node, kwok_args


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
