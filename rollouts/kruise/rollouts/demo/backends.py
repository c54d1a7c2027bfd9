"""What the demo's analysis reads, started on this machine: the traffic simulator and Prometheus.

The manager queries Prometheus (the AnalysisTemplate's ``provider.prometheus.address``), so
Prometheus must listen where the manager can reach it:

- the embedded demo runs the manager on this host: loopback;
- ``kruise demo --no-cluster`` against a manager installed in the cluster (``helm install
  charts/kruise``, e.g. ``kruise cluster up --real-nodes 1 --install``): the manager is a pod. When
  the kubeconfig's API server host is an address of this machine (the control-plane address
  ``10.201.0.1`` of a cluster started with real nodes, which pods route to as they reach the API
  server), Prometheus listens there; otherwise on loopback, and ``KRUISE_DEMO_PROMETHEUS`` names
  the address the manager should use instead (e.g. a proxy in front of it).
"""

from __future__ import annotations

import contextlib
import ipaddress
import socket
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from urllib.parse import urlsplit

import yaml

from kruise.core.localcluster.processes import free_port
from kruise.rollouts.demo.prometheus import PrometheusProcess

LOOPBACK = "127.0.0.1"


def is_local_address(host: str) -> bool:
    """True when ``host`` (an IPv4 literal) is an address of this machine (a socket binds to it)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        try:
            sock.bind((host, 0))
        except OSError:
            return False
    return True


def prometheus_host(server: str, is_local: Callable[[str], bool] = is_local_address) -> str:
    """Where the demo's Prometheus listens for a cluster whose API server is ``server`` (URL).

    The API server's host when it is an IPv4 address of this machine and not loopback (pods reach
    this machine there), else loopback (a manager on this host reaches it; a remote manager needs
    ``KRUISE_DEMO_PROMETHEUS``). Names are not resolved: a cluster of ``kruise cluster up`` is
    always addressed by IP.
    """
    host = urlsplit(server).hostname or ""
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return LOOPBACK
    if address.version != 4 or address.is_loopback or not is_local(host):
        return LOOPBACK
    return host


def kubeconfig_server(kubeconfig: str) -> str:
    """The ``server`` URL of the kubeconfig's current context (first cluster without one).

    Raises:
        KeyError: the kubeconfig names no cluster.
    """
    doc = yaml.safe_load(Path(kubeconfig).read_text()) or {}
    clusters = {c["name"]: c["cluster"] for c in doc.get("clusters") or []}
    contexts = {c["name"]: c["context"] for c in doc.get("contexts") or []}
    current = contexts.get(doc.get("current-context", ""))
    cluster = clusters[current["cluster"]] if current else next(iter(clusters.values()))
    return str(cluster["server"])


@contextlib.contextmanager
def analysis_backends(
    kubeconfig: str, namespace: str, error_rates: dict[str, float], workdir: Path, *, host: str = LOOPBACK
) -> Iterator[str]:
    """Run the traffic simulator (loopback) and Prometheus scraping it every second (on ``host``)
    for the ``with`` block; yields Prometheus' address (``http://host:port``). Both are stopped at
    the end. Raises :class:`FileNotFoundError` without ``prometheus`` (Debian's package) and
    :class:`RuntimeError` when it does not become ready."""
    sim_port, prom_port = free_port(), free_port(host)
    args = [sys.executable, "-m", "kruise.rollouts.demo.simulator", f"--kubeconfig={kubeconfig}"]
    args += [f"--namespace={namespace}", f"--port={sim_port}"]
    args += [f"--error-rate={image}={rate}" for image, rate in error_rates.items()]
    with open(workdir / "simulator.log", "wb") as log:
        simulator = subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT)
    prometheus = PrometheusProcess(prom_port, [f"{LOOPBACK}:{sim_port}"], host=host)
    try:
        prometheus.start()
        yield prometheus.address
    finally:
        simulator.terminate()
        simulator.wait(10)
        prometheus.stop()
