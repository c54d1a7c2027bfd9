"""kruise-manager options: flags, defaults and feature gates.

Names follow kruise-manager's flags where a concept matches (``--webhook-port``
default 9876, ``--metrics-addr``, ``--health-probe-addr``, ``--enable-leader-election``,
``--leader-election-namespace``, ``--feature-gates``, ``--kube-client-qps``/``-burst``,
``--cloneset-workers``, ``--statefulset-workers``, ``--daemonset-workers``, ``--uniteddeployment-workers``,
``--assign-pods-by-scheduler``); see ``shared/reference/kruise-workloads.md`` §8.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

#: Feature gates this manager understands, with their defaults (OpenKruise v1.8 names).
FEATURE_GATES: dict[str, bool] = {
    "CloneSetShortHash": False,
    "CloneSetPartitionRollback": False,
    "PreparingUpdateAsUpdate": False,
    "InPlaceUpdateEnvFromMetadata": True,
    "ResourcesDeletionProtection": False,
    "TemplateNoDefaults": False,
    "StatefulSetAutoDeletePVC": True,
    "StatefulSetStartOrdinal": False,
    "PodIndexLabel": True,
    "StatefulSetAutoResizePVCGate": False,
    # the pod webhooks (SidecarSet injection); off: no mpod/vpod entries are registered
    "PodWebhook": True,
    # SidecarSet patchPodMetadata allowed without the kruise-configuration whitelist
    "SidecarSetPatchPodMetadataDefaultsAllowed": False,
    # The webhook certificate comes from a Secret someone else fills (cert-manager): the manager
    # reads it and never writes it (manager/certsecret.py), as kruise-manager.
    "EnableExternalCerts": False,
    # Kruise Rollouts' gate for partition-style Deployments (upstream's default is false; its
    # helm chart sets AdvancedDeployment=true, and so does this manager by default).
    "AdvancedDeployment": True,
    # Kruise Rollouts' gate (default false): a release finalized without WaitResume (the Rollout
    # deleted mid-release) leaves the workload where it was (partition kept / Deployment paused).
    "KeepWorkloadPausedOnRolloutDeletion": False,
    # Kruise Rollouts' gate (default false): record each release that has a rollout-id as a
    # RolloutHistory (rollouts.kruise.io/v1alpha1).
    "RolloutHistory": False,
    # kruise-daemon (one per node; upstream default on): off skips the chart's DaemonSet.
    "KruiseDaemon": True,
    # kruise-daemon watches its node's pods (upstream default on): container meta reporting and
    # the env-from-metadata restarts need it.
    "DaemonWatchingPod": True,
    # OpenKruise's gate (default false upstream; its chart sets ImagePullJobGate=true, and so does
    # this manager by default): the ImagePullJob and ImageListPullJob controllers, and their
    # validating webhooks refuse every object while it is off.
    "ImagePullJobGate": True,
    # OpenKruise's gate (default on): PodProbeMarker/NodePodProbe controllers, the daemon's probes;
    # off, the PodProbeMarker webhook refuses every object.
    "PodProbeMarkerGate": True,
    # OpenKruise's gate (default false): CloneSets and Advanced StatefulSets create ImagePullJobs
    # for the images of an in-place update (kruise.workloads.predownload); needs KruiseDaemon and
    # turns ImagePullJobGate on.
    "PreDownloadImageForInPlaceUpdate": False,
    # OpenKruise's gate (default on since v1.3): the WorkloadSpread controller, its pod webhook
    # steps (placement on CREATE, deletingPods on DELETE/eviction) and its validating webhook.
    "WorkloadSpread": True,
    # OpenKruise's PodUnavailableBudget gates: DELETE and eviction of protected pods spend the
    # budget (default on); in-place UPDATEs too (default off). PodWebhook off forces both off.
    "PodUnavailableBudgetDeleteGate": True,
    "PodUnavailableBudgetUpdateGate": False,
    # OpenKruise's gate (default off): the ResourceDistribution controller; off, its validating
    # webhook refuses every object.
    "ResourceDistributionGate": False,
    # OpenKruise's gate (default off): ``Cascading`` deletion protection of CRDs (refused with
    # "feature-gate ... is not enabled" without it); ResourcesDeletionProtection off forces it off.
    "DeletionProtectionForCRDCascadingGate": False,
}


ALPHA, BETA = "Alpha", "Beta"
#: The pre-release stage of each gate (OpenKruise v1.8 ``pkg/features/kruise_features.go``,
#: Kruise Rollouts ``pkg/feature/rollout_features.go``), for ``AllAlpha``/``AllBeta``.
FEATURE_GATE_STAGES: dict[str, str] = {
    "CloneSetShortHash": ALPHA,
    "CloneSetPartitionRollback": ALPHA,
    "PreparingUpdateAsUpdate": ALPHA,
    "InPlaceUpdateEnvFromMetadata": BETA,
    "ResourcesDeletionProtection": BETA,
    "TemplateNoDefaults": ALPHA,
    "StatefulSetAutoDeletePVC": BETA,
    "StatefulSetStartOrdinal": ALPHA,
    "PodIndexLabel": BETA,
    "StatefulSetAutoResizePVCGate": ALPHA,
    "PodWebhook": BETA,
    "SidecarSetPatchPodMetadataDefaultsAllowed": ALPHA,
    "EnableExternalCerts": ALPHA,
    "AdvancedDeployment": ALPHA,
    "KeepWorkloadPausedOnRolloutDeletion": ALPHA,
    "RolloutHistory": ALPHA,
    "KruiseDaemon": BETA,
    "DaemonWatchingPod": BETA,
    "ImagePullJobGate": ALPHA,
    "PodProbeMarkerGate": BETA,
    "WorkloadSpread": BETA,
    "PreDownloadImageForInPlaceUpdate": ALPHA,
    "PodUnavailableBudgetDeleteGate": BETA,
    "PodUnavailableBudgetUpdateGate": ALPHA,
    "ResourceDistributionGate": ALPHA,
    "DeletionProtectionForCRDCascadingGate": ALPHA,
}
ALL_STAGE_GATES = {"AllAlpha": ALPHA, "AllBeta": BETA}
"""Kubernetes' special gates: ``AllAlpha=true`` sets every alpha gate not named in the same flag
(``AllBeta`` every beta one); upstream's manager manifest runs with
``--feature-gates=AllAlpha=true,AllBeta=true,EnableExternalCerts=false,TemplateNoDefaults=false``."""


def pre_download_enabled(gates: Mapping[str, bool]) -> bool:
    """``PreDownloadImageForInPlaceUpdate`` in effect: KruiseDaemon off forces it off (upstream)."""
    return gates.get("PreDownloadImageForInPlaceUpdate", False) and gates.get("KruiseDaemon", True)


def pub_gates(gates: Mapping[str, bool]) -> dict[str, bool]:
    """The two PodUnavailableBudget gates in effect: ``PodWebhook`` off forces both off (upstream)."""
    webhook = gates.get("PodWebhook", True)
    return {
        "PodUnavailableBudgetDeleteGate": webhook and gates.get("PodUnavailableBudgetDeleteGate", True),
        "PodUnavailableBudgetUpdateGate": webhook and gates.get("PodUnavailableBudgetUpdateGate", False),
    }


def image_pull_jobs_enabled(gates: Mapping[str, bool]) -> bool:
    """``ImagePullJobGate`` in effect: ``PreDownloadImageForInPlaceUpdate`` turns it on (upstream)."""
    return gates.get("ImagePullJobGate", True) or pre_download_enabled(gates)


def parse_feature_gates(text: str) -> dict[str, bool]:
    """``A=true,B=false`` -> gates with defaults filled in. Raises ValueError on unknown names.

    ``AllAlpha=true|false`` / ``AllBeta=true|false`` set every alpha / beta gate (see
    :data:`FEATURE_GATE_STAGES`) that the same flag does not name, whatever the order, as
    Kubernetes' ``featuregate.Set``.
    """
    gates = dict(FEATURE_GATES)
    explicit: dict[str, bool] = {}
    stages: dict[str, bool] = {}
    for item in filter(None, (p.strip() for p in text.split(","))):
        key, sep, value = item.partition("=")
        if not sep or value.lower() not in ("true", "false"):
            raise ValueError(f"invalid feature gate {item!r}: want Name=true|false")
        if key in ALL_STAGE_GATES:
            stages[ALL_STAGE_GATES[key]] = value.lower() == "true"
            continue
        if key not in FEATURE_GATES:
            known = ", ".join(sorted([*FEATURE_GATES, *ALL_STAGE_GATES]))
            raise ValueError(f"unknown feature gate {key!r}; known: {known}")
        explicit[key] = value.lower() == "true"
    for gate, stage in FEATURE_GATE_STAGES.items():
        if stage in stages:
            gates[gate] = stages[stage]
    gates.update(explicit)
    return gates


@dataclass
class ManagerOptions:
    kubeconfig: str | None = None
    kube_client_qps: float = 50.0
    kube_client_burst: int = 100
    cloneset_workers: int = 3
    sidecarset_workers: int = 3
    cloneset_scaling_exclude_preparing_delete: bool = False
    statefulset_workers: int = 3
    daemonset_workers: int = 3
    uniteddeployment_workers: int = 3
    assign_pods_by_scheduler: bool = True  # DaemonSet pods placed by kube-scheduler (node affinity)
    broadcastjob_workers: int = 3  # --broadcastjob-workers
    advancedcronjob_workers: int = 3  # --advancedcronjob-workers
    assign_bcj_pods_by_scheduler: bool = True  # --assign-bcj-pods-by-scheduler
    rollout_workers: int = 3
    batchrelease_workers: int = 3
    analysisrun_workers: int = 2
    trafficrouting_workers: int = 3  # Kruise Rollouts' --trafficrouting-workers
    rollouthistory_workers: int = 3  # Kruise Rollouts' --rollouthistory-workers
    imagepulljob_workers: int = 3  # --imagepulljob-workers
    nodeimage_workers: int = 3  # --nodeimage-workers
    podunavailablebudget_workers: int = 3  # --podunavailablebudget-workers
    nodeimage_creation_delay: float = 30.0  # --nodeimage-creation-delay (seconds after Node Ready)
    default_ttlseconds_for_always_nodeimage: int = 300  # --default-ttlseconds-for-always-nodeimage
    rollout_configuration_namespace: str = "kruise-system"
    partition_percent_limit: int = 50  # kruise-rollout's --partition-percent-limit
    webhook_port: int = 9876
    webhook_host: str = "0.0.0.0"
    webhook_cert_dir: Path = Path("/tmp/kruise-webhook-certs")
    webhook_url_base: str | None = None  # out-of-cluster: the API server calls this URL
    webhook_service_name: str = "kruise-webhook-service"
    webhook_service_namespace: str = "kruise-system"
    webhook_failure_policy: str = "Fail"
    pod_webhook_failure_policy: str | None = None  # mpod.kb.io's; None: webhook_failure_policy
    webhook_timeout_seconds: int = 30  # timeoutSeconds of every webhook (1-30, the API's range)
    webhook_cert_writer: str = ""  # secret | external | fs; "" = chosen (manager/certsecret.py)
    webhook_secret_name: str = "kruise-webhook-certs"
    logging_format: str = "text"  # --logging-format: text or json
    manage_webhook_configurations: bool = True
    metrics_addr: str = ":8080"
    health_probe_addr: str = ":8000"
    enable_leader_election: bool = True
    leader_election_namespace: str = "kruise-system"
    leader_election_name: str = "kruise-manager"
    identity: str | None = None
    expectation_timeout: float = 300.0
    feature_gates: dict[str, bool] = field(default_factory=lambda: dict(FEATURE_GATES))
