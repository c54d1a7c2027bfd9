"""The local cluster's PKI and admin kubeconfig (files under ``<cluster>/pki``).

One throw-away CA signs: the API server's serving certificate; the admin client
certificate (``O=system:masters``); the API server's kubelet client certificate (it dials
real kubelets for ``logs``/``exec``/``port-forward``, and they trust the same CA); later,
each real node's client and serving certificates (``realnode.nodes``).
"""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

import yaml

from kruise.core.certs import CertificateAuthority, cert_pem, key_pem, write_service_account_key

FIRST_SERVICE_IP = "10.96.0.1"
APISERVER_DNS = (
    "localhost",
    "kubernetes",
    "kubernetes.default",
    "kubernetes.default.svc",
    "kubernetes.default.svc.cluster.local",
)


def write_pki(pki: Path, kubeconfig: Path, server: str, extra_ips: tuple[str, ...] = ()) -> None:
    """Create the CA and every control-plane certificate in ``pki``; write the admin
    ``kubeconfig`` (mode 0600) for ``server``. The API server's certificate names 127.0.0.1, the
    ``kubernetes`` Service's ClusterIP and DNS names (what in-cluster clients dial) and
    ``extra_ips`` (the control-plane address of a cluster started with real nodes)."""
    pki.mkdir(parents=True, exist_ok=True)
    ca = CertificateAuthority.create("kruise-local-ca")
    (pki / "ca.crt").write_bytes(cert_pem(ca.cert))
    (pki / "ca.key").write_bytes(key_pem(ca.key))
    ca.write_leaf(
        pki,
        "apiserver",
        common_name="kube-apiserver",
        server=True,
        dns_names=APISERVER_DNS,
        ip_addresses=("127.0.0.1", FIRST_SERVICE_IP, *extra_ips),
    )
    ca.write_leaf(
        pki,
        "apiserver-kubelet-client",
        common_name="kube-apiserver-kubelet-client",
        organization="system:masters",
        client=True,
    )
    admin_crt, admin_key = ca.write_leaf(
        pki, "admin", common_name="admin", organization="system:masters", client=True
    )
    write_service_account_key(pki / "sa.key")
    kubeconfig.write_text(
        yaml.safe_dump(admin_kubeconfig(server, pki / "ca.crt", admin_crt, admin_key), sort_keys=False)
    )
    kubeconfig.chmod(0o600)


def admin_kubeconfig(server: str, ca: Path, cert: Path, key: Path) -> dict[str, Any]:
    """A self-contained kubeconfig (certificates inlined) for ``server``."""
    return {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [
            {"name": "kruise-local", "cluster": {"server": server, "certificate-authority-data": _b64(ca)}}
        ],
        "users": [
            {"name": "admin", "user": {"client-certificate-data": _b64(cert), "client-key-data": _b64(key)}}
        ],
        "contexts": [{"name": "kruise-local", "context": {"cluster": "kruise-local", "user": "admin"}}],
        "current-context": "kruise-local",
    }


def _b64(path: Path) -> str:
    return base64.b64encode(path.read_bytes()).decode()
