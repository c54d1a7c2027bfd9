"""Which admission webhooks the manager serves, and their handlers."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from kruise.core.api.conversion import answer_conversion, desired_group
from kruise.core.kube import KubeClient
from kruise.core.runtime import CacheReader, ControllerSpec, Runtime
from kruise.core.webhook import WebhookServer
from kruise.core.webhook.configuration import WebhookSettings, WebhookSpec
from kruise.daemon.crr.webhooks import MUTATE_CRR_PATH, VALIDATE_CRR_PATH, CrrWebhooks, crr_webhook_specs
from kruise.daemon.imagepulljob.webhooks import ImagePullWebhooks, imagepull_webhook_specs
from kruise.daemon.podprobemarker.webhooks import GATE as PPM_GATE
from kruise.daemon.podprobemarker.webhooks import VALIDATE_PPM_PATH, PodProbeMarkerWebhooks, ppm_webhook_specs
from kruise.rollouts.api.conversion import convert_review
from kruise.rollouts.manager.options import ManagerOptions, image_pull_jobs_enabled
from kruise.rollouts.rollout.rollout_webhooks import (
    CONVERT_PATH,
    MUTATE_ROLLOUT_PATH,
    VALIDATE_ROLLOUT_PATH,
    RolloutWebhooks,
    rollout_webhook_specs,
)
from kruise.rollouts.rollout.rollout_webhooks import CONVERTED_CRDS as ROLLOUT_CONVERTED_CRDS
from kruise.rollouts.workloads.holdwebhook import hold_webhook_specs, hold_webhooks
from kruise.workloads.api.statefulset_conversion import convert_statefulset
from kruise.workloads.cloneset.webhooks import (
    MUTATE_PATH,
    VALIDATE_PATH,
    CloneSetWebhooks,
    cloneset_webhook_specs,
)
from kruise.workloads.daemonset.webhooks import MUTATE_PATH as MUTATE_DAEMONSET_PATH
from kruise.workloads.daemonset.webhooks import VALIDATE_PATH as VALIDATE_DAEMONSET_PATH
from kruise.workloads.daemonset.webhooks import DaemonSetWebhooks, daemonset_webhook_specs
from kruise.workloads.launchpriority.webhook import POD_TERM as LAUNCH_PRIORITY_POD_TERM
from kruise.workloads.launchpriority.webhook import LaunchPriorityMutator
from kruise.workloads.objects import KubeObject
from kruise.workloads.podwebhook import MUTATE_POD_PATH, VALIDATE_POD_PATH, PodWebhook, pod_webhook_specs
from kruise.workloads.sidecarset.scope import pod_match_condition
from kruise.workloads.sidecarset.webhooks import (
    MUTATE_SIDECARSET_PATH,
    VALIDATE_SIDECARSET_PATH,
    SidecarSetPodMutator,
    SidecarSetWebhooks,
    sidecarset_webhook_specs,
    webhook_reads,
)
from kruise.workloads.statefulset.webhooks import MUTATE_PATH as MUTATE_STATEFULSET_PATH
from kruise.workloads.statefulset.webhooks import VALIDATE_PATH as VALIDATE_STATEFULSET_PATH
from kruise.workloads.statefulset.webhooks import StatefulSetWebhooks, statefulset_webhook_specs
from kruise.workloads.uniteddeployment.webhooks import MUTATE_PATH as MUTATE_UNITEDDEPLOYMENT_PATH
from kruise.workloads.uniteddeployment.webhooks import VALIDATE_PATH as VALIDATE_UNITEDDEPLOYMENT_PATH
from kruise.workloads.uniteddeployment.webhooks import (
    UnitedDeploymentWebhooks,
    uniteddeployment_webhook_specs,
)

WEBHOOK_CACHE = "webhooks"
"""The read view the webhooks answer from (the shared informers; every replica keeps them warm)."""

CONVERTED_CRDS = [*ROLLOUT_CONVERTED_CRDS, "statefulsets.apps.kruise.io"]
"""Multi-version CRDs whose conversion stanza the manager points at ``/convert``."""


POD_TERMS = (LAUNCH_PRIORITY_POD_TERM,)
"""The pod webhook's fixed scope terms (features that need no SidecarSet to apply), OR'ed with the
SidecarSets' in its match condition."""


def convert(review: dict[str, Any]) -> dict[str, Any]:
    """``/convert``: Advanced StatefulSets (``apps.kruise.io``) and the Rollouts' kinds."""
    if desired_group(review) == "apps.kruise.io":
        return answer_conversion(review, convert_statefulset)
    return convert_review(review)


def webhook_settings(options: ManagerOptions) -> WebhookSettings:
    """Failure policies and timeout from the flags; ``kube-system`` and the manager's namespace
    (that of its Lease, the chart's install namespace) are left out of the workload webhooks."""
    return WebhookSettings(
        failure_policy=options.webhook_failure_policy,
        timeout_seconds=options.webhook_timeout_seconds,
        excluded_namespaces=("kube-system", options.leader_election_namespace),
        pod_failure_policy=options.pod_webhook_failure_policy,
    )


def webhook_specs(options: ManagerOptions, sidecarsets: Iterable[KubeObject] = ()) -> list[WebhookSpec]:
    """Every webhook for the configurations (in registration order); ``sidecarsets`` scope the pod
    webhook (:mod:`kruise.workloads.sidecarset.scope`), which gate ``PodWebhook`` removes."""
    settings = webhook_settings(options)
    protection = options.feature_gates.get("ResourcesDeletionProtection", False)
    pods = (
        pod_webhook_specs(settings, condition=pod_match_condition(sidecarsets, POD_TERMS))
        if options.feature_gates.get("PodWebhook", True)
        else []
    )
    return [
        *pods,
        *cloneset_webhook_specs(settings, deletion_protection=protection),
        *statefulset_webhook_specs(settings, deletion_protection=protection),
        *daemonset_webhook_specs(settings),
        *uniteddeployment_webhook_specs(settings, deletion_protection=protection),
        *sidecarset_webhook_specs(settings),
        *crr_webhook_specs(settings),
        *imagepull_webhook_specs(settings),
        *ppm_webhook_specs(settings),
        *hold_webhook_specs(settings),
        *rollout_webhook_specs(settings),
    ]


def webhook_cache(runtime: Runtime) -> CacheReader:
    """The webhooks' read view, its kinds and indices declared on ``runtime``'s informers."""
    view = runtime.cache(WEBHOOK_CACHE)
    view.declare(ControllerSpec(name=WEBHOOK_CACHE, watches=(), reads=webhook_reads()))
    return view


def register_webhooks(
    server: WebhookServer, kube: KubeClient, options: ManagerOptions, cache: CacheReader
) -> None:
    """Serve every webhook path; ``cache`` is :func:`webhook_cache`'s view."""
    gates = options.feature_gates
    cloneset = CloneSetWebhooks(
        kube,
        template_no_defaults=gates.get("TemplateNoDefaults", False),
        deletion_protection=gates.get("ResourcesDeletionProtection", False),
    )
    server.register(MUTATE_PATH, cloneset.mutate)
    server.register(VALIDATE_PATH, cloneset.validate)
    statefulset = StatefulSetWebhooks(
        kube,
        template_no_defaults=gates.get("TemplateNoDefaults", False),
        deletion_protection=gates.get("ResourcesDeletionProtection", False),
        auto_delete_pvc=gates.get("StatefulSetAutoDeletePVC", True),
        auto_resize_pvc=gates.get("StatefulSetAutoResizePVCGate", False),
    )
    server.register(MUTATE_STATEFULSET_PATH, statefulset.mutate)
    server.register(VALIDATE_STATEFULSET_PATH, statefulset.validate)
    daemonset = DaemonSetWebhooks(kube)
    server.register(MUTATE_DAEMONSET_PATH, daemonset.mutate)
    server.register(VALIDATE_DAEMONSET_PATH, daemonset.validate)
    united = UnitedDeploymentWebhooks(
        kube,
        deletion_protection=gates.get("ResourcesDeletionProtection", False),
        template_no_defaults=gates.get("TemplateNoDefaults", False),
    )
    server.register(MUTATE_UNITEDDEPLOYMENT_PATH, united.mutate)
    server.register(VALIDATE_UNITEDDEPLOYMENT_PATH, united.validate)
    for path, handler in ImagePullWebhooks(gate=image_pull_jobs_enabled(gates)).handlers().items():
        server.register(path, handler)
    for path, hold in hold_webhooks(kube).items():
        server.register(path, hold)
    rollout = RolloutWebhooks(kube, partition_percent_limit=options.partition_percent_limit)
    server.register(MUTATE_ROLLOUT_PATH, rollout.mutate)
    server.register(VALIDATE_ROLLOUT_PATH, rollout.validate)
    server.register_conversion(CONVERT_PATH, convert)
    namespace = options.leader_election_namespace
    sidecarset = SidecarSetWebhooks(
        kube,
        cache,
        namespace=namespace,
        patch_defaults_allowed=gates.get("SidecarSetPatchPodMetadataDefaultsAllowed", False),
    )
    server.register(MUTATE_SIDECARSET_PATH, sidecarset.mutate)
    server.register(VALIDATE_SIDECARSET_PATH, sidecarset.validate)
    crr = CrrWebhooks(kube, enabled=gates.get("KruiseDaemon", True))
    server.register(MUTATE_CRR_PATH, crr.mutate)
    server.register(VALIDATE_CRR_PATH, crr.validate)
    ppm = PodProbeMarkerWebhooks(gate=gates.get(PPM_GATE, True), daemon=gates.get("KruiseDaemon", True))
    server.register(VALIDATE_PPM_PATH, ppm.validate)
    if gates.get("PodWebhook", True):
        pods = PodWebhook([SidecarSetPodMutator(cache, namespace=namespace), LaunchPriorityMutator()])
        server.register(MUTATE_POD_PATH, pods.mutate)
        server.register(VALIDATE_POD_PATH, pods.validate)
