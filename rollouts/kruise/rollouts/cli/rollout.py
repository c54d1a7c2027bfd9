"""``kruise rollout ...`` (also ``kubectl kruise rollout ...``), with kubectl-kruise's names.

- ``status rollout/NAME [--watch] [--timeout S]``: progress (and the pods per batch id of the
  release's rollout-id); exit 0 when the release is done (Healthy and not progressing), 1 when
  it failed or was rolled back, 2 on timeout.
- ``approve rollout/NAME``: merge-patches ``status.canaryStatus.currentStepState=StepReady``
  on the status subresource, only from ``StepPaused`` (as kubectl-kruise).
- ``pause``/``resume`` ``rollout/NAME | cloneset/NAME | deployment/NAME``.
- ``undo cloneset/NAME [--to-revision N]``, ``history cloneset/NAME``.
- ``plan rollout/NAME``: every step's canary/stable pods and traffic before anything runs.
- ``check-update cloneset/NAME --image CONTAINER=IMAGE``: in place or recreate, and why.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import sys
import time
from collections.abc import Awaitable, Callable, Mapping
from typing import Annotated, Any, TypeVar

import typer
from rich.console import Console
from rich.table import Table

from kruise.analysis.resources import ANALYSIS_RUNS
from kruise.core.errors import KruiseError, NotFoundError
from kruise.core.kube import KubeClient, Resource
from kruise.core.kube.resources import CLONESETS, CONTROLLER_REVISIONS, DEPLOYMENTS, PODS
from kruise.rollouts.api.common import ROLLOUT_ID_LABEL
from kruise.rollouts.release.constants import ROLLOUT_LABEL
from kruise.rollouts.resources import ROLLOUTS
from kruise.rollouts.rollout.steps import plan as plan_steps
from kruise.rollouts.rollout.steps import steps_of
from kruise.rollouts.workloads.podlabels import batch_summary
from kruise.workloads.inplace import calculate_in_place_update_spec
from kruise.workloads.revisions import sort_revisions, template_of_revision

app = typer.Typer(help="Manage Rollouts and the workloads they steer.", no_args_is_help=True)
console = Console()
T = TypeVar("T")

KubeconfigOpt = Annotated[str | None, typer.Option("--kubeconfig", help="Path to the kubeconfig file.")]
NamespaceOpt = Annotated[str, typer.Option("-n", "--namespace", help="Namespace of the object.")]
KINDS: dict[str, Resource] = {
    "rollout": ROLLOUTS,
    "rollouts": ROLLOUTS,
    "ro": ROLLOUTS,
    "cloneset": CLONESETS,
    "clonesets": CLONESETS,
    "clone": CLONESETS,
    "deployment": DEPLOYMENTS,
    "deployments": DEPLOYMENTS,
    "deploy": DEPLOYMENTS,
}


def _target(ref: str, default: str = "rollout") -> tuple[Resource, str]:
    kind, _, name = ref.rpartition("/")
    kind = kind.lower() or default
    if kind not in KINDS:
        raise typer.BadParameter(
            f"unsupported resource type {kind!r}; use rollout/, cloneset/ or deployment/"
        )
    return KINDS[kind], name


def _run(kubeconfig: str | None, body: Callable[[KubeClient], Awaitable[T]]) -> T:
    async def main() -> T:
        kube = await KubeClient.from_kubeconfig(kubeconfig)
        try:
            return await body(kube)
        finally:
            await kube.close()

    try:
        return asyncio.run(main())
    except NotFoundError as err:
        console.print(f"[red]error:[/] {err.message}")
        raise typer.Exit(1) from err
    except KruiseError as err:
        console.print(f"[red]error:[/] {err}")
        raise typer.Exit(1) from err


def _sub_status(ro: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    status = ro.get("status") or {}
    if status.get("blueGreenStatus"):
        return "blueGreenStatus", status["blueGreenStatus"]
    return "canaryStatus", status.get("canaryStatus") or {}


@app.command()
def approve(target: str, kubeconfig: KubeconfigOpt = None, namespace: NamespaceOpt = "default") -> None:
    """Approve the paused step of a Rollout so it enters the next step."""
    res, name = _target(target)
    if res is not ROLLOUTS:
        raise typer.BadParameter("approve works on rollout/NAME")

    async def body(kube: KubeClient) -> None:
        ro = await kube.get(ROLLOUTS, name, namespace)
        field, sub = _sub_status(ro)
        if sub.get("currentStepState") != "StepPaused":
            state = sub.get("currentStepState")
            console.print(f"[red]error:[/] rollout {name} is not in the StepPaused state (now {state!r})")
            raise typer.Exit(1)
        patch = {"status": {field: {"currentStepState": "StepReady"}}}
        await kube.patch(ROLLOUTS, name, patch, namespace, patch_type="merge", subresource="status")
        console.print(f"rollout.rollouts.kruise.io/{name} approved")

    _run(kubeconfig, body)


def _pause_patch(res: Resource, paused: bool) -> dict[str, Any]:
    if res is ROLLOUTS:
        return {"spec": {"strategy": {"paused": paused}}}
    if res is CLONESETS:
        return {"spec": {"updateStrategy": {"paused": paused}}}
    return {"spec": {"paused": paused}}


@app.command()
def pause(target: str, kubeconfig: KubeconfigOpt = None, namespace: NamespaceOpt = "default") -> None:
    """Pause a Rollout (``spec.strategy.paused``) or a workload's update."""
    res, name = _target(target)
    _run(
        kubeconfig, lambda kube: kube.patch(res, name, _pause_patch(res, True), namespace, patch_type="merge")
    )
    console.print(f"{res.plural}/{name} paused")


@app.command()
def resume(target: str, kubeconfig: KubeconfigOpt = None, namespace: NamespaceOpt = "default") -> None:
    """Resume what ``pause`` paused."""
    res, name = _target(target)
    _run(
        kubeconfig,
        lambda kube: kube.patch(res, name, _pause_patch(res, False), namespace, patch_type="merge"),
    )
    console.print(f"{res.plural}/{name} resumed")


async def _cloneset_revisions(
    kube: KubeClient, name: str, namespace: str
) -> tuple[dict[str, Any], list[Mapping[str, Any]]]:
    cs = await kube.get(CLONESETS, name, namespace)
    uid = cs["metadata"]["uid"]
    items = (await kube.list(CONTROLLER_REVISIONS, namespace))["items"]
    owned = [r for r in items if any(o.get("uid") == uid for o in r["metadata"].get("ownerReferences") or [])]
    return cs, sort_revisions(owned)


@app.command()
def history(target: str, kubeconfig: KubeconfigOpt = None, namespace: NamespaceOpt = "default") -> None:
    """List a CloneSet's revisions."""
    res, name = _target(target, default="cloneset")
    if res is not CLONESETS:
        raise typer.BadParameter("history works on cloneset/NAME")

    async def body(kube: KubeClient) -> None:
        cs, revisions = await _cloneset_revisions(kube, name, namespace)
        table = Table(title=f"cloneset/{name}")
        for col in ("REVISION", "NAME", "IMAGES", ""):
            table.add_column(col)
        current = (cs.get("status") or {}).get("updateRevision")
        for rev in revisions:
            images = ",".join(
                c.get("image", "") for c in template_of_revision(rev).get("spec", {}).get("containers", [])
            )
            table.add_row(
                str(rev.get("revision")),
                rev["metadata"]["name"],
                images,
                "current" if rev["metadata"]["name"] == current else "",
            )
        console.print(table)

    _run(kubeconfig, body)


@app.command()
def undo(
    target: str,
    to_revision: Annotated[
        int, typer.Option("--to-revision", help="Revision to roll back to (0 = previous).")
    ] = 0,
    kubeconfig: KubeconfigOpt = None,
    namespace: NamespaceOpt = "default",
) -> None:
    """Roll a CloneSet's template back to an earlier revision."""
    res, name = _target(target, default="cloneset")
    if res is not CLONESETS:
        raise typer.BadParameter("undo works on cloneset/NAME")

    async def body(kube: KubeClient) -> None:
        cs, revisions = await _cloneset_revisions(kube, name, namespace)
        current = (cs.get("status") or {}).get("updateRevision")
        if to_revision:
            chosen = next((r for r in revisions if r.get("revision") == to_revision), None)
        else:
            older = [r for r in revisions if r["metadata"]["name"] != current]
            chosen = older[-1] if older else None
        if chosen is None:
            console.print("[red]error:[/] no revision to roll back to")
            raise typer.Exit(1)
        patch = {"spec": {"template": template_of_revision(chosen)}}
        await kube.patch(CLONESETS, name, patch, namespace, patch_type="merge")
        console.print(f"cloneset.apps.kruise.io/{name} rolled back to revision {chosen.get('revision')}")

    _run(kubeconfig, body)


@app.command()
def plan(
    target: str,
    output: Annotated[str, typer.Option("-o", "--output", help="table or json.")] = "table",
    kubeconfig: KubeconfigOpt = None,
    namespace: NamespaceOpt = "default",
) -> None:
    """Print each step's expected canary/stable pods and traffic weight."""
    _, name = _target(target)

    async def body(kube: KubeClient) -> None:
        ro = await kube.get(ROLLOUTS, name, namespace)
        ref = (ro.get("spec") or {}).get("workloadRef") or {}
        res = CLONESETS if ref.get("kind") == "CloneSet" else DEPLOYMENTS
        workload = await kube.get(res, str(ref.get("name")), namespace)
        replicas = int((workload.get("spec") or {}).get("replicas", 1))
        steps = plan_steps(ro, replicas)
        if output == "json":
            rows = [
                {
                    "step": s.index,
                    "replicas": s.replicas,
                    "canaryPods": s.canary,
                    "stablePods": s.stable,
                    "canaryWeight": s.weight,
                    "stableWeight": None if s.weight is None else 100 - s.weight,
                    "matches": s.matches,
                    "pause": "approval" if s.approval else s.pause_seconds,
                }
                for s in steps
            ]
            sys.stdout.write(json.dumps(rows, indent=2) + "\n")
            return
        table = Table(title=f"rollout/{name} over {ref.get('kind')}/{ref.get('name')} ({replicas} replicas)")
        for col in (
            "STEP",
            "REPLICAS",
            "CANARY PODS",
            "STABLE PODS",
            "CANARY %",
            "STABLE %",
            "MATCHES",
            "PAUSE",
        ):
            table.add_column(col)
        for step in steps:
            pause_text = (
                "approval" if step.approval else (f"{step.pause_seconds}s" if step.pause_seconds else "-")
            )
            weight = "-" if step.weight is None else str(step.weight)
            stable = "-" if step.weight is None else str(100 - step.weight)
            matches = str(len(step.matches)) if step.matches else "-"
            row = (
                str(step.replicas),
                str(step.canary),
                str(step.stable),
                weight,
                stable,
                matches,
                pause_text,
            )
            table.add_row(str(step.index), *row)
        console.print(table)

    _run(kubeconfig, body)


@app.command("check-update")
def check_update(
    target: str,
    image: Annotated[list[str], typer.Option("--image", help="CONTAINER=IMAGE (repeatable).")] = [],  # noqa: B006
    env: Annotated[list[str], typer.Option("--env", help="CONTAINER:NAME=VALUE (repeatable).")] = [],  # noqa: B006
    kubeconfig: KubeconfigOpt = None,
    namespace: NamespaceOpt = "default",
) -> None:
    """Say whether a CloneSet change goes in place or recreates pods, and why."""
    import copy

    res, name = _target(target, default="cloneset")
    if res is not CLONESETS:
        raise typer.BadParameter("check-update works on cloneset/NAME")

    async def body(kube: KubeClient) -> None:
        cs = await kube.get(CLONESETS, name, namespace)
        old = cs["spec"]["template"]
        new = copy.deepcopy(old)
        containers = {c["name"]: c for c in new["spec"]["containers"]}
        for item in image:
            cname, _, img = item.partition("=")
            if cname not in containers:
                raise typer.BadParameter(f"no container {cname!r} in cloneset/{name}")
            containers[cname]["image"] = img
        for item in env:
            cname, _, assignment = item.partition(":")
            key, _, value = assignment.partition("=")
            containers[cname].setdefault("env", []).append({"name": key, "value": value})
        spec = calculate_in_place_update_spec(old, new, revision="candidate", grace_seconds=0)
        strategy = (cs["spec"].get("updateStrategy") or {}).get("type", "ReCreate")
        if spec is None:
            verdict = "rejected (InPlaceOnly)" if strategy == "InPlaceOnly" else "RECREATE pods"
            console.print(
                f"cloneset/{name}: {verdict}: the change touches pod spec fields other than container images"
            )
        elif strategy == "ReCreate":
            console.print(f"cloneset/{name}: RECREATE pods: updateStrategy.type is ReCreate")
        else:
            images = ", ".join(f"{k}={v}" for k, v in spec.container_images.items()) or "metadata only"
            console.print(
                f"cloneset/{name}: IN PLACE ({strategy}): {images}; pods keep their names, UIDs and IPs"
            )

    _run(kubeconfig, body)


@app.command()
def status(
    target: str,
    watch: Annotated[bool, typer.Option("--watch/--no-watch", "-w", help="Follow until done.")] = True,
    timeout: Annotated[
        float, typer.Option("--timeout", help="Give up after this many seconds (0 = never).")
    ] = 0,
    kubeconfig: KubeconfigOpt = None,
    namespace: NamespaceOpt = "default",
) -> None:
    """Show a Rollout's progress; exit 0 when done, 1 when failed/rolled back, 2 on timeout."""
    _, name = _target(target)

    async def body(kube: KubeClient) -> int:
        start = time.monotonic()
        last = ""
        while True:
            ro = await kube.get(ROLLOUTS, name, namespace)
            line, outcome = describe(ro)
            runs = await _analysis_runs(kube, name, namespace)
            if runs:
                line += "\n  analysis: " + ", ".join(runs)
            rollout_id = str(_sub_status(ro)[1].get("observedRolloutID") or "")
            if rollout_id and (batches := await _labelled_pods(kube, rollout_id, namespace)):
                line += "\n  " + batches
            if line != last:
                console.print(line)
                last = line
            if outcome is not None:
                return outcome
            if not watch:
                return 0
            if timeout and time.monotonic() - start > timeout:
                console.print(f"[red]timed out after {timeout:.0f}s[/]")
                return 2
            await asyncio.sleep(1.0)

    raise typer.Exit(_run(kubeconfig, body))


async def _labelled_pods(kube: KubeClient, rollout_id: str, namespace: str) -> str:
    """Pods labelled with the release's rollout-id, counted by batch id."""
    with contextlib.suppress(KruiseError):
        pods = await kube.list(PODS, namespace, label_selector=f"{ROLLOUT_ID_LABEL}={rollout_id}")
        return batch_summary(pods["items"], rollout_id)
    return ""


async def _analysis_runs(kube: KubeClient, rollout: str, namespace: str) -> list[str]:
    """``name=phase`` of the Rollout's AnalysisRuns (label ``rollouts.kruise.io/rollout``)."""
    try:
        runs = await kube.list(ANALYSIS_RUNS, namespace, label_selector=f"{ROLLOUT_LABEL}={rollout}")
    except KruiseError:
        return []
    return [
        f"{r['metadata']['name']}={(r.get('status') or {}).get('phase', 'Pending')}" for r in runs["items"]
    ]


def describe(ro: dict[str, Any]) -> tuple[str, int | None]:
    """One status line, and the exit code once the release is over (None while it runs)."""
    status = ro.get("status") or {}
    _, sub = _sub_status(ro)
    steps = len(steps_of(ro))
    phase = status.get("phase", "")
    conds = {c.get("type"): c for c in status.get("conditions") or []}
    succeeded = conds.get("Succeeded", {}).get("status")
    step = f"{sub.get('currentStepIndex', 0)}/{steps}"
    canary = f"{sub.get('canaryReadyReplicas', 0)}/{sub.get('canaryReplicas', 0)}"
    line = (
        f"phase={phase} step={step} state={sub.get('currentStepState', '')} "
        f"canary ready={canary}: {status.get('message', '')}"
    )
    if phase == "Healthy":
        return line, 1 if succeeded == "False" else 0
    return line, None


if __name__ == "__main__":  # pragma: no cover
    sys.exit(app())
