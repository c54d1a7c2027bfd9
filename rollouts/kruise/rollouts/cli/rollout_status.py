"""``rollout status``: watch a Rollout or a workload until its rollout is done.

The workloads are those :mod:`.kinds` has a status viewer for: CloneSet, Deployment, StatefulSet,
DaemonSet, Advanced StatefulSet and Advanced DaemonSet.

Exit codes, for pipelines: **0** done (released, or nothing to release), **1** failed, aborted
or cancelled, degraded (and for errors), **2** ``--timeout`` reached. A Rollout's outcome is read by
:func:`kruise.rollouts.rollout.outcome.release_outcome` (the same reading its kstatus ``Ready``
condition comes from). kubectl-kruise has no status viewer for Rollouts; the rule for one that
cannot go on is Argo Rollouts' (``status`` ends on ``Degraded`` with an error): a Rollout whose
workload is missing (status message "Workload Not Found", and the workload absent now) ends the
watch at once, with or without ``--watch``, printing ``rollout "NAME" is degraded: Workload Not
Found: KIND NAME`` and exiting 1 (:func:`kruise.rollouts.cli.status_view.degraded_reason`).

On a terminal ``--watch`` shows a live panel (step, pods per revision, traffic weights,
analysis runs); piped, it prints a line whenever something changes.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
import time
from collections.abc import Mapping, Sequence
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.live import Live
from rich.table import Table

from kruise.analysis.resources import ANALYSIS_RUNS
from kruise.core.errors import KruiseError
from kruise.core.kube import KubeClient
from kruise.core.kube.resources import CLONESETS, DEPLOYMENTS, INGRESSES, PODS
from kruise.rollouts.cli.durations import parse_duration
from kruise.rollouts.cli.kinds import rules
from kruise.rollouts.cli.kubectx import fail, run_kube, target_of
from kruise.rollouts.cli.output import FilenameOpt, Targets, resolve
from kruise.rollouts.cli.refs import Ref, resource_for
from kruise.rollouts.cli.status_view import (
    Progress,
    Verdict,
    current_release_pods,
    current_release_runs,
    degraded_reason,
    final_line,
    finished_exit_code,
    pods_by_role,
    progress_lines,
    progress_of,
)
from kruise.rollouts.release.constants import ROLLOUT_LABEL
from kruise.rollouts.resources import ROLLOUTS
from kruise.rollouts.rollout.outcome import release_outcome, sub_status
from kruise.rollouts.workloads.podlabels import batch_summary
from kruise.traffic.resources import HTTPROUTES, VIRTUALSERVICES

EXIT_DONE, EXIT_FAILED, EXIT_TIMEOUT = 0, 1, 2
POLL_SECONDS = 1.0


async def _quiet(coro: Any) -> Any:
    """``await coro``, or None when the API says no (a missing CRD, a forbidden read)."""
    with contextlib.suppress(KruiseError):
        return await coro
    return None


def _rule_shares(backends: Sequence[Mapping[str, Any]]) -> list[str]:
    """``service=percent`` of one HTTPRoute rule: Gateway API weights are relative within the
    rule (default 1), so a lone backend of weight 1 takes all the traffic and shows 100, like
    the Ingress and VirtualService weights beside it."""
    weights = [int(b.get("weight", 1)) for b in backends]
    total = sum(weights)
    return [
        f"{b.get('name')}={w * 100 // total if total else 0}" for b, w in zip(backends, weights, strict=True)
    ]


async def _weights(kube: KubeClient, rollout: Mapping[str, Any], namespace: str) -> list[str]:
    """``service=weight`` of the routes a Rollout's traffic routings name."""
    strategy = (rollout.get("spec") or {}).get("strategy") or {}
    out: list[str] = []
    for routing in (strategy.get("canary") or strategy.get("blueGreen") or {}).get("trafficRoutings") or []:
        route_name = (routing.get("gateway") or {}).get("httpRouteName")
        if route_name and (route := await _quiet(kube.get(HTTPROUTES, route_name, namespace))):
            for rule in (route.get("spec") or {}).get("rules") or []:
                out += _rule_shares(rule.get("backendRefs") or [])
        ingress = (routing.get("ingress") or {}).get("name")
        if ingress and (canary := await _quiet(kube.get(INGRESSES, f"{ingress}-canary", namespace))):
            weight = (canary["metadata"].get("annotations") or {}).get(
                "nginx.ingress.kubernetes.io/canary-weight"
            )
            out.append(f"{ingress}-canary={weight or 0}")
        for ref in routing.get("customNetworkRefs") or []:
            if ref.get("kind") == "VirtualService" and (
                vs := await _quiet(kube.get(VIRTUALSERVICES, ref["name"], namespace))
            ):
                for http in (vs.get("spec") or {}).get("http") or []:
                    out += [
                        f"{r['destination'].get('host')}={r.get('weight', 100)}"
                        for r in http.get("route") or []
                    ]
    return out


async def rollout_progress(kube: KubeClient, rollout: Mapping[str, Any], namespace: str) -> Progress:
    """Everything the display shows about ``rollout`` now."""
    sub = sub_status(rollout)
    wref = (rollout.get("spec") or {}).get("workloadRef") or {}
    res = resource_for(str(wref.get("apiVersion") or ""), str(wref.get("kind") or "")) or (
        CLONESETS if wref.get("kind") == "CloneSet" else DEPLOYMENTS
    )
    label = "pod-template-hash" if res is DEPLOYMENTS else "controller-revision-hash"
    pods: dict[str, tuple[int, int]] = {}
    workload, missing = None, False
    try:
        workload = await kube.get_or_none(res, str(wref.get("name")), namespace)
        missing = workload is None
    except KruiseError:  # a forbidden read, a missing CRD: nothing to show, nothing to conclude
        pass
    listed: list[Any] = []
    if workload:
        match = ((workload.get("spec") or {}).get("selector") or {}).get("matchLabels") or {}
        selector = ",".join(f"{k}={v}" for k, v in match.items())
        found = await _quiet(kube.list(PODS, namespace, label_selector=selector)) if selector else None
        listed = list((found or {}).get("items") or [])
        canary = str(
            sub.get("canaryRevision") or sub.get("updatedRevision") or sub.get("podTemplateHash") or ""
        )
        pods = pods_by_role(listed, label, str(sub.get("stableRevision") or ""), canary)
    runs = await _quiet(
        kube.list(ANALYSIS_RUNS, namespace, label_selector=f"{ROLLOUT_LABEL}={rollout['metadata']['name']}")
    )
    analysis = [
        f"{r['metadata']['name']}={(r.get('status') or {}).get('phase', 'Pending')}"
        for r in current_release_runs((runs or {}).get("items") or [], rollout)
    ]
    rollout_id = str(sub.get("observedRolloutID") or "")
    batches = batch_summary(current_release_pods(listed, label, sub), rollout_id) if rollout_id else ""
    return progress_of(
        rollout,
        release_outcome(rollout),
        pods=pods,
        weights=await _weights(kube, rollout, namespace),
        analysis=analysis,
        batches=batches,
        degraded=degraded_reason(rollout, workload_missing=missing),
    )


def panel(p: Progress) -> Table:
    """The live panel of ``status --watch`` on a terminal."""
    table = Table(title=f"rollout/{p.name}: {p.outcome}", show_header=False, title_justify="left")
    table.add_column("", style="bold")
    table.add_column("")
    table.add_row("step", f"{p.step}/{p.steps} {p.state}")
    table.add_row(
        "pods", "\n".join(f"{role}: {n} ({ready} ready)" for role, (n, ready) in p.pods.items()) or "-"
    )
    table.add_row("traffic", ", ".join(p.weights) or "-")
    if p.analysis:
        table.add_row("analysis", "\n".join(p.analysis))
    if p.batches:
        table.add_row("batches", p.batches)
    table.add_row("message", p.message)
    return table


async def _watch_rollout(kube: KubeClient, ref: Ref, watch: bool, timeout: float) -> int:
    start, last = time.monotonic(), ""
    live = (
        Live(console=Console(), auto_refresh=False, transient=False)
        if watch and sys.stdout.isatty()
        else None
    )
    with live or contextlib.nullcontext():
        while True:
            rollout = await kube.get(ROLLOUTS, ref.name, ref.namespace)
            progress = await rollout_progress(kube, rollout, ref.namespace)
            if live is not None:
                live.update(panel(progress), refresh=True)
            elif (text := "\n".join(progress_lines(progress))) != last:
                sys.stdout.write(text + "\n")
                sys.stdout.flush()
                last = text
            if (code := finished_exit_code(progress)) is not None or not watch:
                break
            if timeout and time.monotonic() - start >= timeout:
                sys.stderr.write("error: timed out waiting for the condition\n")
                return EXIT_TIMEOUT
            await asyncio.sleep(POLL_SECONDS)
    if code is not None:
        sys.stdout.write(final_line(progress) + "\n")
        return code
    return EXIT_DONE


async def _watch_workload(kube: KubeClient, ref: Ref, watch: bool, timeout: float, revision: int) -> int:
    start, last = time.monotonic(), ""
    viewer = rules(ref.res).status
    assert viewer is not None  # status() refused the kinds without one
    while True:
        obj = await kube.get(ref.res, ref.name, ref.namespace)
        verdict: Verdict = viewer(obj, revision)
        if verdict.error:
            sys.stderr.write(f"error: {verdict.error}\n")
            return EXIT_FAILED
        if verdict.message != last:
            sys.stdout.write(verdict.message + "\n")
            sys.stdout.flush()
            last = verdict.message
        if verdict.done or not watch:
            return EXIT_DONE
        if timeout and time.monotonic() - start >= timeout:
            sys.stderr.write("error: timed out waiting for the condition\n")
            return EXIT_TIMEOUT
        await asyncio.sleep(POLL_SECONDS)


def status(
    ctx: typer.Context,
    targets: Targets = None,
    filename: FilenameOpt = None,
    watch: Annotated[
        bool, typer.Option("--watch/--no-watch", "-w", help="Watch the status until it's done.")
    ] = True,
    timeout: Annotated[
        str,
        typer.Option("--timeout", help="How long to watch before giving up, e.g. 30s, 5m, 1h (0: never)."),
    ] = "0",
    revision: Annotated[int, typer.Option("--revision", help="Deployments: pin to this revision.")] = 0,
    detail: Annotated[
        bool,
        typer.Option(
            "--detail/--no-detail",
            "-d",
            help="Accepted for kubectl-kruise; the output always has the details.",
        ),
    ] = False,
) -> None:
    """Show the status of the rollout of a Rollout or workload; watch until it is done.

    Exit code 0: done (released, or nothing to release).

    Exit code 1: failed, aborted or cancelled (a rolled-back release), degraded (the Rollout's
    workload is missing: reported at once, as Argo Rollouts' status does), or an error.

    Exit code 2: the --timeout was reached.
    """
    try:
        seconds = parse_duration(timeout)
    except ValueError as err:
        raise typer.BadParameter(str(err), param_hint="--timeout") from err
    refs = resolve(ctx, targets, filename)
    if len(refs) != 1:
        fail(
            "rollout status is only supported on individual resources and resource collections - "
            f"{len(refs)} resources were found"
        )
    (ref,) = refs
    if ref.res is not ROLLOUTS and rules(ref.res).status is None:
        fail(f"no status viewer has been implemented for {ref.res.kind}.{ref.res.group}")

    async def body(kube: KubeClient, _ns: str) -> int:
        if ref.res is ROLLOUTS:
            return await _watch_rollout(kube, ref, watch, seconds)
        return await _watch_workload(kube, ref, watch, seconds, revision)

    raise typer.Exit(run_kube(target_of(ctx), body))
