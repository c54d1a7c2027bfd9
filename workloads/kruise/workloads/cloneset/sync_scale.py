"""Scale: carry out what :func:`calculate_diffs` decided (I/O shell of ``cloneset_scale.go``).

Order per round, as upstream: lifecycle regrets, scale out (slow-start batches),
delete pods whose preDelete hook was released, specified deletes (limited by
``deleteReadyLimit``), then scale in. The round reports whether it changed
anything; when it did, Update waits for the next round.

Every create and delete is recorded in the controller's scale expectations
*before* the API call and forgotten again if the call fails, so a reconcile on a
cache that does not show the result yet cannot act twice.

A new pod carries the ``InPlaceUpdateReady`` readiness gate; upstream sets that condition True
in the next sync's ``Refresh``, once the cache shows the pod. Here the scale round sets it
right after each create, alongside the next slow-start batch (``pods/status``, the same
condition Refresh would write, recorded in the resourceVersion expectations), so a new pod's
readiness no longer waits for the whole scale-up to reach the cache. If that write fails,
Refresh writes it as before.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from kruise.core.errors import AlreadyExistsError, KruiseError, NotFoundError
from kruise.core.events import NORMAL, WARNING, EventRecorder
from kruise.core.expectations import ResourceVersionExpectations, ScaleAction, ScaleExpectations
from kruise.core.kube.client import KubeClient
from kruise.core.kube.resources import PODS, PVCS
from kruise.workloads.cloneset.diffs import Diffs, is_specified_delete_in
from kruise.workloads.cloneset.lifecycle import (
    preparing_delete_regrets,
)
from kruise.workloads.cloneset.newpods import (
    choose_instance_ids,
    free_pvc_instance_ids,
    instance_id_of,
    new_pod,
    new_pvcs,
    pvcs_of_instance,
)
from kruise.workloads.cloneset.podstate import (
    is_cloneset_available,
)
from kruise.workloads.cloneset.sorting import choose_pods_to_delete, topology_keys_of
from kruise.workloads.inplace.writer import apply_not_ready_policy, mark_new_pod_ready, slow_start_batches
from kruise.workloads.lifecycle import (
    LifecycleTransition,
    delete_transition,
    lifecycle_patch,
)
from kruise.workloads.objects import KubeObject, mapping, name, namespace, spec
from kruise.workloads.pods import (
    LifecycleState,
    equal_to_revision_hash,
    lifecycle_state,
)

log = logging.getLogger(__name__)

# Event reasons (upstream's)
SUCCESSFUL_CREATE = "SuccessfulCreate"
FAILED_CREATE = "FailedCreate"
SUCCESSFUL_DELETE = "SuccessfulDelete"
FAILED_DELETE = "FailedDelete"
SCALE_UP_LIMITED = "ScaleUpLimited"


@dataclass
class ScaleOutcome:
    modified: bool = False
    errors: list[str] = field(default_factory=list)
    unreported: bool = False  # an error in ``errors`` has no Warning event of its own


@dataclass
class Scaler:
    """Executes one Scale round for one CloneSet."""

    kube: KubeClient
    recorder: EventRecorder
    expectations: ScaleExpectations
    short_hash_label: bool = False
    rv_expectations: ResourceVersionExpectations | None = None

    async def scale(
        self,
        cs: KubeObject,
        key: str,
        pods: Sequence[KubeObject],
        pvcs: Sequence[KubeObject],
        diffs: Diffs,
        current_revision: KubeObject,
        update_revision: KubeObject,
        now: datetime,
    ) -> ScaleOutcome:
        out = ScaleOutcome()
        # 1. regret PreparingDelete pods when replicas grew back
        to_delete_count = sum(
            1
            for p in pods
            if is_specified_delete_in(cs, p) or lifecycle_state(p) == LifecycleState.PREPARING_DELETE
        )
        for pod in preparing_delete_regrets(cs, pods, to_delete_count):
            transition = LifecycleTransition(LifecycleState.PREPARING_NORMAL)
            await self._patch_lifecycle(pod, transition, now, out)
        if out.modified:
            return out
        # 2. scale out
        if diffs.scale_up_num > 0:
            limit = min(diffs.scale_up_num, diffs.scale_up_limit)
            if limit < diffs.scale_up_num:
                self.recorder.event(
                    cs,
                    WARNING,
                    SCALE_UP_LIMITED,
                    f"scaleUp is limited because of scaleStrategy.maxUnavailable, limit: {limit}",
                )
            if limit > 0:
                old = (
                    0 if name(current_revision) == name(update_revision) else diffs.scale_up_num_old_revision
                )
                await self._create(
                    cs, key, pods, pvcs, limit, min(old, limit), current_revision, update_revision, now, out
                )
            return out  # upstream never deletes in a round that wants to scale out
        # 3. pods whose preDelete hook was released are deleted now
        for pod in pods:
            if lifecycle_state(pod) == LifecycleState.PREPARING_DELETE and delete_transition(cs, pod) is None:
                await self._delete(cs, key, pod, pvcs, out)
        if out.modified:
            return out
        # 4. specified deletes, limited by deleteReadyLimit for ready pods
        specified = [
            p
            for p in pods
            if is_specified_delete_in(cs, p) and lifecycle_state(p) != LifecycleState.PREPARING_DELETE
        ]
        if specified:
            ready_budget = diffs.delete_ready_limit
            for pod in specified:
                if is_cloneset_available(pod, 0, now):  # upstream isPodReady
                    if ready_budget <= 0:
                        continue
                    ready_budget -= 1
                await self._delete_or_hook(cs, key, pod, pvcs, now, out)
            return out
        # 5. scale in
        if diffs.scale_down_num > 0:
            preparing = [p for p in pods if lifecycle_state(p) == LifecycleState.PREPARING_DELETE]
            if preparing:  # deletions still pending their hooks: wait
                return out
            update_name = name(update_revision)
            updated = [p for p in pods if equal_to_revision_hash(p, update_name)]
            not_updated = [p for p in pods if not equal_to_revision_hash(p, update_name)]
            victims = choose_pods_to_delete(
                diffs.scale_down_num,
                diffs.scale_down_num_old_revision,
                not_updated,
                updated,
                now,
                min_ready_seconds=int(spec(cs).get("minReadySeconds") or 0),
                topology_keys=topology_keys_of(cs),
            )
            ready_budget = diffs.delete_ready_limit
            for pod in victims:
                if is_cloneset_available(pod, 0, now):
                    if ready_budget <= 0:
                        continue
                    ready_budget -= 1
                await self._delete_or_hook(cs, key, pod, pvcs, now, out)
        return out

    # ------------------------------------------------------------------ create
    async def _create(
        self,
        cs: KubeObject,
        key: str,
        pods: Sequence[KubeObject],
        pvcs: Sequence[KubeObject],
        count: int,
        at_current: int,
        current_revision: KubeObject,
        update_revision: KubeObject,
        now: datetime,
        out: ScaleOutcome,
    ) -> None:
        taken = {instance_id_of(p) for p in pods} | {instance_id_of(c) for c in pvcs}
        reusable: list[str] = []
        if not mapping(spec(cs).get("scaleStrategy")).get("disablePVCReuse"):
            reusable = free_pvc_instance_ids(pvcs, pods)
            taken -= set(reusable)
        ids = choose_instance_ids(count, taken=taken, reusable=reusable)
        planned = [
            new_pod(
                cs,
                current_revision if i < at_current else update_revision,
                instance_id,
                now,
                short_hash_label=self.short_hash_label,
            )
            for i, instance_id in enumerate(ids)
        ]
        existing_pvcs = {name(c) for c in pvcs}
        marks: list[asyncio.Task[None]] = []  # InPlaceUpdateReady writes, off the slow-start path
        try:
            start = 0
            for size in slow_start_batches(len(planned)):
                batch = planned[start : start + size]
                start += size
                results = await asyncio.gather(
                    *(self._create_one(cs, key, pod, existing_pvcs) for pod in batch), return_exceptions=True
                )
                created = [r for r in results if isinstance(r, dict)]
                marks.extend(
                    asyncio.create_task(mark_new_pod_ready(self.kube, self.rv_expectations, pod))
                    for pod in created
                )
                failures = [r for r in results if isinstance(r, BaseException)]
                out.modified = True
                if failures:
                    out.errors.extend(str(f) for f in failures)
                    out.unreported |= any(not isinstance(f, KruiseError) for f in failures)
                    return  # slow start: stop at the first failing batch
        finally:
            await asyncio.gather(*marks, return_exceptions=True)

    async def _create_one(
        self, cs: KubeObject, key: str, pod: dict[str, Any], existing_pvcs: set[str]
    ) -> KubeObject:
        """Create the pod (and its missing PVCs); returns the created pod."""
        ns = namespace(cs)
        for pvc in new_pvcs(cs, instance_id_of(pod)):
            if name(pvc) in existing_pvcs:
                continue
            try:
                await self.kube.create(PVCS, pvc, ns)
            except AlreadyExistsError:
                pass
            except KruiseError as err:
                self.recorder.event(cs, WARNING, FAILED_CREATE, f"failed to create pvc {name(pvc)}: {err}")
                raise
        pod_name = name(pod)
        self.expectations.expect(key, ScaleAction.CREATE, pod_name)
        try:
            created = await self.kube.create(PODS, pod, ns)
        except KruiseError as err:
            self.expectations.forget(key, ScaleAction.CREATE, pod_name)
            self.recorder.event(cs, WARNING, FAILED_CREATE, f"failed to create pod: {err}")
            raise
        self.recorder.event(cs, NORMAL, SUCCESSFUL_CREATE, f"succeed to create pod {pod_name}")
        return created

    # ------------------------------------------------------------------ delete
    async def _delete_or_hook(
        self,
        cs: KubeObject,
        key: str,
        pod: KubeObject,
        pvcs: Sequence[KubeObject],
        now: datetime,
        out: ScaleOutcome,
    ) -> None:
        transition = delete_transition(cs, pod)
        if transition is not None:
            await self._patch_lifecycle(pod, transition, now, out)
            return
        await self._delete(cs, key, pod, pvcs, out)

    async def _delete(
        self, cs: KubeObject, key: str, pod: KubeObject, pvcs: Sequence[KubeObject], out: ScaleOutcome
    ) -> None:
        pod_name, ns = name(pod), namespace(pod)
        self.expectations.expect(key, ScaleAction.DELETE, pod_name)
        try:
            await self.kube.delete(
                PODS, pod_name, ns, uid=str(mapping(pod.get("metadata")).get("uid") or "") or None
            )
        except NotFoundError:
            pass
        except KruiseError as err:
            self.expectations.forget(key, ScaleAction.DELETE, pod_name)
            self.recorder.event(cs, WARNING, FAILED_DELETE, f"failed to delete pod {pod_name}: {err}")
            out.errors.append(str(err))
            return
        out.modified = True
        self.recorder.event(cs, NORMAL, SUCCESSFUL_DELETE, f"succeed to delete pod {pod_name}")
        for pvc in pvcs_of_instance(pvcs, instance_id_of(pod)):
            try:
                await self.kube.delete(PVCS, name(pvc), ns, missing_ok=True)
            except KruiseError as err:
                log.warning("could not delete PVC %s/%s: %s", ns, name(pvc), err)

    async def _patch_lifecycle(
        self, pod: KubeObject, transition: LifecycleTransition, now: datetime, out: ScaleOutcome
    ) -> None:
        """``UpdatePodLifecycle``: the ``markPodNotReady`` key first (a no-op once it is there),
        then the state label unless the pod is already in that state."""
        try:
            if await apply_not_ready_policy(self.kube, self.rv_expectations, pod, transition, now):
                out.modified = True
            if lifecycle_state(pod) == transition.state:
                return
            await self.kube.patch(
                PODS, name(pod), lifecycle_patch(transition, now), namespace(pod), patch_type="strategic"
            )
        except KruiseError as err:
            out.errors.append(str(err))
            out.unreported = True
            return
        out.modified = True
