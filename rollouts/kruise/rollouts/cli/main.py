"""``kruise`` / ``kubectl-kruise``: one CLI, usable as a kubectl plugin.

Sub-commands: ``cluster up|down|env`` (embedded control plane), ``manager``
(controllers and webhooks), ``crds`` (generate CRDs from the models), ``demo``.
"""

from __future__ import annotations

import typer

from kruise.rollouts.cli import cluster, crds, demo, manager, rollout

app = typer.Typer(
    name="kruise",
    help="OpenKruise workloads and Kruise Rollouts, in Python.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
)
app.add_typer(cluster.app, name="cluster")
app.add_typer(rollout.app, name="rollout")
app.command("crds")(crds.crds)
app.command("demo")(demo.demo)
app.command("manager")(manager.manager)


def main() -> None:
    """Console-script entry point."""
    app()
