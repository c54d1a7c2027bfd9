"""The manager's controllers, composed on one :class:`~kruise.core.runtime.Runtime`.

Every controller is one row of :data:`ROWS` (:class:`~kruise.core.runtime.ControllerRow`):
its name, its gate, and how it is built from the :class:`Wiring` and its scoped cache view;
:func:`~kruise.core.runtime.wire` adds them all the same way. The shared
informers (one per kind: pods, CloneSets, Deployments, ...) start with the process; the
controllers run only while this replica holds the leader lease (see ``app.py``).
"""

from __future__ import annotations

import datetime
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from kruise.analysis.controller import AnalysisRunController, CachedRunSource
from kruise.core.events import EventRecorder
from kruise.core.kube import KubeClient
from kruise.core.kube.resources import MUTATING_WEBHOOKS, SIDECARSETS, VALIDATING_WEBHOOKS
from kruise.core.runtime import ControllerRow, Reconciler, Runtime, ScopedCache, wire
from kruise.core.webhook.configuration import MUTATING_NAME, VALIDATING_NAME
from kruise.daemon.crr.controller import ContainerRecreateRequestController
from kruise.daemon.imagepulljob.controller import ImagePullJobController
from kruise.daemon.imagepulljob.list_controller import ImageListPullJobController
from kruise.daemon.imagepulljob.nodeimage_controller import NodeImageController
from kruise.daemon.podprobemarker.controller import NodePodProbeController, PodProbeMarkerController
from kruise.rollouts.advanceddeployment.controller import AdvancedDeploymentController
from kruise.rollouts.batchrelease.controller import BatchReleaseController
from kruise.rollouts.cache import RolloutsCache
from kruise.rollouts.manager.options import (
    ManagerOptions,
    image_pull_jobs_enabled,
    pre_download_enabled,
    pub_gates,
)
from kruise.rollouts.manager.webhooks import POD_TERMS, validating_scope
from kruise.rollouts.nativedaemonset.controller import NativeDaemonSetController
from kruise.rollouts.rollout.controller import RolloutController
from kruise.rollouts.rollout.traffic import CONFIGMAP_NAME, KubeTraffic
from kruise.rollouts.rollouthistory.controller import RolloutHistoryController
from kruise.rollouts.trafficrouting.controller import TrafficRoutingController
from kruise.rollouts.trafficrouting.routes import TrafficRoutingRoutes
from kruise.traffic.configmap_source import ConfigMapLuaSource
from kruise.workloads.advancedcronjob.controller import AdvancedCronJobController, AdvancedCronJobOptions
from kruise.workloads.api.persistentpodstate import PERSISTENTPODSTATES
from kruise.workloads.api.podunavailablebudget import PUBS
from kruise.workloads.api.workloadspread import WORKLOADSPREADS
from kruise.workloads.broadcastjob.controller import BroadcastJobController, BroadcastJobOptions
from kruise.workloads.cloneset.controller import CloneSetController, CloneSetOptions
from kruise.workloads.cloneset.sync_update import UpdateGuard
from kruise.workloads.daemonset.controller import DaemonSetController, DaemonSetOptions
from kruise.workloads.ephemeraljob.controller import EphemeralJobController, EphemeralJobOptions
from kruise.workloads.launchpriority.controller import LaunchPriorityController
from kruise.workloads.persistentpodstate.controller import PersistentPodStateController
from kruise.workloads.persistentpodstate.webhooks import pod_terms as pps_pod_terms
from kruise.workloads.podreadiness import (
    NotReadyChange,
    NotReadyKey,
    has_kruise_readiness_gate,
    not_ready_patch,
)
from kruise.workloads.podunavailablebudget.budget import Operation
from kruise.workloads.podunavailablebudget.controller import PodUnavailableBudgetController
from kruise.workloads.podunavailablebudget.keeper import BudgetKeeper
from kruise.workloads.podunavailablebudget.scope import KEY as PUB_SCOPE_KEY
from kruise.workloads.podunavailablebudget.scope import EvictionScope
from kruise.workloads.podwebhook import ValidatingScope
from kruise.workloads.resourcedistribution.controller import ResourceDistributionController
from kruise.workloads.sidecarset.controller import SidecarSetController, SidecarSetOptions
from kruise.workloads.sidecarset.podscope import KEY as SCOPE_KEY
from kruise.workloads.sidecarset.podscope import PodWebhookScope, TermSource
from kruise.workloads.statefulset.controller import StatefulSetController, StatefulSetOptions
from kruise.workloads.statefulset.round import Options
from kruise.workloads.uniteddeployment.controller import UnitedDeploymentController, UnitedDeploymentOptions
from kruise.workloads.workloadspread.controller import WorkloadSpreadController
from kruise.workloads.workloadspread.podstep import GATE as WS_GATE
from kruise.workloads.workloadspread.podstep import pod_terms as ws_pod_terms


@dataclass
class Wiring:
    """What every manager row is built from: the (lease-fenced) client, the options, and the
    controllers wired by earlier rows (the SidecarSet controller keeps the pod webhook's scope)."""

    kube: KubeClient
    opts: ManagerOptions
    built: dict[str, Reconciler] = field(default_factory=dict)

    @property
    def gates(self) -> Mapping[str, bool]:
        return self.opts.feature_gates

    def recorder(self, name: str) -> EventRecorder:
        return EventRecorder(self.kube, name)


def _gate(name: str, default: bool = True) -> Callable[[Wiring], bool]:
    return lambda w: w.gates.get(name, default)


def _cloneset(w: Wiring, view: ScopedCache) -> Reconciler:
    gates, opts = w.gates, w.opts
    return CloneSetController(
        w.kube,
        w.recorder(CloneSetController.name),
        view,
        CloneSetOptions(
            workers=opts.cloneset_workers,
            expectation_timeout=opts.expectation_timeout,
            short_hash_label=gates.get("CloneSetShortHash", False),
            partition_rollback=gates.get("CloneSetPartitionRollback", False),
            preparing_update_as_update=gates.get("PreparingUpdateAsUpdate", False),
            exclude_preparing_delete=opts.cloneset_scaling_exclude_preparing_delete,
            pre_download=pre_download_enabled(gates),
            env_from_metadata=gates.get("InPlaceUpdateEnvFromMetadata", True),
            update_guard=_pub_update_guard(w),
        ),
    )


def _pub_update_guard(w: Wiring) -> UpdateGuard | None:
    """With ``PodUnavailableBudgetUpdateGate`` in effect, a CloneSet asks each pod's budget before
    updating it (upstream's ``cloneset_update.go``)."""
    if not pub_gates(w.gates)["PodUnavailableBudgetUpdateGate"]:
        return None
    keeper = BudgetKeeper(w.kube, recorder=w.recorder(CloneSetController.name))
    return lambda pod: keeper.admit_pod(pod, Operation.UPDATE)


def _pod_webhook_scope(w: Wiring, view: ScopedCache) -> Reconciler:
    pps = TermSource(PERSISTENTPODSTATES, lambda: view.list(PERSISTENTPODSTATES), pps_pod_terms)
    ws = TermSource(WORKLOADSPREADS, lambda: view.list(WORKLOADSPREADS), ws_pod_terms)
    return PodWebhookScope(
        w.kube,
        lambda: view.list(SIDECARSETS),
        also=POD_TERMS,
        sources=(pps, ws),
        configuration=lambda: view.get(MUTATING_WEBHOOKS, MUTATING_NAME),
    )


def _sidecarset(w: Wiring, view: ScopedCache) -> Reconciler:
    scope = w.built.get(PodWebhookScope.name)
    return SidecarSetController(
        w.kube,
        w.recorder(SidecarSetController.name),
        view,
        SidecarSetOptions(
            workers=w.opts.sidecarset_workers,
            namespace=w.opts.leader_election_namespace,
            expectation_timeout=w.opts.expectation_timeout,
        ),
        scope if isinstance(scope, PodWebhookScope) else None,
    )


def _pub_enabled(w: Wiring) -> bool:
    return any(pub_gates(w.gates).values())


def _pub_scope(w: Wiring, view: ScopedCache) -> Reconciler:
    def scope() -> ValidatingScope | None:
        return validating_scope(w.gates, view.list(PUBS), view.list(WORKLOADSPREADS))

    return EvictionScope(
        w.kube,
        scope,
        resources=(PUBS, WORKLOADSPREADS),
        configuration=lambda: view.get(VALIDATING_WEBHOOKS, VALIDATING_NAME),
    )


def _evictions_scoped(w: Wiring) -> bool:
    """Some step of the validating pod chain judges evictions (the budget check, or WorkloadSpread
    recording deletions)."""
    workloadspread = w.gates.get("PodWebhook", True) and w.gates.get(WS_GATE, True)
    return pub_gates(w.gates)["PodUnavailableBudgetDeleteGate"] or workloadspread


def _pubs(w: Wiring, view: ScopedCache) -> Reconciler:
    scope = w.built.get(EvictionScope.name)
    return PodUnavailableBudgetController(
        w.kube,
        w.recorder(PodUnavailableBudgetController.name),
        view,
        scope=scope if isinstance(scope, EvictionScope) else None,
        workers=w.opts.podunavailablebudget_workers,
    )


def _statefulset(w: Wiring, view: ScopedCache) -> Reconciler:
    gates, opts = w.gates, w.opts
    return StatefulSetController(
        w.kube,
        w.recorder(StatefulSetController.name),
        view,
        StatefulSetOptions(
            workers=opts.statefulset_workers,
            expectation_timeout=opts.expectation_timeout,
            gates=Options(
                start_ordinal=gates.get("StatefulSetStartOrdinal", False),
                pod_index_label=gates.get("PodIndexLabel", True),
                auto_delete_pvc=gates.get("StatefulSetAutoDeletePVC", True),
                env_from_metadata=gates.get("InPlaceUpdateEnvFromMetadata", True),
            ),
            pre_download=pre_download_enabled(gates),
        ),
    )


def _daemonset(w: Wiring, view: ScopedCache) -> Reconciler:
    opts = w.opts
    return DaemonSetController(
        w.kube,
        w.recorder(DaemonSetController.name),
        view,
        DaemonSetOptions(
            workers=opts.daemonset_workers,
            expectation_timeout=opts.expectation_timeout,
            assign_pods_by_scheduler=opts.assign_pods_by_scheduler,
        ),
    )


def _broadcastjob(w: Wiring, view: ScopedCache) -> Reconciler:
    opts = w.opts
    return BroadcastJobController(
        w.kube,
        w.recorder(BroadcastJobController.name),
        view,
        BroadcastJobOptions(
            workers=opts.broadcastjob_workers,
            expectation_timeout=opts.expectation_timeout,
            assign_pods_by_scheduler=opts.assign_bcj_pods_by_scheduler,
        ),
    )


def _ephemeraljob(w: Wiring, view: ScopedCache) -> Reconciler:
    return EphemeralJobController(
        w.kube,
        w.recorder(EphemeralJobController.name),
        view,
        EphemeralJobOptions(expectation_timeout=w.opts.expectation_timeout),
    )


def _advancedcronjob(w: Wiring, view: ScopedCache) -> Reconciler:
    return AdvancedCronJobController(
        w.kube, view, AdvancedCronJobOptions(workers=w.opts.advancedcronjob_workers)
    )


def _uniteddeployment(w: Wiring, view: ScopedCache) -> Reconciler:
    return UnitedDeploymentController(
        w.kube,
        w.recorder(UnitedDeploymentController.name),
        view,
        UnitedDeploymentOptions(
            workers=w.opts.uniteddeployment_workers, expectation_timeout=w.opts.expectation_timeout
        ),
    )


def _nodeimages(w: Wiring, view: ScopedCache) -> Reconciler:
    return NodeImageController(
        w.kube,
        w.recorder(NodeImageController.name),
        view,
        workers=w.opts.nodeimage_workers,
        creation_delay=w.opts.nodeimage_creation_delay,
    )


def _imagepulljobs(w: Wiring, view: ScopedCache) -> Reconciler:
    return ImagePullJobController(
        w.kube,
        view,
        workers=w.opts.imagepulljob_workers,
        ttl_for_always=w.opts.default_ttlseconds_for_always_nodeimage,
    )


def _imagelistpulljobs(w: Wiring, view: ScopedCache) -> Reconciler:
    return ImageListPullJobController(
        w.kube,
        w.recorder(ImageListPullJobController.name),
        view,
        expectation_timeout=w.opts.expectation_timeout,
    )


def _rollouts(w: Wiring, view: ScopedCache) -> Reconciler:
    events = w.recorder(RolloutController.name)
    return RolloutController(
        w.kube,
        events,
        RolloutsCache(view),
        KubeTraffic(w.kube, w.opts.rollout_configuration_namespace, events),
        workers=w.opts.rollout_workers,
    )


def _batchreleases(w: Wiring, view: ScopedCache) -> Reconciler:
    return BatchReleaseController(
        w.kube,
        RolloutsCache(view),
        workers=w.opts.batchrelease_workers,
        advanced_deployment=w.gates.get("AdvancedDeployment", True),
        keep_paused_on_cancel=w.gates.get("KeepWorkloadPausedOnRolloutDeletion", False),
        recorder=w.recorder(BatchReleaseController.name),
    )


def _trafficroutings(w: Wiring, view: ScopedCache) -> Reconciler:
    lua = ConfigMapLuaSource(w.kube, w.opts.rollout_configuration_namespace, CONFIGMAP_NAME)
    return TrafficRoutingController(
        w.kube,
        w.recorder(TrafficRoutingController.name),
        view,
        TrafficRoutingRoutes(w.kube, lua),
        workers=w.opts.trafficrouting_workers,
    )


def _rollouthistories(w: Wiring, view: ScopedCache) -> Reconciler:
    return RolloutHistoryController(
        w.kube,
        w.recorder(RolloutHistoryController.name),
        view,
        workers=w.opts.rollouthistory_workers,
    )


def _analysisruns(w: Wiring, view: ScopedCache) -> Reconciler:
    return AnalysisRunController(
        w.kube,
        w.recorder(AnalysisRunController.name),
        CachedRunSource(view),
        workers=w.opts.analysisrun_workers,
    )


def _daemon_and(gate: str) -> Callable[[Wiring], bool]:
    return lambda w: w.gates.get("KruiseDaemon", True) and w.gates.get(gate, True)


Row = ControllerRow[Wiring]

ROWS: tuple[Row, ...] = (
    # OpenKruise workloads
    Row(CloneSetController.name, _cloneset),
    Row(PodWebhookScope.name, _pod_webhook_scope, _gate("PodWebhook"), kick=SCOPE_KEY),
    Row(SidecarSetController.name, _sidecarset),
    Row(StatefulSetController.name, _statefulset),
    Row(DaemonSetController.name, _daemonset),
    Row(BroadcastJobController.name, _broadcastjob),
    Row(AdvancedCronJobController.name, _advancedcronjob),
    Row(EphemeralJobController.name, _ephemeraljob),
    Row(UnitedDeploymentController.name, _uniteddeployment),
    Row(LaunchPriorityController.name, lambda w, view: LaunchPriorityController(w.kube, view)),
    Row(
        EvictionScope.name,
        _pub_scope,
        _evictions_scoped,
        kick=PUB_SCOPE_KEY,
    ),
    Row(PodUnavailableBudgetController.name, _pubs, _pub_enabled),
    Row(
        ResourceDistributionController.name,
        lambda w, view: ResourceDistributionController(w.kube, view),
        _gate("ResourceDistributionGate", False),
    ),
    Row(
        PersistentPodStateController.name,
        lambda w, view: PersistentPodStateController(w.kube, view),
    ),
    Row(
        WorkloadSpreadController.name,
        lambda w, view: WorkloadSpreadController(
            w.kube,
            view,
            recorder=w.recorder(WorkloadSpreadController.name),
            config_namespace=w.opts.leader_election_namespace,
        ),
        lambda w: w.gates.get("PodWebhook", True) and w.gates.get("WorkloadSpread", True),
    ),
    # the manager's side of kruise-daemon's kinds
    Row(
        ContainerRecreateRequestController.name,
        lambda w, view: ContainerRecreateRequestController(w.kube, view, WorkloadsPodReadiness()),
        _gate("KruiseDaemon"),
    ),
    Row(
        PodProbeMarkerController.name,
        lambda w, view: PodProbeMarkerController(w.kube, view),
        _daemon_and("PodProbeMarkerGate"),
    ),
    Row(
        NodePodProbeController.name,
        lambda w, view: NodePodProbeController(w.kube, view),
        _daemon_and("PodProbeMarkerGate"),
    ),
    Row(NodeImageController.name, _nodeimages),
    Row(ImagePullJobController.name, _imagepulljobs, lambda w: image_pull_jobs_enabled(w.gates)),
    Row(ImageListPullJobController.name, _imagelistpulljobs, lambda w: image_pull_jobs_enabled(w.gates)),
    # Kruise Rollouts and analysis
    Row(RolloutController.name, _rollouts),
    Row(BatchReleaseController.name, _batchreleases),
    Row(
        AdvancedDeploymentController.name,
        lambda w, view: AdvancedDeploymentController(
            w.kube, RolloutsCache(view), w.recorder(AdvancedDeploymentController.name)
        ),
        _gate("AdvancedDeployment"),
    ),
    Row(
        NativeDaemonSetController.name,
        lambda w, view: NativeDaemonSetController(
            w.kube,
            view,
            w.recorder(NativeDaemonSetController.name),
            expectation_timeout=w.opts.expectation_timeout,
        ),
    ),
    Row(TrafficRoutingController.name, _trafficroutings),
    Row(RolloutHistoryController.name, _rollouthistories, _gate("RolloutHistory", False)),
    Row(AnalysisRunController.name, _analysisruns),
)
"""Every controller of the manager, in wiring order, with the gate that enables it (upstream's
defaults: KruiseDaemon, PodProbeMarkerGate, PodWebhook and AdvancedDeployment on, RolloutHistory
and ResourceDistributionGate off; ImagePullJobGate as :func:`image_pull_jobs_enabled`; the
PodUnavailableBudget controller while either of its gates is in effect (:func:`pub_gates`), its
eviction-webhook scope with the DELETE one)."""


def build_runtime(kube: KubeClient, opts: ManagerOptions, *, runtime: Runtime | None = None) -> Runtime:
    """Every controller of :data:`ROWS` on ``runtime`` (a new one by default); ``kube`` is the
    client they write with (fenced by the leader lease in the manager)."""
    runtime = runtime or Runtime(kube)
    wiring = Wiring(kube, opts)
    wire(runtime, ROWS, wiring, wiring.built)
    return runtime


class WorkloadsPodReadiness:
    """The CRR controller's :class:`~kruise.daemon.crr.controller.PodReadiness` over
    :mod:`kruise.workloads.podreadiness` (the layer ``kruise.daemon`` may not import)."""

    def has_gate(self, pod: Mapping[str, Any]) -> bool:
        return has_kruise_readiness_gate(pod)

    def patch(
        self, pod: Mapping[str, Any], *, add: bool, user_agent: str, key: str, now: datetime.datetime
    ) -> dict[str, Any] | None:
        return not_ready_patch(pod, NotReadyChange(add, NotReadyKey(user_agent, key)), now)
