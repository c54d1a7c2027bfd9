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


class BinariesMissingError(RuntimeError):
    """The control-plane binaries are not built and cannot be built here."""


def cache_dir() -> Path:
    return Path(os.environ.get("KRUISE_CACHE_DIR", Path.home() / ".cache" / "kruise"))


def source_root() -> Path | None:
    """The repository root when running from a source checkout, else None."""
    root = Path(__file__).resolve().parents[4]
    return root if (root / "hack" / "build-tools.sh").exists() else None


def _complete(directory: Path) -> bool:
    return all(os.access(directory / name, os.X_OK) for name in REQUIRED)


def find_bin_dir(*, build: bool = True) -> Path:
    """Directory holding every binary in :data:`REQUIRED`.

    Raises :class:`BinariesMissingError` with the command to run when they are absent.
    """
    explicit = os.environ.get("KRUISE_BIN_DIR")
    if explicit:
        if _complete(Path(explicit)):
            return Path(explicit)
        raise BinariesMissingError(f"KRUISE_BIN_DIR={explicit} lacks one of {', '.join(REQUIRED)}")
    current = cache_dir() / "bin" / "current"
    if _complete(current):
        return current
    root = source_root()
    if build and root is not None:
        out = subprocess.run(
            [str(root / "hack" / "build-tools.sh")], check=True, stdout=subprocess.PIPE, text=True
        ).stdout.strip()
        if _complete(Path(out)):
            return Path(out)
    raise BinariesMissingError(
        f"control-plane binaries not found in {current}; run `make tools` (needs Go >= 1.26)"
    )
