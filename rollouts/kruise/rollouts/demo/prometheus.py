"""Run Debian's ``prometheus`` on loopback for the demo, scraping the traffic simulator."""

from __future__ import annotations

import shutil
import subprocess
import tempfile
import time
import urllib.request
from pathlib import Path

import yaml


class PrometheusProcess:
    """Prometheus with a throw-away TSDB and a 1 s scrape of ``targets``, listening on
    ``host:port`` (loopback unless the manager runs elsewhere: :mod:`kruise.rollouts.demo.backends`)."""

    def __init__(self, port: int, targets: list[str], *, host: str = "127.0.0.1") -> None:
        self.host = host
        self.port = port
        self.targets = targets
        self.workdir = Path(tempfile.mkdtemp(prefix="kruise-demo-prometheus-"))
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def address(self) -> str:
        return f"http://{self.host}:{self.port}"

    def start(self, timeout: float = 30.0) -> None:
        binary = shutil.which("prometheus")
        if binary is None:
            raise FileNotFoundError("prometheus not found: run hack/install-system-deps.sh (Debian package)")
        config = {
            "global": {"scrape_interval": "1s", "scrape_timeout": "1s", "evaluation_interval": "1s"},
            "scrape_configs": [{"job_name": "demo", "static_configs": [{"targets": self.targets}]}],
        }
        (self.workdir / "prometheus.yml").write_text(yaml.safe_dump(config))
        log = open(self.workdir / "prometheus.log", "wb")  # noqa: SIM115 - owned by the child
        self.proc = subprocess.Popen(
            [
                binary,
                f"--config.file={self.workdir / 'prometheus.yml'}",
                f"--storage.tsdb.path={self.workdir / 'tsdb'}",
                f"--web.listen-address={self.host}:{self.port}",
                "--log.level=warn",
            ],
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        log.close()
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                with urllib.request.urlopen(f"{self.address}/-/ready", timeout=1) as answer:
                    if answer.status == 200:
                        return
            except OSError:
                time.sleep(0.2)
        raise RuntimeError("prometheus did not become ready")

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
        shutil.rmtree(self.workdir, ignore_errors=True)
