"""Probes for ``bench/sidecarset.py``: where a pod webhook call spends its time, and the floor.

- :class:`Probes` reads the API server's and the manager's ``/metrics``: the API server's calls
  of a webhook (``apiserver_admission_webhook_admission_duration_seconds``: from sending the
  review to its decoded answer, TLS, connection set-up and the webhook's queueing included)
  against the manager's own handling (``controller_runtime_webhook_latency_seconds``: from its
  handler starting to its answer).
- The floor: ``bench/allow_webhook.py``, a trivial always-allow webhook in a process of its own,
  registered for one namespace, so a scenario measures what calling any webhook costs.
"""

from __future__ import annotations

import base64
import subprocess
import sys
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from prometheus_client.parser import text_string_to_metric_families
from rich.table import Table

from kruise.core.localcluster import LocalCluster
from kruise.core.localcluster.cluster import free_port
from kruise.rollouts.manager.process import ManagerProcess

JSON = dict[str, Any]
FLOOR_WEBHOOK = "bench-floor.kruise.io"
Sums = dict[str, tuple[float, float]]
"""Series -> (seconds summed, count)."""
SERIES = (
    (
        "apiserver_admission_webhook_admission_duration_seconds",
        "name",
        "mpod.kb.io",
        "api server: mpod.kb.io",
    ),
    ("controller_runtime_webhook_latency_seconds", "webhook", "/mutate-pod", "manager: /mutate-pod handler"),
    (
        "apiserver_admission_webhook_admission_duration_seconds",
        "name",
        FLOOR_WEBHOOK,
        "api server: floor webhook",
    ),
)


@dataclass
class Probes:
    """The ``/metrics`` of the API server and of the manager, for :func:`breakdown`."""

    cluster: LocalCluster
    manager: ManagerProcess
    series: tuple[tuple[str, str, str, str], ...] = SERIES
    """(metric, label, label value, title) rows read; :func:`breakdown` needs :data:`SERIES`."""

    def sums(self) -> Sums:
        """``series`` now, from both ``/metrics`` endpoints."""
        url = f"http://127.0.0.1:{self.manager.metrics_port}/metrics"
        with urllib.request.urlopen(url, timeout=10) as resp:
            texts = [self.cluster.kubectl("get", "--raw", "/metrics"), resp.read().decode()]
        wanted = {(metric, label, value): title for metric, label, value, title in self.series}
        out: dict[str, list[float]] = {}
        for text in texts:
            for family in text_string_to_metric_families(text):
                for sample in family.samples:
                    metric = sample.name.removesuffix("_sum").removesuffix("_count")
                    for (name, label, value), title in wanted.items():
                        if metric == name and sample.labels.get(label) == value:
                            slot = out.setdefault(title, [0.0, 0.0])
                            slot[0 if sample.name.endswith("_sum") else 1] += sample.value
        return {k: (v[0], v[1]) for k, v in out.items()}


def spent(before: Sums, after: Sums, into: Sums) -> None:
    """Add what each series gained from ``before`` to ``after`` into ``into``."""
    for series, (total, count) in after.items():
        old, acc = before.get(series, (0.0, 0.0)), into.get(series, (0.0, 0.0))
        into[series] = (acc[0] + total - old[0], acc[1] + count - old[1])


def breakdown(sums: Sums) -> Table:
    """Mean milliseconds per webhook call over what :func:`spent` gathered."""
    table = Table(title="Where a webhook call spends its time (means over the latency bursts)")
    for col in ("seen by", "calls", "mean ms"):
        table.add_column(col, justify="right")
    means: dict[str, float] = {}
    for *_, series in SERIES:
        total, count = sums.get(series, (0.0, 0.0))
        means[series] = total / count * 1000 if count else float("nan")
        table.add_row(series, f"{count:.0f}", f"{means[series]:.2f}")
    gap = means[SERIES[0][3]] - means[SERIES[1][3]]
    table.add_row("mpod.kb.io outside the handler (TLS, HTTP, queueing)", "", f"{gap:.2f}")
    return table


def floor_webhook(kube_ns: str, port: int, ca: bytes) -> JSON:
    """A MutatingWebhookConfiguration sending every pod CREATE of ``kube_ns`` to ``port``."""
    return {
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "MutatingWebhookConfiguration",
        "metadata": {"name": FLOOR_WEBHOOK},
        "webhooks": [
            {
                "name": FLOOR_WEBHOOK,
                "clientConfig": {
                    "url": f"https://127.0.0.1:{port}/allow",
                    "caBundle": base64.b64encode(ca).decode(),
                },
                "rules": [
                    {
                        "apiGroups": [""],
                        "apiVersions": ["v1"],
                        "operations": ["CREATE"],
                        "resources": ["pods"],
                    }
                ],
                "namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": kube_ns}},
                "failurePolicy": "Fail",
                "sideEffects": "None",
                "admissionReviewVersions": ["v1"],
                "timeoutSeconds": 10,
            }
        ],
    }


def start_floor_webhook(certs: Path) -> tuple[subprocess.Popen[bytes], int]:
    """``bench/allow_webhook.py`` on a free port with the manager's certificate."""
    port = free_port()
    script = Path(__file__).with_name("allow_webhook.py")
    args = [sys.executable, str(script), str(port), str(certs / "tls.crt"), str(certs / "tls.key")]
    proc = subprocess.Popen(args)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        probe = subprocess.run(["ss", "-tlnH", f"( sport = :{port} )"], capture_output=True, text=True)
        if probe.stdout.strip():
            return proc, port
        time.sleep(0.1)
    proc.kill()
    raise RuntimeError("the floor webhook did not listen")
