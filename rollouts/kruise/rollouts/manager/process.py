"""Run ``kruise manager`` as a child process (tests, benchmarks, the demo).

The child serves webhooks on a free loopback port and registers them by URL, so
the local API server calls it directly.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
import urllib.request
from collections.abc import Mapping
from pathlib import Path

from kruise.core.localcluster.cluster import free_port


class ManagerProcess:
    """A kruise-manager subprocess with its own ports, certificates and log file."""

    def __init__(
        self,
        kubeconfig: str,
        workdir: Path,
        *,
        extra_args: tuple[str, ...] = (),
        name: str = "manager",
        env: Mapping[str, str] | None = None,
        log_level: str | None = None,
    ):
        self.kubeconfig = kubeconfig
        self.workdir = workdir
        self.extra_args = extra_args
        self.name = name
        self.env = dict(env or {})  # extra environment (e.g. KRUISE_FAILPOINTS for fault tests)
        self.log_level = log_level
        self.webhook_port = free_port()
        self.health_port = free_port()
        self.metrics_port = free_port()
        self.log_path = workdir / f"{name}.log"
        self.proc: subprocess.Popen[bytes] | None = None

    def args(self) -> list[str]:
        return [
            _kruise_executable(),
            "manager",
            f"--kubeconfig={self.kubeconfig}",
            "--webhook-host=127.0.0.1",
            f"--webhook-port={self.webhook_port}",
            f"--webhook-url-base=https://127.0.0.1:{self.webhook_port}",
            f"--webhook-cert-dir={self.workdir / 'certs'}",
            f"--health-probe-addr=127.0.0.1:{self.health_port}",
            f"--metrics-addr=127.0.0.1:{self.metrics_port}",
            "--kube-client-qps=500",
            "--kube-client-burst=1000",
            *self.extra_args,
        ]

    def start(self, timeout: float = 60.0) -> None:
        self.workdir.mkdir(parents=True, exist_ok=True)
        log = open(self.log_path, "ab")  # noqa: SIM115 - owned by the child
        env = {
            **os.environ,
            "KRUISE_LOG_LEVEL": self.log_level or os.environ.get("KRUISE_LOG_LEVEL", "INFO"),
            **self.env,
        }
        self.proc = subprocess.Popen(self.args(), stdout=log, stderr=subprocess.STDOUT, env=env)
        log.close()
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"manager exited with {self.proc.returncode}:\n{self.log_tail()}")
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{self.health_port}/healthz", timeout=1):
                    return
            except OSError:
                time.sleep(0.1)
        raise RuntimeError(f"manager not healthy after {timeout}s:\n{self.log_tail()}")

    def log_tail(self, lines: int = 60) -> str:
        if not self.log_path.exists():
            return ""
        return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])

    def stop(self, sig: int = signal.SIGTERM, timeout: float = 15.0) -> int | None:
        if self.proc is None or self.proc.poll() is not None:
            return self.proc.returncode if self.proc else None
        self.proc.send_signal(sig)
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            return self.proc.wait(5)

    def kill(self) -> None:
        self.stop(signal.SIGKILL)


def _kruise_executable() -> str:
    beside = Path(sys.executable).parent / "kruise"
    if beside.exists():
        return str(beside)
    found = shutil.which("kruise")
    if found is None:
        raise FileNotFoundError("the kruise console script is not installed")
    return found
