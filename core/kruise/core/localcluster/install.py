"""``kruise cluster up --real-nodes N --install``: kruise installed onto the local cluster the way
users install it, with ``helm install charts/kruise`` and the image built from the Dockerfile.

1. ``hack/build-image.sh --push <registry>/kruise`` builds the image (buildah, no Docker daemon)
   and pushes it to the cluster's registry on loopback; containerd resolves ``kruise.local/*``
   there, so the chart names it ``kruise.local/kruise:<version>``.
2. ``helm install kruise charts/kruise`` with :func:`chart_values`: the manager (2 replicas,
   leader election) and the daemon DaemonSet on the real nodes (their label and taint), the
   daemon's CRI socket directory (``hostPath``, as upstream's chart) being the nodes' socket dir,
   socket ``$(NODE_NAME).sock`` (the real nodes share one host), on the pod network.
3. :func:`wait_installed` waits for what a user waits for: the manager Deployment and the daemon
   DaemonSet Ready, the certificate Secret filled, every webhook's and the CRD conversion
   webhook's ``caBundle`` patched by the manager. The API server reaches the webhooks through the
   Service's ClusterIP (kube-proxy), as in a real cluster.

The cluster's own per-node ``kruise daemon`` processes are not started then (the chart's
DaemonSet replaces them). Needs a source checkout (the Dockerfile and the chart).
"""

from __future__ import annotations

import base64
import json
import subprocess
import time
import tomllib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypedDict

import yaml

from kruise.core.localcluster.binaries import source_root
from kruise.core.localcluster.cluster import LocalCluster
from kruise.core.localcluster.errors import ClusterError
from kruise.core.localcluster.realnode.images import REGISTRY_HOST
from kruise.core.localcluster.realnode.plan import NODE_SELECTOR, TOLERATION, run_dir_for

NAMESPACE = "kruise-system"
RELEASE = "kruise"
REPOSITORY = "kruise"
MANAGER = "kruise-controller-manager"
DAEMON = "kruise-daemon"
SECRET = "kruise-webhook-certs"
WEBHOOK_CONFIGURATIONS = (
    "mutatingwebhookconfiguration/kruise-mutating-webhook-configuration",
    "validatingwebhookconfiguration/kruise-validating-webhook-configuration",
)
#: CRDs whose conversion webhook the manager serves (``/convert``)
CONVERSION_CRDS = ("rollouts.rollouts.kruise.io", "batchreleases.rollouts.kruise.io")
Kubectl = Callable[..., str]
DEMO_PARTITION_PERCENT_LIMIT = 100
"""``manager.partitionPercentLimit`` of the local install, as the embedded demo runs its manager:
the demo's last step moves 100% of the replicas with 100% of the traffic, which upstream's default
(50) refuses for a partition-style Rollout (``vrollout.kb.io``)."""


class ImageValues(TypedDict):
    repository: str
    tag: str
    pullPolicy: str


class Toleration(TypedDict):
    key: str
    operator: str
    value: str
    effect: str


class ManagerValues(TypedDict):
    replicas: int
    image: ImageValues
    partitionPercentLimit: int
    nodeSelector: dict[str, str]
    tolerations: list[Toleration]


class DaemonValues(TypedDict):
    enabled: bool
    nodeSelector: dict[str, str]
    socketLocation: str
    socketFile: str


class ChartValues(TypedDict):
    """The values ``--install`` gives ``charts/kruise`` (everything else: the chart's defaults)."""

    manager: ManagerValues
    daemon: DaemonValues


def chart_values(*, tag: str, socket_dir: Path, replicas: int = 2) -> ChartValues:
    """Values placing kruise on the real nodes: image ``kruise.local/kruise:<tag>`` (the cluster's
    registry), the manager's ``replicas`` and the daemon with the nodes' CRI sockets
    ``<socket_dir>/<node name>.sock``; ``--partition-percent-limit`` as the embedded demo's
    manager (:data:`DEMO_PARTITION_PERCENT_LIMIT`), so ``kruise demo --no-cluster`` runs there."""
    toleration: Toleration = {
        "key": TOLERATION["key"],
        "operator": TOLERATION["operator"],
        "value": TOLERATION["value"],
        "effect": TOLERATION["effect"],
    }
    return {
        "manager": {
            "replicas": replicas,
            "image": {
                "repository": f"{REGISTRY_HOST}/{REPOSITORY}",
                "tag": tag,
                "pullPolicy": "IfNotPresent",
            },
            "partitionPercentLimit": DEMO_PARTITION_PERCENT_LIMIT,
            "nodeSelector": dict(NODE_SELECTOR),
            "tolerations": [toleration],
        },
        "daemon": {
            "enabled": True,
            "nodeSelector": dict(NODE_SELECTOR),
            "socketLocation": str(socket_dir),
            "socketFile": "$(NODE_NAME).sock",
        },
    }


def chart_version(source: Path) -> str:
    """The project's version (``pyproject.toml``): the image's tag."""
    return str(tomllib.loads((source / "pyproject.toml").read_text())["project"]["version"])


def ca_bundles(doc: dict[str, object]) -> list[str]:
    """Every ``clientConfig.caBundle`` of a webhook configuration or CRD (``""`` where unset)."""
    webhooks = doc.get("webhooks")
    if isinstance(webhooks, list):
        return [str((w.get("clientConfig") or {}).get("caBundle") or "") for w in webhooks]
    spec = doc.get("spec")
    conversion = spec.get("conversion") if isinstance(spec, dict) else None
    webhook = conversion.get("webhook") if isinstance(conversion, dict) else None
    client = webhook.get("clientConfig") if isinstance(webhook, dict) else None
    return [str(client.get("caBundle") or "")] if isinstance(client, dict) else [""]


@dataclass
class Installed:
    """What :func:`install` did: the image reference and the seconds each stage took."""

    image: str
    timings: dict[str, float] = field(default_factory=dict)


def build_and_push(source: Path, registry: str, *, log: Callable[[str], None]) -> str:
    """Run ``hack/build-image.sh --push <registry>/kruise``; returns the image name pods use.
    Raises :class:`ClusterError` with the script's output tail."""
    log(f"building the kruise image and pushing it to {registry}/{REPOSITORY} (hack/build-image.sh)")
    proc = subprocess.run(
        [str(source / "hack" / "build-image.sh"), "--push", f"{registry}/{REPOSITORY}"],
        cwd=source,
        capture_output=True,
        text=True,
        timeout=1800,
    )
    if proc.returncode != 0:
        raise ClusterError(f"hack/build-image.sh failed:\n{(proc.stdout + proc.stderr)[-3000:]}")
    return f"{REGISTRY_HOST}/{REPOSITORY}:{chart_version(source)}"


def helm_install(helm: Path, kubeconfig: str, source: Path, values: ChartValues, workdir: Path) -> None:
    """``helm install kruise charts/kruise -f <values>``; raises :class:`ClusterError`."""
    values_file = workdir / "kruise-values.yaml"
    values_file.write_text(yaml.safe_dump(dict(values), sort_keys=False))
    proc = subprocess.run(
        [str(helm), "install", RELEASE, str(source / "charts" / "kruise"), f"--kubeconfig={kubeconfig}",
         "-f", str(values_file)],
        capture_output=True,
        text=True,
        timeout=300,
    )  # fmt: skip
    if proc.returncode != 0:
        raise ClusterError(f"helm install failed: {proc.stderr.strip()[-3000:]}")


def wait_installed(kubectl: Kubectl, *, timeout: float = 300) -> dict[str, float]:
    """Wait until the manager Deployment and the daemon DaemonSet are rolled out, the Secret
    holds the CA and every webhook configuration's and conversion CRD's ``caBundle`` is that CA;
    returns ``{stage: seconds since the call}``. Raises :class:`ClusterError` on timeout."""
    t0 = time.monotonic()
    deadline = t0 + timeout
    timings: dict[str, float] = {}
    for kind, name in (("deployment", MANAGER), ("daemonset", DAEMON)):
        left = max(1, int(deadline - time.monotonic()))
        kubectl("-n", NAMESPACE, "rollout", "status", f"{kind}/{name}", f"--timeout={left}s")
        timings[f"{name}_ready_seconds"] = round(time.monotonic() - t0, 1)
    while True:
        secret = json.loads(kubectl("-n", NAMESPACE, "get", "secret", SECRET, "-o", "json"))
        ca = (secret.get("data") or {}).get("ca-cert.pem", "")
        docs = [json.loads(kubectl("get", ref, "-o", "json")) for ref in WEBHOOK_CONFIGURATIONS]
        docs += [json.loads(kubectl("get", "crd", name, "-o", "json")) for name in CONVERSION_CRDS]
        bundles = [b for d in docs for b in ca_bundles(d)]
        if ca and bundles and all(base64.b64decode(b) == base64.b64decode(ca) for b in bundles):
            timings["ca_bundles_seconds"] = round(time.monotonic() - t0, 1)
            return timings
        if time.monotonic() > deadline:
            raise ClusterError(f"the webhooks' caBundles were not patched within {timeout:.0f}s")
        time.sleep(1)


def install(cluster: LocalCluster, *, log: Callable[[str], None] = lambda msg: None) -> Installed:
    """Build and push the image, ``helm install`` the chart onto ``cluster`` (started with real
    nodes, so Services work) and wait for it (:func:`wait_installed`). Raises
    :class:`ClusterError`."""
    source = source_root()
    if source is None:
        raise ClusterError("--install needs a source checkout (the Dockerfile and charts/kruise)")
    state = cluster.state
    if state is None or not state.services or not state.real_nodes:
        raise ClusterError("--install needs a cluster started with real nodes (--real-nodes N)")
    t0 = time.monotonic()
    image = build_and_push(source, cluster.registry_addr(), log=log)
    installed = Installed(image=image, timings={"image_seconds": round(time.monotonic() - t0, 1)})
    log(f"helm install {RELEASE} charts/kruise (image {image})")
    t1 = time.monotonic()
    values = chart_values(tag=chart_version(source), socket_dir=run_dir_for(cluster.directory))
    helm_install(Path(state.bin_dir) / "helm", state.kubeconfig, source, values, cluster.directory)
    installed.timings.update(wait_installed(cluster.kubectl))
    installed.timings["install_seconds"] = round(time.monotonic() - t1, 1)
    return installed
