"""Command lines of the control-plane components (pure: paths and ports in, argv out).

They follow ``shared/reference/control-plane-harness.md`` §2-§5: envtest's and kwokctl's
choices, admission webhooks left on, and no client-side throttling of our own tests.
"""

from __future__ import annotations

import os
import shlex
from pathlib import Path
from typing import Any

SERVICE_CIDR = "10.96.0.0/16"
POD_CIDR = "10.244.0.0/16"
KWOK_NODE_IP = "10.240.0.1"
#: the annotation every KWOK node carries; KWOK manages only the nodes that have it
FAKE_NODE_ANNOTATION = ("kwok.x-k8s.io/node", "fake")
KCM_CONTROLLERS = (
    "garbage-collector-controller",
    "namespace-controller",
    "deployment-controller",
    "replicaset-controller",
    # native StatefulSets (the Advanced StatefulSet benchmark's baseline)
    "statefulset-controller",
    # claims bind for real: the binder provisions hostPath volumes (--enable-hostpath-provisioner)
    # for the default StorageClass below; the protection controllers hold a claim while a pod
    # uses it and a volume while it is bound, then let them go
    "persistentvolume-binder-controller",
    "persistentvolumeclaim-protection-controller",
    "persistentvolume-protection-controller",
    # pods bound to a deleted node go away (after its 40 s quarantine), as in a real cluster
    "pod-garbage-collector-controller",
    # native DaemonSets (the Advanced DaemonSet benchmark's baseline)
    "daemonset-controller",
    # batch/v1 Jobs (AdvancedCronJob's jobTemplate, charts/kruise's pre-delete hook) run, finish
    # and expire
    "job-controller",
    "ttl-after-finished-controller",
)
#: added when the cluster starts with real nodes and so runs kube-proxy: Services get
#: EndpointSlices (and legacy Endpoints), and pods their ServiceAccount's token, which needs the
#: namespace's ``default`` ServiceAccount and the ``kube-root-ca.crt`` ConfigMap to exist (batch
#: Jobs, which a Helm hook is, run in every cluster: ``job-controller`` above)
KCM_SERVICE_CONTROLLERS = (
    "endpointslice-controller",
    "endpoints-controller",
    "serviceaccount-controller",
    "root-ca-certificate-publisher-controller",
)
DEFAULT_STORAGE_CLASS = {
    "apiVersion": "storage.k8s.io/v1",
    "kind": "StorageClass",
    "metadata": {
        "name": "standard",
        "annotations": {"storageclass.kubernetes.io/is-default-class": "true"},
    },
    "provisioner": "kubernetes.io/host-path",
    "reclaimPolicy": "Delete",
    "volumeBindingMode": "Immediate",
}
"""The cluster's default StorageClass: kube-controller-manager's hostPath provisioner makes a
volume under ``/tmp/hostpath_pv/`` for each claim and deletes it with the claim."""


def fake_node(
    name: str, labels: dict[str, str] | None = None, taints: list[dict[str, str]] | None = None
) -> dict[str, Any]:
    """A Node that KWOK manages (``kwok.x-k8s.io/node: fake``), with kwokctl's labels, huge
    capacity, and the extra ``labels`` and ``taints`` given."""
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": name,
            "annotations": {
                "node.alpha.kubernetes.io/ttl": "0",
                FAKE_NODE_ANNOTATION[0]: FAKE_NODE_ANNOTATION[1],
            },
            "labels": {
                "beta.kubernetes.io/arch": "amd64",
                "beta.kubernetes.io/os": "linux",
                "kubernetes.io/arch": "amd64",
                "kubernetes.io/hostname": name,
                "kubernetes.io/os": "linux",
                "kubernetes.io/role": "agent",
                "node-role.kubernetes.io/agent": "",
                "type": "kwok",
                **(labels or {}),
            },
        },
        "spec": {"taints": list(taints)} if taints else {},
        "status": {
            "allocatable": {"cpu": "1000", "memory": "1Ti", "pods": "1000000"},
            "capacity": {"cpu": "1000", "memory": "1Ti", "pods": "1000000"},
        },
    }


_LOOPBACK_SERVING = (
    "--bind-address=127.0.0.1",
    "--authorization-always-allow-paths=/healthz,/readyz,/livez,/metrics",
)


def etcd_args(data_dir: str, client_port: int, peer_port: int) -> list[str]:
    url = f"http://127.0.0.1:{client_port}"
    peer = f"http://127.0.0.1:{peer_port}"
    return [
        "--name=node0",
        f"--data-dir={data_dir}",
        f"--listen-client-urls={url}",
        f"--advertise-client-urls={url}",
        f"--listen-peer-urls={peer}",
        f"--initial-advertise-peer-urls={peer}",
        f"--initial-cluster=node0={peer}",
        "--unsafe-no-fsync=true",
        "--quota-backend-bytes=8589934592",
        "--auto-compaction-retention=1",
        "--log-level=warn",
    ]


def apiserver_args(
    pki: Path, etcd_port: int, port: int, *, host: str = "127.0.0.1", services: bool = False
) -> list[str]:
    """kube-apiserver's argv, serving on ``host:port``.

    ``services=True`` (a cluster started with real nodes, ``host`` its control-plane address):
    the API server advertises ``host`` and keeps the ``kubernetes`` Service's endpoints (the
    ``lease`` reconciler, upstream's default), and the ``ServiceAccount`` admission plugin gives
    pods their token, as in a real cluster. Otherwise (loopback, KWOK only) the Service has no
    endpoints (an EndpointSlice may not hold a loopback address) and pods get no token.

    ``$KRUISE_APISERVER_ARGS`` (shell words) is appended: a diagnostic hook, e.g. an audit log
    for a benchmark (``--audit-policy-file=... --audit-log-path=...``).
    """
    disabled = ["TaintNodesByCondition"] if services else ["ServiceAccount", "TaintNodesByCondition"]
    return [
        f"--etcd-servers=http://127.0.0.1:{etcd_port}",
        f"--advertise-address={host}",
        f"--bind-address={host}",
        f"--secure-port={port}",
        f"--tls-cert-file={pki / 'apiserver.crt'}",
        f"--tls-private-key-file={pki / 'apiserver.key'}",
        f"--client-ca-file={pki / 'ca.crt'}",
        # logs/exec/port-forward on real nodes: dial the kubelet's InternalIP, present a
        # client certificate it trusts, and check its serving certificate
        f"--kubelet-client-certificate={pki / 'apiserver-kubelet-client.crt'}",
        f"--kubelet-client-key={pki / 'apiserver-kubelet-client.key'}",
        f"--kubelet-certificate-authority={pki / 'ca.crt'}",
        "--kubelet-preferred-address-types=InternalIP,Hostname",
        "--service-account-issuer=https://kubernetes.default.svc.cluster.local",
        f"--service-account-key-file={pki / 'sa.key'}",
        f"--service-account-signing-key-file={pki / 'sa.key'}",
        f"--service-cluster-ip-range={SERVICE_CIDR}",
        "--authorization-mode=Node,RBAC",
        # TaintNodesByCondition would add node.kubernetes.io/not-ready on create, which only the
        # node-lifecycle controller (left out on purpose) removes.
        f"--disable-admission-plugins={','.join(disabled)}",
        "--allow-privileged=true",
        f"--endpoint-reconciler-type={'lease' if services else 'none'}",
        # no client-side throttling of our own tests and benchmarks (all three together)
        "--max-requests-inflight=0",
        "--max-mutating-requests-inflight=0",
        "--enable-priority-and-fairness=false",
        "--profiling=false",
        "--v=1",
        # a diagnostic hook (an audit log for a benchmark, a verbosity): appended as given
        *shlex.split(os.environ.get("KRUISE_APISERVER_ARGS", "")),
    ]


def controller_manager_args(kubeconfig: str, port: int, *, services: bool = False) -> list[str]:
    """kube-controller-manager's argv: :data:`KCM_CONTROLLERS`, plus
    :data:`KCM_SERVICE_CONTROLLERS` with ``services``."""
    controllers = (*KCM_CONTROLLERS, *(KCM_SERVICE_CONTROLLERS if services else ()))
    return [
        f"--kubeconfig={kubeconfig}",
        f"--authentication-kubeconfig={kubeconfig}",
        f"--authorization-kubeconfig={kubeconfig}",
        "--leader-elect=false",
        f"--controllers={','.join(controllers)}",
        "--enable-hostpath-provisioner=true",
        f"--secure-port={port}",
        "--kube-api-qps=1000",
        "--kube-api-burst=2000",
        "--v=1",
        *_LOOPBACK_SERVING,
    ]


def scheduler_args(config: Path, kubeconfig: str, port: int) -> list[str]:
    return [
        f"--config={config}",
        f"--authentication-kubeconfig={kubeconfig}",
        f"--authorization-kubeconfig={kubeconfig}",
        f"--secure-port={port}",
        "--v=1",
        *_LOOPBACK_SERVING,
    ]


def kwok_args(kubeconfig: str, stages: Path) -> list[str]:
    return [
        f"--kubeconfig={kubeconfig}",
        f"--config={stages}",
        # only our fake nodes: a real node and its pods belong to their kubelet
        f"--manage-nodes-with-annotation-selector={'='.join(FAKE_NODE_ANNOTATION)}",
        f"--cidr={POD_CIDR}",
        f"--node-ip={KWOK_NODE_IP}",
        "--node-lease-duration-seconds=40",
        "--v=WARN",
    ]
