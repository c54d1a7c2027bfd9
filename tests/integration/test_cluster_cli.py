"""``kruise cluster up|env|down`` from the command line leaves nothing behind."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

KRUISE = Path(sys.executable).parent / "kruise"


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(KRUISE), *args], capture_output=True, text=True, timeout=120)


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(")")[-1].split()[0] != "Z"
    except OSError:
        return False


def test_cluster_up_env_down(tmp_path: Path) -> None:
    if os.environ.get("KRUISE_TEST_KUBECONFIG"):
        pytest.skip("external cluster")
    directory = tmp_path / "cli-cluster"
    up = _run("cluster", "up", "--nodes", "1", "--dir", str(directory))
    assert up.returncode == 0, up.stderr
    assert up.stdout.strip() == f"export KUBECONFIG={directory / 'kubeconfig'}"
    assert "control plane up in" in up.stderr
    state = json.loads((directory / "state.json").read_text())
    assert set(state["pids"]) == {
        "etcd",
        "kube-apiserver",
        "kube-controller-manager",
        "kube-scheduler",
        "kwok",
    }
    try:
        env = _run("cluster", "env", "--dir", str(directory))
        assert env.returncode == 0, env.stderr
        assert env.stdout.strip() == str(directory / "kubeconfig")
        assert all(_alive(pid) for pid in state["pids"].values())
    finally:
        down = _run("cluster", "down", "--dir", str(directory))
    assert down.returncode == 0, down.stderr
    assert not directory.exists()
    assert not Path(state["etcd_data"]).exists()
    assert [name for name, pid in state["pids"].items() if _alive(pid)] == []
    # env on a stopped cluster says so and fails
    assert _run("cluster", "env", "--dir", str(directory)).returncode == 1
