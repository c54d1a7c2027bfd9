"""The UnitedDeployment controller shell: observe (cache), decide (pure cores), act, write status once.

Upstream's ``uniteddeployment-controller`` (``ReconcileUnitedDeployment.Reconcile``), for subsets
of every template kind: native StatefulSets, Advanced StatefulSets, CloneSets and Deployments
(:mod:`.kinds` holds what differs between them; a UnitedDeployment with no template at all,
which the webhook refuses, is left alone):

1. the UnitedDeployment and the workloads it controls (indexed by owner UID), their pods (for
   Deployments, through their ReplicaSets: :attr:`.kinds.SubsetKind.pods_of`);
2. its ControllerRevisions (:mod:`.revision`): those beyond ``revisionHistoryLimit`` deleted, the
   update revision reused, bumped (a roll back) or created
   (:class:`~kruise.workloads.history.History`); a failure is a ``Warning
   FailedRevisionProvision`` event, retried with backoff;
3. while the UnitedDeployment's last status write, or workloads this controller created,
   deleted or re-owned, are not yet as written in the cache: wait; then claim (:mod:`.claims`):
   orphans of its namespace matching its selector are adopted, its own that no longer match
   released, and the round ends there when it did either;
4. in reservation mode, each subset's reserved pods (:func:`~.reservation.reserve_subsets`),
   their ``apps.kruise.io/united-deployment-reserved-pod`` labels written; then
   :func:`~.allocation.allocate` (Adaptive schedulability from the pods, then the allocator);
   an allocation error is a ``Warning Failed SpecifySubsetReplicas`` event, retried with backoff;
5. :func:`~.subsets.plan_subsets`: create missing subset workloads, delete surplus ones (and any
   of the other kind, after a template kind change), update
   those whose revision, replicas, partition or patch differ (an unschedulable subset of
   reservation mode with a raised ``maxUnavailable``) (``SuccessfulUpdateSubset`` /
   ``FailedUpdateSubset`` events as upstream's), then delete the pods a native StatefulSet's
   rolling update is stuck on (:attr:`.kinds.SubsetKind.stuck_pods`);
6. :func:`~.status.status_patch` written once; requeue when the Adaptive strategy has a timed
   check due.
"""

from __future__ import annotations

import contextlib
import datetime
import logging
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

from kruise.core.errors import KruiseError, NotFoundError
from kruise.core.events import NORMAL, WARNING, EventRecorder
from kruise.core.expectations import ScaleAction
from kruise.core.informer import Delta, EventType
from kruise.core.kube.client import KubeClient
from kruise.core.kube.resources import CONTROLLER_REVISIONS, PODS, UNITEDDEPLOYMENTS, Resource
from kruise.core.runtime import OWNER_UID, CacheReader, ControllerSpec, Read, Watch, owned, owner_key, primary
from kruise.core.runtime.spec import controller_ref, index_by_owner_uid
from kruise.core.workqueue import Result
from kruise.workloads.api.uniteddeployment import RESERVED_POD_LABEL, UnitedDeployment
from kruise.workloads.controllerbase import WorkloadController, merge_status
from kruise.workloads.history import History
from kruise.workloads.objects import (
    KubeObject,
    is_being_deleted,
    labels,
    mapping,
    metadata,
    name,
    spec,
    status,
    uid,
)
from kruise.workloads.objects import namespace as namespace_of
from kruise.workloads.pods import PodScheduling
from kruise.workloads.requeue import soonest
from kruise.workloads.revisions import sort_revisions
from kruise.workloads.selector import SelectorError, selector_matches
from kruise.workloads.uniteddeployment.allocation import ObservedSubset, allocate
from kruise.workloads.uniteddeployment.allocator import AllocationError
from kruise.workloads.uniteddeployment.claims import claim_workloads
from kruise.workloads.uniteddeployment.kinds import KINDS, SubsetKind, owning_workload, subset_kind
from kruise.workloads.uniteddeployment.reservation import (
    PodReservation,
    SubsetReservation,
    raised_max_unavailable,
    reserve_subsets,
)
from kruise.workloads.uniteddeployment.revision import (
    UNITEDDEPLOYMENT_KIND,
    expire_revisions,
    new_ud_revision,
)
from kruise.workloads.uniteddeployment.status import RoundOutcome, status_patch
from kruise.workloads.uniteddeployment.subsets import (
    classify,
    next_partitions,
    owner_reference,
    plan_subsets,
    subset_workload,
)

__all__ = [
    "SUBSET_RESOURCES",
    "UnitedDeploymentController",
    "UnitedDeploymentOptions",
    "UnitedDeploymentSyncError",
]

log = logging.getLogger(__name__)
SUBSET_RESOURCES = tuple(kind.resource for kind in KINDS)
"""Every kind of subset workload this controller creates, rewrites, re-owns and deletes."""
VIA_RESOURCES = tuple(dict.fromkeys(r for kind in KINDS for r in kind.via))
"""The kinds between subset workloads and their pods (ReplicaSets), read indexed by owner UID."""


@dataclass(frozen=True)
class UnitedDeploymentOptions:
    """Controller settings (kruise-manager flags)."""

    workers: int = 3  # --uniteddeployment-workers
    expectation_timeout: float = 300.0


class UnitedDeploymentSyncError(KruiseError):
    """A round met errors; the key is retried with backoff."""


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


class UnitedDeploymentController(WorkloadController[UnitedDeploymentOptions]):
    """Reconciles UnitedDeployments; one instance per manager, its expectations are its own."""

    name = "uniteddeployment-controller"

    def __init__(
        self, kube: KubeClient, recorder: EventRecorder, cache: CacheReader, options: UnitedDeploymentOptions
    ) -> None:
        super().__init__(kube, recorder, cache, options)
        self.history = History(
            kube, UNITEDDEPLOYMENT_KIND, self.rv_expectations, self._patch_status, build=new_ud_revision
        )

    def spec(self) -> ControllerSpec:
        """Woken by UnitedDeployments, the workloads they control (or could adopt), their pods and
        their ControllerRevisions."""
        return ControllerSpec(
            name=self.name,
            watches=(
                primary(UNITEDDEPLOYMENTS),
                *(
                    Watch(
                        k.resource, self._workload_keys, {OWNER_UID: index_by_owner_uid}, self._workload_event
                    )
                    for k in KINDS
                ),
                Watch(PODS, self._pod_keys, {OWNER_UID: index_by_owner_uid}),
                owned(CONTROLLER_REVISIONS, UNITEDDEPLOYMENTS),
            ),
            reads=tuple(Read(r, {OWNER_UID: index_by_owner_uid}) for r in VIA_RESOURCES),
            workers=self.options.workers,
        )

    def _workload_event(self, delta: Delta) -> None:
        key = owner_key(delta.obj, UNITEDDEPLOYMENTS)
        if key is None:
            return
        action = ScaleAction.DELETE if delta.type is EventType.DELETED else ScaleAction.CREATE
        self.expectations.forget(key, action, name(delta.obj))

    def _workload_keys(self, workload: KubeObject) -> Iterable[str]:
        """Its controlling UnitedDeployment; for an orphan, every one of its namespace selecting it."""
        if controller_ref(workload) is not None:
            key = owner_key(workload, UNITEDDEPLOYMENTS)
            return (key,) if key else ()
        keys = []
        for ud in self.cache.list(UNITEDDEPLOYMENTS):
            if namespace_of(ud) != namespace_of(workload):
                continue
            with contextlib.suppress(SelectorError):
                if selector_matches(mapping(spec(ud).get("selector")), labels(workload)):
                    keys.append(f"{namespace_of(ud)}/{name(ud)}")
        return keys

    def _pod_keys(self, pod: KubeObject) -> Iterable[str]:
        for kind in KINDS:
            workload = owning_workload(kind, pod, self.cache.get)
            key = owner_key(workload, UNITEDDEPLOYMENTS) if workload is not None else None
            if key:
                return (key,)
        return ()

    def _owned_by(self, resource: Resource, owner_uid: str) -> Sequence[KubeObject]:
        return self.cache.by_index(resource, OWNER_UID, owner_uid)

    # ------------------------------------------------------------------ reconcile
    async def reconcile(self, key: str) -> Result:
        ud = self.cache.get(UNITEDDEPLOYMENTS, key)
        if ud is None:
            self.expectations.delete(key)
            return Result()
        if is_being_deleted(ud):
            return Result()
        try:
            model = UnitedDeployment.from_dict(ud)
        except ValidationError as err:
            self.recorder.event(ud, WARNING, "InvalidSpec", str(err).splitlines()[0])
            return Result()
        kind = subset_kind(mapping(spec(ud).get("template")))
        if kind is None:
            log.warning("%s: no subset template", key)
            return Result()
        owned = self.cache.by_index(kind.resource, OWNER_UID, uid(ud))
        orphans = [
            c
            for c in self.cache.list(kind.resource)
            if namespace_of(c) == namespace_of(ud) and controller_ref(c) is None
        ]
        other_kinds = [
            (k.resource, w)
            for k in KINDS
            if k is not kind
            for w in self.cache.by_index(k.resource, OWNER_UID, uid(ud))
        ]
        if not self.rv_expectations.caught_up(ud):
            return Result(requeue_after=1.0)  # the cache does not show the last status written yet
        revisions = await self._revisions(ud)
        if revisions is None:
            return Result(requeue_after=1.0)
        revision, collision = revisions
        waiting = self._waiting(key, [*owned, *orphans])
        if waiting is not None:
            return Result(requeue_after=waiting)
        claims = claim_workloads(ud, owned, orphans, owner_reference(ud))
        if claims.adopt or claims.release:
            await self._reown(kind.resource, ud, [*claims.adopt, *claims.release])
            return Result(requeue_after=1.0)
        workloads = claims.claimed
        now = datetime.datetime.now(datetime.UTC)
        kept, _ = classify(ud, workloads)
        pods = {n: kind.pods_of(w, self._owned_by) for n, w in kept.items()}
        facts = {n: [PodReservation.of(p) for p in ps] for n, ps in pods.items()}
        reservations = reserve_subsets(model, facts, revision, now)
        await self._label_reserved(ud, pods, reservations)
        observed = {
            n: ObservedSubset(
                replicas=_int(spec(w).get("replicas")),
                status_replicas=_int(status(w).get("replicas")),
                ready_replicas=_int(status(w).get("readyReplicas")),
                pods=tuple(PodScheduling.of(p) for p in pods[n]),
                reserved_pods=reservations[n].reserved if n in reservations else 0,
            )
            for n, w in kept.items()
        }
        try:
            allocation = allocate(model, observed, now)
        except AllocationError as err:
            message = f"Specified subset replicas is ineffective: {err}"
            self.recorder.event(ud, WARNING, "Failed SpecifySubsetReplicas", message)
            raise UnitedDeploymentSyncError(f"{key}: {err}") from err
        partitions = next_partitions(model.spec, allocation.replicas)
        max_unavailable = raised_max_unavailable(
            {n: o.replicas for n, o in observed.items()},
            {n: o.ready_replicas for n, o in observed.items()},
            allocation.unschedulable,
            reservations,
        )
        plan = plan_subsets(
            ud,
            workloads,
            allocation.replicas,
            partitions,
            revision,
            lambda w: kind.read_partition(w, kind.pods_of(w, self._owned_by)),
            lambda n, w: n in max_unavailable and kind.read_max_unavailable(w) != max_unavailable[n],
        )
        surplus = [*((kind.resource, w) for w in plan.delete), *other_kinds]
        provision_error = await self._provision(
            key, kind, ud, plan.create, surplus, allocation.replicas, partitions, revision
        )
        update_error = await self._update(
            kind, ud, plan.update, plan.workloads, allocation.replicas, partitions, revision, max_unavailable
        )
        outcome = RoundOutcome(provision_error, update_error)
        new_status = status_patch(
            ud,
            plan.workloads,
            pods,
            allocation,
            partitions,
            revision,
            collision,
            outcome,
            now,
            {n: r.reserved for n, r in reservations.items()},
        )
        if new_status is not None:
            await self._write_status(ud, new_status)
        requeue = soonest(allocation.requeue_after, *(r.check_after for r in reservations.values()))
        strategy = model.spec.topology.schedule_strategy if model.spec.topology else None
        scaled_up = plan.create or any(
            allocation.replicas.get(n, 0) > _int(spec(w).get("replicas")) for n, w in plan.workloads.items()
        )
        if strategy is not None and strategy.is_adaptive() and scaled_up:
            requeue = soonest(requeue, float(strategy.settings().reschedule_critical()))
        if provision_error or update_error:
            raise UnitedDeploymentSyncError(f"{key}: {provision_error or update_error}")
        return Result(requeue_after=requeue)

    async def _revisions(self, ud: KubeObject) -> tuple[str, int] | None:
        """``constructUnitedDeploymentRevisions``: claim the revisions (``controlledHistories``:
        orphans of its namespace matching its selector adopted, its own that no longer match
        released, as for subset workloads), delete the expired history, then reuse, bump or
        create the update revision; its name and the collision count used, or ``None`` while the
        cache does not show this controller's last revision write, after a claim, or when names
        clashed five times. A failed write is a ``Warning FailedRevisionProvision`` event and an
        error."""
        owned_revisions = self.cache.by_index(CONTROLLER_REVISIONS, OWNER_UID, uid(ud))
        if not all(self.rv_expectations.caught_up(r) for r in owned_revisions):
            return None
        orphans = [
            r
            for r in self.cache.list(CONTROLLER_REVISIONS)
            if namespace_of(r) == namespace_of(ud) and controller_ref(r) is None
        ]
        claims = claim_workloads(ud, owned_revisions, orphans, owner_reference(ud))
        if claims.adopt or claims.release:
            await self._reown(CONTROLLER_REVISIONS, ud, [*claims.adopt, *claims.release])
            return None
        stored = sort_revisions(claims.claimed)
        expired = expire_revisions(ud, stored)
        try:
            for old in expired.delete:
                await self.kube.delete(CONTROLLER_REVISIONS, name(old), namespace_of(old), missing_ok=True)
            update, collision = await self.history.ensure_update_revision(ud, expired.kept)
        except KruiseError as err:
            self.recorder.event(ud, WARNING, "FailedRevisionProvision", str(err))
            raise UnitedDeploymentSyncError(f"{namespace_of(ud)}/{name(ud)}: {err}") from err
        return None if update is None else (name(update), collision)

    async def _label_reserved(
        self, ud: KubeObject, pods: dict[str, list[KubeObject]], found: dict[str, SubsetReservation]
    ) -> None:
        """``patchReservedStatusChangedPods``: write each pod's reserved label (``"true"`` /
        ``"false"``) as :func:`~.reservation.reserve` decided; a failure fails the round."""
        by_name = {name(p): p for ps in pods.values() for p in ps}
        for reservation in found.values():
            for pod_name, reserved in reservation.labels.items():
                pod = by_name[pod_name]
                body = {"metadata": {"labels": {RESERVED_POD_LABEL: "true" if reserved else "false"}}}
                try:
                    await self.kube.patch(PODS, pod_name, body, namespace_of(pod), patch_type="strategic")
                except NotFoundError:
                    continue
                except KruiseError as err:
                    raise UnitedDeploymentSyncError(
                        f"{namespace_of(ud)}/{name(ud)}: patch reserved label of pod {pod_name}: {err}"
                    ) from err

    async def _patch_status(self, ud: KubeObject, patch: dict[str, Any]) -> None:
        """Merge ``patch`` into the status (also a raised ``collisionCount``); the next round waits
        until the cache shows it. A UnitedDeployment gone meanwhile is no error."""
        written = await merge_status(self.kube, UNITEDDEPLOYMENTS, ud, patch)
        if written is not None:
            self.rv_expectations.expect(uid(ud), str(metadata(written).get("resourceVersion")))

    def _waiting(self, key: str, workloads: Sequence[KubeObject]) -> float | None:
        """Seconds to wait while the cache does not show this controller's writes yet, else None."""
        present = {name(w): w for w in workloads}
        satisfaction = self.expectations.check(
            key, lambda n: n in present and not is_being_deleted(present[n])
        )
        if not satisfaction.satisfied and not self.expectations.timed_out(satisfaction):
            return 1.0
        for workload in workloads:
            if not self.rv_expectations.caught_up(workload):
                return 1.0
        return None

    async def _reown(
        self, resource: Resource, ud: KubeObject, changes: Sequence[tuple[KubeObject, list[dict[str, Any]]]]
    ) -> None:
        """Write each workload's new ``ownerReferences`` (adopt / release), guarded by its
        resourceVersion; a failure is retried with backoff."""
        errors = []
        for workload, refs in changes:
            meta = {"ownerReferences": refs, "resourceVersion": metadata(workload).get("resourceVersion")}
            try:
                written = await self.kube.patch(
                    resource, name(workload), {"metadata": meta}, namespace_of(workload), patch_type="merge"
                )
            except KruiseError as err:
                errors.append(f"{name(workload)}: {err}")
                continue
            self.rv_expectations.expect_written(written)
        if errors:
            raise UnitedDeploymentSyncError(
                f"{namespace_of(ud)}/{name(ud)}: claiming {resource.plural}: {'; '.join(errors)}"
            )

    async def _provision(
        self,
        key: str,
        kind: SubsetKind,
        ud: KubeObject,
        create: Sequence[str],
        delete: Sequence[tuple[Resource, KubeObject]],
        replicas: dict[str, int],
        partitions: dict[str, int],
        revision: str,
    ) -> str:
        """``manageSubsetProvision``: create missing subsets, delete surplus ones; the errors."""
        errors: list[str] = []
        created = 0
        for subset in create:
            body = subset_workload(
                kind, ud, subset, revision, replicas.get(subset, 0), partitions.get(subset, 0)
            )
            try:
                made = await self.kube.create(kind.resource, body, namespace_of(ud))
            except KruiseError as err:
                errors.append(f"fail to create Subset ({kind.label}) {subset}: {err}")
                continue
            self.expectations.expect(key, ScaleAction.CREATE, name(made))
            created += 1
        if created:
            self.recorder.event(
                ud, NORMAL, "SuccessfulUpdateSubset", f"Create {created} Subset ({kind.label})"
            )
        deleted = 0
        for resource, workload in delete:
            try:
                self.expectations.expect(key, ScaleAction.DELETE, name(workload))
                await self.kube.delete(resource, name(workload), namespace_of(workload), missing_ok=True)
            except KruiseError as err:
                self.expectations.forget(key, ScaleAction.DELETE, name(workload))
                where = f"{namespace_of(workload)}/{name(workload)}"
                errors.append(f"fail to delete Subset ({kind.label}) {where}: {err}")
                continue
            deleted += 1
        if deleted:
            self.recorder.event(
                ud, NORMAL, "SuccessfulUpdateSubset", f"Delete {deleted} Subset ({kind.label})"
            )
        return "; ".join(errors)

    async def _update(
        self,
        kind: SubsetKind,
        ud: KubeObject,
        update: Sequence[str],
        kept: dict[str, KubeObject],
        replicas: dict[str, int],
        partitions: dict[str, int],
        revision: str,
        max_unavailable: dict[str, int],
    ) -> str:
        """Rewrite the subsets whose revision, replicas, partition or patch changed (with
        ``max_unavailable`` raised where given, :func:`~.reservation.raised_max_unavailable`),
        then delete the pods each one's rolling update is stuck on (``PostUpdate``); the errors,
        each also a ``FailedUpdateSubset`` event as upstream's."""
        errors: list[str] = []
        for subset in update:
            stored = kept[subset]
            replica_count, partition = replicas.get(subset, 0), partitions.get(subset, 0)
            body = subset_workload(kind, ud, subset, revision, replica_count, partition, base=stored)
            if subset in max_unavailable:
                kind.set_max_unavailable(body["spec"], max_unavailable[subset])
            try:
                written = await self.kube.replace(kind.resource, body)
                self.rv_expectations.expect_written(written)
                pods = kind.pods_of(written, self._owned_by)
                for pod in kind.stuck_pods(written, pods, revision, partition):
                    await self.kube.delete(PODS, name(pod), namespace_of(pod), missing_ok=True)
            except KruiseError as err:
                message = f"Error updating PodSet ({kind.label}) {name(stored)} when updating: {err}"
                self.recorder.event(ud, WARNING, "FailedUpdateSubset", message)
                errors.append(str(err))
        return "; ".join(errors)

    async def _write_status(self, ud: KubeObject, new: dict[str, Any]) -> None:
        """One merge patch of the status; keys that disappeared (``reservedPods`` back to 0, map
        entries) are sent as ``null``, as upstream's whole-status update drops them. The next
        round waits until the cache shows it: a round on the stale status would forget the
        Adaptive ``Schedulable`` conditions just written and undo the rescheduling."""
        old = status(ud)
        patch = {**{k: None for k in old if k not in new}, **new}
        gone = {k: None for k in mapping(old.get("subsetReplicas")) if k not in new["subsetReplicas"]}
        patch["subsetReplicas"] = {**new["subsetReplicas"], **gone}
        old_partitions = mapping(mapping(old.get("updateStatus")).get("currentPartitions"))
        current = new["updateStatus"]["currentPartitions"]
        patch["updateStatus"] = {
            **new["updateStatus"],
            "currentPartitions": {**current, **{k: None for k in old_partitions if k not in current}},
        }
        await self._patch_status(ud, patch)
