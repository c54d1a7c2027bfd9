"""The CloneSet controller shell: observe (cache), decide (pure core), act, persist status once.

Reconcile order follows OpenKruise's ``doReconcile``/``syncCloneSet``:

1. the CloneSet from the cache; gone -> drop its expectations;
2. wait while scale expectations are unsatisfied (or until they time out) and while
   any pod's resourceVersion expectation is unmet;
3. active owned pods, PVCs and ControllerRevisions from the cache;
4. revisions: reuse / bump (rollback) / create the update revision, bumping
   ``collisionCount`` on a hash clash;
5. image pre-download for the update revision (gate ``PreDownloadImageForInPlaceUpdate``);
   Scale; only when it changed nothing, refresh and Update;
6. status (only when it changed), ``podsToDelete`` truncation, history truncation;
7. requeue after the shortest pending delay (grace periods, ``minReadySeconds``).
"""

from __future__ import annotations

import datetime
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from kruise.core.errors import KruiseError, NotFoundError, ReportedError
from kruise.core.events import WARNING, EventRecorder
from kruise.core.expectations import ResourceVersionExpectations, ScaleAction, ScaleExpectations
from kruise.core.informer import Delta, EventType
from kruise.core.kube.client import KubeClient
from kruise.core.kube.resources import CLONESETS, CONTROLLER_REVISIONS, PODS, PVCS
from kruise.core.metrics import forget_cloneset
from kruise.core.runtime import OWNER_UID, CacheReader, ControllerSpec, owned, owner_key, primary
from kruise.core.workqueue import Result
from kruise.workloads.cloneset.diffs import Diffs, calculate_diffs
from kruise.workloads.cloneset.newpods import CLONESET_KIND, plan_pvc_cleanup, pvc_reown_patch
from kruise.workloads.cloneset.readiness import cloneset_health
from kruise.workloads.cloneset.status import calculate_status, seconds_until_available, status_to_write
from kruise.workloads.cloneset.sync_scale import Scaler
from kruise.workloads.cloneset.sync_update import UpdateGuard, UpdateOutcome, Updater
from kruise.workloads.controllerbase import merge_status
from kruise.workloads.history import History
from kruise.workloads.objects import (
    KubeObject,
    mapping,
    metadata,
    name,
    namespace,
    spec,
    status,
    uid,
)
from kruise.workloads.pods import is_active
from kruise.workloads.predownloader import PreDownloader
from kruise.workloads.revisions import (
    plan_revisions,
    sort_revisions,
)

log = logging.getLogger(__name__)
RECONCILE_PACE = 1.0
RECONCILE_MAX_PACE = 0.5
"""A CloneSet is reconciled again no sooner than its last reconcile took (see ``WorkQueue.pace``)."""
JSON = dict[str, Any]


@dataclass(frozen=True)
class CloneSetOptions:
    """Controller settings (kruise-manager flags and feature gates)."""

    workers: int = 3
    expectation_timeout: float = 300.0
    short_hash_label: bool = False  # gate CloneSetShortHash
    exclude_preparing_delete: bool = False  # --cloneset-scaling-exclude-preparing-delete
    partition_rollback: bool = False  # gate CloneSetPartitionRollback
    preparing_update_as_update: bool = False  # gate PreparingUpdateAsUpdate (Scale only)
    pre_download: bool = False  # gate PreDownloadImageForInPlaceUpdate (and KruiseDaemon)
    env_from_metadata: bool = True  # gate InPlaceUpdateEnvFromMetadata
    update_guard: UpdateGuard | None = None  # gate PodUnavailableBudgetUpdateGate: the pods' budgets


def _now() -> datetime.datetime:
    return datetime.datetime.now(datetime.UTC)


class CloneSetController:
    """Reconciles CloneSets; one instance per manager, its expectations are its own."""

    name = "cloneset-controller"

    def __init__(
        self, kube: KubeClient, recorder: EventRecorder, cache: CacheReader, options: CloneSetOptions
    ) -> None:
        self.kube = kube
        self.recorder = recorder
        self.cache = cache
        self.options = options
        self.scale_expectations = ScaleExpectations(timeout=options.expectation_timeout)
        self.rv_expectations = ResourceVersionExpectations(timeout=options.expectation_timeout)
        self.scaler = Scaler(
            kube,
            recorder,
            self.scale_expectations,
            short_hash_label=options.short_hash_label,
            rv_expectations=self.rv_expectations,
        )
        self.history = History(kube, CLONESET_KIND, self.rv_expectations, self._patch_status)
        self.updater = Updater(
            kube,
            recorder,
            self.rv_expectations,
            short_hash_label=options.short_hash_label,
            guard=options.update_guard,
        )
        self.predownloader = PreDownloader(
            kube,
            recorder,
            cache,
            self.rv_expectations,
            CLONESETS,
            enabled=options.pre_download,
            env_from_metadata=options.env_from_metadata,
        )

    def spec(self) -> ControllerSpec:
        """Woken by CloneSets and the pods, PVCs and ControllerRevisions they control (indexed by
        owner UID). A reconcile walks every pod of its CloneSet and pod events come in bursts, so
        each key is paced by its own reconcile time: a 1000-pod CloneSet cannot starve the loop."""
        return ControllerSpec(
            name=self.name,
            watches=(
                primary(CLONESETS),
                owned(PODS, CLONESETS, observe=self._pod_event),
                owned(PVCS, CLONESETS),
                owned(CONTROLLER_REVISIONS, CLONESETS),
                *self.predownloader.watches(),
            ),
            workers=self.options.workers,
            pace=RECONCILE_PACE,
            max_pace=RECONCILE_MAX_PACE,
        )

    def _pod_event(self, delta: Delta) -> None:
        key = owner_key(delta.obj, CLONESETS)
        if delta.type is EventType.DELETED:  # no reconcile checks a gone pod's in-place write again
            self.rv_expectations.delete(uid(delta.obj))
        if key is not None:
            self.observe_pod(key, delta.obj, deleted=delta.type is EventType.DELETED)

    def observe_pod(self, key: str, pod: KubeObject, *, deleted: bool) -> None:
        """What the informer saw of an owned pod (upstream's pod event handler ``ObserveScale``).

        A live pod satisfies its create expectation even if it is gone again before the next
        reconcile looks; a terminating or deleted pod satisfies its delete expectation. The
        reconcile also checks the cache itself, so a missed event cannot leave one stuck.
        """
        if deleted or metadata(pod).get("deletionTimestamp"):
            self.scale_expectations.forget(key, ScaleAction.DELETE, name(pod))
        else:
            self.scale_expectations.forget(key, ScaleAction.CREATE, name(pod))

    # ------------------------------------------------------------------ reconcile
    async def reconcile(self, key: str) -> Result:
        cs = self.cache.get(CLONESETS, key)
        if cs is None:
            self.scale_expectations.delete(key)
            forget_cloneset(*key.split("/", 1))  # its update counters go with it
            return Result()
        if metadata(cs).get("deletionTimestamp"):
            return Result()
        owner_uid = uid(cs)
        owned = self.cache.by_index(PODS, OWNER_UID, owner_uid)
        present = {name(p): p for p in owned}
        satisfaction = self.scale_expectations.check(
            key, lambda n: n in present and not metadata(present[n]).get("deletionTimestamp")
        )
        if not satisfaction.satisfied and not self.scale_expectations.timed_out(satisfaction):
            log.debug("%s: waiting for %s", key, satisfaction)
            return Result(requeue_after=min(5.0, self.scale_expectations.timeout - satisfaction.waited))
        pods = [p for p in owned if is_active(p)]
        revisions = sort_revisions(self.cache.by_index(CONTROLLER_REVISIONS, OWNER_UID, owner_uid))
        for obj in (*pods, *revisions):  # patched pods and bumped revisions must show in the cache
            if not self.rv_expectations.caught_up(obj):
                return Result(requeue_after=1.0)
        pvcs: list[KubeObject] = [
            c
            for c in self.cache.by_index(PVCS, OWNER_UID, owner_uid)
            if not metadata(c).get("deletionTimestamp")
        ]
        if mapping(spec(cs).get("scaleStrategy")).get("disablePVCReuse"):
            pvcs = await self._cleanup_pvcs(cs, owned, pvcs)

        update_rev, collision = await self.history.ensure_update_revision(cs, revisions)
        if update_rev is None:
            return Result(requeue_after=0.5)
        plan = plan_revisions(cs, revisions, controller=CLONESET_KIND)
        current_name = plan.current_revision_name if revisions else name(update_rev)
        by_name = {name(r): r for r in revisions}
        by_name.setdefault(name(update_rev), update_rev)
        current_rev = by_name.get(current_name, update_rev)
        now = _now()
        await self.predownloader.sync(cs, current_rev, update_rev)

        errors: dict[str, str] = {}
        reported = True  # every error so far was also a Warning event
        requeue: float | None = None
        opts = self.options

        def diffs_for(scaling: bool) -> Diffs:  # Scale may count PreparingUpdate pods as updated
            return calculate_diffs(
                cs,
                pods,
                name(current_rev),
                name(update_rev),
                now,
                partition_rollback=opts.partition_rollback,
                exclude_preparing_delete=opts.exclude_preparing_delete,
                preparing_update_as_update=scaling and opts.preparing_update_as_update,
            )

        diffs = diffs_for(scaling=False)
        scale_diffs = diffs_for(scaling=True) if opts.preparing_update_as_update else diffs
        scaled = await self.scaler.scale(cs, key, pods, pvcs, scale_diffs, current_rev, update_rev, now)
        if scaled.errors:
            errors["FailedScale"] = "; ".join(scaled.errors)
            reported = not scaled.unreported
        refreshed: UpdateOutcome | None = None
        if not scaled.modified:
            refreshed = await self.updater.refresh(cs, pods, name(update_rev), now)
            requeue = refreshed.requeue_after
            if refreshed.errors:
                errors["FailedUpdate"] = "; ".join(refreshed.errors)
                reported = False
            if not refreshed.modified:
                updated = await self.updater.update(
                    cs, pods, name(current_rev), name(update_rev), by_name, diffs, now
                )
                if updated.errors:
                    errors["FailedUpdate"] = "; ".join(updated.errors)
                    reported = False
                if updated.requeue_after is not None:
                    requeue = (
                        updated.requeue_after if requeue is None else min(requeue, updated.requeue_after)
                    )

        # a refresh round's writes (KruisePodReady, lifecycle Normal) count in this round's status:
        # written from the cache alone it would say "ready, not available" for one round more
        counted = refreshed.as_written(pods) if refreshed is not None else pods
        new_status = await self._write_status(
            cs, counted, name(update_rev), name(current_rev), collision, now, errors
        )
        await self._truncate_pods_to_delete(cs, pods)
        await self.history.truncate(cs, pods, revisions, name(current_rev), name(update_rev))

        if not errors and new_status["availableReplicas"] != new_status["readyReplicas"]:
            # pods turning available after minReadySeconds cause no event: look again then
            wake = seconds_until_available(cs, counted, now)
            if wake is not None:
                requeue = wake if requeue is None else min(requeue, wake)
        if errors:
            raise (CloneSetReportedError if reported else CloneSetSyncError)(f"{key}: {errors}")
        return Result(requeue_after=requeue)

    async def _cleanup_pvcs(
        self, cs: KubeObject, pods: Sequence[KubeObject], pvcs: Sequence[KubeObject]
    ) -> list[KubeObject]:
        """``cleanupPVCs``: with ``disablePVCReuse`` no PVC outlives its pod; returns the PVCs kept."""
        plan = plan_pvc_cleanup(pods, pvcs)
        for pvc, pod in plan.reown:
            try:
                await self.kube.patch(
                    PVCS, name(pvc), pvc_reown_patch(pvc, uid(cs), pod), namespace(pvc), patch_type="merge"
                )
            except NotFoundError:
                continue
            except KruiseError as err:
                self.recorder.event(cs, WARNING, "FailedUpdate", f"failed to update PVC {name(pvc)}: {err}")
                raise
        for pvc in plan.delete:
            try:
                await self.kube.delete(PVCS, name(pvc), namespace(pvc), missing_ok=True)
            except KruiseError as err:
                self.recorder.event(cs, WARNING, "FailedDelete", f"failed to clean up PVC {name(pvc)}: {err}")
                raise
        return plan.keep

    # ------------------------------------------------------------------ status
    async def _write_status(
        self,
        cs: KubeObject,
        pods: Sequence[KubeObject],
        update_revision: str,
        current_revision: str,
        collision: int,
        now: datetime.datetime,
        errors: dict[str, str],
    ) -> JSON:
        """Write the status computed from the cache when it differs; returns it."""
        new = calculate_status(
            cs,
            pods,
            update_revision=update_revision,
            current_revision=current_revision,
            collision_count=collision,
            now=now,
        )
        patch = status_to_write(status(cs), new, errors, now, cloneset_health(cs, new))
        if patch is not None:
            await self._patch_status(cs, patch)
        return new

    async def _patch_status(self, cs: KubeObject, new_status: JSON) -> None:
        await merge_status(self.kube, CLONESETS, cs, new_status)

    async def _truncate_pods_to_delete(self, cs: KubeObject, pods: Sequence[KubeObject]) -> None:
        """Drop ``scaleStrategy.podsToDelete`` names that no longer exist (``truncatePodsToDelete``)."""
        wanted = list(mapping(spec(cs).get("scaleStrategy")).get("podsToDelete") or [])
        if not wanted:
            return
        alive = {name(p) for p in pods}
        kept = [n for n in wanted if n in alive]
        if kept == wanted:
            return
        # Guarded by the list itself rather than the resourceVersion, which this very reconcile
        # has just moved if it wrote the status: a "test" op fails only if the user changed it.
        path = "/spec/scaleStrategy/podsToDelete"
        patch: list[JSON] = [
            {"op": "test", "path": path, "value": wanted},
            {"op": "replace", "path": path, "value": kept} if kept else {"op": "remove", "path": path},
        ]
        try:
            await self.kube.patch(CLONESETS, name(cs), patch, namespace(cs), patch_type="json")
        except KruiseError as err:  # the list changed meanwhile: that change triggers a new round
            log.debug("truncate podsToDelete of %s: %s", name(cs), err)


class CloneSetSyncError(KruiseError):
    """Scale or update failed this round; the key is retried with backoff."""


class CloneSetReportedError(CloneSetSyncError, ReportedError):
    """As :class:`CloneSetSyncError`, every failure already a Warning event (``FailedCreate``...):
    one failed round is one event and its log line (the work queue adds nothing above DEBUG)."""
