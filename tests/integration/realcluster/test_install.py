"""``helm install charts/kruise`` onto the local cluster the way users install kruise: the image
built from the Dockerfile (``make image``'s script) and pushed to the cluster's registry, the
manager Deployment (2 replicas, leader election) and the daemon DaemonSet Ready on the real node,
the webhooks (admission and CRD conversion) served from the pods through the webhook Service's
ClusterIP, and the chart's daemon pulling an image through the node's CRI socket."""

from __future__ import annotations

import base64
import json
import re
import time
import urllib.request

from kruise.core.localcluster import LocalCluster
from kruise.core.localcluster.install import (
    CONVERSION_CRDS,
    NAMESPACE,
    WEBHOOK_CONFIGURATIONS,
    ca_bundles,
    install,
)
from kruise.core.localcluster.realnode import busybox
from kruise.core.localcluster.realnode.plan import run_dir_for
from tests.integration.realcluster.conftest import create_namespace, kubectl_json


def _webhook_requests(pod_ip: str) -> dict[str, float]:
    """``controller_runtime_webhook_requests_total{code="200"}`` per webhook path of one manager pod."""
    with urllib.request.urlopen(f"http://{pod_ip}:8080/metrics", timeout=5) as resp:
        text = resp.read().decode()
    pattern = r'^controller_runtime_webhook_requests_total\{code="200",webhook="([^"]+)"\} (\S+)$'
    return {m[1]: float(m[2]) for m in re.finditer(pattern, text, re.M)}


def _answers(url: str, *, within: float) -> bool:
    """True once ``url`` answers 200 (the daemon serves /healthz once its caches synced)."""
    deadline = time.monotonic() + within
    while True:
        try:
            with urllib.request.urlopen(url, timeout=5) as resp:
                return resp.status == 200
        except OSError:
            if time.monotonic() > deadline:
                return False
            time.sleep(1)


def test_helm_install_runs_manager_and_daemon_on_the_real_node_and_serves_the_webhooks(
    services_cluster: LocalCluster,
) -> None:
    local = services_cluster
    installed = install(local, log=print)
    print(f"[kruise] installed {installed.image}: {installed.timings}")

    # the manager: 2 replicas Ready on the real node, one of them holding the Lease
    deployment = kubectl_json(local, "-n", NAMESPACE, "get", "deployment", "kruise-controller-manager")
    assert deployment["status"]["readyReplicas"] == 2
    pods = kubectl_json(local, "-n", NAMESPACE, "get", "pods", "-l", "control-plane=controller-manager")[
        "items"
    ]
    assert {p["spec"]["nodeName"] for p in pods} == {"real-node-1"}
    assert {p["spec"]["containers"][0]["image"] for p in pods} == {installed.image}
    lease = kubectl_json(local, "-n", NAMESPACE, "get", "lease", "kruise-manager")
    assert lease["spec"]["holderIdentity"].split("_")[0] in {p["metadata"]["name"] for p in pods}

    # the daemon: Ready there, the CRI socket directory mounted from the host, as uid 0
    daemonset = kubectl_json(local, "-n", NAMESPACE, "get", "daemonset", "kruise-daemon")
    assert daemonset["status"]["desiredNumberScheduled"] == daemonset["status"]["numberReady"] == 1
    (daemon,) = kubectl_json(local, "-n", NAMESPACE, "get", "pods", "-l", "control-plane=daemon")["items"]
    assert daemon["spec"]["nodeName"] == "real-node-1" and daemon["spec"]["hostNetwork"] is True
    (volume,) = [v for v in daemon["spec"]["volumes"] if "hostPath" in v]
    assert volume["hostPath"]["path"] == str(run_dir_for(local.directory))
    assert daemon["spec"]["containers"][0]["securityContext"]["runAsUser"] == 0
    assert _answers(f"http://{daemon['status']['podIP']}:10221/healthz", within=60)  # on the node IP

    # the certificate Secret filled by the first replica, its CA in every caBundle
    secret = kubectl_json(local, "-n", NAMESPACE, "get", "secret", "kruise-webhook-certs")
    ca = base64.b64decode(secret["data"]["ca-cert.pem"])
    assert ca.startswith(b"-----BEGIN CERTIFICATE-----")
    docs = [kubectl_json(local, "get", ref) for ref in WEBHOOK_CONFIGURATIONS]
    docs += [kubectl_json(local, "get", "crd", name) for name in CONVERSION_CRDS]
    assert all(base64.b64decode(b) == ca for d in docs for b in ca_bundles(d))
    services = {w["clientConfig"]["service"]["name"] for d in docs[:2] for w in d["webhooks"]}
    assert services == {"kruise-webhook-service"}  # by Service, never a URL

    # webhooks served from the pods: a CloneSet is defaulted and validated, a v1alpha1 Rollout
    # is converted (stored and read as v1beta1)
    ns = create_namespace(local, "installed")
    before = [_webhook_requests(p["status"]["podIP"]) for p in pods]
    cloneset = {
        "apiVersion": "apps.kruise.io/v1alpha1",
        "kind": "CloneSet",
        "metadata": {"name": "web"},
        "spec": {
            "replicas": 0,
            "selector": {"matchLabels": {"app": "web"}},
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [{"name": "web", "image": busybox("v1")}]},
            },
        },
    }
    local.kubectl("apply", "-n", ns, "-f", "-", input=json.dumps(cloneset))
    created = kubectl_json(local, "-n", ns, "get", "cloneset", "web")
    assert created["spec"]["updateStrategy"]["type"] == "ReCreate"  # the mutating webhook's default
    rollout = {
        "apiVersion": "rollouts.kruise.io/v1alpha1",
        "kind": "Rollout",
        "metadata": {"name": "web"},
        "spec": {
            "objectRef": {
                "workloadRef": {"apiVersion": "apps.kruise.io/v1alpha1", "kind": "CloneSet", "name": "web"}
            },
            "strategy": {"canary": {"steps": [{"weight": 20}]}},
        },
    }
    local.kubectl("apply", "-n", ns, "-f", "-", input=json.dumps(rollout))
    stored = kubectl_json(local, "-n", ns, "get", "rollouts.v1beta1.rollouts.kruise.io", "web")
    assert stored["spec"]["workloadRef"]["name"] == "web"
    assert stored["spec"]["strategy"]["canary"]["steps"][0]["traffic"] == "20%"
    after = [_webhook_requests(p["status"]["podIP"]) for p in pods]
    served = {
        path: sum(a.get(path, 0) - b.get(path, 0) for a, b in zip(after, before, strict=True))
        for path in after[0]
    }
    assert served["/mutate-apps-kruise-io-v1alpha1-cloneset"] >= 1
    assert served["/validate-apps-kruise-io-v1alpha1-cloneset"] >= 1
    assert served["/convert"] >= 1

    # the chart's daemon pulls through the node's containerd (the CRI socket as uid 0)
    job = {
        "apiVersion": "apps.kruise.io/v1alpha1",
        "kind": "ImagePullJob",
        "metadata": {"name": "prepull"},
        "spec": {
            "image": busybox("v4"),
            "selector": {"names": ["real-node-1"]},
            "completionPolicy": {"type": "Always"},
        },
    }
    local.kubectl("apply", "-n", ns, "-f", "-", input=json.dumps(job))
    deadline = time.monotonic() + 120
    status: dict[str, object] = {}
    while time.monotonic() < deadline:
        status = kubectl_json(local, "-n", ns, "get", "imagepulljob", "prepull").get("status") or {}
        if status.get("succeeded") == 1:
            break
        time.sleep(1)
    assert status.get("succeeded") == 1, status
    images = json.loads(local.crictl("real-node-1", "images", "-o", "json"))["images"]
    assert busybox("v4") in {tag for image in images for tag in image.get("repoTags") or []}
