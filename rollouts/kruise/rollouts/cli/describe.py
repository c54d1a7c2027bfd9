"""``kubectl kruise describe rollout NAME``: kruise-tools' view of a Rollout (``rollouts``, ``ro``).

Status, strategy with every step (the current one marked with its state), traffic routings, the
workload's images, revisions and replica counts, and its pods (those of the current batch,
``--all`` for every one). ``-w`` redraws it until ``--timeout`` seconds passed (0: until Ctrl-C).
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime
import sys
import time
from typing import Annotated, Any

import typer

from kruise.core.errors import KruiseError
from kruise.core.kube import KubeClient
from kruise.core.kube.resources import CLONESETS, DEPLOYMENTS, PODS
from kruise.rollouts.cli.kubectx import fail, run_kube, target_of
from kruise.rollouts.cli.views import describe_rollout, human_age
from kruise.rollouts.resources import ROLLOUTS
from kruise.rollouts.rollout.outcome import sub_status

app = typer.Typer(help="Show details of a specific resource (rollout).", no_args_is_help=True)
BATCH_LABEL = "rollouts.kruise.io/rollout-batch-id"


def _pod_row(pod: dict[str, Any], now: datetime.datetime) -> list[str]:
    meta, status = pod["metadata"], pod.get("status") or {}
    statuses = status.get("containerStatuses") or []
    ready = sum(1 for s in statuses if s.get("ready"))
    created = datetime.datetime.fromisoformat(meta["creationTimestamp"].replace("Z", "+00:00"))
    labels = meta.get("labels") or {}
    revision = labels.get("pod-template-hash") or labels.get("controller-revision-hash") or ""
    phase = "Terminating" if meta.get("deletionTimestamp") else str(status.get("phase", ""))
    return [
        meta["name"],
        f"{ready}/{len((pod.get('spec') or {}).get('containers') or [])}",
        labels.get(BATCH_LABEL, ""),
        revision,
        human_age((now - created).total_seconds()),
        str(sum(int(s.get("restartCount") or 0) for s in statuses)),
        phase,
    ]


async def render(kube: KubeClient, name: str, namespace: str, all_pods: bool, color: bool) -> str:
    rollout = await kube.get(ROLLOUTS, name, namespace)
    wref = (rollout.get("spec") or {}).get("workloadRef") or {}
    res, label = (
        (CLONESETS, "controller-revision-hash")
        if wref.get("kind") == "CloneSet"
        else (DEPLOYMENTS, "pod-template-hash")
    )
    workload, rows = None, []
    with contextlib.suppress(KruiseError):
        workload = await kube.get(res, str(wref.get("name")), namespace)
    sub = sub_status(rollout)
    revision = str(sub.get("podTemplateHash") or sub.get("stableRevision") or "")
    if workload is not None and revision:
        selector = f"{label}={revision}"
        if not all_pods and int(sub.get("currentStepIndex") or 0):
            selector += f",{BATCH_LABEL}={sub.get('currentStepIndex')}"
        if all_pods:
            match = ((workload.get("spec") or {}).get("selector") or {}).get("matchLabels") or {}
            selector = ",".join(f"{k}={v}" for k, v in match.items())
        now = datetime.datetime.now(datetime.UTC)
        pods = (await kube.list(PODS, namespace, label_selector=selector))["items"]
        rows = sorted((_pod_row(p, now) for p in pods), key=lambda r: (r[2], -int(r[1].split("/")[0])))
    return describe_rollout(rollout, workload, rows, color=color)


@app.command("rollout")
def rollout(
    ctx: typer.Context,
    name: Annotated[str, typer.Argument(help="Name of the Rollout (or rollout/NAME).")],
    watch: Annotated[
        bool, typer.Option("--watch/--no-watch", "-w", help="Watch for changes to the rollout.")
    ] = False,
    no_color: Annotated[bool, typer.Option("--no-color", help="Print without color.")] = False,
    timeout: Annotated[
        int, typer.Option("--timeout", help="Stop watching after these seconds (0: never).")
    ] = 0,
    all_: Annotated[bool, typer.Option("--all", help="Show all pods of the workload.")] = False,
) -> None:
    """Get details about and a visual representation of a rollout."""
    name = name.split("/", 1)[1] if "/" in name else name
    color = not no_color and sys.stdout.isatty()

    async def body(kube: KubeClient, namespace: str) -> None:
        start, last = time.monotonic(), ""
        while True:
            text = await render(kube, name, namespace, all_, color)
            if text != last:
                if watch and sys.stdout.isatty():
                    sys.stdout.write("\033[H\033[2J")
                sys.stdout.write(text if not last else "\n" + text)
                sys.stdout.flush()
                last = text
            if not watch or (timeout and time.monotonic() - start >= timeout):
                return
            await asyncio.sleep(1.0)

    if not name:
        fail("required resource not specified")
    run_kube(target_of(ctx), body)


app.command("rollouts", hidden=True)(rollout)
app.command("ro", hidden=True)(rollout)
