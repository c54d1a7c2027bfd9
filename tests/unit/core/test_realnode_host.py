"""The host side of real nodes: what identifies a real node's processes, and pruning what the
kubelet and containerd leave at fixed places. (Undoing on a real machine is covered by
``tests/integration/test_cluster_cli.py``.)"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from kruise.core.localcluster.realnode.host import HostRecord, made_again, prune, socket_identity

OWNER = "/tmp/kruise-test-abc/cluster"


def record(**kw: object) -> HostRecord:
    defaults: dict[str, object] = {
        "owner": OWNER,
        "run_dir": "/run/kruise/0123456789ab",
        "holder_pid": 2**22 + 1,  # above pid_max: never alive
        "holder_start": "1",
        "nodes": [1, 2],
    }
    return HostRecord(**{**defaults, **kw})  # type: ignore[arg-type]


def test_marks_name_the_node_dirs_never_the_cluster_dir() -> None:
    """The API server's command line names the cluster dir (certificates): it must never match."""
    marks = record().marks()
    apiserver = (
        f"kube-apiserver --tls-cert-file={OWNER}/pki/apiserver.crt --client-ca-file={OWNER}/pki/ca.crt"
    )
    kubelet = f"kubelet --config={OWNER}/real-node-2/kubelet-config/config.yaml"
    shim = "containerd-shim-runc-v2 -namespace k8s.io -address /run/kruise/0123456789ab/real-node-1.sock"
    registry = f"docker-registry serve {OWNER}/registry/config.yaml"
    assert not any(m in apiserver for m in marks)
    assert all(any(m in line for m in marks) for line in (kubelet, shim, registry))


def test_a_record_is_alive_while_its_holder_or_a_component_runs() -> None:
    assert not record().alive()
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)", f"{OWNER}/real-node-1/x"])
    try:
        # until the child has exec'd, /proc shows the parent's command line (a loaded machine)
        for _ in range(500):
            if OWNER in Path(f"/proc/{child.pid}/cmdline").read_text(errors="replace"):
                break
            time.sleep(0.01)
        assert record(pids={"kubelet/real-node-1": child.pid}).alive()
        assert not record(pids={"kubelet/real-node-1": child.pid}, owner="/elsewhere").alive()
    finally:
        child.kill()
        child.wait()
    me = HostRecord(owner=OWNER, run_dir="/run/x", holder_pid=os.getpid(), holder_start=_start(os.getpid()))
    assert me.alive()


def _start(pid: int) -> str:
    return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[19]


def test_prune_removes_sockets_and_empty_dirs_but_keeps_files() -> None:
    # a short directory of its own: a socket path must fit sun_path (108 bytes), and pytest's
    # tmp_path under an xdist worker does not
    with tempfile.TemporaryDirectory(prefix="prune-") as short:
        _prune_case(Path(short) / "var-lib-kubelet")


def _prune_case(top: Path) -> None:
    (top / "device-plugins").mkdir(parents=True)
    sock = socket.socket(socket.AF_UNIX)
    sock.bind(str(top / "device-plugins" / "kubelet.sock"))
    sock.close()
    (top / "empty" / "deeper").mkdir(parents=True)
    prune(top)
    assert not top.exists()

    (top / "device-plugins").mkdir(parents=True)
    (top / "someone-elses-file").write_text("keep me")
    prune(top)
    assert (top / "someone-elses-file").read_text() == "keep me"
    assert not (top / "device-plugins").exists()


def test_plans_of_a_record_use_its_directories() -> None:
    plans = record().plans()
    assert [p.name for p in plans] == ["real-node-1", "real-node-2"]
    assert all(str(p.dir).startswith(OWNER) and str(p.kubelet_dir).startswith("/run/kruise/") for p in plans)


def test_a_record_written_by_a_newer_version_still_loads(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An unknown field must not make the record unreadable: a reader that took it for "no
    record" would take the machine while its owner still runs or is being undone."""
    from dataclasses import asdict

    from kruise.core.localcluster.realnode import host

    monkeypatch.setattr(host, "RECORD", tmp_path / "real-nodes.json")
    written = {**asdict(record(control_plane_ip="10.201.0.1")), "field_of_a_later_version": [1]}
    host.RECORD.write_text(json.dumps(written))
    loaded = host.load_record()
    assert loaded is not None and loaded.owner == OWNER and loaded.control_plane_ip == "10.201.0.1"
    host.RECORD.write_text("{not json")
    assert host.load_record() is None


def test_services_fields_live_apart_so_older_readers_still_see_the_owner(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A reader of an older version builds ``HostRecord(**json)`` from real-nodes.json: the
    kube-proxy fields go to their own file, keyed by owner, and come back together."""
    from kruise.core.localcluster.realnode import host

    monkeypatch.setattr(host, "RUN_ROOT", tmp_path)
    monkeypatch.setattr(host, "RECORD", tmp_path / "real-nodes.json")
    monkeypatch.setattr(host, "SERVICES_RECORD", tmp_path / "real-nodes.services.json")
    snapshot = {"ipv4": {"tables": {"filter": ["INPUT"]}}}
    record(control_plane_ip="10.201.0.1", kube_proxy="/b/kube-proxy", iptables_before=snapshot).save()
    base = json.loads(host.RECORD.read_text())
    assert not set(host.SERVICE_FIELDS) & set(base) and base["owner"] == OWNER
    loaded = host.load_record()
    assert loaded is not None
    assert (loaded.control_plane_ip, loaded.kube_proxy, loaded.iptables_before) == (
        "10.201.0.1",
        "/b/kube-proxy",
        snapshot,
    )
    record(owner="/another/cluster").save()  # a new owner's record: the old services fields go
    other = host.load_record()
    assert other is not None and other.control_plane_ip == "" and other.iptables_before == {}


def test_a_socket_made_again_at_the_same_path_is_told_apart(tmp_path: Path) -> None:
    """The kubelets take turns at the shared device-plugin socket: the next one starts once the
    socket is a new file, even when the new file gets the old one's inode."""
    path = tmp_path / "kubelet.sock"
    assert socket_identity(path) is None and not made_again(path, None)
    with socket.socket(socket.AF_UNIX) as first:
        first.bind(str(path))
        before = socket_identity(path)
        assert before is not None and made_again(path, None)
        assert not made_again(path, before), "the same file is not made again"
    time.sleep(0.01)  # ctime's granularity
    path.unlink()
    with socket.socket(socket.AF_UNIX) as second:
        second.bind(str(path))
        assert made_again(path, before)
