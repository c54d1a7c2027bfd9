"""``kubectl kruise create job NAME --image=IMAGE [-- COMMAND ...]``, ``--from=cronjob/NAME`` or
``--from=advancedcronjob/NAME``.

As kubectl-kruise: exactly one of ``--image`` and ``--from``; a Job from a CronJob or an
AdvancedCronJob copies its ``jobTemplate`` (labels, annotations plus
``cronjob.kubernetes.io/instantiate: manual``, spec) and is owned by it (a non-controller
ownerReference). An AdvancedCronJob whose ``status.type`` is not Job is refused ("from must be a
job template, but got <type>").
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Annotated, Any

import typer

from kruise.core.kube import KubeClient
from kruise.core.kube.resources import ADVANCEDCRONJOBS
from kruise.rollouts.cli import create_crr
from kruise.rollouts.cli.kubectx import fail, run_kube, target_of
from kruise.rollouts.cli.output import DryRunOpt, OutputOpt, check_dry_run, check_output, emit
from kruise.rollouts.cli.refs import CRONJOBS, JOBS, Ref, RefError, parse_refs

app = typer.Typer(help="Create a resource (job, ContainerRecreateRequest).", no_args_is_help=True)
JSON = dict[str, Any]


def job_from_image(name: str, image: str, command: Sequence[str]) -> JSON:
    container: JSON = {"name": name, "image": image}
    if command:
        container["command"] = list(command)
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": name},
        "spec": {"template": {"spec": {"containers": [container], "restartPolicy": "Never"}}},
    }


def job_from_cronjob(name: str, cronjob: Mapping[str, Any]) -> JSON:
    return _job_from_template(name, (cronjob.get("spec") or {}).get("jobTemplate") or {}, cronjob)


def job_from_advancedcronjob(name: str, acj: Mapping[str, Any]) -> JSON:
    """The Job for ``--from=advancedcronjob/NAME``; ValueError when its type is not Job."""
    kind = (acj.get("status") or {}).get("type")
    if kind != "Job":
        raise ValueError(f"from must be a job template, but got {kind or ''}")
    template = ((acj.get("spec") or {}).get("template") or {}).get("jobTemplate") or {}
    return _job_from_template(name, template, acj)


def _job_from_template(name: str, template: Mapping[str, Any], owner: Mapping[str, Any]) -> JSON:
    meta = template.get("metadata") or {}
    job_meta: JSON = {
        "name": name,
        "annotations": {"cronjob.kubernetes.io/instantiate": "manual", **(meta.get("annotations") or {})},
        "ownerReferences": [
            {
                "apiVersion": owner.get("apiVersion") or "batch/v1",
                "kind": owner.get("kind") or "CronJob",
                "name": owner["metadata"]["name"],
                "uid": owner["metadata"]["uid"],
            }
        ],
    }
    if meta.get("labels"):
        job_meta["labels"] = dict(meta["labels"])
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": job_meta,
        "spec": dict(template.get("spec") or {}),
    }


@app.command(context_settings={"allow_extra_args": True, "ignore_unknown_options": True})
def job(
    ctx: typer.Context,
    name: Annotated[str, typer.Argument(help="Name of the Job.")],
    image: Annotated[str, typer.Option("--image", help="Image name to run.")] = "",
    from_: Annotated[
        str, typer.Option("--from", help="cronjob/NAME or advancedcronjob/NAME to create the Job from.")
    ] = "",
    dry_run: DryRunOpt = "none",
    output: OutputOpt = "",
) -> None:
    """Create a job with the specified name: --image IMAGE [-- COMMAND ...] or --from=cronjob/NAME."""
    command = [a for a in ctx.args if a != "--"]
    output, dry_run = check_output(output), check_dry_run(dry_run)
    if bool(image) == bool(from_):
        fail("either --image or --from must be specified")
    if command and from_:
        fail("cannot specify --from and command")
    target = target_of(ctx)

    async def body(kube: KubeClient, namespace: str) -> None:
        if image:
            body_ = job_from_image(name, image, command)
        else:
            try:
                (source,) = parse_refs([from_], namespace)
            except (RefError, ValueError) as err:
                fail(f"from must be an existing cronjob: {err}")
            if source.res is CRONJOBS:
                body_ = job_from_cronjob(name, await kube.get(CRONJOBS, source.name, namespace))
            elif source.res is ADVANCEDCRONJOBS:
                try:
                    body_ = job_from_advancedcronjob(
                        name, await kube.get(ADVANCEDCRONJOBS, source.name, namespace)
                    )
                except ValueError as err:
                    fail(str(err))
            else:
                kinds = "cronjob/NAME or advancedcronjob/NAME"
                fail(f"unknown object type {source.res.kind}: --from takes {kinds}")
        ref = Ref(JOBS, name, namespace)
        if dry_run == "client":
            emit(ref, "created (dry run)", body_, output)
            return
        done = await kube.create(JOBS, body_, namespace, dry_run=dry_run == "server")
        emit(ref, "created" + (" (server dry run)" if dry_run == "server" else ""), done, output)

    run_kube(target, body)


app.command("ContainerRecreateRequest", context_settings={"allow_extra_args": True})(
    create_crr.container_recreate_request
)
