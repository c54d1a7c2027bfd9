"""The chart as GitOps tools and upstream users meet it.

- two renders are byte-identical (Argo CD renders ``helm template`` on every refresh);
- ``crds.managed`` decides whether the CRDs are part of the release;
- upstream's own values files (``tests/data/openkruise-charts``, openkruise/charts at
  ``38153b0939bc``): kruise 1.8.3's is refused for the one gate this manager does not have, with
  the gate's name, and installs without it; kruise-rollout 0.6.2's installs as it is, into
  ``kruise-rollout``;
- the empty certificate Secret is filled by the manager's code running with the chart's own
  ServiceAccount, once: two replicas starting together end up with one CA, a restart reuses it;
  with ``EnableExternalCerts`` the Secret is somebody else's and only read.
"""

from __future__ import annotations

import asyncio
import base64
from pathlib import Path

import pytest
import yaml
from cryptography import x509

from kruise.core.certs import CertificateAuthority, cert_pem, key_pem
from kruise.core.kube import KubeClient
from kruise.core.kube.resources import NAMESPACES, SECRETS
from kruise.rollouts.manager.certsecret import CertWriter, choose_writer, from_secret
from kruise.rollouts.manager.options import ManagerOptions, parse_feature_gates
from tests.integration.chart.support import (
    CHART,
    JSON,
    NS,
    REPO,
    find,
    flag_map,
    helm_run,
    kinds,
    manager_args,
    render,
    token_kubeconfig,
    values_file,
)
from tests.integration.chart.test_chart import EVERYTHING_ON
from tests.support.cluster import TestCluster

UPSTREAM = REPO / "tests" / "data" / "openkruise-charts"


def render_upstream(helm: str, tmp_path: Path, name: str, override: JSON) -> list[JSON]:
    """Upstream's values file ``name``, then ``override`` on top (a later ``-f`` wins)."""
    return render(
        helm, "-f", str(UPSTREAM / name), "-f", str(values_file(tmp_path, override, "override.yaml"))
    )


@pytest.mark.parametrize("values", [{}, EVERYTHING_ON], ids=["defaults", "every switch on"])
def test_two_renders_are_identical(helm: str, tmp_path: Path, values: JSON) -> None:
    path = values_file(tmp_path, values)
    first = helm_run(helm, "template", "kruise", str(CHART), "-f", str(path), "--include-crds")
    second = helm_run(helm, "template", "kruise", str(CHART), "-f", str(path), "--include-crds")
    assert first.returncode == 0, first.stderr
    assert first.stdout == second.stdout


def test_crds_managed_decides_whether_the_crds_are_in_the_release(helm: str, tmp_path: Path) -> None:
    managed = [d for d in render(helm) if d["kind"] == "CustomResourceDefinition"]
    assert {d["metadata"]["annotations"]["helm.sh/resource-policy"] for d in managed} == {"keep"}
    generated = {
        yaml.safe_load(p.read_text())["metadata"]["name"] for p in (CHART / "files" / "crds").glob("*.yaml")
    }
    assert {d["metadata"]["name"] for d in managed} == generated
    unmanaged = render(helm, values=values_file(tmp_path, {"crds": {"managed": False}}))
    assert not [d for d in unmanaged if d["kind"] == "CustomResourceDefinition"]
    injected = {
        "featureGates": "EnableExternalCerts=true",
        "externalCerts": {"annotations": {"cert-manager.io/inject-ca-from": "kruise-system/kruise-webhook"}},
    }
    docs = render(helm, values=values_file(tmp_path, injected))
    crd = find(docs, "CustomResourceDefinition", "rollouts.rollouts.kruise.io")
    assert crd["metadata"]["annotations"]["cert-manager.io/inject-ca-from"] == "kruise-system/kruise-webhook"
    assert ("Secret", "kruise-webhook-certs") not in kinds(docs), "the Secret is the user's"
    assert flag_map(manager_args(docs))["--webhook-cert-writer"] == "external"


def test_upstream_kruise_values_render_unchanged(helm: str) -> None:
    """openkruise/charts 1.8.3's own values (``featureGates: "ImagePullJobGate=true"``) apply as
    they are now that the manager serves image pre-pull."""
    docs = render(helm, "-f", str(UPSTREAM / "kruise-1.8.3-values.yaml"))
    deploy = find(docs, "Deployment", "kruise-controller-manager")
    assert deploy["spec"]["replicas"] == 2
    assert deploy["spec"]["template"]["spec"]["containers"][0]["image"] == "openkruise/kruise-manager:v1.8.3"
    assert flag_map(manager_args(docs))["--feature-gates"] == "ImagePullJobGate=true"


def test_upstream_kruise_rollout_values_map_onto_the_manager(helm: str) -> None:
    docs = render(helm, "-f", str(UPSTREAM / "kruise-rollout-0.6.2-values.yaml"))
    namespaced = [
        d
        for d in docs
        if d["kind"] not in ("Namespace", "ClusterRole", "ClusterRoleBinding", "CustomResourceDefinition")
    ]
    assert {d["metadata"]["namespace"] for d in namespaced} == {"kruise-rollout"}
    flags = flag_map(manager_args(docs))
    assert flags["--feature-gates"] == "AdvancedDeployment=true"
    assert flags["--health-probe-addr"] == ":8081" and flags["--metrics-addr"] == "127.0.0.1:8080"
    assert flags["--leader-election-namespace"] == "kruise-rollout"
    container = find(docs, "Deployment", "kruise-controller-manager")["spec"]["template"]["spec"][
        "containers"
    ][0]
    assert (
        container["image"] == "openkruise/kruise-rollout:v0.6.2" and container["imagePullPolicy"] == "Always"
    )
    assert container["resources"]["limits"] == {"cpu": "500m", "memory": "1Gi"}


def _apply(cluster: TestCluster, docs: list[JSON], path: Path, *extra: str) -> str:
    path.write_text(yaml.safe_dump_all(docs))
    return cluster.kubectl("apply", "--server-side", "--field-manager=helm", *extra, "-f", str(path)).stdout


def test_upstream_values_files_install(
    helm: str, installed: JSON, chart_cluster: TestCluster, tmp_path: Path
) -> None:
    """Accepted by the API server (server-side dry run; cluster objects are the installed chart's)."""
    for name, extra in (
        ("kruise-1.8.3-values.yaml", {"featureGates": ""}),
        ("kruise-rollout-0.6.2-values.yaml", {}),
    ):
        docs = render_upstream(helm, tmp_path, name, extra)
        namespace = [d for d in docs if d["kind"] == "Namespace"]
        _apply(chart_cluster, namespace, tmp_path / "ns.yaml")
        report = _apply(
            chart_cluster,
            [d for d in docs if d["kind"] != "Namespace"],
            tmp_path / "all.yaml",
            "--dry-run=server",
            "--force-conflicts",  # the installed chart owns these cluster objects: replace them
        )
        assert report.count("serverside-applied (server dry run)") == len(docs) - len(namespace), report


@pytest.fixture
async def as_manager(installed: JSON, chart_cluster: TestCluster, tmp_path: Path):  # type: ignore[no-untyped-def]
    """A client authenticated as the chart's ``kruise-manager`` ServiceAccount."""
    token = chart_cluster.kubectl("-n", NS, "create", "token", "kruise-manager").stdout.strip()
    client = await KubeClient.from_kubeconfig(
        str(token_kubeconfig(chart_cluster, token, tmp_path / "sa.kubeconfig"))
    )
    try:
        yield client
    finally:
        await client.close()


async def test_the_manager_fills_the_empty_secret_once(as_manager: KubeClient, tmp_path: Path) -> None:
    before = await as_manager.get(SECRETS, "kruise-webhook-certs", NS)
    assert not before.get("data"), "the chart's Secret, as applied"
    opts = [
        ManagerOptions(webhook_cert_dir=tmp_path / f"replica-{i}", webhook_cert_writer="secret")
        for i in range(2)
    ]
    assert choose_writer(opts[0]) is CertWriter.SECRET
    first, second = await asyncio.gather(
        *(from_secret(as_manager, o, writer=CertWriter.SECRET) for o in opts)
    )
    assert first[2] == second[2], "two replicas starting together share one CA"
    filled = await as_manager.get(SECRETS, "kruise-webhook-certs", NS)
    assert set(filled["data"]) == {"ca-cert.pem", "ca-key.pem", "cert.pem", "key.pem", "tls.crt", "tls.key"}
    cert = x509.load_pem_x509_certificate(base64.b64decode(filled["data"]["tls.crt"]))
    names = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value.get_values_for_type(
        x509.DNSName
    )
    assert f"kruise-webhook-service.{NS}.svc" in names
    assert (cert.not_valid_after_utc - cert.not_valid_before_utc).days >= 3649
    restarted = await from_secret(
        as_manager, ManagerOptions(webhook_cert_dir=tmp_path / "again"), writer=CertWriter.SECRET
    )
    assert restarted[2] == first[2]
    assert (await as_manager.get(SECRETS, "kruise-webhook-certs", NS))["metadata"][
        "resourceVersion"
    ] == filled["metadata"]["resourceVersion"]
    assert (tmp_path / "again" / "tls.crt").read_bytes() == base64.b64decode(filled["data"]["tls.crt"])


async def test_external_certificates_are_read_not_written(kube: KubeClient, tmp_path: Path) -> None:
    namespace = "kruise-external-certs"
    await kube.create(NAMESPACES, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}})
    try:
        opts = ManagerOptions(
            webhook_cert_dir=tmp_path / "certs",
            webhook_service_namespace=namespace,
            feature_gates=parse_feature_gates("EnableExternalCerts=true"),
        )
        assert choose_writer(opts) is CertWriter.EXTERNAL
        waiting = asyncio.create_task(from_secret(kube, opts, writer=CertWriter.EXTERNAL))
        await asyncio.sleep(1.0)
        assert not waiting.done(), "no Secret yet: the manager waits for cert-manager"
        ca = CertificateAuthority.create("cert-manager-ca")
        key, cert = ca.issue("kruise-webhook-service", server=True, dns_names=("kruise-webhook-service",))
        data = {"ca.crt": cert_pem(ca.cert), "tls.crt": cert_pem(cert), "tls.key": key_pem(key)}
        secret = {
            "apiVersion": "v1",
            "kind": "Secret",
            "metadata": {"name": "kruise-webhook-certs", "namespace": namespace},
            "type": "kubernetes.io/tls",
            "data": {k: base64.b64encode(v).decode() for k, v in data.items()},
        }
        created = await kube.create(SECRETS, secret, namespace)
        _, _, bundle = await asyncio.wait_for(waiting, timeout=20)
        assert bundle == data["ca.crt"]
        after = await kube.get(SECRETS, "kruise-webhook-certs", namespace)
        assert after["metadata"]["resourceVersion"] == created["metadata"]["resourceVersion"], "never written"
    finally:
        await kube.delete(NAMESPACES, namespace, missing_ok=True)
