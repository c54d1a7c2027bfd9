"""``kruise ... --help`` shows every flag whole, at 80 columns and piped, as kubectl's help does.

The rich help layout cut long names to fit its option table (``--assign-pods-by-sche…``) and the
defaults with them; the plain layout wraps the description instead.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import typer
from typer.testing import CliRunner

from kruise.rollouts.cli.main import app


def _flags(path: list[str]) -> list[str]:
    """Every long flag of the subcommand at ``path``, from the command tree itself."""
    command: Any = typer.main.get_command(app)
    for name in path:
        command = command.commands[name]
    return [
        opt
        for param in command.params
        for opt in [*param.opts, *param.secondary_opts]
        if opt.startswith("--")
    ]


@pytest.mark.parametrize("path", [["manager"], ["daemon"], ["cluster", "up"], ["rollout", "status"]])
@pytest.mark.parametrize("columns", ["80", "200"])
def test_help_names_every_flag_whole(path: list[str], columns: str) -> None:
    result = CliRunner().invoke(app, [*path, "--help"], env={"COLUMNS": columns})
    assert result.exit_code == 0, result.output
    assert "…" not in result.output
    flags = _flags(path)
    assert len(flags) > 3
    missing = [flag for flag in flags if flag not in result.output]
    assert not missing, result.output


def test_command_list_uses_a_wide_terminal() -> None:
    """Past 80 columns the summaries use the terminal's width, so they are not cut at 45 characters."""
    # a real process: click's test runner forces 80 columns
    ran = subprocess.run(
        [str(Path(sys.executable).parent / "kruise"), "--help"],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "COLUMNS": "160"},
    )
    assert ran.returncode == 0, ran.stderr
    line = next(line for line in ran.stdout.splitlines() if line.strip().startswith("manager "))
    assert line.rstrip().endswith("(always)."), line


def _paths(command: Any, prefix: list[str]) -> list[list[str]]:
    found = [prefix]
    for name, sub in getattr(command, "commands", {}).items():
        found += _paths(sub, [*prefix, name])
    return found


def test_no_help_shows_docstring_markup() -> None:
    """Command docstrings are written for the terminal: no reST roles or double backticks."""
    shown = []
    for path in _paths(typer.main.get_command(app), []):
        result = CliRunner().invoke(app, [*path, "--help"])
        assert result.exit_code == 0, (path, result.output)
        shown += [
            f"{' '.join(path)}: {line}"
            for line in result.output.splitlines()
            if "``" in line or ":class:" in line
        ]
    assert not shown, "\n".join(shown)


def _listed(program: str, *args: str) -> tuple[set[str], str]:
    bin_dir = Path(sys.executable).parent
    ran = subprocess.run(
        [str(bin_dir / program), *args], capture_output=True, text=True, timeout=60, env=os.environ.copy()
    )
    assert ran.returncode == 0, ran.stderr
    lines = ran.stdout.split("Commands:", 1)[1].splitlines()
    return {line.split()[0] for line in lines if line.startswith("  ") and line[2:3].strip()}, ran.stdout


def test_kubectl_kruise_help_lists_the_plugins_commands_only() -> None:
    """``kubectl kruise --help`` lists kubectl-kruise's commands; ``kruise --help`` also kruise's
    own (cluster, crds, demo, manager, daemon), which still run under either name."""
    mine, _ = _listed("kruise", "--help")
    plugin, text = _listed("kubectl-kruise", "--help")
    assert {"cluster", "crds", "demo", "manager", "daemon"} <= mine
    assert mine - plugin == {"cluster", "crds", "demo", "manager", "daemon"}, text
    assert {"rollout", "set", "scale", "describe", "create", "migrate", "expose"} <= plugin
    _listed("kubectl-kruise", "cluster", "--help")  # hidden, not gone
