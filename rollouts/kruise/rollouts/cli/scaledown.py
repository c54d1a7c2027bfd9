"""``kubectl kruise scaledown cloneset/NAME --pods a,b``: scale a CloneSet in by exactly those pods.

As kruise-tools: the pods are appended to ``spec.scaleStrategy.podsToDelete`` and ``replicas``
drops by their number, in one update (``resourceVersion`` precondition), so the CloneSet deletes
those pods and no others.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from typing import Annotated, Any

import typer

from kruise.core.kube import KubeClient
from kruise.core.kube.resources import CLONESETS
from kruise.rollouts.cli.edits import EditError
from kruise.rollouts.cli.kubectx import fail, run_kube, target_of
from kruise.rollouts.cli.output import FilenameOpt, Targets, finish, for_each, resolve
from kruise.rollouts.cli.refs import Ref, RefError, only


def scaled_down(cloneset: Mapping[str, Any], pods: Sequence[str]) -> dict[str, Any]:
    """The CloneSet with ``pods`` to delete and as many fewer replicas (pure)."""
    import copy

    new = copy.deepcopy(dict(cloneset))
    spec = new["spec"]
    replicas = int(spec.get("replicas", 1))
    if len(pods) > replicas:
        raise EditError(f"cannot delete {len(pods)} pods of {replicas} replicas")
    strategy = spec.setdefault("scaleStrategy", {})
    strategy["podsToDelete"] = [*(strategy.get("podsToDelete") or []), *pods]
    spec["replicas"] = replicas - len(pods)
    return new


def scaledown(
    ctx: typer.Context,
    targets: Targets = None,
    pods: Annotated[str, typer.Option("--pods", help="Names of the pods to delete, comma separated.")] = "",
    filename: FilenameOpt = None,
) -> None:
    """Scale down a CloneSet with selective pods."""
    names = [p.strip() for p in pods.split(",") if p.strip()]
    if not names:
        fail("must specify one pod name")
    try:
        refs = only(resolve(ctx, targets, filename), (CLONESETS,), "selective pod deletion")
    except RefError as err:
        fail(f"currently only supported CloneSet selective pods deletion: {err}")

    async def one(kube: KubeClient, ref: Ref) -> None:
        cs = await kube.get(CLONESETS, ref.name, ref.namespace)
        await kube.replace(CLONESETS, scaled_down(cs, names))
        sys.stdout.write(f"# {ref.name} delete pods {names} successfully\n{ref} selective pod deletion\n")

    finish(run_kube(target_of(ctx), lambda kube, _ns: for_each(kube, refs, one)))
