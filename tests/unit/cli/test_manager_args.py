"""``kruise manager`` with no usable kubeconfig says so in one line and exits 1 (a fresh user
got an 18-frame traceback)."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from kruise.rollouts.cli.main import app


def test_no_kubeconfig_is_one_line_naming_the_path_not_a_traceback(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    gone = tmp_path / "gone" / "kubeconfig"
    monkeypatch.setenv("KUBECONFIG", str(gone))
    result = CliRunner().invoke(app, ["manager"])
    assert result.exit_code == 1, result.output
    assert f"kruise manager: no kubeconfig: {gone} does not exist" in result.output
    assert isinstance(result.exception, SystemExit), result.exception  # an exit, nothing raised
