"""What the benchmarks read of a process from /proc: RSS and CPU seconds.

``PIDS`` holds the running phase's processes by role (set by the script that starts them);
:func:`cpu_snapshot` and :func:`cpu_since` give the CPU seconds per role between two points.
"""

from __future__ import annotations

import os
from pathlib import Path


def rss_mib(pid: int, field: str = "VmRSS") -> float:
    """``field`` of ``/proc/<pid>/status`` in MiB (``VmRSS`` now, ``VmHWM`` the peak); NaN if absent."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024
    return float("nan")


PIDS: dict[str, int] = {}
"""The running phase's processes by role: ``manager``, ``kcm``, and the shared control plane."""

CONTROL_PLANE = ("etcd", "kube-apiserver", "kube-scheduler", "kwok")


def cpu_seconds(pid: int) -> float:
    """utime + stime of ``pid`` in seconds (``/proc/<pid>/stat`` fields 14 and 15)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def cpu_snapshot() -> dict[str, float]:
    """CPU seconds so far of the manager, kube-controller-manager and the control plane (summed)."""
    if not PIDS:
        return {}
    snap = {role: cpu_seconds(pid) for role, pid in PIDS.items() if role in ("manager", "kcm")}
    snap["control plane"] = sum(cpu_seconds(PIDS[role]) for role in CONTROL_PLANE if role in PIDS)
    return snap


def cpu_since(before: dict[str, float]) -> dict[str, float]:
    """CPU seconds each role spent since the ``before`` snapshot (empty when not measuring)."""
    after = cpu_snapshot() if PIDS else {}
    return {role: after[role] - before.get(role, 0.0) for role in after}
