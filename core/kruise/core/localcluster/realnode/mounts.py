"""Mounts and cgroups a real node leaves on the machine (host side of
:mod:`kruise.core.localcluster.realnode.host`): finding and detaching mounts under its
directories, creating its cgroup root and removing it with everything below."""

from __future__ import annotations

import ctypes
import os
import time
from pathlib import Path

CGROUP_MOUNT = Path("/sys/fs/cgroup")
MNT_DETACH = 2


def mounts_under(prefixes: list[Path]) -> list[str]:
    """Mount points at or below any of ``prefixes``, deepest first."""
    found = []
    wanted = [str(p.resolve()) if p.exists() else str(p) for p in prefixes]
    for line in Path("/proc/self/mountinfo").read_text().splitlines():
        point = line.split()[4].encode().decode("unicode_escape")
        if any(point == w or point.startswith(w + "/") for w in wanted):
            found.append(point)
    return sorted(set(found), key=lambda p: (-p.count("/"), p))


def unmount_under(prefixes: list[Path]) -> list[str]:
    libc = ctypes.CDLL("libc.so.6", use_errno=True)
    problems = []
    for _ in range(3):  # a shared mount can reappear once as its propagation is undone
        points = mounts_under(prefixes)
        if not points:
            return []
        for point in points:
            if libc.umount2(point.encode(), MNT_DETACH) != 0:
                err = ctypes.get_errno()
                if err not in (22, 2):  # EINVAL (already gone), ENOENT
                    problems.append(f"umount {point}: {os.strerror(err)}")
    return problems


def remove_cgroups(root: str) -> list[str]:
    """rmdir ``/<root>`` and everything below it in every cgroup hierarchy."""
    problems: list[str] = []
    if not CGROUP_MOUNT.is_dir():
        return problems
    for hierarchy in sorted(CGROUP_MOUNT.iterdir()):
        top = hierarchy / root
        if not top.is_dir():
            continue
        dirs = sorted((p for p in top.rglob("*") if p.is_dir()), key=lambda p: -len(p.parts))
        for d in [*dirs, top]:
            for attempt in range(20):
                try:
                    d.rmdir()
                    break
                except FileNotFoundError:
                    break
                except OSError as err:
                    if attempt == 19:
                        problems.append(f"rmdir {d}: {err.strerror}")
                    time.sleep(0.05)
    return problems


def ensure_cgroup_root(root: str) -> None:
    """Create ``/<root>`` in every v1 hierarchy (the kubelet requires its cgroupRoot to exist);
    cpuset gets its parent's cpus and mems."""
    for hierarchy in sorted(CGROUP_MOUNT.iterdir()):
        if not (hierarchy / "cgroup.procs").exists() or (hierarchy / "cgroup.controllers").exists():
            continue  # not a v1 hierarchy (the unified one on a hybrid host holds no controllers)
        top = hierarchy / root
        top.mkdir(exist_ok=True)
        for name in ("cpuset.cpus", "cpuset.mems"):
            if (top / name).exists() and not (top / name).read_text().strip():
                (top / name).write_text((hierarchy / name).read_text())
