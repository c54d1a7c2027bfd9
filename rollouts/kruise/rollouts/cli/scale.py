"""``kubectl kruise scale``: set the replicas of CloneSets and Deployments (their scale subresource).

As ``kubectl scale``: ``--replicas`` is required; ``--current-replicas`` and
``--resource-version`` are preconditions checked before the change ("Expected replicas to be
3, was 5"); ``--timeout`` waits until the workload reports the new replica count.
"""

from __future__ import annotations

import asyncio
import time
from typing import Annotated

import typer

from kruise.core.kube import KubeClient
from kruise.core.kube.resources import CLONESETS, DEPLOYMENTS
from kruise.rollouts.cli.durations import parse_duration
from kruise.rollouts.cli.edits import EditError
from kruise.rollouts.cli.kubectx import fail, run_kube, target_of
from kruise.rollouts.cli.output import (
    DryRunOpt,
    FilenameOpt,
    OutputOpt,
    Targets,
    check_dry_run,
    check_output,
    emit,
    finish,
    for_each,
    resolve,
)
from kruise.rollouts.cli.refs import Ref, RefError, only


def scale(
    ctx: typer.Context,
    targets: Targets = None,
    replicas: Annotated[
        int, typer.Option("--replicas", help="The new desired number of replicas. Required.")
    ] = -1,
    current_replicas: Annotated[
        int, typer.Option("--current-replicas", help="Precondition for current size (-1: none).")
    ] = -1,
    resource_version: Annotated[
        str, typer.Option("--resource-version", help="Precondition for resource version.")
    ] = "",
    timeout: Annotated[
        str, typer.Option("--timeout", help="Wait this long for the new size (0: do not wait).")
    ] = "0",
    filename: FilenameOpt = None,
    dry_run: DryRunOpt = "none",
    output: OutputOpt = "",
) -> None:
    """Set a new size for a CloneSet or Deployment."""
    if replicas < 0:
        fail("The --replicas=COUNT flag is required, and COUNT must be greater than or equal to 0")
    try:
        wait = parse_duration(timeout)
    except ValueError as err:
        raise typer.BadParameter(str(err), param_hint="--timeout") from err
    output, dry_run = check_output(output), check_dry_run(dry_run)
    try:
        refs = only(resolve(ctx, targets, filename), (CLONESETS, DEPLOYMENTS), "scaling")
    except RefError as err:
        fail(str(err))

    async def one(kube: KubeClient, ref: Ref) -> None:
        obj = await kube.get(ref.res, ref.name, ref.namespace)
        have = int((obj.get("spec") or {}).get("replicas", 1))
        if current_replicas >= 0 and have != current_replicas:
            raise EditError(f"Expected replicas to be {current_replicas}, was {have}")
        if resource_version and obj["metadata"]["resourceVersion"] != resource_version:
            raise EditError(
                f"precondition failed for: resourceVersion {resource_version}, "
                f"was {obj['metadata']['resourceVersion']}"
            )
        patch = {"spec": {"replicas": replicas}}
        if dry_run == "client":
            emit(ref, "scaled (dry run)", output=output)
            return
        await kube.patch(
            ref.res, ref.name, patch, ref.namespace, subresource="scale", dry_run=dry_run == "server"
        )
        emit(ref, "scaled" + (" (server dry run)" if dry_run == "server" else ""), output=output)
        deadline = time.monotonic() + wait
        while dry_run == "none" and time.monotonic() < deadline:
            status = (await kube.get(ref.res, ref.name, ref.namespace)).get("status") or {}
            if int(status.get("replicas") or 0) == replicas:
                return
            await asyncio.sleep(1.0)
        if wait and dry_run == "none":
            raise EditError(f"timed out waiting for {replicas} replicas")

    finish(run_kube(target_of(ctx), lambda kube, _ns: for_each(kube, refs, one)))
