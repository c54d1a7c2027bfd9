"""Shared options and kubectl-style output of the kubectl-kruise commands.

kubectl's name printer writes ``<kind>.<group>/<name> <operation>`` (``rollout.rollouts.kruise.io/web
approved``); ``-o name`` only the first part; ``-o json|yaml`` the object. Errors of several
objects are reported one per line and the command exits 1 after trying every object.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Awaitable, Callable, Sequence
from typing import Annotated, Any

import typer
import yaml
from rich.console import Console

from kruise.core.errors import ApiError
from kruise.core.kube import KubeClient
from kruise.rollouts.cli.edits import EditError
from kruise.rollouts.cli.kubectx import fail, server_error, target_of
from kruise.rollouts.cli.refs import Ref, RefError, group_resource, parse_refs

Targets = Annotated[
    list[str] | None, typer.Argument(help="TYPE/NAME ... or TYPE NAME ...", show_default=False)
]

FilenameOpt = Annotated[
    list[str] | None,
    typer.Option("-f", "--filename", help="File, directory or - (stdin) naming the objects."),
]
OutputOpt = Annotated[str, typer.Option("-o", "--output", help="Output format: json, yaml or name.")]
DryRunOpt = Annotated[
    str,
    typer.Option(
        "--dry-run",
        help='"none", "server" (the API server validates, nothing is stored) or "client" (print only).',
    ),
]
OUTPUTS = ("", "json", "yaml", "name")


PIPED_WIDTH = 100_000
"""Columns a rich table may use when stdout is not a terminal: in effect no limit (rich's own
default there is 80, which cut or folded wide tables in pipes and logs)."""


def table_console() -> Console:
    """The rich Console for tables and panels: the terminal's width on a terminal (rich reads it,
    or ``COLUMNS``); when stdout is not a terminal, no width limit, so a table keeps the width of
    its content."""
    console = Console()
    if console.is_terminal:
        return console
    return Console(width=PIPED_WIDTH)


def resolve(ctx: typer.Context, targets: list[str] | None, filenames: Sequence[str] | None) -> list[Ref]:
    """The objects a command names, in the namespace kubectl would use; exits 1 when none."""
    try:
        return parse_refs(targets or [], target_of(ctx).namespace(), filenames or [])
    except RefError as err:
        fail(str(err))


def check_output(output: str) -> str:
    if output not in OUTPUTS:
        raise typer.BadParameter(f"unable to match a printer suitable for the output format {output!r}")
    return output


def check_dry_run(value: str) -> str:
    if value not in ("none", "server", "client", ""):
        raise typer.BadParameter(f'Invalid dry-run value ({value}). Must be "none", "server", or "client".')
    return value or "none"


def dump(obj: Any, output: str) -> None:
    """``obj`` as JSON (indented, as kubectl) or YAML on stdout."""
    if output == "json":
        sys.stdout.write(json.dumps(obj, indent=4) + "\n")
    else:
        sys.stdout.write(yaml.safe_dump(obj, sort_keys=False))


def emit(ref: Ref, operation: str, obj: Any = None, output: str = "") -> None:
    """Print the result of an operation on ``ref`` as kubectl's printers do."""
    if output in ("json", "yaml") and obj is not None:
        dump(obj, output)
    elif output == "name":
        sys.stdout.write(f"{ref}\n")
    else:
        sys.stdout.write(f"{ref} {operation}\n")


def refusal(ref: Ref, err: EditError) -> str:
    """kubectl-kruise's ``error: <resource> "<name>" <reason>``."""
    return f'error: {group_resource(ref.res)} "{ref.name}" {err}'


async def for_each(
    kube: KubeClient, refs: Sequence[Ref], action: Callable[[KubeClient, Ref], Awaitable[None]]
) -> list[str]:
    """Run ``action`` on every ref; the errors (refusals and API errors), one line each."""
    errors: list[str] = []
    for ref in refs:
        try:
            await action(kube, ref)
        except EditError as err:
            errors.append(refusal(ref, err))
        except ApiError as err:
            errors.append(server_error(err))
    return errors


def finish(errors: Sequence[str]) -> None:
    """Exit 1 after printing ``errors`` to stderr (nothing when there is none)."""
    if errors:
        sys.stderr.write("\n".join(errors) + "\n")
        raise typer.Exit(1)
