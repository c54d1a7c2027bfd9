"""Which admission webhooks the manager serves, and their handlers."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from kruise.core.api.conversion import answer_conversion, desired_group
from kruise.core.kube import KubeClient
from kruise.core.runtime import CacheReader, ControllerSpec, Read, Runtime
from kruise.core.webhook import Handler, WebhookServer
from kruise.core.webhook.configuration import WebhookSettings, WebhookSpec
from kruise.daemon.crr.webhooks import MUTATE_CRR_PATH, VALIDATE_CRR_PATH, CrrWebhooks, crr_webhook_specs
from kruise.daemon.imagepulljob.webhooks import ImagePullWebhooks, imagepull_webhook_specs
from kruise.daemon.podprobemarker.webhooks import GATE as PPM_GATE
from kruise.daemon.podprobemarker.webhooks import VALIDATE_PPM_PATH, PodProbeMarkerWebhooks, ppm_webhook_specs
from kruise.rollouts.api.conversion import convert_review
from kruise.rollouts.cache import ROLLOUTS_BY_WORKLOAD, WORKLOAD_ROLLOUTS
from kruise.rollouts.manager.options import ManagerOptions, image_pull_jobs_enabled, pub_gates
from kruise.rollouts.resources import ROLLOUTS
from kruise.rollouts.rollout.rollout_webhooks import (
    CONVERT_PATH,
    MUTATE_ROLLOUT_PATH,
    VALIDATE_ROLLOUT_PATH,
    RolloutWebhooks,
    rollout_webhook_specs,
)
from kruise.rollouts.rollout.rollout_webhooks import CONVERTED_CRDS as ROLLOUT_CONVERTED_CRDS
from kruise.rollouts.workloads.holdwebhook import CachedRollouts, hold_webhook_specs, hold_webhooks
from kruise.workloads.advancedcronjob.webhooks import AdvancedCronJobWebhooks, advancedcronjob_webhook_specs
from kruise.workloads.api.statefulset_conversion import convert_statefulset
from kruise.workloads.broadcastjob.webhooks import MUTATE_PATH as MUTATE_BROADCASTJOB_PATH
from kruise.workloads.broadcastjob.webhooks import VALIDATE_PATH as VALIDATE_BROADCASTJOB_PATH
from kruise.workloads.broadcastjob.webhooks import BroadcastJobWebhooks, broadcastjob_webhook_specs
from kruise.workloads.cloneset.webhooks import (
    MUTATE_PATH,
    VALIDATE_PATH,
    CloneSetWebhooks,
    cloneset_webhook_specs,
)
from kruise.workloads.daemonset.webhooks import MUTATE_PATH as MUTATE_DAEMONSET_PATH
from kruise.workloads.daemonset.webhooks import VALIDATE_PATH as VALIDATE_DAEMONSET_PATH
from kruise.workloads.daemonset.webhooks import DaemonSetWebhooks, daemonset_webhook_specs
from kruise.workloads.deletionprotection.webhooks import (
    DeletionProtectionWebhooks,
    deletion_protection_webhook_specs,
)
from kruise.workloads.ephemeraljob.webhooks import EphemeralJobWebhooks, ephemeraljob_webhook_specs
from kruise.workloads.launchpriority.webhook import POD_TERM as LAUNCH_PRIORITY_POD_TERM
from kruise.workloads.launchpriority.webhook import LaunchPriorityMutator
from kruise.workloads.objects import KubeObject
from kruise.workloads.persistentpodstate.webhooks import VALIDATE_PATH as VALIDATE_PPS_PATH
from kruise.workloads.persistentpodstate.webhooks import (
    PersistentPodStateWebhooks,
    PpsPodMutator,
    pps_reads,
    pps_webhook_specs,
)
from kruise.workloads.persistentpodstate.webhooks import pod_terms as pps_pod_terms
from kruise.workloads.podunavailablebudget.webhooks import (
    VALIDATE_PUB_PATH,
    PubPodValidator,
    PubWebhooks,
    pub_reads,
    pub_validating_scope,
    pub_webhook_specs,
)
from kruise.workloads.podwebhook import (
    MUTATE_POD_PATH,
    VALIDATE_POD_PATH,
    PodMutator,
    PodValidator,
    PodWebhook,
    ValidatingScope,
    merge_scopes,
    pod_webhook_specs,
)
from kruise.workloads.resourcedistribution.webhooks import GATE as RD_GATE
from kruise.workloads.resourcedistribution.webhooks import VALIDATE_PATH as VALIDATE_RD_PATH
from kruise.workloads.resourcedistribution.webhooks import (
    ResourceDistributionWebhooks,
    resourcedistribution_webhook_specs,
)
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
from kruise.workloads.workloadspread.customtargets import CustomTargets
from kruise.workloads.workloadspread.podstep import GATE as WS_GATE
from kruise.workloads.workloadspread.podstep import (
    StatusWrites,
    WsPodMutator,
    WsPodValidator,
    ws_validating_scope,
)
from kruise.workloads.workloadspread.webhooks import VALIDATE_PATH as VALIDATE_WS_PATH
from kruise.workloads.workloadspread.webhooks import WorkloadSpreadWebhooks, ws_reads, ws_webhook_specs

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


@dataclass(frozen=True)
class WebhookContext:
    """What a row's configurations depend on: the settings from the flags, the options (gates),
    the SidecarSets that scope the mutating pod webhook and the PodUnavailableBudgets and
    WorkloadSpreads that scope the eviction one."""

    settings: WebhookSettings
    options: ManagerOptions
    sidecarsets: tuple[KubeObject, ...] = ()
    pubs: tuple[KubeObject, ...] = ()
    ppss: tuple[KubeObject, ...] = ()
    workloadspreads: tuple[KubeObject, ...] = ()

    def gate(self, name: str, default: bool = False) -> bool:
        return self.options.feature_gates.get(name, default)


@dataclass(frozen=True)
class WebhookRow:
    """One kind's admission webhooks, the way :class:`~kruise.core.runtime.ControllerRow` wires a
    controller: ``specs`` gives its webhook configurations, ``handlers`` its served paths
    (path -> handler, bound to the client, the options and the webhooks' cache view). A new kind
    adds one row to :data:`WEBHOOK_ROWS`."""

    name: str
    specs: Callable[[WebhookContext], list[WebhookSpec]]
    handlers: Callable[[KubeClient, ManagerOptions, CacheReader], Mapping[str, Handler]]


def _gates(options: ManagerOptions) -> Mapping[str, bool]:
    return options.feature_gates


def validating_scope(
    gates: Mapping[str, bool], pubs: Iterable[KubeObject], workloadspreads: Iterable[KubeObject]
) -> ValidatingScope | None:
    """What the validating pod chain's steps ask to be sent (the budget check's, WorkloadSpread's
    deletion records'), joined; also what the eviction webhook's scope keeper writes."""
    return merge_scopes(
        pub_validating_scope(pub_gates(gates), pubs), ws_validating_scope(gates, workloadspreads)
    )


def _pods_specs(ctx: WebhookContext) -> list[WebhookSpec]:
    if not ctx.gate("PodWebhook", True):
        return []
    return pod_webhook_specs(
        ctx.settings,
        condition=pod_match_condition(ctx.sidecarsets, (*POD_TERMS, *pps_pod_terms(ctx.ppss))),
        validating=validating_scope(ctx.options.feature_gates, ctx.pubs, ctx.workloadspreads),
    )


def _pods(kube: KubeClient, options: ManagerOptions, cache: CacheReader) -> Mapping[str, Handler]:
    if not _gates(options).get("PodWebhook", True):
        return {}
    namespace = options.leader_election_namespace
    budgets = pub_gates(_gates(options))
    validators: list[PodValidator] = [PubPodValidator(kube, budgets)] if any(budgets.values()) else []
    mutators: list[PodMutator] = [
        SidecarSetPodMutator(cache, namespace=namespace),
        LaunchPriorityMutator(),
        PpsPodMutator(cache),
    ]
    if _gates(options).get(WS_GATE, True):
        writes = StatusWrites(CustomTargets(kube, namespace))
        mutators.insert(0, WsPodMutator(kube, cache, writes))
        validators.insert(0, WsPodValidator(kube, writes))  # upstream: before the budget check
    pods = PodWebhook(mutators, validators)
    return {MUTATE_POD_PATH: pods.mutate, VALIDATE_POD_PATH: pods.validate}


def _cloneset(kube: KubeClient, options: ManagerOptions, cache: CacheReader) -> Mapping[str, Handler]:
    gates = _gates(options)
    cloneset = CloneSetWebhooks(
        kube,
        template_no_defaults=gates.get("TemplateNoDefaults", False),
        deletion_protection=gates.get("ResourcesDeletionProtection", False),
    )
    return {MUTATE_PATH: cloneset.mutate, VALIDATE_PATH: cloneset.validate}


def _statefulset(kube: KubeClient, options: ManagerOptions, cache: CacheReader) -> Mapping[str, Handler]:
    gates = _gates(options)
    statefulset = StatefulSetWebhooks(
        kube,
        template_no_defaults=gates.get("TemplateNoDefaults", False),
        deletion_protection=gates.get("ResourcesDeletionProtection", False),
        auto_delete_pvc=gates.get("StatefulSetAutoDeletePVC", True),
        auto_resize_pvc=gates.get("StatefulSetAutoResizePVCGate", False),
    )
    return {MUTATE_STATEFULSET_PATH: statefulset.mutate, VALIDATE_STATEFULSET_PATH: statefulset.validate}


def _daemonset(kube: KubeClient, options: ManagerOptions, cache: CacheReader) -> Mapping[str, Handler]:
    daemonset = DaemonSetWebhooks(kube)
    return {MUTATE_DAEMONSET_PATH: daemonset.mutate, VALIDATE_DAEMONSET_PATH: daemonset.validate}


def _broadcastjob(kube: KubeClient, options: ManagerOptions, cache: CacheReader) -> Mapping[str, Handler]:
    job = BroadcastJobWebhooks(kube, template_no_defaults=_gates(options).get("TemplateNoDefaults", False))
    return {MUTATE_BROADCASTJOB_PATH: job.mutate, VALIDATE_BROADCASTJOB_PATH: job.validate}


def _uniteddeployment(kube: KubeClient, options: ManagerOptions, cache: CacheReader) -> Mapping[str, Handler]:
    gates = _gates(options)
    united = UnitedDeploymentWebhooks(
        kube,
        deletion_protection=gates.get("ResourcesDeletionProtection", False),
        template_no_defaults=gates.get("TemplateNoDefaults", False),
    )
    return {MUTATE_UNITEDDEPLOYMENT_PATH: united.mutate, VALIDATE_UNITEDDEPLOYMENT_PATH: united.validate}


def _sidecarset(kube: KubeClient, options: ManagerOptions, cache: CacheReader) -> Mapping[str, Handler]:
    sidecarset = SidecarSetWebhooks(
        kube,
        cache,
        namespace=options.leader_election_namespace,
        patch_defaults_allowed=_gates(options).get("SidecarSetPatchPodMetadataDefaultsAllowed", False),
    )
    return {MUTATE_SIDECARSET_PATH: sidecarset.mutate, VALIDATE_SIDECARSET_PATH: sidecarset.validate}


def _crr(kube: KubeClient, options: ManagerOptions, cache: CacheReader) -> Mapping[str, Handler]:
    crr = CrrWebhooks(kube, enabled=_gates(options).get("KruiseDaemon", True))
    return {MUTATE_CRR_PATH: crr.mutate, VALIDATE_CRR_PATH: crr.validate}


def _ppm(kube: KubeClient, options: ManagerOptions, cache: CacheReader) -> Mapping[str, Handler]:
    gates = _gates(options)
    ppm = PodProbeMarkerWebhooks(gate=gates.get(PPM_GATE, True), daemon=gates.get("KruiseDaemon", True))
    return {VALIDATE_PPM_PATH: ppm.validate}


def _rollout(kube: KubeClient, options: ManagerOptions, cache: CacheReader) -> Mapping[str, Handler]:
    rollout = RolloutWebhooks(kube, partition_percent_limit=options.partition_percent_limit)
    return {MUTATE_ROLLOUT_PATH: rollout.mutate, VALIDATE_ROLLOUT_PATH: rollout.validate}


def _protection(ctx: WebhookContext) -> bool:
    return ctx.gate("ResourcesDeletionProtection")


def _deletion_protection(
    kube: KubeClient, options: ManagerOptions, cache: CacheReader
) -> Mapping[str, Handler]:
    gates = _gates(options)
    if not gates.get("ResourcesDeletionProtection", False):
        return {}  # nothing configured: the paths are not served
    crd_cascading = gates.get("DeletionProtectionForCRDCascadingGate", False)
    return DeletionProtectionWebhooks(kube, enabled=True, crd_cascading=crd_cascading).handlers()


def _resourcedistribution(
    kube: KubeClient, options: ManagerOptions, cache: CacheReader
) -> Mapping[str, Handler]:
    rd = ResourceDistributionWebhooks(
        kube, enabled=_gates(options).get(RD_GATE, False), namespace=options.leader_election_namespace
    )
    return {VALIDATE_RD_PATH: rd.validate}


def _rollouts_of(cache: CacheReader) -> CachedRollouts:
    """The holds' cached read: Rollouts by the workload they reference (:data:`ROLLOUTS_BY_WORKLOAD`)."""
    return lambda namespace, kind, name: cache.by_index(
        ROLLOUTS, WORKLOAD_ROLLOUTS, f"{namespace}/{kind}/{name}"
    )


WEBHOOK_ROWS: tuple[WebhookRow, ...] = (
    WebhookRow("pod", _pods_specs, _pods),
    WebhookRow(
        "cloneset",
        lambda c: cloneset_webhook_specs(c.settings, deletion_protection=_protection(c)),
        _cloneset,
    ),
    WebhookRow(
        "statefulset",
        lambda c: statefulset_webhook_specs(c.settings, deletion_protection=_protection(c)),
        _statefulset,
    ),
    WebhookRow("daemonset", lambda c: daemonset_webhook_specs(c.settings), _daemonset),
    WebhookRow("broadcastjob", lambda c: broadcastjob_webhook_specs(c.settings), _broadcastjob),
    WebhookRow(
        "advancedcronjob",
        lambda c: advancedcronjob_webhook_specs(c.settings),
        lambda kube, o, cache: AdvancedCronJobWebhooks().handlers(),
    ),
    WebhookRow(
        "ephemeraljob",
        lambda c: ephemeraljob_webhook_specs(c.settings),
        lambda kube, o, cache: EphemeralJobWebhooks().handlers(),
    ),
    WebhookRow(
        "uniteddeployment",
        lambda c: uniteddeployment_webhook_specs(c.settings, deletion_protection=_protection(c)),
        _uniteddeployment,
    ),
    WebhookRow("sidecarset", lambda c: sidecarset_webhook_specs(c.settings), _sidecarset),
    WebhookRow("containerrecreaterequest", lambda c: crr_webhook_specs(c.settings), _crr),
    WebhookRow(
        "imagepulljob",
        lambda c: imagepull_webhook_specs(c.settings),
        lambda kube, o, cache: ImagePullWebhooks(gate=image_pull_jobs_enabled(_gates(o))).handlers(),
    ),
    WebhookRow("podprobemarker", lambda c: ppm_webhook_specs(c.settings), _ppm),
    WebhookRow(
        "podunavailablebudget",
        lambda c: pub_webhook_specs(c.settings),
        lambda kube, o, cache: {VALIDATE_PUB_PATH: PubWebhooks(cache, pub_gates(_gates(o))).validate},
    ),
    WebhookRow(
        "resourcedistribution",
        lambda c: resourcedistribution_webhook_specs(c.settings),
        _resourcedistribution,
    ),
    WebhookRow(
        "persistentpodstate",
        lambda c: pps_webhook_specs(c.settings),
        lambda kube, o, cache: {VALIDATE_PPS_PATH: PersistentPodStateWebhooks(cache).validate},
    ),
    WebhookRow(
        "workloadspread",
        lambda c: ws_webhook_specs(c.settings),
        lambda kube, o, cache: {
            VALIDATE_WS_PATH: WorkloadSpreadWebhooks(cache, kube, o.leader_election_namespace).validate
        },
    ),
    WebhookRow(
        "deletion-protection",
        lambda c: deletion_protection_webhook_specs(c.settings) if _protection(c) else [],
        _deletion_protection,
    ),
    WebhookRow(
        "workload-hold",
        lambda c: hold_webhook_specs(c.settings),
        lambda kube, o, cache: hold_webhooks(kube, _rollouts_of(cache)),
    ),
    WebhookRow("rollout", lambda c: rollout_webhook_specs(c.settings), _rollout),
)
"""Every kind's webhooks, in configuration order (the pod webhook first; gate ``PodWebhook``
removes it)."""


def webhook_specs(
    options: ManagerOptions,
    sidecarsets: Iterable[KubeObject] = (),
    pubs: Iterable[KubeObject] = (),
    ppss: Iterable[KubeObject] = (),
    workloadspreads: Iterable[KubeObject] = (),
) -> list[WebhookSpec]:
    """Every webhook for the configurations (in :data:`WEBHOOK_ROWS` order); ``sidecarsets`` and
    ``ppss`` (PersistentPodStates) scope the mutating pod webhook
    (:mod:`kruise.workloads.sidecarset.scope`) and ``pubs`` and ``workloadspreads`` the eviction
    one (:mod:`kruise.workloads.podunavailablebudget.scope`)."""
    ctx = WebhookContext(
        webhook_settings(options),
        options,
        tuple(sidecarsets),
        tuple(pubs),
        tuple(ppss),
        tuple(workloadspreads),
    )
    return [spec for row in WEBHOOK_ROWS for spec in row.specs(ctx)]


def webhook_reads_all() -> tuple[Read, ...]:
    """Every kind the webhooks read from the informers (wait for them before serving)."""
    return (*webhook_reads(), *pub_reads(), *pps_reads(), *ws_reads(), ROLLOUTS_BY_WORKLOAD)


def webhook_cache(runtime: Runtime) -> CacheReader:
    """The webhooks' read view, its kinds and indices declared on ``runtime``'s informers."""
    view = runtime.cache(WEBHOOK_CACHE)
    view.declare(ControllerSpec(name=WEBHOOK_CACHE, watches=(), reads=webhook_reads_all()))
    return view


def register_webhooks(
    server: WebhookServer, kube: KubeClient, options: ManagerOptions, cache: CacheReader
) -> None:
    """Serve every row's paths and ``/convert``; ``cache`` is :func:`webhook_cache`'s view."""
    for row in WEBHOOK_ROWS:
        for path, handler in row.handlers(kube, options, cache).items():
            server.register(path, handler)
    server.register_conversion(CONVERT_PATH, convert)
