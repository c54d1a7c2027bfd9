"""``kruise cluster up`` refuses a negative count or delay before starting anything."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from kruise.rollouts.cli.main import app


@pytest.mark.parametrize(
    "flag", ["--nodes", "--real-nodes", "--pod-start-delay-ms", "--inplace-restart-delay-ms"]
)
def test_a_negative_count_is_refused_naming_the_flag_and_nothing_starts(flag: str, tmp_path: Path) -> None:
    target = tmp_path / "cluster"
    result = CliRunner().invoke(app, ["cluster", "up", "--dir", str(target), flag, "-1"])
    assert result.exit_code == 2, result.output
    assert f"Invalid value for '{flag}'" in result.output
    assert not target.exists()
