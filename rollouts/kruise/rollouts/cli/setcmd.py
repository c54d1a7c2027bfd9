"""``kubectl kruise set image|env|resources``: change the pod template of a workload (a Pod's spec).

The kinds are kubectl-kruise's (:func:`.kinds.settable`): CloneSet, Advanced StatefulSet,
Advanced DaemonSet, Deployment, StatefulSet, DaemonSet, Job, CronJob and Pod.

Objects are named as for every kubectl command (``TYPE/NAME``, ``TYPE NAME``, ``-f``), or all of a
type with ``--all`` / ``-l SELECTOR``. ``--local`` edits the objects of ``-f`` without the API
server and prints them; ``--dry-run=server`` has the server check the change, ``client`` prints it.
The change is a JSON patch of exactly the changed fields (:mod:`.template_edits`), so
``set image`` on a CloneSet is an image-only change it makes in place.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping, Sequence
from typing import Annotated, Any

import typer

from kruise.core.kube import KubeClient, Resource
from kruise.core.kube.resources import CONFIGMAPS, SECRETS
from kruise.rollouts.cli.edits import EditError
from kruise.rollouts.cli.kinds import pod_spec, settable
from kruise.rollouts.cli.kubectx import fail, run_kube, target_of
from kruise.rollouts.cli.output import (
    DryRunOpt,
    FilenameOpt,
    OutputOpt,
    check_dry_run,
    check_output,
    emit,
    finish,
    for_each,
)
from kruise.rollouts.cli.refs import Ref, RefError, only, parse_refs, read_documents, ref_of, resource_type
from kruise.rollouts.cli.template_edits import (
    apply_ops,
    env_listing,
    env_patch,
    image_patch,
    parse_env,
    parse_pairs,
    parse_quantities,
    resources_patch,
)

app = typer.Typer(
    help="Set specific features on objects (image, env, resources, serviceaccount).", no_args_is_help=True
)
JSON = dict[str, Any]
Ops = list[JSON] | None
Args = Annotated[list[str] | None, typer.Argument(help="TYPE/NAME ... (or TYPE NAME ...) and the changes")]
SelectorOpt = Annotated[str, typer.Option("-l", "--selector", help="Selector (label query) to filter on.")]
AllOpt = Annotated[bool, typer.Option("--all/--no-all", help="Select all resources of the given type.")]
LocalOpt = Annotated[bool, typer.Option("--local/--no-local", help="Edit the -f objects locally only.")]
ContainersOpt = Annotated[str, typer.Option("-c", "--containers", help="Containers to change (wildcards).")]
WORKLOADS = settable()


async def _refs(
    kube: KubeClient,
    words: Sequence[str],
    namespace: str,
    filenames: Sequence[str] | None,
    selector: str,
    all_: bool,
) -> list[Ref]:
    if not (selector or all_):
        return only(parse_refs(words, namespace, filenames or []), WORKLOADS, "setting")
    if len(words) != 1:
        raise RefError("--all and --selector take one resource type, e.g. set image cloneset --all app=img")
    res: Resource = resource_type(words[0])
    listed = await kube.list(res, namespace, label_selector=selector or None)
    return only([Ref(res, o["metadata"]["name"], namespace) for o in listed["items"]], WORKLOADS, "setting")


def _run(
    ctx: typer.Context,
    words: Sequence[str],
    filenames: Sequence[str] | None,
    *,
    selector: str,
    all_: bool,
    local: bool,
    dry_run: str,
    output: str,
    operation: str,
    change: Callable[[Mapping[str, Any]], Ops],
) -> None:
    output, dry_run = check_output(output), check_dry_run(dry_run)
    target = target_of(ctx)
    if local:
        if not filenames:
            fail("--local requires a file (-f)")
        try:
            for doc in read_documents(filenames):
                ops = change(doc)
                emit(ref_of(doc, target.namespace()), operation, apply_ops(doc, ops or []), output or "yaml")
        except (EditError, RefError) as err:
            fail(str(err))
        return

    async def body(kube: KubeClient, namespace: str) -> list[str]:
        try:
            refs = await _refs(kube, words, namespace, filenames, selector, all_)
        except RefError as err:
            return [f"error: {err}"]

        async def one(kube: KubeClient, ref: Ref) -> None:
            obj = await kube.get(ref.res, ref.name, ref.namespace)
            ops = change(obj)
            if ops is None:
                return  # nothing changes: kubectl prints nothing either
            if dry_run == "client":
                emit(ref, f"{operation} (dry run)", apply_ops(obj, ops), output)
                return
            done = await kube.patch(
                ref.res, ref.name, ops, ref.namespace, patch_type="json", dry_run=dry_run == "server"
            )
            emit(ref, operation + (" (server dry run)" if dry_run == "server" else ""), done, output)

        return await for_each(kube, refs, one)

    finish(run_kube(target, body))


@app.command()
def image(
    ctx: typer.Context,
    args: Args = None,
    filename: FilenameOpt = None,
    selector: SelectorOpt = "",
    all_: AllOpt = False,
    local: LocalOpt = False,
    dry_run: DryRunOpt = "none",
    output: OutputOpt = "",
) -> None:
    """Update the image of containers: set image TYPE/NAME CONTAINER=IMAGE ... (* for every container)."""
    words, images = parse_pairs(args or [])
    _run(
        ctx,
        words,
        filename,
        selector=selector,
        all_=all_,
        local=local,
        dry_run=dry_run,
        output=output,
        operation="image updated",
        change=lambda obj: image_patch(obj, images),
    )


async def _from_source(
    kube: KubeClient, source: str, namespace: str, prefix: str, keys: Sequence[str]
) -> dict[str, Any]:
    """``--from=secret/NAME`` or ``configmap/NAME``: one ``valueFrom`` env var per key."""
    kind, _, name = source.partition("/")
    res = {
        "secret": SECRETS,
        "secrets": SECRETS,
        "configmap": CONFIGMAPS,
        "configmaps": CONFIGMAPS,
        "cm": CONFIGMAPS,
    }.get(kind.lower())
    if res is None or not name:
        raise EditError(f"--from must be secret/NAME or configmap/NAME, not {source!r}")
    obj = await kube.get(res, name, namespace)
    ref_key = "secretKeyRef" if res is SECRETS else "configMapKeyRef"
    found = sorted({*(obj.get("data") or {}), *(obj.get("binaryData") or {})})
    wanted = [k for k in found if not keys or k in keys]
    return {_env_name(prefix, k): {"valueFrom": {ref_key: {"name": name, "key": k}}} for k in wanted}


def _env_name(prefix: str, key: str) -> str:
    """kubectl's ``keyToEnvName``: upper case, every character not ``[A-Z0-9_]`` -> ``_``."""
    return prefix + "".join(c if c.isalnum() or c == "_" else "_" for c in key.upper())


@app.command()
def env(
    ctx: typer.Context,
    args: Args = None,
    filename: FilenameOpt = None,
    containers: ContainersOpt = "*",
    env_params: Annotated[
        list[str] | None, typer.Option("-e", "--env", help="KEY=VALUE to set (repeatable).")
    ] = None,
    from_: Annotated[
        str, typer.Option("--from", help="secret/NAME or configmap/NAME to inject every key of.")
    ] = "",
    prefix: Annotated[str, typer.Option("--prefix", help="Prefix for the variables of --from.")] = "",
    keys: Annotated[list[str] | None, typer.Option("--keys", help="Only these keys of --from.")] = None,
    list_: Annotated[
        bool, typer.Option("--list/--no-list", help="Print the environment instead of changing it.")
    ] = False,
    overwrite: Annotated[
        bool, typer.Option("--overwrite/--no-overwrite", help="Allow replacing existing values.")
    ] = True,
    selector: SelectorOpt = "",
    all_: AllOpt = False,
    local: LocalOpt = False,
    dry_run: DryRunOpt = "none",
    output: OutputOpt = "",
) -> None:
    """Update environment variables: set env TYPE/NAME KEY=VALUE ... KEY- (removes)."""
    words = [a for a in args or [] if "=" not in a and not (a.endswith("-") and "/" not in a and a != "-")]
    assignments = [a for a in args or [] if a not in words]
    try:
        sets, removes = parse_env([*assignments, *(env_params or [])])
    except EditError as err:
        fail(str(err))
    if list_:

        def listing(kube: KubeClient, namespace: str) -> Any:
            async def go() -> None:
                for ref in only(parse_refs(words, namespace, filename or []), WORKLOADS, "listing"):
                    sys.stdout.write(
                        env_listing(await kube.get(ref.res, ref.name, ref.namespace), containers)
                    )

            return go()

        run_kube(target_of(ctx), listing)
        return
    extra: dict[str, Any] = {}
    if from_:
        keys_list = [k for item in keys or [] for k in item.split(",") if k]
        extra = run_kube(target_of(ctx), lambda kube, ns: _from_source(kube, from_, ns, prefix, keys_list))
    _run(
        ctx,
        words,
        filename,
        selector=selector,
        all_=all_,
        local=local,
        dry_run=dry_run,
        output=output,
        operation="env updated",
        change=lambda obj: env_patch(
            obj, {**extra, **sets}, removes, containers=containers, overwrite=overwrite
        ),
    )


@app.command()
def resources(
    ctx: typer.Context,
    args: Args = None,
    filename: FilenameOpt = None,
    containers: ContainersOpt = "*",
    limits: Annotated[str, typer.Option("--limits", help="e.g. cpu=200m,memory=512Mi")] = "",
    requests: Annotated[str, typer.Option("--requests", help="e.g. cpu=100m,memory=256Mi")] = "",
    selector: SelectorOpt = "",
    all_: AllOpt = False,
    local: LocalOpt = False,
    dry_run: DryRunOpt = "none",
    output: OutputOpt = "",
) -> None:
    """Update resource requests/limits of containers."""
    try:
        parsed = parse_quantities(limits), parse_quantities(requests)
    except EditError as err:
        fail(str(err))
    _run(
        ctx,
        list(args or []),
        filename,
        selector=selector,
        all_=all_,
        local=local,
        dry_run=dry_run,
        output=output,
        operation="resource requirements updated",
        change=lambda obj: resources_patch(obj, *parsed, containers=containers),
    )


@app.command("serviceaccount")
def serviceaccount(
    ctx: typer.Context,
    args: Args = None,
    filename: FilenameOpt = None,
    all_: AllOpt = False,
    selector: SelectorOpt = "",
    local: LocalOpt = False,
    dry_run: DryRunOpt = "none",
    output: OutputOpt = "",
) -> None:
    """Update the ServiceAccount of pod templates: set serviceaccount TYPE/NAME SERVICE_ACCOUNT."""
    words = list(args or [])
    if not words:
        fail("serviceaccount is required")
    account = words.pop()

    def change(obj: Mapping[str, Any]) -> Ops:
        base, spec = pod_spec(obj)
        if spec.get("serviceAccountName") == account:
            return None
        return [{"op": "add", "path": f"{base}/serviceAccountName", "value": account}]

    _run(
        ctx,
        words,
        filename,
        selector=selector,
        all_=all_,
        local=local,
        dry_run=dry_run,
        output=output,
        operation="serviceaccount updated",
        change=change,
    )
