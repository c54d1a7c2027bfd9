"""``kubectl kruise create ContainerRecreateRequest NAME --pod=POD [--containers=a,b]``.

As kubectl-kruise (``pkg/cmd/create/create_crr.go``): the CRR restarts the named containers of
the pod, or all of its containers when none is named, with kubectl-kruise's defaults:
``strategy {failurePolicy: Fail, orderedRecreate: false, unreadyGracePeriodSeconds: 3,
minStartedSeconds: 3}``, ``activeDeadlineSeconds: 300``, ``ttlSecondsAfterFinished: 1800``.
kubectl-kruise declares ``--containers``, ``-u/--unreadyGracePeriodSeconds`` and
``-m/--minStartedSeconds`` but never reads them (it always restarts every container with the
defaults); here they do what their help says.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Annotated, Any

import typer

from kruise.core.kube import KubeClient
from kruise.core.kube.resources import CONTAINERRECREATEREQUESTS, PODS
from kruise.rollouts.cli.kubectx import fail, run_kube, target_of
from kruise.rollouts.cli.output import DryRunOpt, OutputOpt, check_dry_run, check_output, emit
from kruise.rollouts.cli.refs import Ref

JSON = dict[str, Any]
DEFAULT_UNREADY_GRACE = 3
DEFAULT_MIN_STARTED = 3
DEFAULT_ACTIVE_DEADLINE = 300
DEFAULT_TTL = 1800


def crr_body(
    name: str,
    pod: Mapping[str, Any],
    containers: Sequence[str] = (),
    *,
    unready_grace: int = DEFAULT_UNREADY_GRACE,
    min_started: int = DEFAULT_MIN_STARTED,
) -> JSON:
    """The CRR kubectl-kruise would create for ``pod`` (every container when ``containers`` is
    empty). Raises ValueError naming a container the pod does not have."""
    names = [str(c.get("name")) for c in (pod.get("spec") or {}).get("containers") or ()]
    chosen = list(containers) or names
    unknown = [c for c in chosen if c not in names]
    if unknown:
        raise ValueError(f"container {', '.join(unknown)} not found in pod {pod['metadata']['name']}")
    return {
        "apiVersion": "apps.kruise.io/v1alpha1",
        "kind": "ContainerRecreateRequest",
        "metadata": {"name": name},
        "spec": {
            "podName": pod["metadata"]["name"],
            "containers": [{"name": c} for c in chosen],
            "strategy": {
                "failurePolicy": "Fail",
                "orderedRecreate": False,
                "unreadyGracePeriodSeconds": unready_grace,
                "minStartedSeconds": min_started,
            },
            "activeDeadlineSeconds": DEFAULT_ACTIVE_DEADLINE,
            "ttlSecondsAfterFinished": DEFAULT_TTL,
        },
    }


def container_recreate_request(
    ctx: typer.Context,
    name: Annotated[str, typer.Argument(help="Name of the ContainerRecreateRequest.")],
    pod: Annotated[str, typer.Option("-p", "--pod", help="The name of the pod.")] = "",
    containers: Annotated[
        str, typer.Option("--containers", help="The containers to restart, comma separated (default: all).")
    ] = "",
    unready_grace: Annotated[
        int,
        typer.Option(
            "-u",
            "--unreadyGracePeriodSeconds",
            help="Seconds the pod is marked not ready before the containers are stopped.",
        ),
    ] = DEFAULT_UNREADY_GRACE,
    min_started: Annotated[
        int,
        typer.Option(
            "-m",
            "--minStartedSeconds",
            help="Seconds a new container must run and be ready to count as recreated.",
        ),
    ] = DEFAULT_MIN_STARTED,
    dry_run: DryRunOpt = "none",
    output: OutputOpt = "",
) -> None:
    """Create a crr with the specified name: restart containers of a pod in place."""
    output, dry_run = check_output(output), check_dry_run(dry_run)
    if not pod:
        fail("--pod is required")
    wanted = [c.strip() for c in containers.split(",") if c.strip()]
    target = target_of(ctx)

    async def body(kube: KubeClient, namespace: str) -> None:
        live = await kube.get_or_none(PODS, pod, namespace)
        if live is None:
            fail(f'pods "{pod}" not found')
        try:
            crr = crr_body(name, live, wanted, unready_grace=unready_grace, min_started=min_started)
        except ValueError as err:
            fail(str(err))
        ref = Ref(CONTAINERRECREATEREQUESTS, name, namespace)
        if dry_run == "client":
            emit(ref, "created (dry run)", crr, output)
            return
        done = await kube.create(CONTAINERRECREATEREQUESTS, crr, namespace, dry_run=dry_run == "server")
        emit(ref, "created" + (" (server dry run)" if dry_run == "server" else ""), done, output)

    run_kube(target, body)
