"""``rollout history`` and ``rollout undo`` for workloads and Rollouts.

The history of a CloneSet, StatefulSet, DaemonSet, Advanced StatefulSet or Advanced DaemonSet is
its ControllerRevisions (``.revision``), of a Deployment its ReplicaSets
(``deployment.kubernetes.io/revision``), as :mod:`.kinds` says, printed as kubectl-kruise prints
it for the same flags (``--revision N``: one revision's pod template; ``-o``). A Rollout stands for
its workload (as kruise-tools' ``undo rollout/NAME``; kubectl-kruise has no history viewer for
Rollouts, so ``history rollout/NAME`` is kruise's, and prints exactly the workload's history).
kruise's extra, only behind ``--releases``: a Rollout's recorded releases (RolloutHistories,
feature gate ``RolloutHistory``), one per row, and with ``--rollout-id ID`` the pods of each step
of that one release (``-o yaml``: the objects). ``--rollout-id`` alone is refused, so the flags
never change what plain ``history`` means (:func:`history_mode`).
``undo`` restores ``--to-revision`` (0: the one before the newest) unless the template already
matches it ("skipped rollback"); ``undo rollout/NAME --fast`` jumps a release back to the latest
earlier step without traffic (kruise-tools' fast rollback). ``--dry-run=client`` prints the
template it would restore, ``--dry-run=server`` has the API server check the change.
"""

from __future__ import annotations

import datetime
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from enum import Enum
from typing import Annotated, Any

import typer

from kruise.core.errors import NotFoundError
from kruise.core.kube import KubeClient
from kruise.core.kube.resources import CONTROLLER_REVISIONS, DEPLOYMENTS, REPLICASETS
from kruise.rollouts.api.rollouthistory import ROLLOUT_NAME_LABEL
from kruise.rollouts.cli.edits import (
    EditError,
    cloneset_undo_patch,
    deployment_undo_patch,
    fast_rollback_patch,
    pick_deployment_revision,
    pick_revision,
)
from kruise.rollouts.cli.kinds import HistorySource, rules
from kruise.rollouts.cli.kubectx import run_kube, target_of
from kruise.rollouts.cli.output import (
    DryRunOpt,
    FilenameOpt,
    OutputOpt,
    Targets,
    check_dry_run,
    check_output,
    dump,
    emit,
    finish,
    for_each,
    resolve,
)
from kruise.rollouts.cli.refs import Ref, group_resource, qualified, resource_for
from kruise.rollouts.cli.release_views import history_id, release_steps, releases_table
from kruise.rollouts.cli.views import CHANGE_CAUSE, history_table, pod_template
from kruise.rollouts.resources import ROLLOUT_HISTORIES, ROLLOUTS
from kruise.workloads.revisions import template_of_revision

JSON = dict[str, Any]


@dataclass(frozen=True)
class History:
    """A workload, its revisions by number (the ControllerRevision or ReplicaSet objects)."""

    workload: JSON
    revisions: dict[int, JSON]

    def template(self, number: int) -> JSON:
        rev = self.revisions[number]
        if rev.get("kind") == "ControllerRevision":
            return template_of_revision(rev)
        return dict((rev.get("spec") or {}).get("template") or {})


def _owned(items: list[JSON], uid: str) -> list[JSON]:
    return [i for i in items if any(o.get("uid") == uid for o in i["metadata"].get("ownerReferences") or [])]


async def workload_of(kube: KubeClient, ref: Ref) -> Ref:
    """``ref`` itself, or the workload a Rollout names (``spec.workloadRef``)."""
    if ref.res is not ROLLOUTS:
        return ref
    rollout = await kube.get(ROLLOUTS, ref.name, ref.namespace)
    wref = (rollout.get("spec") or {}).get("workloadRef") or {}
    res = resource_for(str(wref.get("apiVersion") or ""), str(wref.get("kind")))
    if res is None:
        raise EditError(f"workloadRef kind {wref.get('kind')!r} is not supported")
    return Ref(res, str(wref.get("name")), ref.namespace)


async def load_history(kube: KubeClient, ref: Ref) -> History:
    """The revisions of a workload (:mod:`.kinds`' ``history``); :class:`EditError` for other kinds."""
    source = rules(ref.res).history
    if source is HistorySource.CONTROLLER_REVISIONS:
        workload = await kube.get(ref.res, ref.name, ref.namespace)
        items = (await kube.list(CONTROLLER_REVISIONS, ref.namespace))["items"]
        owned = _owned(items, workload["metadata"]["uid"])
        return History(workload, {int(r.get("revision") or 0): r for r in owned})
    if source is HistorySource.REPLICASETS:
        workload = await kube.get(ref.res, ref.name, ref.namespace)
        items = (await kube.list(REPLICASETS, ref.namespace))["items"]
        revisions = {}
        for rs in _owned(items, workload["metadata"]["uid"]):
            number = (rs["metadata"].get("annotations") or {}).get("deployment.kubernetes.io/revision")
            if number and number.isdigit():
                revisions[int(number)] = rs
        return History(workload, revisions)
    raise EditError(f'no history viewer has been implemented for "{ref.res.kind}.{ref.res.group}"')


def _print_history(ref: Ref, hist: History, revision: int, output: str) -> None:
    if revision and revision not in hist.revisions:
        raise EditError("unable to find the specified revision")
    chosen = [hist.revisions[revision]] if revision else [hist.revisions[n] for n in sorted(hist.revisions)]
    if output in ("json", "yaml"):
        dump(chosen[0] if revision else {"apiVersion": "v1", "kind": "List", "items": chosen}, output)
    elif output == "name":
        for rev in chosen:
            res = CONTROLLER_REVISIONS if rev.get("kind") == "ControllerRevision" else REPLICASETS
            sys.stdout.write(f"{qualified(res)}/{rev['metadata']['name']}\n")
    elif revision:
        sys.stdout.write(f"{ref} with revision #{revision}\n{pod_template(hist.template(revision))}")
    else:
        causes = {
            n: str((r["metadata"].get("annotations") or {}).get(CHANGE_CAUSE) or "")
            for n, r in hist.revisions.items()
        }
        sys.stdout.write(f"{ref} \n{history_table(causes)}")


async def _releases(kube: KubeClient, ref: Ref) -> list[JSON]:
    """The RolloutHistories of a Rollout (none when the kind is not installed)."""
    selector = f"{ROLLOUT_NAME_LABEL}={ref.name}"
    try:
        return list((await kube.list(ROLLOUT_HISTORIES, ref.namespace, label_selector=selector))["items"])
    except NotFoundError:
        return []


class HistoryMode(Enum):
    """What ``rollout history`` prints."""

    REVISIONS = "revisions"  # kubectl-kruise's: the workload's revisions (a Rollout's workload's)
    RELEASES = "releases"  # --releases: a Rollout's recorded releases, one per row
    RELEASE = "release"  # --releases --rollout-id ID: one release, its pods step by step


def history_mode(refs: Sequence[Ref], *, releases: bool, rollout_id: str, revision: int) -> HistoryMode:
    """The :class:`HistoryMode` for these flags (pure); ``ValueError`` with the usage error for
    flags that do not go together: ``--rollout-id`` without ``--releases``, ``--releases`` with
    ``--revision`` or on anything but Rollouts."""
    if rollout_id and not releases:
        raise ValueError("--rollout-id selects one of a Rollout's releases: add --releases")
    if not releases:
        return HistoryMode.REVISIONS
    if revision:
        raise ValueError("--revision shows a workload revision; it does not go with --releases")
    if others := [str(r) for r in refs if r.res is not ROLLOUTS]:
        raise ValueError(f"--releases applies to rollouts only, not {', '.join(others)}")
    return HistoryMode.RELEASE if rollout_id else HistoryMode.RELEASES


def _print_releases(ref: Ref, releases: list[JSON], rollout_id: str, output: str) -> None:
    """``--releases``: every recorded release of ``ref``, or the one with ``rollout_id``."""
    chosen = [h for h in releases if history_id(h) == rollout_id] if rollout_id else releases
    if rollout_id and not chosen:
        raise EditError(f"no {group_resource(ROLLOUT_HISTORIES)} of {ref} with rollout-id {rollout_id!r}")
    if output in ("json", "yaml"):
        dump(chosen[0] if rollout_id else {"apiVersion": "v1", "kind": "List", "items": chosen}, output)
    elif output == "name":
        for item in chosen:
            sys.stdout.write(f"{qualified(ROLLOUT_HISTORIES)}/{item['metadata']['name']}\n")
    elif rollout_id:
        sys.stdout.write(f"{ref}\n{release_steps(chosen[0])}")
    elif not chosen:
        sys.stdout.write(
            f"{ref}\nNo releases recorded (RolloutHistory needs the RolloutHistory feature gate).\n"
        )
    else:
        now = datetime.datetime.now(datetime.UTC)
        sys.stdout.write(f"{ref}\n{releases_table(chosen, now)}")


def history(
    ctx: typer.Context,
    targets: Targets = None,
    filename: FilenameOpt = None,
    revision: Annotated[
        int,
        typer.Option("--revision", help="See the details, including podTemplate of the revision specified"),
    ] = 0,
    releases: Annotated[
        bool,
        typer.Option(
            "--releases/--no-releases",
            help="kruise's addition, Rollouts only: list the Rollout's recorded releases "
            "(RolloutHistory objects, feature gate RolloutHistory) instead of revisions.",
        ),
    ] = False,
    rollout_id: Annotated[
        str,
        typer.Option(
            "--rollout-id",
            help="With --releases: show the one release with this rollout-id, the pods each step released.",
        ),
    ] = "",
    output: OutputOpt = "",
) -> None:
    """View rollout history: revisions of CloneSets, Deployments, StatefulSets and DaemonSets, native
    or Advanced, as kubectl-kruise prints them (a Rollout shows its workload's). With --releases, a
    Rollout's recorded releases instead (kruise's addition)."""
    refs, output = resolve(ctx, targets, filename), check_output(output)
    if revision < 0:
        raise typer.BadParameter(f"revision must be a positive integer: {revision}", param_hint="--revision")
    try:
        mode = history_mode(refs, releases=releases, rollout_id=rollout_id, revision=revision)
    except ValueError as err:
        raise typer.BadParameter(str(err)) from err

    async def one(kube: KubeClient, ref: Ref) -> None:
        if mode is not HistoryMode.REVISIONS:
            _print_releases(ref, await _releases(kube, ref), rollout_id, output)
            return
        workload = await workload_of(kube, ref)
        _print_history(workload, await load_history(kube, workload), revision, output)

    finish(run_kube(target_of(ctx), lambda kube, _ns: for_each(kube, refs, one)))


async def _undo_workload(kube: KubeClient, ref: Ref, to_revision: int, dry_run: str, output: str) -> None:
    hist = await load_history(kube, ref)
    if ref.res is DEPLOYMENTS:
        number = pick_deployment_revision(hist.workload, hist.revisions, to_revision)
        patch = deployment_undo_patch(hist.workload, hist.revisions[number])
    else:
        number = pick_revision(hist.revisions, to_revision, rules(ref.res).no_previous)
        patch = cloneset_undo_patch(hist.workload, hist.template(number))
    if dry_run == "client":
        sys.stdout.write(f"{ref} (dry run)\n{pod_template(hist.template(number))}")
        return
    if patch is None:
        emit(ref, f"skipped rollback (current template already matches revision {number})", output="")
        return
    done = await kube.patch(
        ref.res, ref.name, patch, ref.namespace, patch_type="json", dry_run=dry_run == "server"
    )
    emit(ref, "rolled back" + (" (server dry run)" if dry_run == "server" else ""), done, output)


def undo(
    ctx: typer.Context,
    targets: Targets = None,
    filename: FilenameOpt = None,
    to_revision: Annotated[
        int, typer.Option("--to-revision", help="The revision to rollback to. Default to 0 (last revision).")
    ] = 0,
    fast: Annotated[
        bool, typer.Option("--fast/--no-fast", help="Fast rollback for a Rollout in progress.")
    ] = False,
    dry_run: DryRunOpt = "none",
    output: OutputOpt = "",
) -> None:
    """Undo a previous rollout: CloneSet, Deployment, StatefulSet, DaemonSet (native or Advanced), or
    the workload of a Rollout."""
    refs, output, dry_run = resolve(ctx, targets, filename), check_output(output), check_dry_run(dry_run)
    seen: set[Ref] = set()

    async def one(kube: KubeClient, ref: Ref) -> None:
        if fast:
            if ref.res is not ROLLOUTS:
                raise EditError("rollback is not supported on given object")
            rollout = await kube.get(ROLLOUTS, ref.name, ref.namespace)
            done = await kube.patch(
                ROLLOUTS, ref.name, fast_rollback_patch(rollout), ref.namespace, subresource="status"
            )
            emit(ref, "rolled back", done, output)
            return
        workload = await workload_of(kube, ref)
        if workload in seen:  # a Rollout and its workload named together: undo once
            return
        seen.add(workload)
        await _undo_workload(kube, workload, to_revision, dry_run, output)

    finish(run_kube(target_of(ctx), lambda kube, _ns: for_each(kube, refs, one)))
