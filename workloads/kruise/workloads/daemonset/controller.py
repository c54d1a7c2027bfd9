"""The Advanced DaemonSet controller shell: observe (cache), decide (:func:`~.plan.plan`), act,
write status once. Upstream's ``daemonset-controller`` (``ReconcileDaemonSet.syncDaemonSet``):

1. the DaemonSet from the cache; gone -> drop its expectations, backoffs and counters; an empty
   selector selects nothing (``SelectingAll`` warning);
2. revisions: reuse / bump / create the update revision (:class:`~kruise.workloads.history.History`);
3. while scale expectations (pods created or deleted, by name) are unmet, or a patched pod or
   revision is not yet in the cache at the resourceVersion written: status only, look again;
4. plan over every Node and the DaemonSet's pods; a Manage plan (creations, deletions, hooks)
   is executed and the round ends (its results must show in the cache first); otherwise every
   live pod is refreshed (in-place bookkeeping, lifecycle) and the rolling update executed;
5. history truncation, status (``observedGeneration`` only when the round got past its
   expectations, as ``updateObservedGen``), requeue after the soonest time-based change.

Nodes have their own informer; a node event wakes the DaemonSets it matters to
(:meth:`DaemonSetController.node_keys`, upstream's ``nodeEventHandler``): a new node that should
run a DaemonSet's pod, an update that changes whether it should (or may keep one, or matches
``rollingUpdate.selector``), heartbeats never, and a deleted node every DaemonSet with a pod
there (so the status follows at once). Pods are read from the shared pod informer by owner UID.
"""

from __future__ import annotations

import datetime
import logging
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from kruise.core.errors import KruiseError
from kruise.core.events import WARNING, EventRecorder
from kruise.core.expectations import ResourceVersionExpectations, ScaleAction, ScaleExpectations
from kruise.core.informer import Delta, EventType
from kruise.core.kube.client import KubeClient
from kruise.core.kube.resources import CONTROLLER_REVISIONS, DAEMONSETS, NODES, PODS
from kruise.core.metrics import DAEMONSET_IN_PLACE_UPDATE_DURATION, forget_daemonset
from kruise.core.runtime import OWNER_UID, CacheReader, ControllerSpec, Watch, owned, owner_key, primary
from kruise.core.workqueue import Result
from kruise.workloads.controllerbase import merge_status
from kruise.workloads.daemonset.backoff import FailedPodBackoff
from kruise.workloads.daemonset.daemonpods import DAEMONSET_KIND, canonical
from kruise.workloads.daemonset.nodes import daemon_pod_spec, node_fit
from kruise.workloads.daemonset.plan import Phase, Plan, plan
from kruise.workloads.daemonset.status import status_patch
from kruise.workloads.daemonset.strategy import StrategyError, node_update_selector
from kruise.workloads.daemonset.sync import Syncer
from kruise.workloads.history import History
from kruise.workloads.inplace import in_place_update_seconds
from kruise.workloads.inplace.writer import PodWriter
from kruise.workloads.nodepredicates import is_heartbeat_only
from kruise.workloads.objects import KubeObject, is_being_deleted, labels, mapping, metadata, name, spec, uid
from kruise.workloads.objects import namespace as namespace_of
from kruise.workloads.requeue import soonest
from kruise.workloads.revisions import sort_revisions
from kruise.workloads.selector import SelectorError, selector_matches

__all__ = ["DaemonSetController", "DaemonSetOptions", "DaemonSetSyncError"]

log = logging.getLogger(__name__)
RECONCILE_PACE = 1.0
RECONCILE_MAX_PACE = 0.5
"""A DaemonSet is reconciled again no sooner than its last reconcile took (see ``WorkQueue.pace``)."""


@dataclass(frozen=True)
class DaemonSetOptions:
    """Controller settings (kruise-manager flags)."""

    workers: int = 3  # --daemonset-workers
    expectation_timeout: float = 300.0
    assign_pods_by_scheduler: bool = True  # --assign-pods-by-scheduler


class DaemonSetSyncError(KruiseError):
    """A round met errors; the key is retried with backoff."""


def _now() -> datetime.datetime:
    return datetime.datetime.now(datetime.UTC)


def _selects_node(ds: KubeObject, node: KubeObject) -> bool:
    """``NodeShouldUpdateBySelector``: a non-empty ``rollingUpdate.selector`` matches the node."""
    selector = node_update_selector(ds)
    if not selector or not (selector.get("matchLabels") or selector.get("matchExpressions")):
        return False
    try:
        return selector_matches(selector, labels(node))
    except SelectorError:
        return False


class DaemonSetController:
    """Reconciles Advanced DaemonSets; one instance per manager, its expectations are its own."""

    name = "daemonset-controller"

    def __init__(
        self, kube: KubeClient, recorder: EventRecorder, cache: CacheReader, options: DaemonSetOptions
    ) -> None:
        self.kube = kube
        self.recorder = recorder
        self.cache = cache
        self.options = options
        self.scale_expectations = ScaleExpectations(timeout=options.expectation_timeout)
        self.rv_expectations = ResourceVersionExpectations(timeout=options.expectation_timeout)
        self.writer = PodWriter(kube, self.rv_expectations)
        self.history = History(kube, DAEMONSET_KIND, self.rv_expectations, self._patch_status)
        self.syncer = Syncer(
            kube, recorder, self.writer, self.scale_expectations, options.assign_pods_by_scheduler
        )
        self.backoff = FailedPodBackoff()

    def spec(self) -> ControllerSpec:
        """Woken by DaemonSets, their pods and ControllerRevisions (indexed by owner UID) and the
        node events that matter to them; paced per key like the CloneSet."""
        return ControllerSpec(
            name=self.name,
            watches=(
                primary(DAEMONSETS),
                owned(PODS, DAEMONSETS, observe=self._pod_event),
                owned(CONTROLLER_REVISIONS, DAEMONSETS),
                Watch(NODES, lambda _: (), delta_keys=self.node_keys),
            ),
            workers=self.options.workers,
            pace=RECONCILE_PACE,
            max_pace=RECONCILE_MAX_PACE,
        )

    def _pod_event(self, delta: Delta) -> None:
        key = owner_key(delta.obj, DAEMONSETS)
        if key is None:
            return
        if delta.type is EventType.DELETED or metadata(delta.obj).get("deletionTimestamp"):
            self.scale_expectations.forget(key, ScaleAction.DELETE, name(delta.obj))
        else:
            self.scale_expectations.forget(key, ScaleAction.CREATE, name(delta.obj))

    def node_keys(self, delta: Delta) -> Iterable[str]:
        """The DaemonSets a node event matters to (``nodeEventHandler``)."""
        node, old = delta.obj, delta.old
        if delta.type is EventType.MODIFIED and old is not None and is_heartbeat_only(old, node):
            return ()
        keys: list[str] = []
        for ds in self.cache.list(DAEMONSETS):
            pod_spec = daemon_pod_spec(mapping(mapping(spec(ds).get("template")).get("spec")))
            fit = node_fit(pod_spec, node)
            if delta.type is EventType.ADDED:
                wake = fit.should_run
            elif delta.type is EventType.DELETED or old is None:
                wake = fit.should_continue_running
            else:
                wake = fit != node_fit(pod_spec, old) or _selects_node(ds, node) != _selects_node(ds, old)
            if wake:
                keys.append(f"{namespace_of(ds)}/{name(ds)}")
        return keys

    # ------------------------------------------------------------------ reconcile
    async def reconcile(self, key: str) -> Result:
        ds = self.cache.get(DAEMONSETS, key)
        if ds is None:
            self.scale_expectations.delete(key)
            forget_daemonset(*key.split("/", 1))
            return Result()
        if is_being_deleted(ds):
            return Result()
        ds = canonical(ds)
        selector = mapping(spec(ds).get("selector"))
        if not selector.get("matchLabels") and not selector.get("matchExpressions"):
            message = "This DaemonSet is selecting all pods. A non-empty selector is required."
            self.recorder.event(ds, WARNING, "SelectingAll", message)
            return Result()
        revisions = sort_revisions(self.cache.by_index(CONTROLLER_REVISIONS, OWNER_UID, uid(ds)))
        update_rev, _ = await self.history.ensure_update_revision(ds, revisions)
        if update_rev is None:
            return Result(requeue_after=0.5)
        revisions = sort_revisions([*(r for r in revisions if name(r) != name(update_rev)), update_rev])
        pods = self.cache.by_index(PODS, OWNER_UID, uid(ds))
        now = _now()
        self.backoff.gc(now)
        try:
            decided = plan(ds, self.cache.list(NODES), pods, revisions, now, backoff=self.backoff.entries(ds))
        except StrategyError as err:
            self.recorder.event(ds, WARNING, "FailedUpdate", str(err))
            raise DaemonSetSyncError(f"{key}: {err}") from err
        waiting = self._waiting(key, pods, revisions)
        if waiting is not None:
            await self._write_status(ds, decided, observe_generation=False)
            return Result(requeue_after=waiting)
        for node in decided.backoff_next:
            self.backoff.step(ds, node, now)
        by_name = {name(p): p for p in pods}
        if decided.changes:
            log.debug("%s: %s round at %s: %s", key, decided.phase, decided.hash, decided)
        outcome = await self.syncer.run(ds, key, decided, by_name, now)
        requeue = decided.requeue_after
        errors = list(outcome.errors)
        if decided.phase is not Phase.MANAGE:
            refreshed = await self._refresh(ds, pods, decided.hash, now)
            errors += [e for e, _ in refreshed if e]
            requeue = soonest(requeue, *(r for _, r in refreshed))
            await self.history.truncate(ds, pods, revisions, name(update_rev), name(update_rev))
        await self._write_status(ds, decided, observe_generation=decided.phase is not Phase.MANAGE)
        if errors:
            raise DaemonSetSyncError(f"{key}: {'; '.join(errors)}")
        return Result(requeue_after=requeue)

    def _waiting(self, key: str, pods: Sequence[KubeObject], revisions: Sequence[KubeObject]) -> float | None:
        """Seconds to wait while the cache does not show this controller's writes yet, else None."""
        present = {name(p): p for p in pods}
        satisfaction = self.scale_expectations.check(
            key, lambda n: n in present and not is_being_deleted(present[n])
        )
        if not satisfaction.satisfied and not self.scale_expectations.timed_out(satisfaction):
            return min(5.0, self.scale_expectations.timeout - satisfaction.waited)
        for obj in (*pods, *revisions):
            if not self.rv_expectations.caught_up(obj):
                return 1.0
        return None

    async def _refresh(
        self, ds: KubeObject, pods: Sequence[KubeObject], hash_value: str, now: datetime.datetime
    ) -> list[tuple[str | None, float | None]]:
        """Refresh every live pod (``refreshUpdateStates`` and lifecycle); observe finished
        in-place updates. Returns each pod's (error, requeue)."""
        live = (p for p in pods if not is_being_deleted(p) and mapping(p.get("status")).get("phase"))
        results: list[tuple[str | None, float | None]] = []
        for pod, result in await self.writer.refresh_all(ds, live, hash_value, now):
            if result.in_place_completed:
                seconds = in_place_update_seconds(pod, now)
                if seconds is not None:
                    DAEMONSET_IN_PLACE_UPDATE_DURATION.observe(seconds)
            results.append((result.error, result.requeue_after))
        return results

    async def _write_status(self, ds: KubeObject, decided: Plan, *, observe_generation: bool) -> None:
        patch = status_patch(ds, decided.counts, decided.hash, observe_generation=observe_generation)
        if patch is not None:
            await self._patch_status(ds, patch)

    async def _patch_status(self, ds: KubeObject, patch: dict[str, Any]) -> None:
        await merge_status(self.kube, DAEMONSETS, ds, patch)
