"""``kubectl kruise rollout ...``: kubectl-kruise's sub-commands, with its names, flags and messages.

- ``approve``: ``StepPaused`` -> ``StepReady`` on the status of each Rollout (``canaryStatus`` or
  ``blueGreenStatus``), refused in any other state;
- kruise's ``abort`` / ``retry`` (Argo Rollouts' commands): a status patch, as ``approve``, asking
  the controller to abort a release in progress (traffic and pods back to stable, the new
  template held) or to restart an aborted one at step 1 (:mod:`kruise.rollouts.rollout.deadline`);
- ``pause`` / ``resume``: ``spec.strategy.paused`` of a Rollout, ``updateStrategy.paused`` of a
  CloneSet, ``spec.paused`` of a Deployment; refused when already so;
- ``restart``: the template annotation ``kubectl.kubernetes.io/restartedAt`` of a Deployment,
  StatefulSet or DaemonSet, the env var ``RESTARTED_AT`` of a CloneSet or Advanced one (:mod:`.kinds`);
- ``history`` / ``undo`` (:mod:`.rollout_history`), ``status`` (:mod:`.rollout_status`);
- kruise's own ``plan`` and ``check-update`` (:mod:`.rollout_plan`).

Every command takes objects as ``TYPE/NAME ...``, ``TYPE NAME ...`` or ``-f FILE``; the namespace
and context come from the kubeconfig unless ``-n``/``--context`` say otherwise.
"""

from __future__ import annotations

import datetime
from collections.abc import Callable
from typing import Any

import typer

from kruise.core.kube import KubeClient
from kruise.rollouts.cli import rollout_history, rollout_plan, rollout_status
from kruise.rollouts.cli.edits import abort_retry_patch, approve_patch, pause_patch, restart_edit
from kruise.rollouts.cli.kubectx import run_kube, target_of
from kruise.rollouts.cli.output import (
    FilenameOpt,
    OutputOpt,
    Targets,
    check_output,
    emit,
    finish,
    for_each,
    resolve,
)
from kruise.rollouts.cli.refs import Ref

JSON = dict[str, Any]

app = typer.Typer(
    help="Manage the rollout of a resource (deployments, clonesets, rollouts.rollouts.kruise.io).",
    no_args_is_help=True,
)


def _patch_each(
    ctx: typer.Context,
    targets: list[str] | None,
    filenames: list[str] | None,
    output: str,
    verb: str,
    make_patch: Callable[[Ref, JSON], JSON],
    subresource: str | None = None,
) -> None:
    """Read each object, patch it (merge) with ``make_patch(ref, obj)``, report ``verb``."""
    refs, output = resolve(ctx, targets, filenames), check_output(output)

    async def one(kube: KubeClient, ref: Ref) -> None:
        obj = await kube.get(ref.res, ref.name, ref.namespace)
        patch = make_patch(ref, obj)
        done = await kube.patch(ref.res, ref.name, patch, ref.namespace, subresource=subresource)
        emit(ref, verb, done, output)

    finish(run_kube(target_of(ctx), lambda kube, _ns: for_each(kube, refs, one)))


@app.command()
def approve(
    ctx: typer.Context,
    targets: Targets = None,
    filename: FilenameOpt = None,
    output: OutputOpt = "",
) -> None:
    """Approve the paused step of each Rollout so it enters the next step."""
    _patch_each(ctx, targets, filename, output, "approved", approve_patch, "status")


def _abort_retry(
    ctx: typer.Context, targets: list[str] | None, filenames: list[str] | None, output: str, retry: bool
) -> None:
    def make(ref: Ref, obj: JSON) -> JSON:
        return abort_retry_patch(ref, obj, retry=retry, now=datetime.datetime.now(datetime.UTC))

    _patch_each(ctx, targets, filenames, output, "retried" if retry else "aborted", make, "status")


@app.command()
def abort(
    ctx: typer.Context,
    targets: Targets = None,
    filename: FilenameOpt = None,
    output: OutputOpt = "",
) -> None:
    """Abort each Rollout's release: traffic and pods back to stable, the new template held."""
    _abort_retry(ctx, targets, filename, output, False)


@app.command()
def retry(
    ctx: typer.Context,
    targets: Targets = None,
    filename: FilenameOpt = None,
    output: OutputOpt = "",
) -> None:
    """Restart each aborted Rollout's release at step 1."""
    _abort_retry(ctx, targets, filename, output, True)


def _pause(
    ctx: typer.Context, targets: list[str] | None, filenames: list[str] | None, output: str, paused: bool
) -> None:
    def make(ref: Ref, obj: JSON) -> JSON:
        return pause_patch(ref, obj, paused)

    _patch_each(ctx, targets, filenames, output, "paused" if paused else "resumed", make)


@app.command()
def pause(
    ctx: typer.Context,
    targets: Targets = None,
    filename: FilenameOpt = None,
    output: OutputOpt = "",
) -> None:
    """Mark each Rollout, CloneSet or Deployment paused (an error when it already is)."""
    _pause(ctx, targets, filename, output, True)


@app.command()
def resume(
    ctx: typer.Context,
    targets: Targets = None,
    filename: FilenameOpt = None,
    output: OutputOpt = "",
) -> None:
    """Resume each paused Rollout, CloneSet or Deployment (an error when it is not paused)."""
    _pause(ctx, targets, filename, output, False)


@app.command()
def restart(
    ctx: typer.Context,
    targets: Targets = None,
    filename: FilenameOpt = None,
    output: OutputOpt = "",
) -> None:
    """Restart the pods of each Deployment, CloneSet, StatefulSet or DaemonSet (a new template revision)."""
    refs, output = resolve(ctx, targets, filename), check_output(output)
    now = datetime.datetime.now(datetime.UTC).astimezone().isoformat(timespec="seconds")

    async def one(kube: KubeClient, ref: Ref) -> None:
        obj = await kube.get(ref.res, ref.name, ref.namespace)
        how, body = restart_edit(ref, obj, now)
        if how == "merge":
            done = await kube.patch(ref.res, ref.name, body, ref.namespace)
        else:
            done = await kube.replace(ref.res, body)
        emit(ref, "restarted", done, output)

    finish(run_kube(target_of(ctx), lambda kube, _ns: for_each(kube, refs, one)))


app.command()(rollout_history.history)
app.command()(rollout_history.undo)
app.command()(rollout_status.status)
app.command()(rollout_plan.plan)
app.command("check-update")(rollout_plan.check_update)
