"""What tests need from the cluster under test, embedded or external."""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from pathlib import Path

from kruise.core.localcluster import LocalCluster


@dataclass
class TestCluster:
    __test__ = False  # not a test class

    kubeconfig: str
    kubectl_bin: str = "kubectl"
    local: LocalCluster | None = None

    def __init__(self, kubeconfig: str, kubectl: str, local: LocalCluster | None) -> None:
        self.kubeconfig = kubeconfig
        self.kubectl_bin = kubectl
        self.local = local

    def kubectl(
        self, *args: str, input: str | None = None, check: bool = True
    ) -> subprocess.CompletedProcess[str]:
        proc = subprocess.run(
            [self.kubectl_bin, f"--kubeconfig={self.kubeconfig}", *args],
            input=input,
            capture_output=True,
            text=True,
        )
        if check and proc.returncode != 0:
            raise AssertionError(f"kubectl {' '.join(args)} failed ({proc.returncode}): {proc.stderr}")
        return proc

    def apply(self, manifest: Path) -> None:
        self.kubectl("apply", "--server-side", "--force-conflicts", "-f", str(manifest))
        self.kubectl("wait", "--for=condition=Established", "crd", "--all", "--timeout=60s")
