"""The manager's controllers, composed on one :class:`~kruise.core.runtime.Runtime`.

Every controller is wired the same way: a scoped cache view from the runtime, the controller
built over it, and ``runtime.add(controller.spec(), controller.reconcile, view)``. The shared
informers (one per kind: pods, CloneSets, Deployments, ...) start with the process; the
controllers run only while this replica holds the leader lease (see ``app.py``).
"""

from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any

from kruise.analysis.controller import AnalysisRunController, CachedRunSource
from kruise.core.events import EventRecorder
from kruise.core.kube import KubeClient
from kruise.core.kube.resources import SIDECARSETS
from kruise.core.runtime import Runtime
from kruise.daemon.crr.controller import ContainerRecreateRequestController
from kruise.daemon.imagepulljob.controller import ImagePullJobController
from kruise.daemon.imagepulljob.list_controller import ImageListPullJobController
from kruise.daemon.imagepulljob.nodeimage_controller import NodeImageController
from kruise.daemon.podprobemarker.controller import NodePodProbeController, PodProbeMarkerController
from kruise.rollouts.advanceddeployment.controller import AdvancedDeploymentController
from kruise.rollouts.batchrelease.controller import BatchReleaseController
from kruise.rollouts.cache import RolloutsCache
from kruise.rollouts.manager.options import ManagerOptions, image_pull_jobs_enabled, pre_download_enabled
from kruise.rollouts.manager.webhooks import POD_TERMS
from kruise.rollouts.rollout.controller import RolloutController
from kruise.rollouts.rollout.traffic import CONFIGMAP_NAME, KubeTraffic
from kruise.rollouts.rollouthistory.controller import RolloutHistoryController
from kruise.rollouts.trafficrouting.controller import TrafficRoutingController
from kruise.rollouts.trafficrouting.routes import TrafficRoutingRoutes
from kruise.traffic.configmap_source import ConfigMapLuaSource
from kruise.workloads.cloneset.controller import CloneSetController, CloneSetOptions
from kruise.workloads.daemonset.controller import DaemonSetController, DaemonSetOptions
from kruise.workloads.launchpriority.controller import LaunchPriorityController
from kruise.workloads.podreadiness import (
    NotReadyChange,
    NotReadyKey,
    has_kruise_readiness_gate,
    not_ready_patch,
)
from kruise.workloads.sidecarset.controller import SidecarSetController, SidecarSetOptions
from kruise.workloads.sidecarset.podscope import KEY as SCOPE_KEY
from kruise.workloads.sidecarset.podscope import PodWebhookScope
from kruise.workloads.statefulset.controller import StatefulSetController, StatefulSetOptions
from kruise.workloads.statefulset.round import Options


def build_runtime(kube: KubeClient, opts: ManagerOptions, *, runtime: Runtime | None = None) -> Runtime:
    """Every controller of the manager on ``runtime`` (a new one by default); ``kube`` is the
    client they write with (fenced by the leader lease in the manager)."""
    runtime = runtime or Runtime(kube)
    gates = opts.feature_gates
    pre_download = pre_download_enabled(gates)

    view = runtime.cache(CloneSetController.name)
    cloneset = CloneSetController(
        kube,
        EventRecorder(kube, CloneSetController.name),
        view,
        CloneSetOptions(
            workers=opts.cloneset_workers,
            expectation_timeout=opts.expectation_timeout,
            short_hash_label=gates.get("CloneSetShortHash", False),
            partition_rollback=gates.get("CloneSetPartitionRollback", False),
            preparing_update_as_update=gates.get("PreparingUpdateAsUpdate", False),
            exclude_preparing_delete=opts.cloneset_scaling_exclude_preparing_delete,
            pre_download=pre_download,
            env_from_metadata=gates.get("InPlaceUpdateEnvFromMetadata", True),
        ),
    )
    runtime.add(cloneset.spec(), cloneset.reconcile, view)
    _add_sidecarset(runtime, kube, opts)

    view = runtime.cache(StatefulSetController.name)
    statefulset = StatefulSetController(
        kube,
        EventRecorder(kube, StatefulSetController.name),
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
            pre_download=pre_download,
        ),
    )
    runtime.add(statefulset.spec(), statefulset.reconcile, view)

    view = runtime.cache(DaemonSetController.name)
    daemonset = DaemonSetController(
        kube,
        EventRecorder(kube, DaemonSetController.name),
        view,
        DaemonSetOptions(
            workers=opts.daemonset_workers,
            expectation_timeout=opts.expectation_timeout,
            assign_pods_by_scheduler=opts.assign_pods_by_scheduler,
        ),
    )
    runtime.add(daemonset.spec(), daemonset.reconcile, view)

    view = runtime.cache(LaunchPriorityController.name)
    launch = LaunchPriorityController(kube, view)
    runtime.add(launch.spec(), launch.reconcile, view)

    if gates.get("KruiseDaemon", True):
        view = runtime.cache(ContainerRecreateRequestController.name)
        crr = ContainerRecreateRequestController(kube, view, WorkloadsPodReadiness())
        runtime.add(crr.spec(), crr.reconcile, view)

    if gates.get("KruiseDaemon", True) and gates.get("PodProbeMarkerGate", True):
        view = runtime.cache(PodProbeMarkerController.name)
        markers = PodProbeMarkerController(kube, view)
        runtime.add(markers.spec(), markers.reconcile, view)
        view = runtime.cache(NodePodProbeController.name)
        nodeprobes = NodePodProbeController(kube, view)
        runtime.add(nodeprobes.spec(), nodeprobes.reconcile, view)

    view = runtime.cache(NodeImageController.name)
    nodeimages = NodeImageController(
        kube,
        EventRecorder(kube, NodeImageController.name),
        view,
        workers=opts.nodeimage_workers,
        creation_delay=opts.nodeimage_creation_delay,
    )
    runtime.add(nodeimages.spec(), nodeimages.reconcile, view)

    if image_pull_jobs_enabled(gates):
        view = runtime.cache(ImagePullJobController.name)
        pulljobs = ImagePullJobController(
            kube,
            view,
            workers=opts.imagepulljob_workers,
            ttl_for_always=opts.default_ttlseconds_for_always_nodeimage,
        )
        runtime.add(pulljobs.spec(), pulljobs.reconcile, view)

        view = runtime.cache(ImageListPullJobController.name)
        listjobs = ImageListPullJobController(
            kube,
            EventRecorder(kube, ImageListPullJobController.name),
            view,
            expectation_timeout=opts.expectation_timeout,
        )
        runtime.add(listjobs.spec(), listjobs.reconcile, view)

    view = runtime.cache(RolloutController.name)
    rollout_events = EventRecorder(kube, RolloutController.name)
    rollouts = RolloutController(
        kube,
        rollout_events,
        RolloutsCache(view),
        KubeTraffic(kube, opts.rollout_configuration_namespace, rollout_events),
        workers=opts.rollout_workers,
    )
    runtime.add(rollouts.spec(), rollouts.reconcile, view)

    view = runtime.cache(BatchReleaseController.name)
    batches = BatchReleaseController(
        kube,
        RolloutsCache(view),
        workers=opts.batchrelease_workers,
        advanced_deployment=gates.get("AdvancedDeployment", True),
        keep_paused_on_cancel=gates.get("KeepWorkloadPausedOnRolloutDeletion", False),
        recorder=EventRecorder(kube, BatchReleaseController.name),
    )
    runtime.add(batches.spec(), batches.reconcile, view)

    if gates.get("AdvancedDeployment", True):
        view = runtime.cache(AdvancedDeploymentController.name)
        advanced = AdvancedDeploymentController(
            kube, RolloutsCache(view), EventRecorder(kube, AdvancedDeploymentController.name)
        )
        runtime.add(advanced.spec(), advanced.reconcile, view)

    view = runtime.cache(TrafficRoutingController.name)
    lua = ConfigMapLuaSource(kube, opts.rollout_configuration_namespace, CONFIGMAP_NAME)
    traffic_routings = TrafficRoutingController(
        kube,
        EventRecorder(kube, TrafficRoutingController.name),
        view,
        TrafficRoutingRoutes(kube, lua),
        workers=opts.trafficrouting_workers,
    )
    runtime.add(traffic_routings.spec(), traffic_routings.reconcile, view)

    if gates.get("RolloutHistory", False):
        view = runtime.cache(RolloutHistoryController.name)
        histories = RolloutHistoryController(
            kube,
            EventRecorder(kube, RolloutHistoryController.name),
            view,
            workers=opts.rollouthistory_workers,
        )
        runtime.add(histories.spec(), histories.reconcile, view)

    view = runtime.cache(AnalysisRunController.name)
    analysis = AnalysisRunController(
        kube,
        EventRecorder(kube, AnalysisRunController.name),
        CachedRunSource(view),
        workers=opts.analysisrun_workers,
    )
    runtime.add(analysis.spec(), analysis.reconcile, view)
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


def _add_sidecarset(runtime: Runtime, kube: KubeClient, opts: ManagerOptions) -> None:
    """The SidecarSet upgrade controller and, with gate ``PodWebhook``, the keeper of the pod
    webhook's match condition (checked at once and then periodically)."""
    scope = None
    if opts.feature_gates.get("PodWebhook", True):
        view = runtime.cache(PodWebhookScope.name)
        scope = PodWebhookScope(kube, lambda: view.list(SIDECARSETS), also=POD_TERMS)
        runtime.add(scope.spec(), scope.reconcile, view).enqueue(SCOPE_KEY)
    view = runtime.cache(SidecarSetController.name)
    sidecarset = SidecarSetController(
        kube,
        EventRecorder(kube, SidecarSetController.name),
        view,
        SidecarSetOptions(
            workers=opts.sidecarset_workers,
            namespace=opts.leader_election_namespace,
            expectation_timeout=opts.expectation_timeout,
        ),
        scope,
    )
    runtime.add(sidecarset.spec(), sidecarset.reconcile, view)
