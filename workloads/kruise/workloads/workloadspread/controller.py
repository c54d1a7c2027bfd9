"""The WorkloadSpread controller shell: upstream's ``workloadspread-controller`` (v1.8), in part.

A round for ``<ns>/<name>``: the target workload's replicas come from the cache
(:func:`~.target.target_replicas`), the pods are the namespace's pods whose
``apps.kruise.io/matched-workloadspread`` names this WorkloadSpread;
:func:`~.subsets.next_statuses` gives ``status.subsetStatuses`` and
:func:`~.versions.next_versioned_statuses` ``status.versionedSubsetStatuses`` (the same per pod
revision; written whole to the status subresource with the cached resourceVersion; a conflict
retries the round). For a ReplicaSet, Deployment or CloneSet target (:data:`DELETION_COST_KINDS`)
:func:`~.subsets.deletion_costs` gives the ``controller.kubernetes.io/pod-deletion-cost`` each
active pod should carry, per revision, an old revision's subsets reversed (merge-patched where
it differs); a Deployment whose current ReplicaSet is not in the cache yet skips the round (as
upstream's ``getWorkloadLatestVersion`` error). While ``creatingPods``/``deletingPods`` entries
wait, the round comes back after :data:`RECHECK_SECONDS` to expire them.

Before the accounting, the target's active pods bound to a node whose annotation does not name
this WorkloadSpread (created before it, or left by another) are adopted (:mod:`.adoption`: the
subset that best fits their node; the node read from the API server) and merge-patched with the
annotation, then counted like the others.

A target of a custom kind listed in the white list (:mod:`.whitelist`) is read from the API
server each round (:meth:`~.customtargets.CustomTargets.target`: its ``replicasPath``, or the
``replicasPathList``); it is not watched (upstream adds a watch per listed kind): its pods' and
the WorkloadSpread's events wake the round, and the round comes back every
:data:`CUSTOM_RECHECK_SECONDS` for its replicas; of its pods without the annotation only those
it controls directly are adopted (upstream lists them by the target's uid).

``spec.targetFilter`` (:mod:`.targetfilter`): only the pods its selector matches are counted
and adopted, and a ``replicasPathList`` gives the replicas the percentages resolve against; a
malformed selector or a path to a non-integer skips the round (logged, retried).

Wake-ups: every WorkloadSpread event; every event of a pod annotated for a WorkloadSpread, or of
an unannotated pod bound to a node whose workload a WorkloadSpread targets; a target workload's
events. Adaptive rescheduling (:mod:`.reschedule`): the subsets' ``Schedulable`` conditions are
written with the status, then the schedule-failed pods are deleted; a round comes back when a
pending pod would time out or an unschedulable subset recover.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime
from typing import Any, cast

from kruise.core.errors import ApiError, ConflictError, NotFoundError
from kruise.core.events import EventRecorder
from kruise.core.kube.client import KubeClient
from kruise.core.kube.resources import NODES, PODS, REPLICASETS
from kruise.core.runtime import CacheReader, ControllerSpec, Watch, controller_ref
from kruise.core.workqueue import Result
from kruise.workloads.api.workloadspread import (
    WORKLOADSPREADS,
    SubsetView,
    TargetView,
    WorkloadSpreadView,
)
from kruise.workloads.controllerbase import CacheController
from kruise.workloads.objects import KubeObject, annotations_of, labels, mapping, name, namespace, spec
from kruise.workloads.pods import is_active
from kruise.workloads.selector import SelectorError
from kruise.workloads.workloadspread.adoption import adopt, adoption_patch, initial_room
from kruise.workloads.workloadspread.customtargets import CustomTargets
from kruise.workloads.workloadspread.podstep import target_of_pod
from kruise.workloads.workloadspread.reschedule import Rescheduled, critical_seconds, reschedule
from kruise.workloads.workloadspread.subsets import (
    DELETION_COST_ANNOTATION,
    deletion_costs,
    matched_of,
    next_statuses,
    orphaned_pods,
    pods_by_subset,
)
from kruise.workloads.workloadspread.target import WORKLOADS, target_replicas, workload_resource
from kruise.workloads.workloadspread.targetfilter import TargetFilterError, counts
from kruise.workloads.workloadspread.validation import is_builtin_kind, same_target
from kruise.workloads.workloadspread.versions import (
    next_versioned_statuses,
    pods_by_version,
    workload_version,
)
from kruise.workloads.workloadspread.whitelist import DEFAULT_NAMESPACE

__all__ = [
    "CUSTOM_RECHECK_SECONDS",
    "DELETION_COST_KINDS",
    "RECHECK_SECONDS",
    "WorkloadSpreadController",
    "workload_resource",
]

log = logging.getLogger("kruise.workloadspread")
RECHECK_SECONDS = 5.0
CUSTOM_RECHECK_SECONDS = 30.0
"""How often a custom target (not watched) is read again for its replicas."""
DELETION_COST_KINDS = frozenset({"ReplicaSet", "Deployment", "CloneSet"})
"""Target kinds whose pods get deletion costs (upstream's ``isEffectiveKindForDeletionCost``)."""


class WorkloadSpreadController(CacheController):
    """Reconciles WorkloadSpreads' subset accounting and their pods' deletion costs."""

    name = "workloadspread-controller"

    def __init__(
        self,
        kube: KubeClient,
        cache: CacheReader,
        *,
        workers: int = 3,
        recorder: EventRecorder | None = None,
        config_namespace: str = DEFAULT_NAMESPACE,
    ) -> None:
        super().__init__(kube, cache, workers=workers)
        self.recorder = recorder
        self.custom = CustomTargets(kube, config_namespace)

    def spec(self) -> ControllerSpec:
        """Woken by WorkloadSpreads, their pods and their target workloads."""
        return ControllerSpec(
            name=self.name,
            watches=(
                Watch(WORKLOADSPREADS, lambda obj: (f"{namespace(obj)}/{name(obj)}",)),
                Watch(PODS, self.pod_keys),
                *(Watch(res, self.workload_keys) for res in WORKLOADS),
            ),
            workers=self.workers,
        )

    def pod_keys(self, pod: KubeObject) -> Iterable[str]:
        matched = matched_of(pod)
        if matched is not None and matched.name:
            return (f"{namespace(pod)}/{matched.name}",)
        if not spec(pod).get("nodeName"):
            return ()
        target = self._target_of(pod)
        if target is None:
            return ()
        return [f"{namespace(pod)}/{name(w)}" for w in self._spreads_of(namespace(pod), target)]

    def _target_of(self, pod: KubeObject) -> TargetView | None:
        """The built-in workload of ``pod`` (:func:`~.podstep.target_of_pod`), else its controller
        (a custom target owns its pods directly: upstream finds them by the target's uid)."""
        ref = controller_ref(pod)
        if ref is None:
            return None
        replicaset = None
        if ref.get("kind") == "ReplicaSet":
            replicaset = self.cache.get(REPLICASETS, f"{namespace(pod)}/{ref.get('name')}")
        target = target_of_pod(pod, replicaset)
        if target is None and not is_builtin_kind(str(ref.get("kind") or "")):
            return {
                "apiVersion": str(ref.get("apiVersion")),
                "kind": str(ref.get("kind")),
                "name": str(ref.get("name")),
            }
        return target

    def _spreads_of(self, ns: str, target: TargetView) -> list[KubeObject]:
        return [
            w
            for w in self.cache.list(WORKLOADSPREADS)
            if namespace(w) == ns and same_target(cast(TargetView, mapping(spec(w).get("targetRef"))), target)
        ]

    async def _adopt(
        self, ws: KubeObject, target: TargetView, mine: Sequence[KubeObject], replicas: int
    ) -> list[KubeObject]:
        """Adopt the target's unmatched pods bound to a node (see the module doc); the adopted
        pods as patched."""
        ns, ws_name = namespace(ws), name(ws)
        ws_spec = cast(WorkloadSpreadView, ws).get("spec", {})
        subsets, target_filter = ws_spec.get("subsets") or [], ws_spec.get("targetFilter")
        candidates = sorted(
            (
                p
                for p in self.cache.list(PODS)
                if namespace(p) == ns
                and is_active(p)
                and spec(p).get("nodeName")
                and ((m := matched_of(p)) is None or m.name != ws_name)
                and (t := self._target_of(p)) is not None
                and same_target(t, target)
                and counts(target_filter, labels(p))
            ),
            key=name,
        )
        if not candidates:
            return []
        room = initial_room(ws_name, subsets, mine, replicas)
        adopted: list[KubeObject] = []
        for pod in candidates:
            node = await self.kube.get_or_none(NODES, str(spec(pod).get("nodeName")))
            subset = adopt(pod, node, subsets, room) if node is not None else None
            if subset is None:
                continue
            try:
                adopted.append(await self.kube.patch(PODS, name(pod), adoption_patch(ws, subset), ns))
            except NotFoundError:
                continue
        return adopted

    def workload_keys(self, workload: KubeObject) -> Iterable[str]:
        api_version = str(workload.get("apiVersion") or "")
        ref: TargetView = {
            "apiVersion": api_version,
            "kind": str(workload.get("kind") or ""),
            "name": name(workload),
        }
        return [f"{namespace(workload)}/{name(w)}" for w in self._spreads_of(namespace(workload), ref)]

    async def reconcile(self, key: str) -> Result:
        obj = self.cache.get(WORKLOADSPREADS, key)
        if obj is None:
            return Result()
        ws = cast(WorkloadSpreadView, obj)
        ns, ws_name = namespace(obj), name(obj)
        target = cast(TargetView, mapping(spec(obj).get("targetRef")))
        res = workload_resource(target)
        workload: KubeObject | None = (
            self.cache.get(res, f"{ns}/{target.get('name')}") if res is not None else None
        )
        replicas = 0
        target_filter = (ws.get("spec") or {}).get("targetFilter")
        try:
            if res is not None and workload is not None:
                replicas = target_replicas(res, workload, target_filter)
            elif res is None:
                workload, replicas = await self.custom.target(target, target_filter, ns)
            mine: list[KubeObject] = [
                p
                for p in self.cache.list(PODS)
                if namespace(p) == ns
                and (m := matched_of(p)) is not None
                and m.name == ws_name
                and counts(target_filter, labels(p))
            ]
            if workload is not None:
                mine.extend(await self._adopt(obj, target, mine, replicas))
        except (TargetFilterError, SelectorError) as err:
            log.warning("WorkloadSpread %s: targetFilter: %s", key, err)
            return Result(requeue_after=RECHECK_SECONDS)
        except ApiError as err:
            log.warning("WorkloadSpread %s: custom target not read: %s", key, err)
            return Result(requeue_after=RECHECK_SECONDS)
        kind = str(target.get("kind") or "")
        latest = self._latest_version(kind, workload) if workload is not None else None
        if workload is not None and latest is None:
            # upstream's GetWorkloadVersion: the Deployment's current ReplicaSet not seen yet
            log.info("WorkloadSpread %s: the latest version of its workload is not known yet", key)
            return Result(requeue_after=RECHECK_SECONDS)
        active = [p for p in mine if is_active(p)]
        subsets = (ws.get("spec") or {}).get("subsets") or []
        status = ws.get("status") or {}
        now = datetime.now(UTC)
        statuses = next_statuses(ws_name, subsets, status.get("subsetStatuses") or [], active, replicas, now)
        grouped = pods_by_subset(ws_name, subsets, active) if workload is not None else {}
        critical = critical_seconds(ws.get("spec") or {})
        adaptive = reschedule(statuses, grouped, critical, now)
        versioned = next_versioned_statuses(
            ws_name, subsets, status.get("versionedSubsetStatuses") or {}, active, replicas, now
        )
        by_version = pods_by_version(active)
        for version, entries in versioned.items():
            version_grouped = pods_by_subset(ws_name, subsets, by_version.get(version) or [])
            versioned[version] = reschedule(entries, version_grouped, critical, now).statuses
        wanted: dict[str, Any] = {
            **status,
            "observedGeneration": (obj.get("metadata") or {}).get("generation"),
            "subsetStatuses": adaptive.statuses,
        }
        wanted.pop("versionedSubsetStatuses", None)
        if versioned:
            wanted["versionedSubsetStatuses"] = versioned
        if wanted != dict(status):
            try:
                await self.kube.replace(WORKLOADSPREADS, {**obj, "status": wanted}, subresource="status")
            except NotFoundError:
                return Result()
            except ConflictError:
                return Result(requeue_after=0.5)
        await self._reschedule(obj, adaptive)
        if workload is not None and target.get("kind") in DELETION_COST_KINDS:
            await self._deletion_costs(ws_name, subsets, active, replicas, str(latest), ns)
        waiting = any(
            s.get("creatingPods") or s.get("deletingPods")
            for s in [*adaptive.statuses, *(e for entries in versioned.values() for e in entries)]
        )
        custom = CUSTOM_RECHECK_SECONDS if res is None and workload is not None else None
        waits = [
            w for w in (RECHECK_SECONDS if waiting else None, adaptive.check_after, custom) if w is not None
        ]
        return Result(requeue_after=min(waits) if waits else None)

    def _latest_version(self, kind: str, workload: KubeObject) -> str | None:
        """The target's latest revision (:func:`~.versions.workload_version`; a Deployment's
        ReplicaSets from the cache)."""
        ns = namespace(workload)
        replicasets = (
            [rs for rs in self.cache.list(REPLICASETS) if namespace(rs) == ns] if kind == "Deployment" else []
        )
        return workload_version(kind, workload, replicasets)

    async def _deletion_costs(
        self,
        ws_name: str,
        subsets: list[SubsetView],
        active: list[KubeObject],
        replicas: int,
        latest: str,
        ns: str,
    ) -> None:
        """Patch each active pod's ``pod-deletion-cost`` where it differs: per revision, an old
        revision's with the subsets reversed (upstream's ``updateDeletionCost``)."""
        for version, pods in pods_by_version(active).items():
            grouped = pods_by_subset(ws_name, subsets, pods)
            orphans = orphaned_pods(ws_name, subsets, pods)
            costs = deletion_costs(subsets, grouped, replicas, orphans, reverse=version != latest)
            for pod_name, cost in costs.items():
                pod = next(p for p in pods if name(p) == pod_name)
                if annotations_of(pod).get(DELETION_COST_ANNOTATION) != str(cost):
                    patch = {"metadata": {"annotations": {DELETION_COST_ANNOTATION: str(cost)}}}
                    with contextlib.suppress(NotFoundError):
                        await self.kube.patch(PODS, pod_name, patch, ns)

    async def _reschedule(self, ws: KubeObject, adaptive: Rescheduled) -> None:
        """Delete the schedule-failed pods (their replacements skip the now unschedulable
        subset) and announce the subsets that recovered, as upstream's ``cleanupUnscheduledPods``."""
        ns = namespace(ws)
        for subset in adaptive.recovered:
            recovered = "is recovered from unschedulable to schedulable"
            message = f"Subset {subset} of WorkloadSpread {ns}/{name(ws)} {recovered}"
            self._event(ws, "Normal", "RecoverSchedulable", message)
        for subset, pods in adaptive.failed.items():
            for pod in pods:
                try:
                    await self.kube.delete(PODS, pod, ns, missing_ok=True)
                except ConflictError:
                    continue
                log.info(
                    "WorkloadSpread %s/%s deleted unschedulable pod %s of subset %s",
                    ns,
                    name(ws),
                    pod,
                    subset,
                )

    def _event(self, ws: KubeObject, type_: str, reason: str, message: str) -> None:
        if self.recorder is not None:
            self.recorder.event(ws, type_, reason, message)
