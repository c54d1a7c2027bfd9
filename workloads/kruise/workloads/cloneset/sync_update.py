"""Update: refresh pods' in-place and lifecycle state, then move pods between revisions.

The I/O shell of ``cloneset_update.go``: the pure core decides
(:func:`refresh_in_place_update`, :func:`refresh_transition`, :func:`decide_updates`);
this module writes the decisions. An in-place update first sets the pod's
``InPlaceUpdateReady`` condition False (reason ``StartInPlaceUpdate``) through the
status subresource, then patches labels, annotations and images in one
strategic-merge patch guarded by the pod's resourceVersion. A pod that cannot be
updated in place is labelled ``apps.kruise.io/specified-delete=true`` and the next
Scale round recreates it.
"""

from __future__ import annotations

import logging
from collections.abc import Coroutine, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from kruise.core.concurrency import bounded_gather
from kruise.core.errors import ConflictError, KruiseError
from kruise.core.events import NORMAL, WARNING, EventRecorder
from kruise.core.expectations import ResourceVersionExpectations
from kruise.core.kube.client import KubeClient
from kruise.core.kube.resources import PODS
from kruise.workloads.cloneset.diffs import Diffs
from kruise.workloads.cloneset.metrics import (
    count_in_place_update,
    count_recreate,
    observe_in_place_completed,
)
from kruise.workloads.cloneset.podstate import revision_labels
from kruise.workloads.cloneset.update import (
    PodUpdateAction,
    UpdateKind,
    decide_updates,
    recreate_patch,
    template_hash_label_patch,
)
from kruise.workloads.inplace import InPlaceUpdateSpec
from kruise.workloads.inplace.apply import (
    RefreshKind,
    has_in_place_readiness_gate,
    in_place_update_pod,
    pod_patch,
    refresh_in_place_update,
    start_in_place_update_condition,
)
from kruise.workloads.inplace.state import check_in_place_update_completed
from kruise.workloads.lifecycle import LifecycleTransition, lifecycle_patch, refresh_transition
from kruise.workloads.objects import KubeObject, mapping, name, namespace, spec, uid
from kruise.workloads.podreadiness import (
    initial_condition,
    lifecycle_not_ready_change,
    not_ready_patch,
    ready_condition,
)

log = logging.getLogger(__name__)

SUCCESSFUL_UPDATE_IN_PLACE = "SuccessfulUpdatePodInPlace"
FAILED_UPDATE_IN_PLACE = "FailedUpdatePodInPlace"
SUCCESSFUL_UPDATE_RECREATE = "SuccessfulUpdatePodReCreate"
FAILED_UPDATE_RECREATE = "FailedUpdatePodReCreate"


@dataclass
class UpdateOutcome:
    modified: bool = False
    errors: list[str] = field(default_factory=list)
    requeue_after: float | None = None

    def requeue(self, seconds: float) -> None:
        self.requeue_after = seconds if self.requeue_after is None else min(self.requeue_after, seconds)


@dataclass
class Updater:
    """Executes one Update round for one CloneSet."""

    kube: KubeClient
    recorder: EventRecorder
    rv_expectations: ResourceVersionExpectations
    short_hash_label: bool = False

    async def refresh(
        self, cs: KubeObject, pods: Sequence[KubeObject], update_revision: str, now: datetime
    ) -> UpdateOutcome:
        """Per-pod bookkeeping (grace periods, next batches, InPlaceUpdateReady, lifecycle)."""
        out = UpdateOutcome()

        async def one(pod: KubeObject) -> None:
            label_fix = template_hash_label_patch(pod)
            if label_fix is not None:
                await self._patch(pod, label_fix, out)
                return
            decision = refresh_in_place_update(pod, now)
            kruise_ready = initial_condition(pod, now)  # the pod-readiness controller's one write
            if kruise_ready is not None and decision.kind != RefreshKind.MARK_READY:
                await self._patch_status(pod, mark_ready_patch(kruise_ready), out)
            if decision.kind == RefreshKind.WAIT_GRACE and decision.requeue_after is not None:
                out.requeue(decision.requeue_after.total_seconds())
            elif decision.kind in (RefreshKind.FINISH_GRACE, RefreshKind.DROP_GRACE, RefreshKind.NEXT_BATCH):
                assert decision.pod is not None
                await self._patch(pod, pod_patch(pod, decision.pod), out)
                return
            elif decision.kind == RefreshKind.MARK_READY and decision.condition is not None:
                extra = () if kruise_ready is None else (kruise_ready,)
                if (
                    await self._patch_status(pod, mark_ready_patch(decision.condition, *extra), out)
                    is not None
                ):
                    observe_in_place_completed(pod, now)
            elif decision.kind == RefreshKind.ERROR:
                out.errors.append(str(decision.error))
            transition = refresh_transition(
                cs, pod, update_revision, update_completed=check_in_place_update_completed(pod)
            )
            if transition is not None:
                await self._lifecycle(pod, transition, now, out)

        # pods are independent: their writes go out concurrently (bounded), each pod's in order
        await _bounded(one(pod) for pod in pods)
        return out

    async def update(
        self,
        cs: KubeObject,
        pods: Sequence[KubeObject],
        current_revision: str,
        update_revision: str,
        revisions_by_name: Mapping[str, KubeObject],
        diffs: Diffs,
        now: datetime,
    ) -> UpdateOutcome:
        """Move the pods :func:`decide_updates` picks (nothing while paused)."""
        out = UpdateOutcome()
        by_name = {name(p): p for p in pods}
        grace = int(
            mapping(mapping(spec(cs).get("updateStrategy")).get("inPlaceUpdateStrategy")).get(
                "gracePeriodSeconds"
            )
            or 0
        )
        actions = decide_updates(cs, pods, current_revision, update_revision, revisions_by_name, diffs, now)

        async def act(action: PodUpdateAction) -> None:
            pod = by_name[action.pod_name]
            if action.kind == UpdateKind.LIFECYCLE and action.transition is not None:
                await self._lifecycle(pod, action.transition, now, out)
            elif action.kind == UpdateKind.RECREATE:
                target = action.target_revision
                if await self._patch(pod, recreate_patch(), out):
                    count_recreate(cs)
                    self.recorder.event(
                        cs,
                        NORMAL,
                        SUCCESSFUL_UPDATE_RECREATE,
                        f"successfully patch pod {name(pod)} specified-delete for update(revision {target})",
                    )
                else:
                    self.recorder.event(
                        cs,
                        WARNING,
                        FAILED_UPDATE_RECREATE,
                        f"failed to patch pod specified-delete {name(pod)} for update(revision {target}): "
                        f"{out.errors[-1] if out.errors else ''}",
                    )
            elif action.kind == UpdateKind.IN_PLACE and action.spec is not None:
                if has_in_place_readiness_gate(pod):
                    cond = start_in_place_update_condition(now)
                    ready = ready_condition(pod, [cond], now)  # upstream's SetPodReadyCondition
                    conds = [cond] if ready is None else [cond, ready]
                    rv = await self._patch_status(pod, {"status": {"conditions": conds}}, out)
                    if rv is None:
                        return
                    pod = {**pod, "metadata": {**mapping(pod.get("metadata")), "resourceVersion": rv}}
                target = action.target_revision
                if await self._patch_in_place(pod, action.spec, now, out):
                    count_in_place_update(cs)
                    self.recorder.event(
                        cs,
                        NORMAL,
                        SUCCESSFUL_UPDATE_IN_PLACE,
                        f"successfully update pod {name(pod)} in-place(revision {target})",
                    )
                    if grace > 0:
                        out.requeue(float(grace))
                else:
                    self.recorder.event(
                        cs,
                        WARNING,
                        FAILED_UPDATE_IN_PLACE,
                        f"failed to update pod {name(pod)} in-place(revision {target}): "
                        f"{out.errors[-1] if out.errors else ''}",
                    )

        # decide_updates ends the list at the first error (upstream stops the round there); the
        # pods before it are updated concurrently (bounded), each pod's own writes in order
        errors = [a for a in actions if a.kind == UpdateKind.ERROR]
        await _bounded(act(a) for a in actions if a.kind != UpdateKind.ERROR)
        for action in errors[:1]:
            out.errors.append(str(action.error))
            self.recorder.event(cs, WARNING, FAILED_UPDATE_IN_PLACE, str(action.error))
        return out

    async def _patch_in_place(
        self, pod: KubeObject, update_spec: InPlaceUpdateSpec, now: datetime, out: UpdateOutcome
    ) -> bool:
        """Write the in-place update, re-reading the pod on conflict (``retry.RetryOnConflict``).

        The patch carries the pod's resourceVersion, so a kubelet (or KWOK) status write
        between our read and our write makes us rebuild the target from the fresh pod.
        """
        current: KubeObject = pod
        for attempt in range(5):
            labels = revision_labels(update_spec.revision, short_hash_label=self.short_hash_label)
            target = in_place_update_pod(current, update_spec, now, revision_labels=labels)
            try:
                result = await self.kube.patch(
                    PODS, name(pod), pod_patch(current, target), namespace(pod), patch_type="strategic"
                )
            except ConflictError:
                if attempt == 4:
                    break
                current = await self.kube.get(PODS, name(pod), namespace(pod))
                continue
            except KruiseError as err:
                out.errors.append(f"in-place update of pod {name(pod)}: {err}")
                return False
            self.rv_expectations.expect(uid(pod), str(result["metadata"]["resourceVersion"]))
            out.modified = True
            return True
        out.errors.append(f"in-place update of pod {name(pod)}: conflicts persisted")
        return False

    async def _lifecycle(
        self, pod: KubeObject, transition: LifecycleTransition, now: datetime, out: UpdateOutcome
    ) -> None:
        """``UpdatePodLifecycle``: the ``markPodNotReady`` key change first, then the state label."""
        try:
            if await apply_not_ready_policy(self.kube, self.rv_expectations, pod, transition, now):
                out.modified = True
        except KruiseError as err:
            out.errors.append(f"patch pod {name(pod)} {transition.state} readiness: {err}")
            return
        await self._patch(pod, lifecycle_patch(transition, now), out)

    async def _patch(self, pod: KubeObject, patch: dict[str, Any], out: UpdateOutcome) -> bool:
        if not patch:
            return True
        try:
            result = await self.kube.patch(PODS, name(pod), patch, namespace(pod), patch_type="strategic")
        except KruiseError as err:
            out.errors.append(f"patch pod {name(pod)}: {err}")
            return False
        self.rv_expectations.expect(uid(pod), str(result["metadata"]["resourceVersion"]))
        out.modified = True
        return True

    async def _patch_status(self, pod: KubeObject, patch: dict[str, Any], out: UpdateOutcome) -> str | None:
        """Patch ``pods/status``; returns the new resourceVersion (None on failure)."""
        try:
            rv = await patch_pod_status(self.kube, self.rv_expectations, pod, patch)
        except KruiseError as err:
            out.errors.append(f"patch pod {name(pod)} status: {err}")
            return None
        out.modified = True
        return rv


def mark_ready_patch(*conditions: dict[str, Any]) -> dict[str, Any]:
    """The ``pods/status`` strategic merge patch setting ``conditions`` (``InPlaceUpdateReady=True``,
    ``KruisePodReady=True``); null clears a leftover reason/message (e.g. ``StartInPlaceUpdate``)."""
    return {"status": {"conditions": [{"reason": None, "message": None, **c} for c in conditions]}}


async def apply_not_ready_policy(
    kube: KubeClient,
    rv_expectations: ResourceVersionExpectations | None,
    pod: KubeObject,
    transition: LifecycleTransition,
    now: datetime,
) -> bool:
    """Lifecycle ``markPodNotReady`` (``executePodNotReadyPolicy``): add or remove the hook's
    ``KruisePodReady`` key before the state label changes, so the pod leaves the endpoints before
    the hook's owner is told (PreparingDelete / PreparingUpdate), and comes back at Updated.

    The write carries the pod's resourceVersion; on a conflict the pod is read again and the
    change recomputed (upstream's ``RetryOnConflict`` around ``GetPod``), so another writer's key
    is never lost. Returns whether anything was written; raises :class:`KruiseError`.
    """
    change = lifecycle_not_ready_change(transition.state) if transition.mark_pod_not_ready else None
    if change is None:
        return False
    current = pod
    for attempt in range(5):
        patch = not_ready_patch(current, change, now)
        if patch is None:
            return False
        version = mapping(current.get("metadata")).get("resourceVersion")
        if version:
            patch["metadata"] = {"resourceVersion": version}
        try:
            await patch_pod_status(kube, rv_expectations, current, patch)
        except ConflictError:
            if attempt == 4:
                raise
            current = await kube.get(PODS, name(pod), namespace(pod))
            continue
        return True
    return False


async def patch_pod_status(
    kube: KubeClient,
    rv_expectations: ResourceVersionExpectations | None,
    pod: KubeObject,
    patch: dict[str, Any],
) -> str:
    """Strategic-merge ``patch`` into ``pods/status``, expect the new resourceVersion in the cache;
    returns it. Raises :class:`KruiseError` as the client does."""
    result = await kube.patch(
        PODS, name(pod), patch, namespace(pod), patch_type="strategic", subresource="status"
    )
    rv = str(result["metadata"]["resourceVersion"])
    if rv_expectations is not None:
        rv_expectations.expect(uid(pod), rv)
    return rv


ROUND_CONCURRENCY = 32
"""Per-pod API writes of one round in flight at once (each pod's own writes stay ordered)."""


async def _bounded(jobs: Iterable[Coroutine[Any, Any, None]]) -> None:
    await bounded_gather(jobs, ROUND_CONCURRENCY)
