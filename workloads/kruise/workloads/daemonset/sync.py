"""Carrying out a DaemonSet :class:`~.plan.Plan` (the I/O shell of ``syncNodes``/``inPlaceUpdatePods``).

Order per round, as upstream: in-place updates (the rolling update's ``inPlaceUpdatePods``),
``PreparingDelete`` for pods their preDelete hook holds (``syncWithPreparingDelete``), creations
in slow-start batches (1, 2, 4, ...; a failing batch stops the rest), then deletions.

Every create and delete is recorded in the controller's scale expectations *before* the API
call and forgotten if it fails, so a reconcile on a cache that does not show the result yet
cannot act twice (never two pods for one node, never more than maxSurge extra). Pod patches go
through the shared :class:`~kruise.workloads.inplace.writer.PodWriter`, which records their
resourceVersions. A just-created pod gets its ``KruisePodReady`` (and ``InPlaceUpdateReady``)
condition at once, so its readiness does not wait for a reconcile.

Events are upstream's: ``SuccessfulCreate`` "Created pod: <name>", ``FailedCreate`` "Error
creating: <err>", ``SuccessfulDelete`` "Deleted pod: <name>", ``FailedDelete`` "Error deleting:
<err>" (Kubernetes' pod control), ``SuccessfulUpdatePodInPlace`` "successfully update pod <name>
in-place", ``FailedUpdatePodInPlace`` "failed to update pod <name> in-place(revision <rev>): <err>"
and ``FailedDaemonPod``.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime

from kruise.core.errors import ForbiddenError, KruiseError, NotFoundError
from kruise.core.events import NORMAL, WARNING, EventRecorder
from kruise.core.expectations import ScaleAction, ScaleExpectations
from kruise.core.kube.client import KubeClient
from kruise.core.kube.resources import PODS
from kruise.core.metrics import DAEMONSET_PODS_RECREATED, DAEMONSET_PODS_UPDATED_IN_PLACE, object_key
from kruise.workloads.daemonset.daemonpods import generated_name, new_pod
from kruise.workloads.daemonset.plan import Deletion, InPlace, Plan
from kruise.workloads.inplace.writer import PodWriter, bounded
from kruise.workloads.lifecycle import LifecycleTransition, hook_of
from kruise.workloads.objects import KubeObject, mapping, name, namespace, uid
from kruise.workloads.pods import REVISION_HASH_LABEL, LifecycleState

__all__ = ["Outcome", "Syncer"]

log = logging.getLogger(__name__)


@dataclass
class Outcome:
    """What a round did: ``modified`` (anything written) and the ``errors`` met."""

    modified: bool = False
    errors: list[str] = field(default_factory=list)


def _namespace_terminating(err: KruiseError) -> bool:
    """``HasStatusCause(err, NamespaceTerminatingCause)``: creating in a namespace being deleted."""
    return isinstance(err, ForbiddenError) and "being terminated" in str(err)


@dataclass
class Syncer:
    """Writes one DaemonSet's plan (its controller's client, expectations and events)."""

    kube: KubeClient
    recorder: EventRecorder
    writer: PodWriter
    expectations: ScaleExpectations
    assign_by_scheduler: bool = True

    async def run(
        self, ds: KubeObject, key: str, decided: Plan, pods: Mapping[str, KubeObject], now: datetime
    ) -> Outcome:
        """Execute ``decided``; ``pods`` are the DaemonSet's pods by name (as planned on)."""
        out = Outcome()
        for warning in decided.warnings:
            self.recorder.event(ds, WARNING, warning.reason, warning.message)
        await bounded(self._in_place(ds, decided.hash, c, pods[c.pod], now, out) for c in decided.in_place)
        hook = hook_of(ds, "preDelete")
        transition = LifecycleTransition(
            LifecycleState.PREPARING_DELETE, mark_pod_not_ready=bool(mapping(hook).get("markPodNotReady"))
        )
        for held in decided.pre_delete:
            try:
                await self.writer.lifecycle(pods[held.pod], transition, now)
                out.modified = True
            except KruiseError as err:
                out.errors.append(f"pod {held.pod} PreparingDelete: {err}")
        await self._create(ds, key, decided, now, out)
        await bounded(self._delete(ds, key, d, pods[d.pod], out) for d in decided.delete)
        return out

    async def _create(self, ds: KubeObject, key: str, decided: Plan, now: datetime, out: Outcome) -> None:
        """The plan's creations in slow-start batches (the rest skipped after a failing batch)."""
        creates = [
            functools.partial(self._create_one, ds, key, decided.hash, node, now) for node in decided.create
        ]
        if creates:
            out.modified = True
            out.errors.extend(str(f) for f in await self.writer.create_slowly(creates))

    async def _create_one(
        self, ds: KubeObject, key: str, hash_value: str, node: str, now: datetime
    ) -> KubeObject | None:
        pod = new_pod(
            ds, hash_value, node, generated_name(name(ds)), now, assign_by_scheduler=self.assign_by_scheduler
        )
        pod_name = name(pod)
        self.expectations.expect(key, ScaleAction.CREATE, pod_name)
        try:
            created = await self.kube.create(PODS, pod, namespace(ds))
        except KruiseError as err:
            self.expectations.forget(key, ScaleAction.CREATE, pod_name)
            if _namespace_terminating(err):
                return None
            self.recorder.event(ds, WARNING, "FailedCreate", f"Error creating: {err}")
            raise
        self.recorder.event(ds, NORMAL, "SuccessfulCreate", f"Created pod: {pod_name}")
        return created

    async def _delete(
        self, ds: KubeObject, key: str, deletion: Deletion, pod: KubeObject, out: Outcome
    ) -> None:
        self.expectations.expect(key, ScaleAction.DELETE, deletion.pod)
        try:
            await self.kube.delete(PODS, deletion.pod, namespace(ds), uid=uid(pod) or None)
        except NotFoundError:
            self.expectations.forget(key, ScaleAction.DELETE, deletion.pod)
            return
        except KruiseError as err:
            self.expectations.forget(key, ScaleAction.DELETE, deletion.pod)
            self.recorder.event(ds, WARNING, "FailedDelete", f"Error deleting: {err}")
            out.errors.append(f"delete pod {deletion.pod}: {err}")
            return
        out.modified = True
        log.info("%s/%s: deleted pod %s (%s)", namespace(ds), name(ds), deletion.pod, deletion.reason)
        self.recorder.event(ds, NORMAL, "SuccessfulDelete", f"Deleted pod: {deletion.pod}")
        if deletion.reason.recreates:
            DAEMONSET_PODS_RECREATED.labels(*object_key(ds)).inc()

    async def _in_place(
        self, ds: KubeObject, hash_value: str, change: InPlace, pod: KubeObject, now: datetime, out: Outcome
    ) -> None:
        try:
            await self.writer.update_in_place(
                pod, change.spec, now, {REVISION_HASH_LABEL: hash_value}, lifecycle_updating=False
            )
        except KruiseError as err:
            message = f"failed to update pod {change.pod} in-place(revision {name(ds)}-{hash_value}): {err}"
            self.recorder.event(ds, WARNING, "FailedUpdatePodInPlace", message)
            out.errors.append(message)
            return
        out.modified = True
        DAEMONSET_PODS_UPDATED_IN_PLACE.labels(*object_key(ds)).inc()
        self.recorder.event(
            ds, NORMAL, "SuccessfulUpdatePodInPlace", f"successfully update pod {change.pod} in-place"
        )
