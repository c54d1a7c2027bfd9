"""The registry of workload kinds a release serves, and the lookups the controllers make (pure).

A kind is served when it is listed in :data:`KINDS`; everything else about it (its styles, hold,
routes, reads) comes from its :class:`~kruise.rollouts.workloads.port.WorkloadKind`. The Rollout
controller finds a Rollout's workload with :func:`find`; the BatchRelease controller the style of
its release plan with :func:`release_style`; the manager composes webhooks, informers and RBAC
from :func:`holds`, :func:`routes` and :func:`resources`.

Style, as upstream's ``GetRollingStyle``/``IsRealPartition``: ``strategy.blueGreen`` is
BlueGreen; ``canary.enableExtraWorkloadForCanary`` is Canary where the kind has an extra canary
workload (a Deployment), Partition elsewhere; anything else is Partition. A BatchRelease states
its style in ``releasePlan.rollingStyle`` (v1alpha1 ones: ``enableExtraWorkloadForCanary``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from kruise.core.kube.resources import PODS, Resource
from kruise.core.runtime.spec import OWNER_UID
from kruise.rollouts.api.common import RollingStyle
from kruise.rollouts.release.objects import meta
from kruise.rollouts.workloads.advancedstatefulset import ADVANCED_STATEFULSET
from kruise.rollouts.workloads.cloneset import CLONESET
from kruise.rollouts.workloads.daemonset import DAEMONSET
from kruise.rollouts.workloads.deployment.kind import DEPLOYMENT
from kruise.rollouts.workloads.info import WorkloadInfo
from kruise.rollouts.workloads.nativedaemonset.kind import NATIVE_DAEMONSET
from kruise.rollouts.workloads.port import (
    CacheView,
    Observation,
    ReleaseStyle,
    Route,
    WorkloadHold,
    WorkloadKind,
)
from kruise.rollouts.workloads.statefulset import STATEFULSET

KINDS: tuple[WorkloadKind, ...] = (
    CLONESET,
    DEPLOYMENT,
    STATEFULSET,
    ADVANCED_STATEFULSET,
    DAEMONSET,
    NATIVE_DAEMONSET,
)
"""Every workload kind a Rollout can release, in registration order."""


def kind_for(ref: Mapping[str, Any]) -> WorkloadKind | None:
    """The kind a ``workloadRef`` (``apiVersion``, ``kind``) names, or None when not served."""
    api_version, kind = str(ref.get("apiVersion") or ""), str(ref.get("kind") or "")
    return next((k for k in KINDS if k.matches(api_version, kind)), None)


def requested_style(rollout: Mapping[str, Any]) -> RollingStyle:
    """The style a Rollout's strategy asks for (before the kind has its say)."""
    strategy = (rollout.get("spec") or {}).get("strategy") or {}
    if strategy.get("blueGreen"):
        return RollingStyle.BLUE_GREEN
    if (strategy.get("canary") or {}).get("enableExtraWorkloadForCanary"):
        return RollingStyle.CANARY
    return RollingStyle.PARTITION


def planned_style(release_plan: Mapping[str, Any]) -> RollingStyle:
    """The style a BatchRelease's ``releasePlan`` asks for."""
    style = release_plan.get("rollingStyle")
    if style in tuple(RollingStyle):
        return RollingStyle(style)
    return RollingStyle.CANARY if release_plan.get("enableExtraWorkloadForCanary") else RollingStyle.PARTITION


def release_style(br: Mapping[str, Any]) -> tuple[WorkloadKind, ReleaseStyle] | None:
    """The kind and style serving a BatchRelease, or None (kind not served, or not in that style)."""
    spec = br.get("spec") or {}
    kind = kind_for(spec.get("workloadRef") or {})
    if kind is None:
        return None
    style = kind.style_for(planned_style(spec.get("releasePlan") or {}))
    return None if style is None else (kind, style)


def observe(
    kind: WorkloadKind, view: CacheView, namespace: str, name: str, *, pods: bool = False
) -> Observation | None:
    """The workload ``namespace/name`` of ``kind`` with what its kind reads (and its pods when
    asked: the pods it controls, index ``owner-uid``, and those of the ReplicaSets read beside it:
    a Deployment's pods and its canary Deployments' are their ReplicaSets'); None when the cache
    has no such object."""
    workload = view.get(kind.resource, f"{namespace}/{name}")
    if workload is None:
        return None
    obs = kind.observe(view, workload)
    if pods:
        found: list[dict[str, Any]] = []
        for owner in (workload, *obs.replicasets):
            found.extend(view.by_index(PODS, OWNER_UID, str(meta(owner).get("uid") or "")))
        obs = replace(obs, pods=found)
    return obs


@dataclass(frozen=True)
class Found:
    """A Rollout's workload: its kind, the style the Rollout releases it in, what was read."""

    kind: WorkloadKind
    style: ReleaseStyle
    obs: Observation

    @property
    def workload(self) -> dict[str, Any]:
        return self.obs.workload

    def info(self, rollout: Mapping[str, Any]) -> WorkloadInfo:
        """What the Rollout engine knows of the workload, with the style's facts."""
        return replace(
            self.style.info(rollout, self.obs),
            style=self.style.style,
            rollback_in_batches=self.style.rollback_in_batches,
        )


def find(rollout: Mapping[str, Any], view: CacheView) -> Found | None:
    """The workload ``spec.workloadRef`` names, when it is of a served kind and in the cache."""
    ref = (rollout.get("spec") or {}).get("workloadRef") or {}
    kind = kind_for(ref)
    if kind is None:
        return None
    style = kind.style_for(requested_style(rollout))
    obs = observe(kind, view, str(meta(rollout).get("namespace")), str(ref.get("name")))
    if style is None or obs is None:
        return None
    return Found(kind, style, obs)


def holds() -> tuple[WorkloadHold, ...]:
    return tuple(k.hold for k in KINDS)


def routes() -> tuple[Route, ...]:
    return tuple(route for k in KINDS for route in k.routes)


def resources() -> tuple[Resource, ...]:
    """The workload resources of every served kind."""
    return tuple(k.resource for k in KINDS)
