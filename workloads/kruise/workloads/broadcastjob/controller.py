"""The BroadcastJob controller shell: observe (cache), decide (:func:`~.plan.plan`), act, write
status once. Upstream's ``broadcastjob-controller`` (``ReconcileBroadcastJob``, v1.8).

1. The job from the cache; gone -> drop its expectations.
2. While scale expectations are unmet (a pod created for a node, or deleted, that the cache does
   not show yet) nothing is decided: look again. Creations are expected *by node name* as
   upstream (the pod's name is generated), so no node ever gets two pods from a stale cache.
   Likewise while the cached job is older than the last status this controller wrote (a
   resourceVersion expectation), so a round never decides twice on the same stale status
   (a job failing past its deadline would be failed again, its deleted pods no longer counted).
3. Plan over every Node and the job's pods (shared pod informer, indexed by owner UID): delete
   the job past its TTL; else delete pods, create pods in slow-start batches (1, 2, 4, ...;
   a failing batch stops the rest), write the status once (a merge patch of the status
   subresource with the job's resourceVersion as precondition, only when it changed; a conflict
   retries the round) and emit the plan's events; requeue after the deadline or TTL.

Node events wake the jobs they matter to (``enqueueBroadcastJobForNode``): a new node the job's
pod fits, an update that changes whether it fits (heartbeats never), and, beyond upstream, a
deleted node the pod fitted (so ``desired`` follows at once). Finished jobs are not woken.

Events: the plan's, plus ``SuccessfulCreate`` "Created pod: <name>", ``FailedCreate`` "Error
creating: <err>", ``SuccessfulDelete`` "Delete pod: <name>" (upstream's wording).
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime
import logging
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from kruise.core.errors import KruiseError, NotFoundError
from kruise.core.events import NORMAL, WARNING
from kruise.core.expectations import ScaleAction
from kruise.core.informer import Delta, EventType
from kruise.core.kube.resources import BROADCASTJOBS, NODES, PODS
from kruise.core.runtime import OWNER_UID, ControllerSpec, Watch, owned, primary
from kruise.core.workqueue import Result
from kruise.workloads.broadcastjob.jobpods import assigned_node, new_pod, owned_by
from kruise.workloads.broadcastjob.nodes import node_misfit
from kruise.workloads.broadcastjob.plan import Plan, is_finished, plan
from kruise.workloads.controllerbase import WorkloadController
from kruise.workloads.inplace.writer import slow_start_batches
from kruise.workloads.nodepredicates import is_heartbeat_only
from kruise.workloads.objects import KubeObject, is_being_deleted, mapping, metadata, name, spec, status, uid
from kruise.workloads.objects import namespace as namespace_of

__all__ = ["BroadcastJobController", "BroadcastJobOptions", "BroadcastJobSyncError"]

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class BroadcastJobOptions:
    """Controller settings (kruise-manager flags)."""

    workers: int = 3  # --broadcastjob-workers
    expectation_timeout: float = 300.0
    assign_pods_by_scheduler: bool = True  # --assign-bcj-pods-by-scheduler


class BroadcastJobSyncError(KruiseError):
    """A round met errors; the key is retried with backoff."""


def _now() -> datetime.datetime:
    return datetime.datetime.now(datetime.UTC)


def _fits(job: KubeObject, node: KubeObject) -> bool:
    template_spec = mapping(mapping(spec(job).get("template")).get("spec"))
    return node_misfit({**template_spec, "nodeName": name(node)}, node) is None


def _node_key(node: str) -> str:
    return f"node/{node}"


def _pod_key(pod: str) -> str:
    return f"pod/{pod}"


class BroadcastJobController(WorkloadController[BroadcastJobOptions]):
    """Reconciles BroadcastJobs; one instance per manager, its expectations are its own
    (``rv_expectations``: the job's status this controller wrote last)."""

    name = "broadcastjob-controller"

    def spec(self) -> ControllerSpec:
        """Woken by BroadcastJobs, their pods (indexed by owner UID) and the node events that
        matter to them (:meth:`node_keys`)."""
        return ControllerSpec(
            name=self.name,
            watches=(
                primary(BROADCASTJOBS),
                owned(PODS, BROADCASTJOBS),
                Watch(NODES, lambda _: (), delta_keys=self.node_keys),
            ),
            workers=self.options.workers,
        )

    def node_keys(self, delta: Delta) -> Iterable[str]:
        """The unfinished jobs a node event matters to (``enqueueBroadcastJobForNode``)."""
        node, old = delta.obj, delta.old
        if delta.type is EventType.MODIFIED and old is not None and is_heartbeat_only(old, node):
            return ()
        keys: list[str] = []
        for job in self.cache.list(BROADCASTJOBS):
            if is_finished(job):
                continue
            if delta.type is EventType.MODIFIED and old is not None:
                wake = _fits(job, node) != _fits(job, old)
            else:
                wake = _fits(job, node)
            if wake:
                keys.append(f"{namespace_of(job)}/{name(job)}")
        return keys

    # ------------------------------------------------------------------ reconcile
    async def reconcile(self, key: str) -> Result:
        job = self.cache.get(BROADCASTJOBS, key)
        if job is None:
            self.expectations.delete(key)
            return Result()
        if not self.rv_expectations.caught_up(job):
            return Result(requeue_after=0.5)  # the cache does not show our last status yet
        pods = [p for p in self.cache.by_index(PODS, OWNER_UID, uid(job)) if owned_by(p, job)]
        waiting = self._waiting(key, pods)
        if waiting is not None:
            return Result(requeue_after=waiting)
        decided = plan(job, self.cache.list(NODES), pods, _now())
        if decided.delete_job:
            log.info("%s: deleting BroadcastJob past its ttlSecondsAfterFinished", key)
            with contextlib.suppress(NotFoundError):
                await self.kube.delete(BROADCASTJOBS, name(job), namespace_of(job), uid=uid(job))
            return Result()
        errors: list[str] = []
        by_name = {name(p): p for p in pods}
        await asyncio.gather(*(self._delete(job, key, by_name[p], errors) for p in decided.delete))
        created = len(decided.create_on)
        if decided.create_on:
            log.info("%s: creating pods on %d nodes: %s", key, created, decided.create_on)
            created = await self._create(job, key, decided.create_on, errors)
        for event in decided.events:
            self.recorder.event(job, event.type, event.reason, event.message)
        if decided.status is not None and created < len(decided.create_on):  # active counts pods made
            decided.status.active -= len(decided.create_on) - created
        await self._write_status(job, decided)
        if errors:
            raise BroadcastJobSyncError(f"{key}: {'; '.join(errors)}")
        return Result(requeue_after=decided.requeue_after)

    def _waiting(self, key: str, pods: Sequence[KubeObject]) -> float | None:
        """Seconds to wait while the cache does not show this controller's creates and deletes."""
        present = {_node_key(assigned_node(p)) for p in pods}
        present |= {_pod_key(name(p)) for p in pods if not is_being_deleted(p)}
        satisfaction = self.expectations.check(key, present.__contains__)
        if satisfaction.satisfied or self.expectations.timed_out(satisfaction):
            return None
        return min(5.0, self.expectations.timeout - satisfaction.waited)

    async def _create(self, job: KubeObject, key: str, nodes: Sequence[str], errors: list[str]) -> int:
        """Pods on ``nodes`` in slow-start batches; after a failing batch the rest wait a round.
        Returns how many were created."""
        start = made = 0
        for size in slow_start_batches(len(nodes)):
            batch = nodes[start : start + size]
            start += size
            results = await asyncio.gather(
                *(self._create_one(job, key, n) for n in batch), return_exceptions=True
            )
            failures = [str(r) for r in results if isinstance(r, BaseException)]
            made += len(results) - len(failures)
            if failures:
                errors.extend(failures)
                break
        return made

    async def _create_one(self, job: KubeObject, key: str, node: str) -> None:
        pod = new_pod(job, node, assign_by_scheduler=self.options.assign_pods_by_scheduler)
        self.expectations.expect(key, ScaleAction.CREATE, _node_key(node))
        try:
            created = await self.kube.create(PODS, pod, namespace_of(job))
        except KruiseError as err:
            self.expectations.forget(key, ScaleAction.CREATE, _node_key(node))
            self.recorder.event(job, WARNING, "FailedCreate", f"Error creating: {err}")
            raise
        self.recorder.event(job, NORMAL, "SuccessfulCreate", f"Created pod: {name(created)}")

    async def _delete(self, job: KubeObject, key: str, pod: KubeObject, errors: list[str]) -> None:
        self.expectations.expect(key, ScaleAction.DELETE, _pod_key(name(pod)))
        try:
            await self.kube.delete(PODS, name(pod), namespace_of(job), uid=uid(pod) or None)
        except NotFoundError:
            self.expectations.forget(key, ScaleAction.DELETE, _pod_key(name(pod)))
            return
        except KruiseError as err:
            self.expectations.forget(key, ScaleAction.DELETE, _pod_key(name(pod)))
            self.recorder.event(job, WARNING, "FailedDelete", f"Error deleting: {err}")
            errors.append(f"delete pod {name(pod)}: {err}")
            return
        self.recorder.event(job, NORMAL, "SuccessfulDelete", f"Delete pod: {name(pod)}")

    async def _write_status(self, job: KubeObject, decided: Plan) -> None:
        if decided.status is None:
            return
        wanted: dict[str, Any] = decided.status.to_dict()
        if wanted == dict(status(job)):
            return
        body = {"metadata": {"resourceVersion": metadata(job).get("resourceVersion")}, "status": wanted}
        with contextlib.suppress(NotFoundError):
            written = await self.kube.patch(
                BROADCASTJOBS, name(job), body, namespace_of(job), patch_type="merge", subresource="status"
            )
            version = metadata(written).get("resourceVersion")
            if version:
                self.rv_expectations.expect(uid(job), str(version))
