"""``kruise manager``: run kruise-manager (controllers + admission webhooks)."""

from __future__ import annotations

import errno
import os
from pathlib import Path
from typing import Annotated

import typer
from kubernetes_asyncio.config import ConfigException

from kruise.rollouts.manager.options import ManagerOptions, parse_feature_gates


def manager(
    kubeconfig: Annotated[
        str | None, typer.Option(help="kubeconfig (default $KUBECONFIG, then in-cluster).")
    ] = None,
    kube_client_qps: Annotated[
        float, typer.Option("--kube-client-qps", help="Client QPS to the API server.")
    ] = 50.0,
    kube_client_burst: Annotated[int, typer.Option("--kube-client-burst", help="Client burst.")] = 100,
    cloneset_workers: Annotated[
        int, typer.Option("--cloneset-workers", help="Concurrent CloneSet reconciles.")
    ] = 3,
    statefulset_workers: Annotated[
        int, typer.Option("--statefulset-workers", help="Concurrent Advanced StatefulSet reconciles.")
    ] = 3,
    daemonset_workers: Annotated[
        int, typer.Option("--daemonset-workers", help="Concurrent Advanced DaemonSet reconciles.")
    ] = 3,
    uniteddeployment_workers: Annotated[
        int, typer.Option("--uniteddeployment-workers", help="Concurrent UnitedDeployment reconciles.")
    ] = 3,
    assign_pods_by_scheduler: Annotated[
        bool,
        typer.Option(
            "--assign-pods-by-scheduler/--no-assign-pods-by-scheduler",
            help="DaemonSet pods are placed by kube-scheduler through node affinity (else nodeName).",
        ),
    ] = True,
    broadcastjob_workers: Annotated[
        int, typer.Option("--broadcastjob-workers", help="Concurrent BroadcastJob reconciles.")
    ] = 3,
    advancedcronjob_workers: Annotated[
        int, typer.Option("--advancedcronjob-workers", help="Concurrent AdvancedCronJob reconciles.")
    ] = 3,
    assign_bcj_pods_by_scheduler: Annotated[
        bool,
        typer.Option(
            "--assign-bcj-pods-by-scheduler/--no-assign-bcj-pods-by-scheduler",
            help="BroadcastJob pods are placed by kube-scheduler through node affinity (else nodeName).",
        ),
    ] = True,
    sidecarset_workers: Annotated[
        int, typer.Option("--sidecarset-workers", help="Concurrent SidecarSet reconciles.")
    ] = 3,
    imagepulljob_workers: Annotated[
        int, typer.Option("--imagepulljob-workers", help="Concurrent ImagePullJob reconciles.")
    ] = 3,
    nodeimage_workers: Annotated[
        int, typer.Option("--nodeimage-workers", help="Concurrent NodeImage reconciles.")
    ] = 3,
    podunavailablebudget_workers: Annotated[
        int,
        typer.Option("--podunavailablebudget-workers", help="Concurrent PodUnavailableBudget reconciles."),
    ] = 3,
    nodeimage_creation_delay: Annotated[
        float,
        typer.Option(
            "--nodeimage-creation-delay", help="Seconds a Node is Ready before its NodeImage is created."
        ),
    ] = 30.0,
    default_ttlseconds_for_always_nodeimage: Annotated[
        int,
        typer.Option(
            "--default-ttlseconds-for-always-nodeimage",
            help="Seconds an Always job's finished tag stays on a NodeImage beyond its TTL (plus jitter).",
        ),
    ] = 300,
    rollout_workers: Annotated[
        int, typer.Option("--rollout-workers", help="Concurrent Rollout reconciles.")
    ] = 3,
    batchrelease_workers: Annotated[
        int, typer.Option("--batchrelease-workers", help="Concurrent BatchRelease reconciles.")
    ] = 3,
    analysisrun_workers: Annotated[
        int, typer.Option("--analysisrun-workers", help="Concurrent AnalysisRun reconciles.")
    ] = 2,
    trafficrouting_workers: Annotated[
        int, typer.Option("--trafficrouting-workers", help="Concurrent TrafficRouting reconciles.")
    ] = 3,
    rollouthistory_workers: Annotated[
        int, typer.Option("--rollouthistory-workers", help="Concurrent RolloutHistory reconciles.")
    ] = 3,
    cloneset_scaling_exclude_preparing_delete: Annotated[
        bool,
        typer.Option(
            "--cloneset-scaling-exclude-preparing-delete",
            help="Do not count PreparingDelete pods as replicas when scaling (kruise-manager's flag).",
        ),
    ] = False,
    webhook_port: Annotated[
        int, typer.Option("--webhook-port", help="HTTPS port of the webhook server.")
    ] = 9876,
    webhook_host: Annotated[
        str, typer.Option("--webhook-host", help="Address the webhook server binds.")
    ] = "0.0.0.0",
    webhook_cert_dir: Annotated[
        Path, typer.Option("--webhook-cert-dir", help="Where the webhook CA and serving certificate live.")
    ] = Path("/tmp/kruise-webhook-certs"),
    webhook_url_base: Annotated[
        str | None,
        typer.Option(
            "--webhook-url-base",
            help="Out of cluster: register webhooks at this URL (https://127.0.0.1:9876), not a Service.",
        ),
    ] = None,
    webhook_failure_policy: Annotated[
        str, typer.Option("--webhook-failure-policy", help="failurePolicy of the webhooks: Fail or Ignore.")
    ] = "Fail",
    pod_webhook_failure_policy: Annotated[
        str | None,
        typer.Option(
            "--pod-webhook-failure-policy",
            help="failurePolicy of the mutating pod webhook (mpod.kb.io): Fail or Ignore. "
            "Default: --webhook-failure-policy.",
        ),
    ] = None,
    webhook_timeout_seconds: Annotated[
        int,
        typer.Option(
            "--webhook-timeout-seconds",
            min=1,
            max=30,
            help="timeoutSeconds of the webhooks: how long the API server waits for this manager.",
        ),
    ] = 30,
    metrics_addr: Annotated[
        str, typer.Option("--metrics-addr", help="Prometheus /metrics address (:0 = off).")
    ] = ":8080",
    health_probe_addr: Annotated[
        str, typer.Option("--health-probe-addr", help="/healthz and /readyz address (:0 = off).")
    ] = ":8000",
    enable_leader_election: Annotated[
        bool,
        typer.Option(
            "--enable-leader-election/--disable-leader-election", help="Lease-based leader election."
        ),
    ] = True,
    leader_election_namespace: Annotated[
        str, typer.Option("--leader-election-namespace", help="Namespace of the leader Lease.")
    ] = "kruise-system",
    expectation_timeout: Annotated[
        float, typer.Option("--expectation-timeout", help="Seconds before unmet expectations are ignored.")
    ] = 300.0,
    feature_gates: Annotated[str, typer.Option("--feature-gates", help="e.g. CloneSetShortHash=true")] = "",
    partition_percent_limit: Annotated[
        int,
        typer.Option(
            "--partition-percent-limit",
            help="Largest percentage step with traffic for partition-style Rollouts.",
        ),
    ] = 50,
    webhook_cert_writer: Annotated[
        str,
        typer.Option(
            "--webhook-cert-writer",
            envvar="WEBHOOK_CERT_WRITER",
            help="Where the webhook certificate comes from: secret (the Secret $SECRET_NAME in "
            "$POD_NAMESPACE, filled if empty), external (that Secret, read only), fs (--webhook-cert-dir). "
            "Default: external with EnableExternalCerts, fs out of a cluster, else secret.",
        ),
    ] = "",
    logging_format: Annotated[
        str, typer.Option("--logging-format", help="Log line format: text or json.")
    ] = "text",
    rollout_configuration_namespace: Annotated[
        str,
        typer.Option(
            "--rollout-configuration-namespace",
            help="Namespace of the kruise-rollout-configuration ConfigMap.",
        ),
    ] = "kruise-system",
) -> None:
    """Run the controllers (while leading) and the admission webhooks (always)."""
    from kruise.rollouts.manager.app import run

    try:
        gates = parse_feature_gates(feature_gates)
    except ValueError as err:
        raise typer.BadParameter(str(err), param_hint="--feature-gates") from err
    if webhook_cert_writer not in ("", "secret", "external", "fs"):
        raise typer.BadParameter("want secret, external or fs", param_hint="--webhook-cert-writer")
    for hint, policy in (
        ("--webhook-failure-policy", webhook_failure_policy),
        ("--pod-webhook-failure-policy", pod_webhook_failure_policy),
    ):
        if policy not in (None, "Fail", "Ignore"):
            raise typer.BadParameter("want Fail or Ignore", param_hint=hint)
    if not 0 < default_ttlseconds_for_always_nodeimage <= 7 * 24 * 3600:
        raise typer.BadParameter(
            "must be positive and at most 604800", param_hint="--default-ttlseconds-for-always-nodeimage"
        )
    if logging_format not in ("text", "json"):
        raise typer.BadParameter("want text or json", param_hint="--logging-format")
    options = ManagerOptions(
        kubeconfig=kubeconfig,
        kube_client_qps=kube_client_qps,
        kube_client_burst=kube_client_burst,
        cloneset_workers=cloneset_workers,
        statefulset_workers=statefulset_workers,
        daemonset_workers=daemonset_workers,
        uniteddeployment_workers=uniteddeployment_workers,
        assign_pods_by_scheduler=assign_pods_by_scheduler,
        broadcastjob_workers=broadcastjob_workers,
        advancedcronjob_workers=advancedcronjob_workers,
        assign_bcj_pods_by_scheduler=assign_bcj_pods_by_scheduler,
        sidecarset_workers=sidecarset_workers,
        imagepulljob_workers=imagepulljob_workers,
        nodeimage_workers=nodeimage_workers,
        podunavailablebudget_workers=podunavailablebudget_workers,
        nodeimage_creation_delay=nodeimage_creation_delay,
        default_ttlseconds_for_always_nodeimage=default_ttlseconds_for_always_nodeimage,
        rollout_workers=rollout_workers,
        batchrelease_workers=batchrelease_workers,
        analysisrun_workers=analysisrun_workers,
        trafficrouting_workers=trafficrouting_workers,
        rollouthistory_workers=rollouthistory_workers,
        cloneset_scaling_exclude_preparing_delete=cloneset_scaling_exclude_preparing_delete,
        webhook_port=webhook_port,
        webhook_host=webhook_host,
        webhook_cert_dir=webhook_cert_dir,
        webhook_url_base=webhook_url_base,
        webhook_failure_policy=webhook_failure_policy,
        pod_webhook_failure_policy=pod_webhook_failure_policy,
        webhook_timeout_seconds=webhook_timeout_seconds,
        metrics_addr=metrics_addr,
        health_probe_addr=health_probe_addr,
        enable_leader_election=enable_leader_election,
        leader_election_namespace=leader_election_namespace,
        expectation_timeout=expectation_timeout,
        feature_gates=gates,
        partition_percent_limit=partition_percent_limit,
        rollout_configuration_namespace=rollout_configuration_namespace,
        # kruise-manager's environment: the namespace of its Service and certificate Secret
        webhook_service_namespace=os.environ.get("POD_NAMESPACE") or "kruise-system",
        webhook_secret_name=os.environ.get("SECRET_NAME") or "kruise-webhook-certs",
        webhook_service_name=os.environ.get("SERVICE_NAME") or "kruise-webhook-service",
        webhook_cert_writer=webhook_cert_writer,
        logging_format=logging_format,
    )
    try:
        code = run(options)
    except OSError as err:  # a port in use: one line, not a traceback
        if err.errno != errno.EADDRINUSE:
            raise
        typer.echo(f"kruise manager: {err.strerror or err}", err=True)
        code = 1
    except ConfigException as err:  # no usable kubeconfig: one line, not a traceback
        typer.echo(f"kruise manager: {err}", err=True)
        code = 1
    raise typer.Exit(code)
