"""``kruise cluster up|env|down`` from the command line leaves nothing behind."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from kruise.core.localcluster.errors import RealNodesBusyError
from kruise.core.localcluster.realnode import busybox, pod_placement
from kruise.core.localcluster.realnode.host import load_record, read_sysctls
from kruise.core.localcluster.realnode.network import SERVICE_SYSCTLS
from kruise.core.localcluster.realnode.nodes import RealNodes

KRUISE = Path(sys.executable).parent / "kruise"


def _wait_for_a_free_host(timeout: float = 900) -> None:
    """Take turns, as the real-node fixtures do: wait while another cluster on this machine (a
    test session's, a developer's) holds the real nodes, so the snapshot is of a free host."""
    deadline = time.monotonic() + timeout
    while (record := load_record()) is not None and _alive(record.holder_pid):
        if time.monotonic() > deadline:
            pytest.fail(f"the real nodes are still held by {record.owner} after {timeout:.0f}s")
        time.sleep(2)


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


def _host_snapshot() -> dict[str, object]:
    """What a real node may change on the machine (see kruise.core.localcluster.realnode.host)."""
    cgroups = sorted(
        str(d) for h in Path("/sys/fs/cgroup").iterdir() if h.is_dir() for d in h.iterdir() if d.is_dir()
    )
    iptables = {
        cmd: subprocess.run([cmd], capture_output=True, text=True).stdout
        for cmd in ("iptables-save", "ip6tables-save")
    }
    return {
        "sysctls": read_sysctls(),
        "links": sorted(Path("/sys/class/net").iterdir()),
        "cgroups": cgroups,
        "iptables": {
            k: [line for line in v.splitlines() if not line.startswith("#")] for k, v in iptables.items()
        },
        "container_logs": sorted(Path("/var/log/containers").glob("*")),
        "netns": sorted(Path("/run/netns").glob("*")),
        "ip_forward": Path("/proc/sys/net/ipv4/ip_forward").read_text(),
        # kube-proxy's host side: the control-plane address on lo, the Service route, its tables
        "addresses": subprocess.run(["ip", "-o", "addr", "show"], capture_output=True, text=True).stdout,
        "routes": subprocess.run(
            ["ip", "route", "show", "table", "all"], capture_output=True, text=True
        ).stdout,
        "sysctls_services": read_sysctls(SERVICE_SYSCTLS),
    }


@pytest.mark.realnode
def test_cluster_up_with_a_real_node_and_down_restores_the_host(tmp_path: Path) -> None:
    """``kruise cluster up --real-nodes 1``: the real node Ready beside the KWOK node, a second
    cluster refused real nodes while it runs, and ``down`` leaves the machine as it was."""
    if os.environ.get("KRUISE_TEST_KUBECONFIG"):
        pytest.fail("the real-node group needs the embedded cluster")
    _wait_for_a_free_host()
    before = _host_snapshot()
    directory = tmp_path / "real-cluster"
    up = _run("cluster", "up", "--nodes", "1", "--real-nodes", "1", "--dir", str(directory))
    assert up.returncode == 0, up.stderr
    state = json.loads((directory / "state.json").read_text())
    try:
        assert "real node real-node-1 at 10.201.1.1" in up.stderr
        assert {"registry", "containerd/real-node-1", "kubelet/real-node-1", "kube-proxy/host"} <= set(
            state["pids"]
        )
        assert "KUBE-SERVICES" in subprocess.run(["iptables-save"], capture_output=True, text=True).stdout
        kubectl = [f"{state['bin_dir']}/kubectl", f"--kubeconfig={state['kubeconfig']}"]
        nodes = subprocess.run([*kubectl, "get", "nodes", "-o", "json"], capture_output=True, text=True)
        ready = {
            n["metadata"]["name"]: next(
                c["status"] for c in n["status"]["conditions"] if c["type"] == "Ready"
            )
            for n in json.loads(nodes.stdout)["items"]
        }
        assert ready == {"kwok-node-0": "True", "real-node-1": "True"}
        pod = json.dumps(
            {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {"name": "p", "namespace": "default"},
                "spec": {**pod_placement(), "containers": [{"name": "c", "image": busybox("v1")}]},
            }
        )
        subprocess.run([*kubectl, "create", "-f", "-"], input=pod, check=True, capture_output=True, text=True)
        waited = subprocess.run(
            [*kubectl, "wait", "--for=condition=Ready", "pod/p", "--timeout=60s"],
            capture_output=True,
            text=True,
        )
        assert waited.returncode == 0, waited.stderr
        assert read_sysctls()["vm/overcommit_memory"] == "1"  # the kubelet's setting, undone below
        with pytest.raises(RealNodesBusyError, match=str(directory)):
            RealNodes(tmp_path / "other", {}, attached=True).prepare(1)
    finally:
        down = _run("cluster", "down", "--dir", str(directory))
    assert down.returncode == 0, down.stderr
    assert "could not undo" not in down.stderr
    assert [name for name, pid in state["pids"].items() if _alive(pid)] == []
    leftovers = [p for p in Path("/proc").iterdir() if p.name.isdigit() and str(directory) in _cmdline(p)]
    assert leftovers == []
    assert _host_snapshot() == before


def _cmdline(proc: Path) -> str:
    try:
        return (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""
