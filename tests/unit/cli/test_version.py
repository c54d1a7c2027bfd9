"""``kruise --version`` (also ``kubectl kruise --version``): the installed distribution's version,
exit 0, before any subcommand or kubeconfig is looked at."""

from __future__ import annotations

import importlib.metadata
import subprocess
import sys
from pathlib import Path


def test_version_prints_the_installed_version_and_exits_0() -> None:
    ran = subprocess.run(
        [str(Path(sys.executable).parent / "kruise"), "--version"], capture_output=True, text=True, timeout=60
    )
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout.strip() == f"kruise {importlib.metadata.version('kruise')}"
