"""The machine-wide side of real nodes: one owner at a time, and undoing what they change.

A kubelet and its containerd change the machine, not just their directories:

- sysctls the kubelet sets at start (``vm.overcommit_memory``, ``vm.panic_on_oom``,
  ``kernel.panic``, ``kernel.panic_on_oops``, ``kernel.keys.root_max{keys,bytes}``);
- a bridge per node (made by the cluster, used by the CNI ``bridge`` plugin);
- cgroups: every pod lives under ``/kruise-real-node-<i>`` in each v1 hierarchy;
- mounts: the kubelet bind-mounts its root dir onto itself; volumes, rootfs and shm
  mounts sit under the node dir;
- ``/var/log/containers`` symlinks into the node's pod logs, the CNI result cache, and the
  directories the kubelet and containerd make where they do not take a path from us
  (``/var/lib/kubelet/device-plugins``, ``/var/lib/cni``, ``/run/netns``, ``/run/containerd/s``):
  removed again when they did not exist before (sockets and empty directories only);
- processes outliving their parent: containerd shims and the containers themselves.

The kubelet makes no iptables rule (``makeIPTablesUtilChains: false``) and the CNI network
masquerades nothing; a cluster started with real nodes also runs kube-proxy, whose host changes
(control-plane address, chains, forwarding on the bridges) are
:mod:`~kruise.core.localcluster.realnode.network`'s, recorded here too. Because sysctls and the
kubelet's view of the machine are global, only one cluster per machine may run real nodes:
:func:`acquire` takes ``/run/kruise/real-nodes.json`` under an ``flock`` and raises
:class:`RealNodesBusyError` naming the owner when it is alive. A record whose owner is dead (a
SIGKILLed test session) is undone first, so a crash never leaves the next cluster a changed
machine. Processes are matched by what is unique to this cluster (its cgroup roots, socket
directory and cluster directory), never by name.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import shutil
import signal
import subprocess
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path

from kruise.core.localcluster.errors import RealNodeError, RealNodesBusyError
from kruise.core.localcluster.processes import cmdline, pid_alive
from kruise.core.localcluster.realnode import iptables, network
from kruise.core.localcluster.realnode.mounts import (
    remove_cgroups,
    unmount_under,
)
from kruise.core.localcluster.realnode.plan import RUN_ROOT, NodePlan

KUBELET_SYSCTLS = (
    "vm/overcommit_memory",
    "vm/panic_on_oom",
    "kernel/panic",
    "kernel/panic_on_oops",
    "kernel/keys/root_maxkeys",
    "kernel/keys/root_maxbytes",
)
CONTAINER_LOGS = Path("/var/log/containers")
CNI_RESULTS = Path("/var/lib/cni/results")
RECORD = RUN_ROOT / "real-nodes.json"
#: the fields :data:`SERVICE_FIELDS`, apart: a reader of an older version builds the record from
#: every key of real-nodes.json, so an unknown one would make it see no owner at all
SERVICES_RECORD = RUN_ROOT / "real-nodes.services.json"
SERVICE_FIELDS = ("control_plane_ip", "kube_proxy", "iptables_before")
LOCK = RUN_ROOT / "real-nodes.lock"
#: directories a kubelet or containerd creates at fixed places
FIXED_DIRS = ("/var/lib/kubelet", "/var/lib/cni", "/var/log/containers", "/run/netns", "/run/containerd")
#: The kubelet's device-plugin registration socket, a fixed path (``pluginapi.KubeletSocket``),
#: not under ``--root-dir``: as its ContainerManager starts, a kubelet removes what is in that
#: directory and listens there. Two kubelets starting at once can both remove, then one fails to
#: listen ("bind: address already in use") and exits, so ``RealNodes.join`` starts the next
#: kubelet only once the previous one has made its socket (:func:`made_again`).
DEVICE_PLUGIN_SOCKET = Path("/var/lib/kubelet/device-plugins/kubelet.sock")


def socket_identity(path: Path) -> tuple[int, int] | None:
    """``(inode, ctime ns)`` of ``path``, which change when it is made again; None when absent."""
    try:
        st = path.stat()
    except OSError:
        return None
    return st.st_ino, st.st_ctime_ns


def made_again(path: Path, before: tuple[int, int] | None) -> bool:
    """``path`` exists and is not the file whose :func:`socket_identity` was ``before``."""
    return socket_identity(path) not in (None, before)


@dataclass
class HostRecord:
    """Who runs real nodes on this machine and what must be restored after them."""

    owner: str
    run_dir: str
    holder_pid: int
    holder_start: str
    sysctls: dict[str, str] = field(default_factory=dict)
    nodes: list[int] = field(default_factory=list)
    pids: dict[str, int] = field(default_factory=dict)
    created_dirs: list[str] = field(default_factory=list)
    #: with Services (:mod:`~kruise.core.localcluster.realnode.network`): the address put on
    #: ``lo`` and the kube-proxy binary whose ``--cleanup`` removes its chains
    control_plane_ip: str = ""
    kube_proxy: str = ""
    iptables_before: dict[str, iptables.FamilySnapshot] = field(default_factory=dict)

    def save(self) -> None:
        """Write the record: the Services fields to :data:`SERVICES_RECORD` (with the owner),
        the rest to :data:`RECORD`, each atomically."""
        RUN_ROOT.mkdir(parents=True, exist_ok=True)
        fields = asdict(self)
        services = {k: fields.pop(k) for k in SERVICE_FIELDS}
        for path, data in ((SERVICES_RECORD, {"owner": self.owner, **services}), (RECORD, fields)):
            tmp = path.with_suffix(".tmp")
            tmp.write_text(json.dumps(data, indent=2))
            tmp.replace(path)

    def plans(self) -> list[NodePlan]:
        return [NodePlan(i, Path(self.owner), Path(self.run_dir)) for i in self.nodes]

    def marks(self) -> tuple[str, ...]:
        """Paths only this owner's real-node processes have in their command lines (its node
        dirs, registry dir and socket dir; not the cluster dir, which the API server names)."""
        owner = Path(self.owner)
        return (
            *(f"{p.dir}/" for p in self.plans()),
            f"{owner / 'registry'}/",
            f"{owner / 'kube-proxy'}/",
            f"{self.run_dir}/",
        )

    def alive(self) -> bool:
        """The owner still runs: its process, or one of its kubelets/containerds."""
        if _start_time(self.holder_pid) == self.holder_start:
            return True
        marks = self.marks()
        return any(
            pid_alive(pid) and any(m in " ".join(cmdline(pid)) for m in marks) for pid in self.pids.values()
        )


def load_record() -> HostRecord | None:
    """The record, or None; fields this version does not know (a newer one's) are ignored."""
    try:
        raw = json.loads(RECORD.read_text())
        with contextlib.suppress(OSError, ValueError):
            services = json.loads(SERVICES_RECORD.read_text())
            if services.get("owner") == raw.get("owner"):
                raw.update({k: v for k, v in services.items() if k in SERVICE_FIELDS})
        return HostRecord(**{k: v for k, v in raw.items() if k in HostRecord.__dataclass_fields__})
    except (OSError, ValueError, TypeError, AttributeError):
        return None


@contextlib.contextmanager
def locked() -> Iterator[None]:
    """Hold the machine's real-node lock (what :func:`acquire` takes): an owner stopping its
    nodes holds it from killing the first process to the record's removal, so no other cluster
    finds the record dead and takes the machine halfway through."""
    with _flock():
        yield


@contextlib.contextmanager
def _flock() -> Iterator[None]:
    RUN_ROOT.mkdir(parents=True, exist_ok=True)
    with open(LOCK, "a") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def acquire(
    owner: Path, run_dir: Path, teardown_stale: Callable[[HostRecord], None] | None = None
) -> HostRecord:
    """Take the machine for the real nodes of the cluster in ``owner``.

    Returns the existing record when ``owner`` already holds it. Raises
    :class:`RealNodeError` when not root, :class:`RealNodesBusyError` when another live
    cluster holds it. A dead owner's pods are removed by ``teardown_stale(record)`` (its
    containerd, started once more) and its changes undone first.
    """
    if os.geteuid() != 0:
        raise RealNodeError("real nodes need root: the kubelet manages cgroups, mounts and a bridge")
    with _flock():
        record = load_record()
        if record is not None and record.owner == str(owner) and record.alive():
            return record
        if record is not None and record.alive():
            raise RealNodesBusyError(
                f"the cluster in {record.owner} already runs real nodes on this machine, and only one "
                "cluster may (the kubelet changes machine-wide settings); stop it with "
                f"`kruise cluster down --dir {record.owner}` or start this one with --real-nodes 0"
            )
        if record is not None:
            if teardown_stale is not None:
                teardown_stale(record)
            undo(record)
        record = HostRecord(
            owner=str(owner),
            run_dir=str(run_dir),
            holder_pid=os.getpid(),
            holder_start=_start_time(os.getpid()),
            sysctls=read_sysctls(),
            created_dirs=[d for d in FIXED_DIRS if not os.path.lexists(d)],
        )
        record.save()
        return record


def acquire_waiting(
    owner: Path,
    run_dir: Path,
    teardown_stale: Callable[[HostRecord], None] | None = None,
    *,
    wait: float = 0.0,
    log: Callable[[str], None] = lambda msg: None,
) -> HostRecord:
    """:func:`acquire`, retried every 2 s for up to ``wait`` seconds while another live cluster
    holds the machine (test sessions sharing a machine take turns; ``cluster up`` does not wait)."""
    deadline = time.monotonic() + wait
    told = False
    while True:
        try:
            return acquire(owner, run_dir, teardown_stale)
        except RealNodesBusyError as err:
            if time.monotonic() >= deadline:
                raise
            if not told:
                log(f"waiting up to {wait:.0f}s for the machine: {err}")
                told = True
            time.sleep(2)


def release(record: HostRecord) -> list[str]:
    """Undo ``record`` and free the machine; returns what could not be undone."""
    with _flock():
        return release_locked(record)


def release_locked(record: HostRecord) -> list[str]:
    """:func:`release` for a caller already holding :func:`locked`."""
    problems = undo(record)
    current = load_record()
    if current is not None and current.owner == record.owner:
        RECORD.unlink(missing_ok=True)
        SERVICES_RECORD.unlink(missing_ok=True)
    return problems


def read_sysctls(names: tuple[str, ...] = KUBELET_SYSCTLS) -> dict[str, str]:
    """``{name: value}`` of the sysctls ``names`` (``/proc/sys`` paths) that exist here."""
    values = {}
    for name in names:
        with contextlib.suppress(OSError):
            values[name] = Path("/proc/sys", name).read_text().strip()
    return values


def undo(record: HostRecord) -> list[str]:
    """Restore the machine after ``record``'s owner; best effort, returns the failures."""
    problems: list[str] = []
    plans = record.plans()
    kill_leftovers(plans, record.marks())
    if record.kube_proxy:
        problems += network.kube_proxy_cleanup(record.kube_proxy)
        problems += iptables.undo(record.iptables_before)
    if record.control_plane_ip:
        problems += network.remove_control_plane_address(record.control_plane_ip)
    problems += unmount_under([*(p.dir for p in plans), Path(record.run_dir)])
    for plan in plans:
        problems += remove_cgroups(plan.cgroup_root)
        problems += delete_bridge(plan.bridge)
        remove_cni_results(plan.network_name)
    remove_log_links(Path(record.owner))
    if "/run/netns" in record.created_dirs:  # made by our containerd: every namespace there is ours
        problems += unmount_under([Path("/run/netns")])
        for netns in Path("/run/netns").glob("cni-*"):
            netns.unlink(missing_ok=True)
    for created in record.created_dirs:
        prune(Path(created))
    for name, value in record.sysctls.items():
        path = Path("/proc/sys", name)
        try:
            if path.read_text().strip() != value:
                path.write_text(value)
        except OSError as err:
            problems.append(f"sysctl {name}={value}: {err}")
    shutil.rmtree(record.run_dir, ignore_errors=True)
    return problems


def _start_time(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[19]
    except (OSError, IndexError):
        return ""


def _in_cgroups(pid: int, roots: list[str]) -> bool:
    try:
        text = Path(f"/proc/{pid}/cgroup").read_text()
    except OSError:
        return False
    return any(f":/{root}/" in text or text.rstrip().endswith(f":/{root}") for root in roots)


def kill_leftovers(plans: list[NodePlan], marks: tuple[str, ...]) -> None:
    """SIGKILL what real nodes left running: processes in their cgroup roots (containers),
    and processes naming one of ``marks`` (kubelet, containerd, shims, registry)."""
    roots = [p.cgroup_root for p in plans]
    me = os.getpid()
    for _ in range(3):
        victims = []
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit() or int(entry.name) == me:
                continue
            pid = int(entry.name)
            args = " ".join(cmdline(pid))
            if _in_cgroups(pid, roots) or any(m in args for m in marks):
                victims.append(pid)
        if not victims:
            return
        for pid in victims:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
        time.sleep(0.2)


def create_bridge(plan: NodePlan) -> None:
    """The node's bridge, up, with the node IP: the kubelet's address and the pods' subnet.

    Raises :class:`RealNodeError` when the subnet is already routed on this machine."""
    if Path(f"/sys/class/net/{plan.bridge}").exists():
        delete_bridge(plan.bridge)
    route = subprocess.run(
        ["ip", "route", "get", str(plan.subnet.network_address + 2)], capture_output=True, text=True
    )
    if route.returncode == 0 and " via " not in route.stdout:  # only a default route may cover it
        raise RealNodeError(f"{plan.subnet} (real node {plan.name}) is in use here: {route.stdout.strip()}")
    _ip("link", "add", plan.bridge, "type", "bridge")
    _ip("addr", "add", f"{plan.node_ip}/{plan.subnet.prefixlen}", "dev", plan.bridge)
    _ip("link", "set", plan.bridge, "up")


def _ip(*args: str) -> None:
    proc = subprocess.run(["ip", *args], capture_output=True, text=True)
    if proc.returncode != 0:
        raise RealNodeError(f"ip {' '.join(args)}: {proc.stderr.strip()}")


def delete_bridge(name: str) -> list[str]:
    if not Path(f"/sys/class/net/{name}").exists():
        return []
    proc = subprocess.run(["ip", "link", "del", name], capture_output=True, text=True)
    return [] if proc.returncode == 0 else [f"ip link del {name}: {proc.stderr.strip()}"]


def remove_log_links(owner: Path) -> None:
    """``/var/log/containers`` symlinks the kubelets made into ``owner``."""
    if not CONTAINER_LOGS.is_dir():
        return
    for link in CONTAINER_LOGS.iterdir():
        with contextlib.suppress(OSError):
            if link.is_symlink() and os.readlink(link).startswith(f"{owner}/"):
                link.unlink()


def prune(top: Path) -> None:
    """Remove the sockets and empty directories under ``top`` (and ``top`` itself when it ends
    up empty); regular files, and so anything someone else put there, stay."""
    if not top.is_dir() or top.is_symlink():
        return
    for dirpath, _dirs, filenames in os.walk(top, topdown=False):
        for name in filenames:
            path = Path(dirpath, name)
            if path.is_socket():
                path.unlink(missing_ok=True)
        with contextlib.suppress(OSError):
            Path(dirpath).rmdir()


def remove_cni_results(network: str) -> None:
    if CNI_RESULTS.is_dir():
        for entry in CNI_RESULTS.glob(f"{network}-*"):
            entry.unlink(missing_ok=True)
