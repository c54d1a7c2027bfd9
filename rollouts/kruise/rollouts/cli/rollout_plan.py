"""kruise's own ``rollout plan`` and ``rollout check-update`` (not in kubectl-kruise).

- ``plan rollout/NAME [-o json]``: every step's canary/stable pods and traffic before anything runs,
  and, for a Rollout annotated ``rollouts.kruise.io/prepull-next-batch``, the line
  ``pre-pull on: node-a, node-b`` naming the nodes pre-pulling the next step's images (its
  ``PrePullNextBatch`` condition; ``prePull`` in the JSON);
- ``check-update cloneset/NAME --image CONTAINER=IMAGE [--env CONTAINER:NAME=VALUE]``: whether the
  change is done in place (same pods, the container restarts) or recreates pods, and why.
"""

from __future__ import annotations

import copy
import json
import sys
from typing import Annotated, Any

import typer
from rich.table import Table

from kruise.core.kube import KubeClient, Resource
from kruise.core.kube.resources import CLONESETS
from kruise.rollouts.cli.edits import EditError
from kruise.rollouts.cli.kubectx import fail, run_kube, target_of
from kruise.rollouts.cli.output import Targets, resolve, table_console
from kruise.rollouts.cli.refs import Ref, RefError, only
from kruise.rollouts.resources import ROLLOUTS
from kruise.rollouts.rollout.prepull import CONDITION_TYPE as PREPULL_CONDITION
from kruise.rollouts.rollout.steps import plan as plan_steps
from kruise.rollouts.workloads.registry import kind_for
from kruise.workloads.inplace import calculate_in_place_update_spec


def _one(ctx: typer.Context, targets: list[str] | None, res: Resource, verb: str) -> Ref:
    try:
        return only(resolve(ctx, targets, [])[:1], (res,), verb)[0]
    except RefError as err:
        fail(str(err))


def plan(
    ctx: typer.Context,
    targets: Targets = None,
    output: Annotated[str, typer.Option("-o", "--output", help="table or json.")] = "table",
) -> None:
    """Print each step's expected canary/stable pods and traffic weight of a Rollout."""
    ref = _one(ctx, targets, ROLLOUTS, "planning")

    async def body(kube: KubeClient, _ns: str) -> None:
        ro = await kube.get(ROLLOUTS, ref.name, ref.namespace)
        wref = (ro.get("spec") or {}).get("workloadRef") or {}
        kind = kind_for(wref)
        if kind is None:
            named = f"{wref.get('apiVersion')}/{wref.get('kind')}"
            fail(f"rollout/{ref.name}: workloadRef {named} is not a kind a Rollout releases")
        workload = await kube.get(kind.resource, str(wref.get("name")), ref.namespace)
        replicas = workload_replicas(workload)
        steps = plan_steps(ro, replicas)
        prepull = next(
            (
                str(c.get("message") or "")
                for c in (ro.get("status") or {}).get("conditions") or []
                if c.get("type") == PREPULL_CONDITION
            ),
            None,
        )
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
            doc: object = rows if prepull is None else {"steps": rows, "prePull": prepull}
            sys.stdout.write(json.dumps(doc, indent=2) + "\n")
            return
        table = Table(
            title=f"rollout/{ref.name} over {wref.get('kind')}/{wref.get('name')} ({replicas} replicas)"
        )
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
        for s in steps:
            pause = "approval" if s.approval else (f"{s.pause_seconds}s" if s.pause_seconds else "-")
            weight = "-" if s.weight is None else str(s.weight)
            stable = "-" if s.weight is None else str(100 - s.weight)
            matches = str(len(s.matches)) if s.matches else "-"
            table.add_row(
                str(s.index), str(s.replicas), str(s.canary), str(s.stable), weight, stable, matches, pause
            )
        table_console().print(table)
        if prepull:
            sys.stdout.write(prepull + "\n")

    run_kube(target_of(ctx), body)


def check_update(
    ctx: typer.Context,
    targets: Targets = None,
    image: Annotated[list[str] | None, typer.Option("--image", help="CONTAINER=IMAGE (repeatable).")] = None,
    env: Annotated[list[str] | None, typer.Option("--env", help="CONTAINER:NAME=VALUE (repeatable).")] = None,
) -> None:
    """Say whether a CloneSet change goes in place or recreates pods, and why."""
    ref = _one(ctx, targets, CLONESETS, "checking an update")

    async def body(kube: KubeClient, _ns: str) -> None:
        cs = await kube.get(CLONESETS, ref.name, ref.namespace)
        old = cs["spec"]["template"]
        new = copy.deepcopy(old)
        containers = {c["name"]: c for c in new["spec"]["containers"]}
        for item in image or []:
            cname, _, img = item.partition("=")
            if cname not in containers:
                raise EditError(f"no container {cname!r} in cloneset/{ref.name}")
            containers[cname]["image"] = img
        for item in env or []:
            cname, _, assignment = item.partition(":")
            key, _, value = assignment.partition("=")
            if cname not in containers:
                raise EditError(f"no container {cname!r} in cloneset/{ref.name}")
            containers[cname].setdefault("env", []).append({"name": key, "value": value})
        spec = calculate_in_place_update_spec(old, new, revision="candidate", grace_seconds=0)
        strategy = (cs["spec"].get("updateStrategy") or {}).get("type", "ReCreate")
        if spec is None:
            verdict = "rejected (InPlaceOnly)" if strategy == "InPlaceOnly" else "RECREATE pods"
            why = "the change touches pod spec fields other than container images"
            sys.stdout.write(f"cloneset/{ref.name}: {verdict}: {why}\n")
        elif strategy == "ReCreate":
            sys.stdout.write(f"cloneset/{ref.name}: RECREATE pods: updateStrategy.type is ReCreate\n")
        else:
            images = ", ".join(f"{k}={v}" for k, v in spec.container_images.items()) or "metadata only"
            sys.stdout.write(
                f"cloneset/{ref.name}: IN PLACE ({strategy}): {images}; pods keep their names, UIDs and IPs\n"
            )

    try:
        run_kube(target_of(ctx), body)
    except EditError as err:
        fail(str(err))


def workload_replicas(workload: dict[str, Any]) -> int:
    """The pods a release plans over: ``spec.replicas`` (1 when unset, as the API defaults it), or
    for a DaemonSet (no replicas) the nodes it runs on, ``status.desiredNumberScheduled``."""
    if workload.get("kind") == "DaemonSet":
        return int((workload.get("status") or {}).get("desiredNumberScheduled") or 0)
    return int((workload.get("spec") or {}).get("replicas", 1))
