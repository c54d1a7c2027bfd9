"""Locate the control-plane binaries built by ``hack/build-tools.sh``.

Search order: ``$KRUISE_BIN_DIR``; ``$KRUISE_CACHE_DIR/bin/current`` (default
``~/.cache/kruise/bin/current``). When they are missing and this is a source
checkout, the build script is run (a cold build takes ~15 minutes on 2 cores).
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

REQUIRED = ("etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler", "kwok", "kubectl")
#: built by the same script, needed only by real nodes (``kruise cluster up --real-nodes N``)
REAL_NODE = ("kubelet", "kube-proxy", "crictl", "pause")
#: from Debian packages (``hack/install-system-deps.sh``), needed only by real nodes
SYSTEM = {
    "containerd": "/usr/bin/containerd",
    "containerd-shim-runc-v2": "/usr/bin/containerd-shim-runc-v2",
    "runc": "/usr/sbin/runc",
    "docker-registry": "/usr/bin/docker-registry",
    "skopeo": "/usr/bin/skopeo",
    "busybox (static)": "/bin/busybox",
    "CNI bridge plugin": "/usr/lib/cni/bridge",
    "CNI host-local plugin": "/usr/lib/cni/host-local",
    "CNI loopback plugin": "/usr/lib/cni/loopback",
    "ip": "/usr/sbin/ip",
    # kube-proxy's iptables mode
    "iptables": "/usr/sbin/iptables",
    "conntrack": "/usr/sbin/conntrack",
    # removes the tables kube-proxy created (nf_tables backend) when the cluster goes down
    "nft": "/usr/sbin/nft",
}


class BinariesMissingError(RuntimeError):
    """The control-plane binaries are not built and cannot be built here."""


def cache_dir() -> Path:
    return Path(os.environ.get("KRUISE_CACHE_DIR", Path.home() / ".cache" / "kruise"))


def source_root() -> Path | None:
    """The repository root when running from a source checkout, else None."""
    root = Path(__file__).resolve().parents[4]
    return root if (root / "hack" / "build-tools.sh").exists() else None


def _complete(directory: Path, names: tuple[str, ...]) -> bool:
    return all(os.access(directory / name, os.X_OK) for name in names)


def find_bin_dir(*, build: bool = True, names: tuple[str, ...] = REQUIRED) -> Path:
    """Directory holding every binary in ``names`` (default :data:`REQUIRED`).

    Raises :class:`BinariesMissingError` with the command to run when they are absent.
    """
    explicit = os.environ.get("KRUISE_BIN_DIR")
    if explicit:
        if _complete(Path(explicit), names):
            return Path(explicit)
        raise BinariesMissingError(f"KRUISE_BIN_DIR={explicit} lacks one of {', '.join(names)}")
    current = cache_dir() / "bin" / "current"
    if _complete(current, names):
        return current
    root = source_root()
    if build and root is not None:
        out = subprocess.run(
            [str(root / "hack" / "build-tools.sh")], check=True, stdout=subprocess.PIPE, text=True
        ).stdout.strip()
        if _complete(Path(out), names):
            return Path(out)
    raise BinariesMissingError(
        f"{', '.join(names)} not found in {current}; run `make tools` (needs Go >= 1.26)"
    )


def missing_system_tools() -> list[str]:
    """The entries of :data:`SYSTEM` absent from this machine."""
    return [name for name, path in SYSTEM.items() if not os.access(path, os.X_OK)]
