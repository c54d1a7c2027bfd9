"""pflag's ``--flag=true|false`` (and ``-w=false``) for every boolean flag of the CLI."""

from __future__ import annotations

import asyncio

import pytest
import typer

from kruise.rollouts.cli.boolflags import spell_bool_flags
from kruise.rollouts.cli.main import app

ROOT = typer.main.get_command(app)


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        pytest.param(
            ["rollout", "status", "-w=false", "rollout/x"],
            ["rollout", "status", "--no-watch", "rollout/x"],
            id="short flag =false (kubectl kruise rollout status -w=false)",
        ),
        pytest.param(
            ["rollout", "status", "rollout/x", "--watch=false"],
            ["rollout", "status", "rollout/x", "--no-watch"],
            id="long flag =false",
        ),
        pytest.param(
            ["rollout", "status", "rollout/x", "--watch=true", "-d=1"],
            ["rollout", "status", "rollout/x", "--watch", "-d"],
            id="=true and ParseBool's 1",
        ),
        pytest.param(
            ["rollout", "status", "rollout/x", "--watch=F", "--detail=FALSE"],
            ["rollout", "status", "rollout/x", "--no-watch", "--no-detail"],
            id="ParseBool's other spellings",
        ),
        pytest.param(
            ["rollout", "undo", "rollout/x", "--fast=true"],
            ["rollout", "undo", "rollout/x", "--fast"],
            id="another command's flag",
        ),
        pytest.param(
            ["rollout", "status", "rollout/x", "--fast=true"],
            ["rollout", "status", "rollout/x", "--fast=true"],
            id="not a flag of this command: left for click to refuse",
        ),
        pytest.param(
            ["rollout", "status", "rollout/x", "--watch=yes"],
            ["rollout", "status", "rollout/x", "--watch=yes"],
            id="not a ParseBool word: left for click to refuse",
        ),
        pytest.param(
            ["create", "job", "j", "--", "sh", "--watch=false"],
            ["create", "job", "j", "--", "sh", "--watch=false"],
            id="nothing after --",
        ),
        pytest.param(["--version=false", "crds"], ["crds"], id="a flag without --no-: false drops it"),
    ],
)
def test_go_style_booleans_take_clicks_spelling(argv: list[str], expected: list[str]) -> None:
    assert spell_bool_flags(argv, ROOT) == expected


def test_every_boolean_flag_of_the_cli_takes_true_and_false() -> None:
    """Walk the whole command tree: each boolean flag's ``=true``/``=false`` becomes a flag click takes."""
    seen = 0

    def walk(path: list[str], command: typer.core.TyperGroup) -> None:
        nonlocal seen
        for param in command.params:
            if getattr(param, "is_bool_flag", False):
                for opt in param.opts:
                    for word, want in (("true", [opt]), ("false", param.secondary_opts[:1])):
                        assert spell_bool_flags([*path, f"{opt}={word}"], ROOT) == [*path, *want]
                        seen += 1
        for name, sub in (getattr(command, "commands", None) or {}).items():
            walk([*path, name], sub)

    walk([], ROOT)
    assert seen > 40


def test_the_console_script_accepts_minus_w_false(monkeypatch: pytest.MonkeyPatch) -> None:
    """Through ``main``'s argv handling: ``-w=false`` reaches ``status`` as ``watch=False``."""
    from kruise.rollouts.cli import main as cli_main
    from kruise.rollouts.cli import rollout_status

    calls: list[bool] = []

    async def fake_watch(_kube: object, _ref: object, watch: bool, _timeout: float) -> int:
        calls.append(watch)
        return 0

    monkeypatch.setattr(rollout_status, "_watch_rollout", fake_watch)
    monkeypatch.setattr(rollout_status, "run_kube", lambda _target, body: asyncio.run(body(None, "")))
    argv = ["kubectl-kruise", "rollout", "status", "-w=false", "rollout/x", "-n", "ns"]
    monkeypatch.setattr("sys.argv", argv)
    with pytest.raises(SystemExit) as done:
        cli_main.main()
    assert done.value.code == 0 and calls == [False]
