"""Which CRI socket the daemon talks to (pure but for ``exists``).

Upstream (``K:pkg/daemon/criruntime/factory_unix.go``): with ``--socket-file`` the socket is
that file under ``/hostvarrun`` (where the chart mounts the host's ``/var/run``); without it the
first of :data:`PROBE_ORDER` that exists there. Ours adds two things a daemon outside a pod
needs: the directory is a parameter (``--var-run-dir``), and an absolute ``--socket-file`` is used
as it is (the local cluster's nodes keep their containerd sockets under ``/run/kruise/...``).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from kruise.daemon.cri.port import CriUnavailableError

__all__ = ["PROBE_ORDER", "resolve_endpoint"]

PROBE_ORDER = (
    "containerd.sock",
    "containerd/containerd.sock",
    "crio.sock",
    "crio/crio.sock",
    "cri-dockerd.sock",
    "cri-dockerd/cri-dockerd.sock",
)


def resolve_endpoint(socket_file: str, var_run: str, exists: Callable[[Path], bool] = Path.exists) -> str:
    """``unix://<path>`` of the CRI socket.

    Raises:
        CriUnavailableError: the given socket is missing, or none of :data:`PROBE_ORDER` exists
            (the message names every path tried).
    """
    root = Path(var_run)
    if socket_file:
        path = Path(socket_file) if Path(socket_file).is_absolute() else root / socket_file
        if not exists(path):
            raise CriUnavailableError(f"CRI socket {path} (--socket-file) does not exist", code="UNAVAILABLE")
        return f"unix://{path}"
    tried = [root / name for name in PROBE_ORDER]
    for path in tried:
        if exists(path):
            return f"unix://{path}"
    raise CriUnavailableError(
        "no CRI socket found; tried " + ", ".join(str(p) for p in tried) + " (set --socket-file)",
        code="UNAVAILABLE",
    )
