"""``kubectl kruise ...`` run through kubectl's own plugin mechanism, as a release engineer runs it.

``kubectl-kruise`` (the console script in the virtualenv's ``bin``) is put on ``PATH`` beside the
``kubectl`` of the control plane, and each test gets a kubeconfig whose context names its
namespace: no command passes ``-n`` unless the test is about ``-n``.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml

from tests.support.cluster import TestCluster

Kubectl = Callable[..., subprocess.CompletedProcess[str]]


@pytest.fixture
def context_kubeconfig(cluster: TestCluster, namespace: str, tmp_path: Path) -> Path:
    """The session's kubeconfig with the test's namespace set on its current context, plus a
    context ``elsewhere`` on the same cluster whose namespace is ``default``."""
    config = yaml.safe_load(Path(cluster.kubeconfig).read_text())
    for ctx in list(config["contexts"]):
        if ctx["name"] == config["current-context"]:
            ctx["context"]["namespace"] = namespace
            config["contexts"].append(
                {"name": "elsewhere", "context": {**ctx["context"], "namespace": "default"}}
            )
    path = tmp_path / "kubeconfig"
    path.write_text(yaml.safe_dump(config))
    return path


@pytest.fixture
def kk(cluster: TestCluster, context_kubeconfig: Path) -> Kubectl:
    """``kk("rollout", "status", ...)`` runs ``kubectl kruise rollout status ...`` (KUBECONFIG set)."""
    bin_dir = str(Path(sys.executable).parent)
    kubectl_dir = str(Path(cluster.kubectl_bin).parent)
    env = {
        **os.environ,
        "PATH": f"{bin_dir}:{kubectl_dir}:{os.environ.get('PATH', '')}",
        "KUBECONFIG": str(context_kubeconfig),
    }
    kubectl = str(Path(cluster.kubectl_bin))

    def run(*args: str, timeout: float = 120, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [kubectl, "kruise", *args], capture_output=True, text=True, env=env, timeout=timeout, input=stdin
        )

    return run
