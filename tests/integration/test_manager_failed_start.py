"""A manager replica that cannot start leaves the cluster's webhooks alone.

Every port (webhooks, probes, metrics) is bound before the replica points the webhook
configurations at itself. A second out-of-cluster manager whose metrics port was taken used to
rewrite every webhook URL and CA to its own, then die: every CloneSet create failed with
``connection refused`` until the first manager was restarted.
"""

from __future__ import annotations

import socket
import subprocess
import sys
from pathlib import Path

import pytest

from kruise.core.kube import KubeClient
from kruise.core.kube.resources import MUTATING_WEBHOOKS
from kruise.core.webhook.configuration import MUTATING_NAME
from kruise.rollouts.manager.process import ManagerProcess
from tests.support.cluster import TestCluster

pytestmark = pytest.mark.usefixtures("manager")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def _urls(kube: KubeClient) -> list[str]:
    config = await kube.get(MUTATING_WEBHOOKS, MUTATING_NAME)
    return [str(h["clientConfig"].get("url")) for h in config["webhooks"]]


@pytest.mark.parametrize("taken_flag", ["--metrics-addr", "--health-probe-addr", "--webhook-port"])
async def test_a_replica_whose_port_is_taken_changes_no_webhook(
    kube: KubeClient, cluster: TestCluster, manager: ManagerProcess, tmp_path: Path, taken_flag: str
) -> None:
    before = await _urls(kube)
    assert all(url.startswith(f"https://127.0.0.1:{manager.webhook_port}/") for url in before), before
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        busy = taken.getsockname()[1]
        ports = {flag: _free_port() for flag in ("--metrics-addr", "--health-probe-addr", "--webhook-port")}
        ports[taken_flag] = busy
        webhook = ports["--webhook-port"]
        ran = subprocess.run(
            [
                str(Path(sys.executable).parent / "kruise"),
                "manager",
                f"--kubeconfig={cluster.kubeconfig}",
                "--webhook-host=127.0.0.1",
                f"--webhook-port={webhook}",
                f"--webhook-url-base=https://127.0.0.1:{webhook}",
                f"--webhook-cert-dir={tmp_path / 'certs'}",
                f"--health-probe-addr=127.0.0.1:{ports['--health-probe-addr']}",
                f"--metrics-addr=127.0.0.1:{ports['--metrics-addr']}",
            ],
            capture_output=True,
            text=True,
            timeout=120,
        )
    assert ran.returncode == 1, ran.stderr[-2000:]
    error = ran.stderr.strip().splitlines()[-1]
    assert error.startswith("kruise manager: ") and "address already in use" in error, ran.stderr[-2000:]
    assert str(busy) in error, error  # names the port
    assert "Traceback" not in ran.stderr, ran.stderr[-2000:]  # one clear line, not a stack
    assert await _urls(kube) == before
