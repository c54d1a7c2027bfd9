"""``kubectl kruise migrate CloneSet --from Deployment``: move a Deployment's pods to a CloneSet.

``--create`` creates the CloneSet from the Deployment (0 replicas, ``--copy`` for the same count);
otherwise ``--replicas`` (-1: all) replicas move over with ``--max-surge`` at a time, printing
the progress, until done or ``--timeout-seconds``. The namespace is ``-n`` or the context's.
"""

from __future__ import annotations

import asyncio
import sys
import time
from typing import Annotated, Any

import typer

from kruise.core.kube import KubeClient
from kruise.core.kube.resources import CLONESETS, DEPLOYMENTS
from kruise.rollouts.cli.kubectx import fail, run_kube, target_of
from kruise.rollouts.cli.migration import cloneset_from_deployment, next_move


def _observed(obj: dict[str, Any]) -> bool:
    return bool((obj.get("status") or {}).get("observedGeneration") == obj["metadata"].get("generation"))


async def _migrate(
    kube: KubeClient, ns: str, src: str, dst: str, replicas: int, surge: int, timeout: int
) -> None:
    deploy = await kube.get(DEPLOYMENTS, src, ns)
    await kube.get(CLONESETS, dst, ns)
    target = int((deploy.get("spec") or {}).get("replicas", 1)) if replicas < 0 else replicas
    moved_in = moved_out = 0
    start = time.monotonic()
    while True:
        if timeout > 0 and time.monotonic() - start > timeout:
            fail("failed to migrate: task timeout exceeded")
        deploy, cs = await kube.get(DEPLOYMENTS, src, ns), await kube.get(CLONESETS, dst, ns)
        if not (_observed(deploy) and _observed(cs)):
            await asyncio.sleep(1.0)
            continue
        move = next_move(
            target,
            surge,
            moved_in,
            moved_out,
            src_replicas=int(deploy["spec"].get("replicas", 1)),
            dst_replicas=int(cs["spec"].get("replicas", 1)),
            dst_available=int((cs.get("status") or {}).get("availableReplicas") or 0),
        )
        if move.done:
            sys.stdout.write(
                f"Successfully migrated {moved_out} replicas from Deployment/{src} to CloneSet/{dst}\n"
            )
            return
        if move.out:
            await kube.patch(
                CLONESETS, dst, {"spec": {"replicas": int(cs["spec"].get("replicas", 1)) + move.out}}, ns
            )
            moved_out += move.out
        elif move.in_:
            await kube.patch(
                DEPLOYMENTS,
                src,
                {"spec": {"replicas": int(deploy["spec"].get("replicas", 1)) - move.in_}},
                ns,
            )
            moved_in += move.in_
        if move.out or move.in_:
            sys.stdout.write(
                f"Migration progress: Deployment/{src} scale in {moved_in}, "
                f"CloneSet/{dst} scale out {moved_out}\n"
            )
            sys.stdout.flush()
        await asyncio.sleep(1.0)


def migrate(
    ctx: typer.Context,
    dst_kind: Annotated[str, typer.Argument(help="Kind of the destination workload: CloneSet.")],
    from_: Annotated[str, typer.Option("--from", help="Type of the source workload: Deployment.")] = "",
    src_name: Annotated[str, typer.Option("--src-name", help="Name of the source workload.")] = "",
    dst_name: Annotated[str, typer.Option("--dst-name", help="Name of the destination workload.")] = "",
    create: Annotated[
        bool, typer.Option("--create/--no-create", help="Create the CloneSet (replicas 0).")
    ] = False,
    copy: Annotated[bool, typer.Option("--copy/--no-copy", help="With --create: copy the replicas.")] = False,
    replicas: Annotated[int, typer.Option("--replicas", help="Replicas to migrate, -1 for all.")] = -1,
    max_surge: Annotated[int, typer.Option("--max-surge", help="Max surge during migration.")] = 1,
    timeout_seconds: Annotated[int, typer.Option("--timeout-seconds", help="-1: no limit.")] = -1,
) -> None:
    """Migrate from K8s original workloads to Kruise workloads (Deployment -> CloneSet)."""
    if dst_kind not in ("CloneSet", "cloneset", "clone"):
        fail("currently only supported CloneSet as dst type")
    if from_ not in ("Deployment", "deployment"):
        fail("must specify --from" if not from_ else "currently only supported Deployment as src type")
    if not src_name:
        fail("must specify --src-name")
    if not dst_name and not create:
        fail("must specify --dst-name")
    if replicas == 0 or max_surge <= 0:
        fail("invalid replicas 0" if replicas == 0 else "maxSurge must be integar more than zore")
    dst = dst_name or src_name

    async def body(kube: KubeClient, ns: str) -> None:
        if create:
            if await kube.get_or_none(CLONESETS, dst, ns) is not None:
                fail(f"cloneset {ns}/{dst} already exists")
            deploy = await kube.get(DEPLOYMENTS, src_name, ns)
            await kube.create(CLONESETS, cloneset_from_deployment(deploy, dst, copy_replicas=copy), ns)
            sys.stdout.write(f"Successfully created from Deployment/{src_name} to CloneSet/{dst}\n")
            return
        await _migrate(kube, ns, src_name, dst, replicas, max_surge, timeout_seconds)

    run_kube(target_of(ctx), body)
