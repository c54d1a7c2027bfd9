"""``kubectl kruise expose``: a Service in front of a CloneSet or Deployment (``kubectl expose``).

The Service is named after the workload (``--name``), selects its pods by the workload's
``spec.selector.matchLabels`` (``--selector`` overrides; match expressions cannot be turned into
a Service selector) and serves ``--port`` or, by default, every container port of its template
(named ``port-1``, ``port-2``... when several; ``--target-port`` defaults to the port).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Annotated, Any

import typer

from kruise.core.kube import KubeClient
from kruise.core.kube.resources import CLONESETS, DEPLOYMENTS, SERVICES
from kruise.rollouts.cli.edits import EditError
from kruise.rollouts.cli.kubectx import fail, run_kube, target_of
from kruise.rollouts.cli.output import (
    DryRunOpt,
    FilenameOpt,
    OutputOpt,
    Targets,
    check_dry_run,
    check_output,
    emit,
    finish,
    for_each,
    resolve,
)
from kruise.rollouts.cli.refs import Ref, RefError, only

JSON = dict[str, Any]


def _labels(text: str) -> dict[str, str]:
    out = {}
    for item in filter(None, text.split(",")):
        key, eq, value = item.partition("=")
        if not eq:
            raise EditError(f"invalid label spec {item!r}: want key=value")
        out[key.strip()] = value.strip()
    return out


def service_for(
    workload: Mapping[str, Any],
    *,
    name: str = "",
    port: str = "",
    target_port: str = "",
    protocol: str = "",
    service_type: str = "",
    selector: str = "",
    labels: str = "",
    cluster_ip: str = "",
    external_ip: str = "",
    session_affinity: str = "",
) -> JSON:
    """The Service ``kubectl expose`` generates for ``workload`` (pure)."""
    spec = workload.get("spec") or {}
    sel = (spec.get("selector") or {}) if not selector else {"matchLabels": _labels(selector)}
    if sel.get("matchExpressions"):
        raise EditError(
            "couldn't retrieve selectors via --selector flag or introspection: expressions are not supported"
        )
    containers = ((spec.get("template") or {}).get("spec") or {}).get("containers") or []
    found = [p for c in containers for p in c.get("ports") or []]
    ports: list[JSON]
    if port:
        ports = [{"port": int(port), "protocol": protocol or "TCP"}]
    elif found:
        ports = [
            {"port": int(p["containerPort"]), "protocol": protocol or p.get("protocol", "TCP")} for p in found
        ]
    else:
        raise EditError("couldn't find port via --port flag or introspection")
    for i, entry in enumerate(ports):
        entry["targetPort"] = int(target_port) if target_port.isdigit() else (target_port or entry["port"])
        if len(ports) > 1:
            entry["name"] = f"port-{i + 1}"
    svc_spec: JSON = {"ports": ports, "selector": dict(sel.get("matchLabels") or {})}
    for key, value in (
        ("type", service_type),
        ("clusterIP", cluster_ip),
        ("sessionAffinity", session_affinity),
    ):
        if value:
            svc_spec[key] = value
    if external_ip:
        svc_spec["externalIPs"] = [external_ip]
    meta = workload.get("metadata") or {}
    svc_labels = _labels(labels) if labels else dict(meta.get("labels") or {})
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": name or meta["name"], **({"labels": svc_labels} if svc_labels else {})},
        "spec": svc_spec,
    }


def expose(
    ctx: typer.Context,
    targets: Targets = None,
    filename: FilenameOpt = None,
    port: Annotated[
        str, typer.Option("--port", help="The port the service serves on (default: the container ports).")
    ] = "",
    target_port: Annotated[str, typer.Option("--target-port", help="Container port name or number.")] = "",
    protocol: Annotated[str, typer.Option("--protocol", help="TCP, UDP or SCTP (default TCP).")] = "",
    name: Annotated[
        str, typer.Option("--name", help="The name of the Service (default: the workload's).")
    ] = "",
    service_type: Annotated[
        str, typer.Option("--type", help="ClusterIP, NodePort, LoadBalancer or ExternalName.")
    ] = "",
    selector: Annotated[
        str, typer.Option("--selector", help="Selector for the service (default: the workload's).")
    ] = "",
    labels: Annotated[str, typer.Option("-l", "--labels", help="Labels of the Service.")] = "",
    cluster_ip: Annotated[
        str, typer.Option("--cluster-ip", help="ClusterIP, or None for a headless service.")
    ] = "",
    external_ip: Annotated[str, typer.Option("--external-ip", help="An external IP of the service.")] = "",
    session_affinity: Annotated[str, typer.Option("--session-affinity", help="None or ClientIP.")] = "",
    dry_run: DryRunOpt = "none",
    output: OutputOpt = "",
) -> None:
    """Expose a CloneSet or Deployment as a new Kubernetes Service."""
    output, dry_run = check_output(output), check_dry_run(dry_run)
    try:
        refs: Sequence[Ref] = only(resolve(ctx, targets, filename), (CLONESETS, DEPLOYMENTS), "exposing")
    except RefError as err:
        fail(str(err))

    async def one(kube: KubeClient, ref: Ref) -> None:
        workload = await kube.get(ref.res, ref.name, ref.namespace)
        svc = service_for(
            workload,
            name=name,
            port=port,
            target_port=target_port,
            protocol=protocol,
            service_type=service_type,
            selector=selector,
            labels=labels,
            cluster_ip=cluster_ip,
            external_ip=external_ip,
            session_affinity=session_affinity,
        )
        svc_ref = Ref(SERVICES, svc["metadata"]["name"], ref.namespace)
        if dry_run == "client":
            emit(svc_ref, "exposed (dry run)", svc, output)
            return
        done = await kube.create(SERVICES, svc, ref.namespace, dry_run=dry_run == "server")
        emit(svc_ref, "exposed" + (" (server dry run)" if dry_run == "server" else ""), done, output)

    finish(run_kube(target_of(ctx), lambda kube, _ns: for_each(kube, refs, one)))
