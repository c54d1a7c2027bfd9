"""The PodUnavailableBudget controller (shell over :mod:`.budget` and :mod:`.targets`).

Upstream's ``podunavailablebudget-controller`` (``--podunavailablebudget-workers``, 3): for each
PUB it finds its pods and expected count, writes ``kruise.io/related-pub: <pub>`` on those pods
lacking it (the pod webhook's scope and lookup key; upstream's pod mutating webhook also sets it at
creation, here the controller does it as the pod appears, before it can be ready; unlike upstream
it also takes over a pod whose annotation names a PUB since deleted, which upstream leaves
unprotected by the new one), then writes the
status :func:`~.budget.decide_status` computes, conflict-checked against the webhook's spending
(:mod:`.store`), and requeues when the earliest recorded pod expires. Events as upstream:
``NoPods`` (no matching pods), ``CalculateExpectedPodCountFailed``, ``NotDeleted`` on a pod that
outlived its disruption.

Woken by the PUB, by pod events that change a pod's availability (or add or remove a pod), and by
a targeted workload created, deleted or rescaled (upstream's ``SetEnqueueRequestForPUB``, so a
scale-down is not blocked by a budget computed for more replicas).
"""

from __future__ import annotations

import datetime
import logging
from collections.abc import Callable, Iterable
from typing import cast

from kruise.core.api.base import IntOrPercentError
from kruise.core.events import EventRecorder
from kruise.core.informer.store import JSON, Delta, EventType
from kruise.core.kube import KubeClient
from kruise.core.kube.resources import PODS, REPLICASETS
from kruise.core.runtime import (
    OWNER_UID,
    CacheReader,
    ControllerSpec,
    Read,
    Watch,
    index_by_owner_uid,
    primary,
)
from kruise.core.workqueue import Result
from kruise.workloads.api.podunavailablebudget import PUBS, RELATED_PUB_ANNOTATION, PubSpecView, PubStatusView
from kruise.workloads.objects import annotations_of, labels, metadata, name, namespace, spec
from kruise.workloads.podunavailablebudget.budget import Records, decide_status, is_pod_available
from kruise.workloads.podunavailablebudget.scope import EvictionScope
from kruise.workloads.podunavailablebudget.store import StatusWriter, status_of
from kruise.workloads.podunavailablebudget.targets import WORKLOADS, pods_and_expected, workload_of
from kruise.workloads.podunavailablebudget.validation import api_group
from kruise.workloads.selector import SelectorError, selector_matches

__all__ = ["NAMESPACE_INDEX", "PodUnavailableBudgetController"]

log = logging.getLogger("kruise.podunavailablebudget")
NAMESPACE_INDEX = "pub-pod-namespace"
"""Pods by namespace (a selector PUB scans its namespace's pods)."""
WORKERS = 3


def _index_namespace(pod: JSON) -> tuple[str, ...]:
    return (namespace(pod),)


def _availability_changed(delta: Delta) -> bool:
    """Pod added or gone, deletion started, availability flipped, or the annotation missing."""
    if delta.type is not EventType.MODIFIED or delta.old is None:
        return True
    old, new = delta.old, delta.obj
    if bool(metadata(old).get("deletionTimestamp")) != bool(metadata(new).get("deletionTimestamp")):
        return True
    if not annotations_of(new).get(RELATED_PUB_ANNOTATION):
        return True
    return is_pod_available(old) != is_pod_available(new)


def _replicas_changed(delta: Delta) -> bool:
    if delta.type is not EventType.MODIFIED or delta.old is None:
        return True
    return spec(delta.old).get("replicas") != spec(delta.obj).get("replicas")


class PodUnavailableBudgetController:
    """Keeps each PUB's status and its pods' ``kruise.io/related-pub`` (module docstring)."""

    name = "podunavailablebudget-controller"

    def __init__(
        self,
        kube: KubeClient,
        recorder: EventRecorder,
        cache: CacheReader,
        *,
        scope: EvictionScope | None = None,
        workers: int = WORKERS,
        clock: Callable[[], datetime.datetime] = lambda: datetime.datetime.now(datetime.UTC),
    ) -> None:
        self.kube = kube
        self.recorder = recorder
        self.cache = cache
        self.scope = scope
        self.workers = workers
        self.clock = clock
        self.writer = StatusWriter(kube)

    def spec(self) -> ControllerSpec:
        pods = Watch(
            PODS,
            self._pubs_for_pod,
            {OWNER_UID: index_by_owner_uid, NAMESPACE_INDEX: _index_namespace},
            accept=_availability_changed,
        )
        workloads = tuple(
            Watch(res, self._pubs_for_workload, {OWNER_UID: index_by_owner_uid}, accept=_replicas_changed)
            for res in WORKLOADS
            if res is not REPLICASETS
        )
        return ControllerSpec(
            name=self.name,
            watches=(primary(PUBS), pods, *workloads),
            reads=(Read(REPLICASETS, {OWNER_UID: index_by_owner_uid}),),
            workers=self.workers,
        )

    # ------------------------------------------------------------------ event mapping

    def _pubs_in(self, ns: str) -> list[JSON]:
        return [p for p in self.cache.list(PUBS) if namespace(p) == ns]

    def _matching(
        self, ns: str, pod_labels: dict[str, str] | None, ref: tuple[str, str, str] | None
    ) -> list[str]:
        keys = []
        for pub in self._pubs_in(ns):
            target = spec(pub).get("targetRef")
            if target is not None:
                if (
                    ref is not None
                    and (
                        api_group(str(target.get("apiVersion") or "")),
                        target.get("kind"),
                        target.get("name"),
                    )
                    == ref
                ):
                    keys.append(f"{ns}/{name(pub)}")
                continue
            selector = spec(pub).get("selector")
            if not selector or not (selector.get("matchLabels") or selector.get("matchExpressions")):
                continue
            try:
                if pod_labels is not None and selector_matches(selector, pod_labels):
                    keys.append(f"{ns}/{name(pub)}")
            except SelectorError:
                continue
        return keys

    def _pubs_for_pod(self, pod: JSON) -> Iterable[str]:
        related = annotations_of(pod).get(RELATED_PUB_ANNOTATION)
        if related:
            return (f"{namespace(pod)}/{related}",)
        found = workload_of(self.cache, pod)
        ref = None
        if found is not None:
            res, workload = found
            ref = (res.group, res.kind, name(workload))
        return self._matching(namespace(pod), dict(labels(pod)), ref)

    def _pubs_for_workload(self, workload: JSON) -> Iterable[str]:
        group = api_group(str(workload.get("apiVersion") or "")) or ""
        template_labels = dict(
            ((spec(workload).get("template") or {}).get("metadata") or {}).get("labels") or {}
        )
        return self._matching(
            namespace(workload), template_labels, (group, str(workload.get("kind")), name(workload))
        )

    # ------------------------------------------------------------------ reconcile

    async def reconcile(self, key: str) -> Result | None:
        pub = self.cache.get(PUBS, key)
        if pub is None or metadata(pub).get("deletionTimestamp"):
            return None
        ns = namespace(pub)
        pods, expected = pods_and_expected(self.cache, pub, self.cache.by_index(PODS, NAMESPACE_INDEX, ns))
        if not pods:
            self.recorder.event(pub, "Normal", "NoPods", "No matching pods found")
        for pod in pods:
            related = annotations_of(pod).get(RELATED_PUB_ANNOTATION)
            if related == name(pub):
                continue
            if related and self.cache.get(PUBS, f"{ns}/{related}") is not None:
                continue  # another live PUB's (overlapping budgets are refused; the first keeps it)
            patch = {"metadata": {"annotations": {RELATED_PUB_ANNOTATION: name(pub)}}}
            await self.kube.patch(PODS, name(pod), patch, ns)
        if self.scope is not None:
            await self.scope.ensure()
        now = self.clock()
        outcome: list[Records] = []

        def compute(current: JSON) -> PubStatusView | None:
            status, records = decide_status(
                cast(PubSpecView, spec(current)),
                int(metadata(current).get("generation") or 0),
                pods,
                expected,
                status_of(current),
                now,
            )
            outcome[:] = [records]
            return None if dict(status) == dict(status_of(current)) else status

        try:
            written = await self.writer.update(ns, name(pub), compute, first=pub)
        except IntOrPercentError as err:
            message = f"Failed to calculate the number of expected pods: {err}"
            self.recorder.event(pub, "Warning", "CalculateExpectedPodCountFailed", message)
            return None
        if written is None or not outcome:
            return None
        records = outcome[0]
        for pod in pods:
            if name(pod) in records.not_deleted:
                message = f"Pod was expected by PUB {ns}/{name(pub)} to be deleted but it wasn't"
                self.recorder.event(pod, "Warning", "NotDeleted", message)
        if records.recheck_at is not None:
            return Result(requeue_after=max(0.0, (records.recheck_at - now).total_seconds()) + 0.1)
        return None
