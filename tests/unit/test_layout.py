"""Packaging and layering rules of DESIGN §1-§2, checked on every run."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
ROOTS = ("core", "workloads", "traffic", "analysis", "rollouts", "daemon")
BIN = Path(sys.executable).parent


def test_no_root_portion_has_kruise_init() -> None:
    offenders = [
        str(REPO / r / "kruise" / "__init__.py")
        for r in ROOTS
        if (REPO / r / "kruise" / "__init__.py").exists()
    ]
    assert offenders == [], "kruise is a PEP 420 namespace package; remove " + ", ".join(offenders)


@pytest.mark.parametrize("root", ROOTS)
def test_every_root_holds_its_portion(root: str) -> None:
    assert (REPO / root / "kruise" / root / "__init__.py").exists()


def test_wheel_contains_every_root(tmp_path: Path) -> None:
    subprocess.run(
        [sys.executable, "-m", "build", "--wheel", "--no-isolation", "--outdir", str(tmp_path), str(REPO)],
        check=True,
        capture_output=True,
    )
    wheel = next(tmp_path.glob("kruise-*.whl"))
    names = zipfile.ZipFile(wheel).namelist()
    assert "kruise/__init__.py" not in names
    for root in ROOTS:
        assert f"kruise/{root}/__init__.py" in names, f"{root} missing from the wheel"
    assert "kruise/core/localcluster/kwok-stages.yaml" in names
    assert "kruise/core/localcluster/realnode/containerd.toml" in names
    # the generated (gitignored) CRI stubs travel in the wheel: kruise-daemon imports them
    for stub in ("__init__.py", "api_pb2.py", "api_pb2_grpc.py"):
        assert f"kruise/daemon/cri/_generated/{stub}" in names, f"CRI stub {stub} missing from the wheel"
    entry_points = next(n for n in names if n.endswith("entry_points.txt"))
    text = zipfile.ZipFile(wheel).read(entry_points).decode()
    assert "kruise = " in text and "kubectl-kruise = " in text


def test_import_layers() -> None:
    proc = subprocess.run([str(BIN / "lint-imports")], cwd=REPO, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_ruff_clean() -> None:
    proc = subprocess.run([str(BIN / "ruff"), "check", "."], cwd=REPO, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    fmt = subprocess.run(
        [str(BIN / "ruff"), "format", "--check", "."], cwd=REPO, capture_output=True, text=True
    )
    assert fmt.returncode == 0, fmt.stdout + fmt.stderr


def test_mypy_strict_clean() -> None:
    proc = subprocess.run([str(BIN / "mypy")], cwd=REPO, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
