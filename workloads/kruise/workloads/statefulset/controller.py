"""The Advanced StatefulSet controller shell: observe (cache), decide (:func:`~.plan.plan`), act,
write status once. Upstream's ``statefulset-controller`` (``ReconcileStatefulSet``):

1. the set from the cache; gone -> drop its expectations and counters;
2. wait while scale expectations (pods created or deleted, by name) are unmet, or a patched
   pod or revision is not yet in the cache at the resourceVersion written;
3. claim pods (``ClaimPods``): adopt orphans named ``<set>-<n>`` that match the selector,
   release owned pods that no longer match or are not named after the set;
4. revisions: reuse / bump / create the update revision (:class:`~kruise.workloads.history.History`);
5. image pre-download for the update revision (gate ``PreDownloadImageForInPlaceUpdate``);
   plan, execute the scale actions, refresh every live pod (in-place bookkeeping, lifecycle),
   then the update actions unless the round ended or a refresh wrote something;
6. status (with ``FailedCreatePod``/``FailedUpdatePod`` conditions of this round), history
   truncation, requeue after the soonest time-based change.

Pods are read from the process' shared pod informer: owned ones by the ``owner-uid`` index,
orphans by the ``statefulset-orphan`` index (``<namespace>/<parent name>`` of pods without a
controller); PVCs by name.
"""

from __future__ import annotations

import contextlib
import datetime
import logging
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from kruise.core.errors import KruiseError, NotFoundError
from kruise.core.events import EventRecorder
from kruise.core.expectations import ResourceVersionExpectations, ScaleAction, ScaleExpectations
from kruise.core.informer import Delta, EventType
from kruise.core.informer.store import JSON
from kruise.core.kube.client import KubeClient
from kruise.core.kube.resources import CONTROLLER_REVISIONS, PODS, PVCS, STATEFULSETS
from kruise.core.metrics import STATEFULSET_IN_PLACE_UPDATE_DURATION, forget_statefulset
from kruise.core.runtime import OWNER_UID, CacheReader, ControllerSpec, Watch, owned, owner_key, primary
from kruise.core.runtime.spec import controller_ref, index_by_owner_uid
from kruise.core.workqueue import Result
from kruise.workloads.controllerbase import merge_status
from kruise.workloads.history import History
from kruise.workloads.inplace import in_place_update_seconds
from kruise.workloads.inplace.writer import PodWriter, RefreshResult
from kruise.workloads.objects import KubeObject, is_being_deleted, mapping, metadata, name, namespace
from kruise.workloads.objects import spec as spec_of
from kruise.workloads.objects import status as status_of
from kruise.workloads.objects import uid as uid_of
from kruise.workloads.predownloader import PreDownloader
from kruise.workloads.requeue import soonest
from kruise.workloads.revisions import sort_revisions
from kruise.workloads.selector import SelectorError
from kruise.workloads.statefulset.claiming import claim_patches
from kruise.workloads.statefulset.executor import Executor, Outcome
from kruise.workloads.statefulset.identity import (
    STATEFULSET_KIND,
    claim_name,
    ordinal_of,
    parent_and_ordinal,
    replica_range,
)
from kruise.workloads.statefulset.plan import plan
from kruise.workloads.statefulset.round import Options, World
from kruise.workloads.statefulset.statuswrite import status_patch

__all__ = ["ORPHAN_PARENT", "StatefulSetController", "StatefulSetOptions", "StatefulSetSyncError"]

log = logging.getLogger(__name__)
ORPHAN_PARENT = "statefulset-orphan"
"""Pod index: ``<namespace>/<parent>`` of a pod without controller whose name is ``<parent>-<n>``."""
RECONCILE_PACE = 1.0
RECONCILE_MAX_PACE = 0.5


def index_orphan_parent(pod: JSON) -> tuple[str, ...]:
    if controller_ref(pod) is not None:
        return ()
    parent, ordinal = parent_and_ordinal(name(pod))
    return (f"{namespace(pod)}/{parent}",) if ordinal >= 0 else ()


def _pod_keys(pod: JSON) -> Iterable[str]:
    key = owner_key(pod, STATEFULSETS)
    if key is not None:
        return (key,)
    return index_orphan_parent(pod)


def _claim_keys(claim: JSON) -> Iterable[str]:
    """Sets a claim ``<template>-<set>-<n>`` may belong to: every dash-separated suffix of
    ``<template>-<set>`` (names with dashes make the split ambiguous; waking a set that does
    not exist costs one cache lookup)."""
    prefix, ordinal = parent_and_ordinal(name(claim))
    if ordinal < 0:
        return ()
    parts = prefix.split("-")
    return tuple(f"{namespace(claim)}/{'-'.join(parts[i:])}" for i in range(1, len(parts)))


@dataclass(frozen=True)
class StatefulSetOptions:
    """Controller settings (kruise-manager flags and feature gates)."""

    workers: int = 3
    expectation_timeout: float = 300.0
    gates: Options = field(default_factory=Options)
    pre_download: bool = False  # gate PreDownloadImageForInPlaceUpdate (and KruiseDaemon)


class StatefulSetSyncError(KruiseError):
    """A round stopped at an error; the key is retried with backoff."""


def _now() -> datetime.datetime:
    return datetime.datetime.now(datetime.UTC)


class StatefulSetController:
    """Reconciles Advanced StatefulSets; one instance per manager, its expectations are its own."""

    name = "statefulset-controller"

    def __init__(
        self, kube: KubeClient, recorder: EventRecorder, cache: CacheReader, options: StatefulSetOptions
    ) -> None:
        self.kube = kube
        self.recorder = recorder
        self.cache = cache
        self.options = options
        self.scale_expectations = ScaleExpectations(timeout=options.expectation_timeout)
        self.rv_expectations = ResourceVersionExpectations(timeout=options.expectation_timeout)
        self.writer = PodWriter(kube, self.rv_expectations)
        self.history = History(kube, STATEFULSET_KIND, self.rv_expectations, self._patch_status)
        self.executor = Executor(kube, recorder, self.writer, self.scale_expectations)
        self.predownloader = PreDownloader(
            kube,
            recorder,
            cache,
            self.rv_expectations,
            STATEFULSETS,
            enabled=options.pre_download,
            env_from_metadata=options.gates.env_from_metadata,
        )

    def spec(self) -> ControllerSpec:
        """Woken by StatefulSets, the pods they own or may adopt, their ControllerRevisions and
        claims named after them; paced per key like the CloneSet."""
        pods = Watch(
            PODS,
            _pod_keys,
            {OWNER_UID: index_by_owner_uid, ORPHAN_PARENT: index_orphan_parent},
            observe=self._pod_event,
        )
        return ControllerSpec(
            name=self.name,
            watches=(
                primary(STATEFULSETS),
                pods,
                owned(CONTROLLER_REVISIONS, STATEFULSETS),
                Watch(PVCS, _claim_keys),
                *self.predownloader.watches(),
            ),
            workers=self.options.workers,
            pace=RECONCILE_PACE,
            max_pace=RECONCILE_MAX_PACE,
        )

    def _pod_event(self, delta: Delta) -> None:
        key = owner_key(delta.obj, STATEFULSETS)
        if key is None:
            return
        if delta.type is EventType.DELETED or metadata(delta.obj).get("deletionTimestamp"):
            self.scale_expectations.forget(key, ScaleAction.DELETE, name(delta.obj))
        else:
            self.scale_expectations.forget(key, ScaleAction.CREATE, name(delta.obj))

    # ------------------------------------------------------------------ reconcile
    async def reconcile(self, key: str) -> Result:
        sts = self.cache.get(STATEFULSETS, key)
        if sts is None:
            self.scale_expectations.delete(key)
            forget_statefulset(*key.split("/", 1))
            return Result()
        owned_pods = self.cache.by_index(PODS, OWNER_UID, uid_of(sts))
        present = {name(p): p for p in owned_pods}
        satisfaction = self.scale_expectations.check(
            key, lambda n: n in present and not is_being_deleted(present[n])
        )
        if not satisfaction.satisfied and not self.scale_expectations.timed_out(satisfaction):
            return Result(requeue_after=min(5.0, self.scale_expectations.timeout - satisfaction.waited))
        pods = await self._claim_pods(sts, owned_pods, self.cache.by_index(PODS, ORPHAN_PARENT, key))
        if pods is None:
            return Result(requeue_after=0.5)
        revisions = sort_revisions(self.cache.by_index(CONTROLLER_REVISIONS, OWNER_UID, uid_of(sts)))
        for obj in (*pods, *revisions):
            if not self.rv_expectations.caught_up(obj):
                return Result(requeue_after=1.0)
        update_rev, collision = await self.history.ensure_update_revision(sts, revisions)
        if update_rev is None:
            return Result(requeue_after=0.5)
        by_name = {name(r): r for r in revisions}
        by_name.setdefault(name(update_rev), update_rev)
        current_rev = by_name.get(str(status_of(sts).get("currentRevision") or ""), update_rev)
        now = _now()
        await self.predownloader.sync(sts, current_rev, update_rev)
        world = World(
            sts,
            pods,
            self._claims(sts, pods),
            current_rev,
            update_rev,
            sort_revisions(by_name.values()),
            collision,
            now,
        )
        decided = plan(world, self.options.gates)
        outcome = await self.executor.run(sts, key, decided.scale, now)
        refreshed = await self._refresh(sts, pods, name(update_rev), now)
        status = decided.status_without_update
        requeue = soonest(decided.requeue_after, *(r.requeue_after for r in refreshed))
        errors = [*decided.errors, *outcome.errors, *(r.error for r in refreshed if r.error)]
        if not decided.scale_exit and not outcome.errors and not any(r.modified for r in refreshed):
            updated = await self.executor.run(sts, key, decided.update, now)
            status = decided.status
            errors.extend(updated.errors)
            outcome.failed_update = outcome.failed_update or updated.failed_update
        await self._write_status(sts, status, outcome, now)
        await self.history.truncate(sts, pods, revisions, str(status["currentRevision"]), name(update_rev))
        if errors:
            raise StatefulSetSyncError(f"{key}: {'; '.join(errors)}")
        return Result(requeue_after=requeue)

    async def _claim_pods(
        self, sts: KubeObject, owned_pods: Sequence[KubeObject], orphans: Sequence[KubeObject]
    ) -> list[KubeObject] | None:
        """``ClaimPods``: the pods this set manages, after adopting and releasing; ``None`` when
        an ownership write went out (look again once the cache shows it)."""
        try:
            patches = claim_patches(sts, owned_pods, orphans)
        except SelectorError:
            return [p for p in owned_pods if parent_and_ordinal(name(p))[0] == name(sts)]
        if patches.adopt and not await self._can_adopt(sts):
            patches = patches.without_adoptions()
        for pod, refs in (*patches.adopt, *patches.release):
            body = {
                "metadata": {"ownerReferences": refs, "resourceVersion": metadata(pod).get("resourceVersion")}
            }
            with contextlib.suppress(NotFoundError):
                result = await self.kube.patch(PODS, name(pod), body, namespace(pod), patch_type="merge")
                self.rv_expectations.expect_written(result)
        if patches.adopt or patches.release:
            return None
        return patches.claimed

    async def _can_adopt(self, sts: KubeObject) -> bool:
        """``RecheckDeletionTimestamp``: the live set is the same object and not being deleted."""
        fresh = await self.kube.get_or_none(STATEFULSETS, name(sts), namespace(sts))
        return fresh is not None and uid_of(fresh) == uid_of(sts) and not is_being_deleted(fresh)

    def _claims(self, sts: KubeObject, pods: Sequence[KubeObject]) -> dict[str, KubeObject]:
        """The PVCs the round may look at (every claim template for every replica and pod)."""
        ordinals = set(replica_range(sts, start_ordinal_gate=self.options.gates.start_ordinal).ordinals())
        ordinals.update(o for o in map(ordinal_of, pods) if o >= 0)
        found: dict[str, KubeObject] = {}
        for template in spec_of(sts).get("volumeClaimTemplates") or ():
            template_name = str(mapping(mapping(template).get("metadata")).get("name") or "")
            for ordinal in ordinals:
                claim = claim_name(template_name, name(sts), ordinal)
                obj = self.cache.get(PVCS, f"{namespace(sts)}/{claim}")
                if obj is not None:
                    found[claim] = obj
        return found

    async def _refresh(
        self, sts: KubeObject, pods: Sequence[KubeObject], update_revision: str, now: datetime.datetime
    ) -> list[RefreshResult]:
        """Refresh every live pod (``refreshPodState``); observe finished in-place updates."""
        if is_being_deleted(sts):
            return []
        live = (p for p in pods if not is_being_deleted(p) and mapping(p.get("status")).get("phase"))
        results: list[RefreshResult] = []
        for pod, result in await self.writer.refresh_all(
            sts, live, update_revision, now, normal_needs_node=False
        ):
            if result.in_place_completed:
                seconds = in_place_update_seconds(pod, now)
                if seconds is not None:
                    STATEFULSET_IN_PLACE_UPDATE_DURATION.observe(seconds)
            results.append(result)
        return results

    async def _write_status(
        self, sts: KubeObject, status: dict[str, Any], outcome: Outcome, now: datetime.datetime
    ) -> None:
        patch = status_patch(status_of(sts), status, outcome.failed_create, outcome.failed_update, now)
        if patch is not None:
            await self._patch_status(sts, patch)

    async def _patch_status(self, sts: KubeObject, patch: dict[str, Any]) -> None:
        await merge_status(self.kube, STATEFULSETS, sts, patch)
