"""``kruise`` / ``kubectl-kruise``: one CLI, usable as a kubectl plugin.

kubectl-kruise's commands (``rollout``, ``set``, ``scale``, ``describe``, ``create``, ``migrate``,
``expose``) take kubectl's global flags anywhere on the line (``-n``, ``--context``,
``--kubeconfig``) and read the namespace from the kubeconfig context as kubectl does
(:mod:`kruise.rollouts.cli.kubectx`). kruise's own: ``cluster up|down|env`` (embedded control
plane), ``manager`` (controllers and webhooks), ``daemon`` (one node's kruise-daemon), ``crds``,
``demo``.
"""

from __future__ import annotations

import importlib.metadata
import sys
from typing import Annotated

import typer
import typer.core

from kruise.rollouts.cli import (
    cluster,
    crds,
    create,
    daemon,
    demo,
    describe,
    expose,
    manager,
    migrate,
    rollout,
    scale,
    scaledown,
    setcmd,
)
from kruise.rollouts.cli.boolflags import spell_bool_flags
from kruise.rollouts.cli.kubectx import KubeTarget, hoist_global_flags

app = typer.Typer(
    name="kruise",
    help="OpenKruise workloads and Kruise Rollouts, in Python; also kubectl-kruise (kubectl kruise ...).",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    # plain help: rich's option table cut long flag names (--assign-pods-by-sche…) and their
    # defaults; click's layout wraps instead and, past 80 columns, uses the terminal's width
    rich_markup_mode=None,
    context_settings={"max_content_width": 160},
)


def _print_version(value: bool) -> None:
    if value:
        print(f"kruise {importlib.metadata.version('kruise')}")
        raise typer.Exit()


@app.callback()
def root(
    ctx: typer.Context,
    namespace: Annotated[
        str | None,
        typer.Option("-n", "--namespace", help="If present, the namespace scope for this CLI request."),
    ] = None,
    context: Annotated[
        str | None, typer.Option("--context", help="The name of the kubeconfig context to use.")
    ] = None,
    kubeconfig: Annotated[
        str | None, typer.Option("--kubeconfig", help="Path to the kubeconfig file to use for CLI requests.")
    ] = None,
    version: Annotated[
        bool,
        typer.Option(
            "--version", is_eager=True, callback=_print_version, help="Print kruise's version and exit."
        ),
    ] = False,
) -> None:
    """kubectl's global flags, for the kubectl-kruise commands."""
    ctx.obj = KubeTarget(kubeconfig=kubeconfig, context=context, namespace_flag=namespace)


app.add_typer(rollout.app, name="rollout")
app.add_typer(setcmd.app, name="set")
app.add_typer(describe.app, name="describe")
app.add_typer(create.app, name="create")
app.command("scale")(scale.scale)
app.command("expose")(expose.expose)
app.command("migrate")(migrate.migrate)
app.command("scaledown")(scaledown.scaledown)
app.add_typer(cluster.app, name="cluster")
app.command("crds")(crds.crds)
app.command("demo")(demo.demo)
app.command("manager")(manager.manager)
app.command("daemon")(daemon.daemon)

OWN_COMMANDS = ("cluster", "crds", "demo", "manager", "daemon")
"""kruise's own commands: not kubectl-kruise's, so ``kubectl kruise --help`` does not list them
(they still run when named)."""


def main() -> None:
    """Console-script entry point (``kruise`` and ``kubectl-kruise``): kubectl's global flags
    hoisted, every boolean flag also taking pflag's ``--flag=true|false`` (and ``-w=false``); as
    ``kubectl-kruise`` the help lists kubectl-kruise's commands only (:data:`OWN_COMMANDS` hidden)."""
    command = typer.main.get_command(app)
    plugin = sys.argv[0].endswith("kubectl-kruise")
    if plugin and isinstance(command, typer.core.TyperGroup):
        for name in OWN_COMMANDS:
            command.commands[name].hidden = True
    command(
        args=spell_bool_flags(hoist_global_flags(sys.argv[1:]), command),
        prog_name="kubectl-kruise" if plugin else "kruise",
    )
