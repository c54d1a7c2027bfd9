"""A real Prometheus for the analysis tests, scraping a small exporter the tests control.

``PrometheusStack.start()`` launches two processes on loopback:

- the exporter (this file run as a script): ``http_requests_total{revision, code}`` counters
  that grow every 100 ms by ``per_tick`` requests per revision, ``round(per_tick * error_rate)``
  of them with ``code="500"``, plus an ``app_error_ratio{revision}`` gauge holding the configured
  rate. ``POST /control?revision=r&error_rate=0.5[&per_tick=10]`` changes a revision live.
- Debian's ``prometheus`` with a throw-away TSDB, scraping the exporter every second, plus any
  ``extra_scrape_configs`` (YAML list items; ``{exporter}`` in them is the exporter's
  ``host:port``), e.g. :func:`pod_scrape_config`: one target per pod of a namespace, each
  scraping the exporter and labelled by the pod's labels.

``start()`` returns once the exporter's series are queryable (about 5 s); ``stop()`` ends both
processes and removes the TSDB. Run the exporter alone with
``python tests/support/prometheus.py --port 9101 --revision good=0 --revision bad=0.5``.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

PER_TICK = 10
TICK_SECONDS = 0.1
REVISIONS = {"good": 0.0, "bad": 0.5, "idle": None, "flip": 0.0}
"""The exporter's revisions: error rate, or None for a revision that serves no requests at all."""


def prometheus_binary() -> str:
    """Debian's ``prometheus`` for a test: skipped when it is not installed (failed under CI)."""
    import pytest  # the module also runs as a script, without pytest

    binary = shutil.which("prometheus")
    if binary is None:
        message = "Debian's prometheus is not installed (hack/install-system-deps.sh installs it)"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    return binary


def free_port() -> int:
    """A TCP port free on 127.0.0.1 right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _get(url: str, timeout: float = 2.0) -> tuple[int, bytes]:
    try:
        with urllib.request.urlopen(url, timeout=timeout) as answer:
            return int(answer.status), answer.read()
    except urllib.error.HTTPError as err:
        return err.code, err.read()
    except OSError:
        return 0, b""


@dataclass
class PrometheusStack:
    """The exporter plus Prometheus; ``address`` is Prometheus' base URL once started."""

    revisions: dict[str, float | None] = field(default_factory=lambda: dict(REVISIONS))
    prometheus_bin: str = "prometheus"
    workdir: Path = field(default_factory=lambda: Path(tempfile.mkdtemp(prefix="kruise-prometheus-")))
    exporter_port: int = 0
    port: int = 0
    extra_scrape_configs: str = ""
    _procs: list[subprocess.Popen[bytes]] = field(default_factory=list)

    @property
    def address(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def exporter(self) -> str:
        return f"http://127.0.0.1:{self.exporter_port}"

    def start(self, timeout: float = 30.0) -> PrometheusStack:
        """Start both processes and wait until the exporter's data is queryable."""
        self.exporter_port, self.port = free_port(), free_port()
        specs = [f"{r}={'' if rate is None else rate}" for r, rate in self.revisions.items()]
        exporter = [sys.executable, __file__, "--port", str(self.exporter_port)]
        for spec in specs:
            exporter += ["--revision", spec]
        self._spawn(exporter, "exporter.log")
        config = self.workdir / "prometheus.yml"
        config.write_text(
            "global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n  evaluation_interval: 1s\n"
            "scrape_configs:\n  - job_name: app\n    static_configs:\n"
            f"      - targets: ['127.0.0.1:{self.exporter_port}']\n"
            + self.extra_scrape_configs.replace("{exporter}", f"127.0.0.1:{self.exporter_port}")
        )
        self._spawn(
            [
                self.prometheus_bin,
                f"--config.file={config}",
                f"--storage.tsdb.path={self.workdir / 'tsdb'}",
                f"--web.listen-address=127.0.0.1:{self.port}",
                "--log.level=warn",
            ],
            "prometheus.log",
        )
        try:
            self._wait_queryable(timeout)
        except BaseException:
            self.stop()
            raise
        return self

    def _spawn(self, cmd: list[str], log: str) -> None:
        out = (self.workdir / log).open("wb")
        self._procs.append(
            subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
        )

    def _wait_queryable(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        query = 'sum(rate(http_requests_total{revision="good"}[5s]))'
        while time.monotonic() < deadline:
            for proc in self._procs:
                if proc.poll() is not None:
                    raise RuntimeError(f"{proc.args[0]} exited with {proc.returncode}: {self.logs()}")
            if self.query(query):
                return
            time.sleep(0.25)
        raise TimeoutError(f"Prometheus data not queryable after {timeout}s: {self.logs()}")

    def query(self, promql: str) -> list[Any]:
        """The ``result`` of an instant query (empty on any failure)."""
        status, body = _get(f"{self.address}/api/v1/query?" + urllib.parse.urlencode({"query": promql}))
        if status != 200:
            return []
        return list(json.loads(body)["data"]["result"] or [])

    def set_error_rate(self, revision: str, error_rate: float, per_tick: int = PER_TICK) -> None:
        """Change a revision's error rate (0..1) live."""
        params = urllib.parse.urlencode(
            {"revision": revision, "error_rate": error_rate, "per_tick": per_tick}
        )
        request = urllib.request.Request(f"{self.exporter}/control?{params}", method="POST")
        with urllib.request.urlopen(request, timeout=2) as answer:
            assert answer.status == 200

    def logs(self) -> str:
        return "\n".join(
            f"--- {p.name}\n{p.read_text(errors='replace')[-2000:]}"
            for p in sorted(self.workdir.glob("*.log"))
        )

    def stop(self) -> None:
        """Stop both processes (SIGTERM, then SIGKILL) and remove the TSDB."""
        for proc in self._procs:
            if proc.poll() is None:
                proc.terminate()
        for proc in self._procs:
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout=5)
        self._procs.clear()
        shutil.rmtree(self.workdir, ignore_errors=True)


def _meta_name(label: str) -> str:
    return "".join(c if c.isalnum() else "_" for c in label)


def pod_scrape_config(job: str, sd_url: str, labels: dict[str, str]) -> str:
    """A scrape job over pod discovery, relabelled as a cluster's Prometheus relabels its
    ``kubernetes_sd_configs`` (role pod) targets: ``pod`` from ``__meta_kubernetes_pod_name`` and
    ``labels`` (target label -> pod label name) from ``__meta_kubernetes_pod_label_*``; every target
    is scraped at the exporter (KWOK pods serve nothing). Debian's Prometheus is built without the
    Kubernetes discovery, so the targets come from ``sd_url`` (``http_sd_configs``, refreshed every
    second), which serves :func:`pod_targets` of the pods the API server lists."""
    relabel = [
        "      - source_labels: [__meta_kubernetes_pod_name]\n        target_label: pod\n",
        "      - target_label: __address__\n        replacement: '{exporter}'\n",
    ]
    for target, pod_label in labels.items():
        meta = "__meta_kubernetes_pod_label_" + _meta_name(pod_label)
        relabel.append(f"      - source_labels: [{meta}]\n        target_label: {target}\n")
    return (
        f"  - job_name: {job}\n    http_sd_configs:\n      - url: '{sd_url}'\n        refresh_interval: 1s\n"
        "    relabel_configs:\n" + "".join(relabel)
    )


def pod_targets(pods: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """HTTP service-discovery target groups for ``pods``, one per live pod, with the meta labels
    Kubernetes discovery gives (``__meta_kubernetes_namespace``, ``_pod_name``, ``_pod_ip``,
    ``_pod_label_<label>``)."""
    groups = []
    for pod in pods:
        meta = pod.get("metadata") or {}
        if meta.get("deletionTimestamp"):
            continue
        labels = {
            "__meta_kubernetes_namespace": str(meta.get("namespace") or ""),
            "__meta_kubernetes_pod_name": str(meta.get("name") or ""),
            "__meta_kubernetes_pod_ip": str((pod.get("status") or {}).get("podIP") or ""),
        }
        for key, value in (meta.get("labels") or {}).items():
            labels["__meta_kubernetes_pod_label_" + _meta_name(key)] = str(value)
        groups.append({"targets": [labels["__meta_kubernetes_pod_ip"] or "pending"], "labels": labels})
    return groups


# --- the exporter process -----------------------------------------------------------------


def _serve(port: int, revisions: dict[str, float | None]) -> None:
    from prometheus_client import CollectorRegistry, Counter, Gauge, generate_latest

    registry = CollectorRegistry()
    requests = Counter("http_requests", "Requests served", ["revision", "code"], registry=registry)
    ratio = Gauge("app_error_ratio", "Configured error rate", ["revision"], registry=registry)
    lock = threading.Lock()
    state: dict[str, tuple[int, float]] = {}

    def configure(revision: str, rate: float | None, per_tick: int = PER_TICK) -> None:
        with lock:
            state[revision] = (0 if rate is None else per_tick, rate or 0.0)
            requests.labels(revision, "200").inc(0)
            requests.labels(revision, "500").inc(0)
            ratio.labels(revision).set(rate if rate is not None else float("nan"))

    for name, rate in revisions.items():
        configure(name, rate)

    def tick() -> None:
        while True:
            with lock:
                for revision, (per_tick, rate) in state.items():
                    errors = round(per_tick * rate)
                    requests.labels(revision, "500").inc(errors)
                    requests.labels(revision, "200").inc(per_tick - errors)
            time.sleep(TICK_SECONDS)

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            body = generate_latest(registry)
            self.send_response(200)
            self.send_header("Content-Type", "text/plain; version=0.0.4")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_POST(self) -> None:
            params = urllib.parse.parse_qs(urllib.parse.urlsplit(self.path).query)
            configure(
                params["revision"][0],
                float(params["error_rate"][0]),
                int(params.get("per_tick", [PER_TICK])[0]),
            )
            self.send_response(200)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *args: Any) -> None:
            return

    threading.Thread(target=tick, daemon=True).start()
    ThreadingHTTPServer(("127.0.0.1", port), Handler).serve_forever()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--revision", action="append", default=[], help="name=error_rate (empty: idle)")
    options = parser.parse_args(argv)
    revisions: dict[str, float | None] = {}
    for spec in options.revision:
        name, _, rate = spec.partition("=")
        revisions[name] = float(rate) if rate else None
    with contextlib.suppress(KeyboardInterrupt):
        _serve(options.port, revisions)


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    main()
