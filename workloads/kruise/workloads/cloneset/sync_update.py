"""Update: refresh pods' in-place and lifecycle state, then move pods between revisions.

The I/O shell of ``cloneset_update.go``: the pure core decides (:func:`decide_updates`), the
shared :class:`~kruise.workloads.inplace.writer.PodWriter` writes refreshes, in-place updates
and lifecycle changes as every workload does; this module adds the CloneSet's events, metrics and
the recreate path: a pod that cannot be updated in place is labelled
``apps.kruise.io/specified-delete=true`` and the next Scale round recreates it.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from kruise.core.errors import KruiseError
from kruise.core.events import NORMAL, WARNING, EventRecorder
from kruise.core.expectations import ResourceVersionExpectations
from kruise.core.kube.client import KubeClient
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
from kruise.workloads.inplace.writer import PodWriter, bounded
from kruise.workloads.lifecycle import LifecycleTransition
from kruise.workloads.objects import KubeObject, mapping, name, spec

log = logging.getLogger(__name__)

SUCCESSFUL_UPDATE_IN_PLACE = "SuccessfulUpdatePodInPlace"
FAILED_UPDATE_IN_PLACE = "FailedUpdatePodInPlace"
SUCCESSFUL_UPDATE_RECREATE = "SuccessfulUpdatePodReCreate"
FAILED_UPDATE_RECREATE = "FailedUpdatePodReCreate"


UpdateGuard = Callable[[KubeObject], Awaitable[str | None]]
"""Asked before a pod is updated (gate ``PodUnavailableBudgetUpdateGate``: the pod's
PodUnavailableBudget spends a unit): ``None`` to go ahead, else why not."""
GUARD_RETRY_SECONDS = 1.0
"""Upstream requeues the CloneSet this soon when the budget refuses a pod."""


async def admit_in_order(
    actions: Sequence[PodUpdateAction], pods: Mapping[str, KubeObject], guard: UpdateGuard
) -> tuple[list[PodUpdateAction], str | None]:
    """The actions to run: each pod's are asked of ``guard`` (once per pod, in order) and the
    round stops at the first refusal, as upstream's update loop returns there; returns the
    actions kept and the refusal (``None`` when every pod was admitted)."""
    kept: list[PodUpdateAction] = []
    admitted: set[str] = set()
    for action in actions:
        if action.kind != UpdateKind.ERROR and action.pod_name not in admitted:
            refusal = await guard(pods[action.pod_name])
            if refusal is not None:
                return kept, refusal
            admitted.add(action.pod_name)
        kept.append(action)
    return kept, None


@dataclass
class UpdateOutcome:
    modified: bool = False
    errors: list[str] = field(default_factory=list)
    requeue_after: float | None = None
    written: dict[str, KubeObject] = field(default_factory=dict)
    """Pod name -> the pod as the API server answered this round's last write to it."""

    def as_written(self, pods: Sequence[KubeObject]) -> list[KubeObject]:
        """``pods`` with each one this round wrote replaced by the API server's answer."""
        return [self.written.get(name(p), p) for p in pods]

    def requeue(self, seconds: float) -> None:
        self.requeue_after = seconds if self.requeue_after is None else min(self.requeue_after, seconds)


@dataclass
class Updater:
    """Executes one Update round for one CloneSet."""

    kube: KubeClient
    recorder: EventRecorder
    rv_expectations: ResourceVersionExpectations
    short_hash_label: bool = False
    guard: UpdateGuard | None = None

    def __post_init__(self) -> None:
        self.writer = PodWriter(self.kube, self.rv_expectations)

    async def refresh(
        self, cs: KubeObject, pods: Sequence[KubeObject], update_revision: str, now: datetime
    ) -> UpdateOutcome:
        """Per-pod bookkeeping (grace periods, next batches, InPlaceUpdateReady, lifecycle)."""
        out = UpdateOutcome()
        fixes = [(pod, fix) for pod in pods if (fix := template_hash_label_patch(pod)) is not None]
        fixed = {id(pod) for pod, _ in fixes}
        # pods are independent: their writes go out concurrently (bounded), each pod's in order
        await bounded(self._patch(pod, fix, out) for pod, fix in fixes)
        rest = (p for p in pods if id(p) not in fixed)
        for pod, result in await self.writer.refresh_all(cs, rest, update_revision, now):
            out.modified = out.modified or result.modified
            if result.requeue_after is not None:
                out.requeue(result.requeue_after)
            if result.error is not None:
                out.errors.append(result.error)
            if result.in_place_completed:
                observe_in_place_completed(pod, now)
            if result.pod is not None:
                out.written[name(pod)] = result.pod
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
        if self.guard is not None and actions:
            actions, refusal = await admit_in_order(actions, by_name, self.guard)
            if refusal is not None:
                log.info("cloneset %s: update waits for the pod budget: %s", name(cs), refusal)
                out.requeue(GUARD_RETRY_SECONDS)

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
                target = action.target_revision
                labels = revision_labels(target, short_hash_label=self.short_hash_label)
                try:
                    await self.writer.update_in_place(pod, action.spec, now, labels)
                except KruiseError as err:
                    out.errors.append(f"in-place update of pod {name(pod)}: {err}")
                    self.recorder.event(
                        cs,
                        WARNING,
                        FAILED_UPDATE_IN_PLACE,
                        f"failed to update pod {name(pod)} in-place(revision {target}): {out.errors[-1]}",
                    )
                    return
                out.modified = True
                count_in_place_update(cs)
                self.recorder.event(
                    cs,
                    NORMAL,
                    SUCCESSFUL_UPDATE_IN_PLACE,
                    f"successfully update pod {name(pod)} in-place(revision {target})",
                )
                if grace > 0:
                    out.requeue(float(grace))

        # decide_updates ends the list at the first error (upstream stops the round there); the
        # pods before it are updated concurrently (bounded), each pod's own writes in order
        errors = [a for a in actions if a.kind == UpdateKind.ERROR]
        await bounded(act(a) for a in actions if a.kind != UpdateKind.ERROR)
        for action in errors[:1]:
            out.errors.append(str(action.error))
            self.recorder.event(cs, WARNING, FAILED_UPDATE_IN_PLACE, str(action.error))
        return out

    async def _lifecycle(
        self, pod: KubeObject, transition: LifecycleTransition, now: datetime, out: UpdateOutcome
    ) -> None:
        """``UpdatePodLifecycle``: the ``markPodNotReady`` key change first, then the state label."""
        try:
            await self.writer.lifecycle(pod, transition, now)
        except KruiseError as err:
            out.errors.append(f"patch pod {name(pod)} {transition.state}: {err}")
            return
        out.modified = True

    async def _patch(self, pod: KubeObject, patch: dict[str, Any], out: UpdateOutcome) -> bool:
        try:
            out.modified = await self.writer.patch(pod, patch) or out.modified
        except KruiseError as err:
            out.errors.append(f"patch pod {name(pod)}: {err}")
            return False
        return True
