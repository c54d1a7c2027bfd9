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


def test_a_running_cluster_is_left_alone_and_not_offered_for_teardown(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``cluster up`` on a directory whose cluster runs says so and suggests no ``cluster down``
    (the trial user nearly took the advice and tore down a healthy cluster)."""
    from kruise.core.localcluster import LocalCluster
    from kruise.core.localcluster.errors import ClusterRunningError

    def running(self: LocalCluster, *args: object, **kwargs: object) -> None:
        raise ClusterRunningError(f"a cluster is already running in {self.directory}")

    monkeypatch.setattr(LocalCluster, "start", running)
    result = CliRunner().invoke(app, ["cluster", "up", "--dir", str(tmp_path)])
    assert result.exit_code == 1
    assert "already running" in result.output and "left running" in result.output
    assert "cluster down" not in result.output
