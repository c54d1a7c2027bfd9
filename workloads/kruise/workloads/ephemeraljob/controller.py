"""The EphemeralJob controller shell: observe (cache), decide (:func:`~.plan.plan`), act, write
status once. Upstream's ``ephemeraljob-controller`` (``ReconcileEphemeralJob``, v1.8).

1. The job from the cache; gone -> drop its expectations. While the cache does not show the
   job as this controller last wrote it (finalizers or status: a resourceVersion expectation),
   or does not show ephemeral containers it injected (scale expectations keyed by pod name),
   nothing is decided: look again soon.
2. Plan over the pods of the job's namespace (shared pod informer, indexed by namespace). A job
   being deleted loses its finalizer (a merge patch with the job's resourceVersion as
   precondition) and nothing else; a live one gets it first the same way. Past its TTL the job
   is deleted (UID precondition).
3. The plan's pods get the template's containers through their ``ephemeralcontainers``
   subresource (a strategic merge patch: containers merge by name), in slow-start batches (1, 2,
   4, ...; a failing batch stops the rest). A refusal is a Warning ``CreateFailed`` event "failed
   to create ephemeral container in pod <ns>/<name>: <err>" (upstream's wording) and the round is
   retried with backoff.
4. The status is written once (a merge patch of the status subresource with the job's
   resourceVersion as precondition, only when it changed); requeue at the deadline or TTL.

Pod events wake the jobs of the pod's namespace whose selector matches the pod (before or after
the event): a pod added or gone, its phase, labels, deletion, ephemeral containers or their
statuses changed (upstream's ``podHandler`` reacts to status changes only; a label change here
also lets a pod enter or leave a job's selection at once).
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime
import logging
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from kruise.core.errors import KruiseError, NotFoundError
from kruise.core.events import WARNING
from kruise.core.expectations import ScaleAction
from kruise.core.informer import Delta, EventType
from kruise.core.kube.resources import EPHEMERALJOBS, PODS
from kruise.core.runtime import ControllerSpec, Watch, primary
from kruise.core.workqueue import Result
from kruise.workloads.controllerbase import WorkloadController
from kruise.workloads.ephemeraljob.containers import Settings, has_job_containers, injection_patch
from kruise.workloads.ephemeraljob.plan import FINALIZER, Plan, plan
from kruise.workloads.inplace.writer import slow_start_batches
from kruise.workloads.objects import (
    KubeObject,
    finalizers,
    labels,
    mapping,
    metadata,
    name,
    spec,
    status,
    uid,
)
from kruise.workloads.objects import namespace as namespace_of
from kruise.workloads.selector import SelectorError, selector_matches

__all__ = ["POD_NAMESPACE_INDEX", "EphemeralJobController", "EphemeralJobOptions", "EphemeralJobSyncError"]

log = logging.getLogger(__name__)

POD_NAMESPACE_INDEX = "ephemeraljob-pod-namespace"
"""Pods by namespace: the candidates of a job are its namespace's pods."""


@dataclass(frozen=True)
class EphemeralJobOptions:
    """Controller settings. Upstream has no flag for these (10 concurrent reconciles)."""

    workers: int = 3
    expectation_timeout: float = 300.0


class EphemeralJobSyncError(KruiseError):
    """A round met errors; the key is retried with backoff."""


def _now() -> datetime.datetime:
    return datetime.datetime.now(datetime.UTC)


def _pod_namespace(pod: KubeObject) -> tuple[str, ...]:
    return (namespace_of(pod),)


def _pod_changed(delta: Delta) -> bool:
    """Added or gone, or a field a job's decision reads changed (not heartbeats, not conditions)."""
    if delta.type is not EventType.MODIFIED or delta.old is None:
        return True
    new, old = delta.obj, delta.old
    return (
        labels(new) != labels(old)
        or status(new).get("phase") != status(old).get("phase")
        or metadata(new).get("deletionTimestamp") != metadata(old).get("deletionTimestamp")
        or spec(new).get("ephemeralContainers") != spec(old).get("ephemeralContainers")
        or status(new).get("ephemeralContainerStatuses") != status(old).get("ephemeralContainerStatuses")
    )


class EphemeralJobController(WorkloadController[EphemeralJobOptions]):
    """Reconciles EphemeralJobs; one instance per manager, its expectations are its own."""

    name = "ephemeraljob-controller"

    def spec(self) -> ControllerSpec:
        """Woken by EphemeralJobs and by the pods their selectors match (:meth:`job_keys`)."""
        return ControllerSpec(
            name=self.name,
            watches=(
                primary(EPHEMERALJOBS),
                Watch(PODS, self.job_keys, {POD_NAMESPACE_INDEX: _pod_namespace}, accept=_pod_changed),
            ),
            workers=self.options.workers,
        )

    def job_keys(self, pod: KubeObject) -> Iterable[str]:
        """The keys of the jobs in the pod's namespace whose selector matches its labels."""
        ns, pod_labels = namespace_of(pod), labels(pod)
        keys: list[str] = []
        for job in self.cache.list(EPHEMERALJOBS):
            if namespace_of(job) != ns:
                continue
            selector = spec(job).get("selector")
            with contextlib.suppress(SelectorError):
                if isinstance(selector, dict) and selector_matches(selector, pod_labels):
                    keys.append(f"{ns}/{name(job)}")
        return keys

    # ------------------------------------------------------------------ reconcile
    async def reconcile(self, key: str) -> Result:
        cached = self.cache.get(EPHEMERALJOBS, key)
        if cached is None:
            self.expectations.delete(key)
            return Result()
        job: KubeObject = cached
        if not self.rv_expectations.caught_up(job):
            return Result(requeue_after=0.5)  # the cache does not show our last write yet
        pods = self.cache.by_index(PODS, POD_NAMESPACE_INDEX, namespace_of(job))
        waiting = self._waiting(key, job, pods)
        if waiting is not None:
            return Result(requeue_after=waiting)
        decided = plan(job, pods, _now())
        if decided.remove_finalizer:
            await self._set_finalizers(job, [f for f in finalizers(job) if f != FINALIZER])
            return Result()
        version = metadata(job).get("resourceVersion")  # the status write's precondition
        if decided.add_finalizer:
            written = await self._set_finalizers(job, [*finalizers(job), FINALIZER])
            if written is None:
                return Result()  # gone meanwhile
            version = metadata(written).get("resourceVersion")
        if decided.delete_job:
            log.info("%s: deleting EphemeralJob past its ttlSecondsAfterFinished", key)
            with contextlib.suppress(NotFoundError):
                await self.kube.delete(EPHEMERALJOBS, name(job), namespace_of(job), uid=uid(job))
            self.expectations.delete(key)
            return Result()
        errors: list[str] = []
        if decided.inject:
            log.info("%s: injecting ephemeral containers into %s", key, decided.inject)
            by_name = {name(p): p for p in pods}
            await self._inject(job, key, [by_name[n] for n in decided.inject], errors)
        await self._write_status(job, decided, version)
        if errors:
            raise EphemeralJobSyncError(f"{key}: {'; '.join(errors)}")
        return Result(requeue_after=decided.requeue_after)

    def _waiting(self, key: str, job: KubeObject, pods: Sequence[KubeObject]) -> float | None:
        """Seconds to wait while the cache does not show containers this controller injected (a
        pod gone meanwhile no longer holds the round back)."""
        if not spec(job).get("template"):
            return None
        settings = Settings.of(job)
        by_name = {name(p): p for p in pods}

        def observed(pod_name: str) -> bool:
            pod = by_name.get(pod_name)
            return pod is None or has_job_containers(settings, pod)

        satisfaction = self.expectations.check(key, observed)
        if satisfaction.satisfied or self.expectations.timed_out(satisfaction):
            return None
        return min(5.0, self.expectations.timeout - satisfaction.waited)

    async def _inject(self, job: KubeObject, key: str, pods: Sequence[KubeObject], errors: list[str]) -> None:
        """``syncTargetPods``: slow-start batches; after a failing batch the rest wait a round."""
        patch = injection_patch(Settings.of(job))
        start = 0
        for size in slow_start_batches(len(pods)):
            batch = pods[start : start + size]
            start += size
            results = await asyncio.gather(
                *(self._inject_one(job, key, p, patch) for p in batch), return_exceptions=True
            )
            failures = [str(r) for r in results if isinstance(r, BaseException)]
            if failures:
                errors.extend(failures)
                return

    async def _inject_one(self, job: KubeObject, key: str, pod: KubeObject, patch: dict[str, object]) -> None:
        self.expectations.expect(key, ScaleAction.CREATE, name(pod))
        try:
            await self.kube.patch(
                PODS,
                name(pod),
                patch,
                namespace_of(pod),
                patch_type="strategic",
                subresource="ephemeralcontainers",
            )
        except KruiseError as err:
            self.expectations.forget(key, ScaleAction.CREATE, name(pod))
            message = f"failed to create ephemeral container in pod {namespace_of(pod)}/{name(pod)}: {err}"
            self.recorder.event(job, WARNING, "CreateFailed", message)
            raise EphemeralJobSyncError(message) from err

    async def _set_finalizers(self, job: KubeObject, wanted: list[str]) -> KubeObject | None:
        """Write ``metadata.finalizers`` (resourceVersion precondition); the job written, or
        ``None`` when it is gone."""
        body = {"metadata": {"finalizers": wanted, "resourceVersion": metadata(job).get("resourceVersion")}}
        try:
            written = await self.kube.patch(EPHEMERALJOBS, name(job), body, namespace_of(job))
        except NotFoundError:
            return None
        self._expect_written(written)
        return written

    async def _write_status(self, job: KubeObject, decided: Plan, version: str | None) -> None:
        """The plan's status, when it differs from the job's, with ``version`` as precondition."""
        if decided.status is None:
            return
        wanted = decided.status.to_dict()
        if wanted == dict(mapping(job.get("status"))):
            return
        body = {"metadata": {"resourceVersion": version}, "status": wanted}
        with contextlib.suppress(NotFoundError):
            written = await self.kube.patch(
                EPHEMERALJOBS, name(job), body, namespace_of(job), patch_type="merge", subresource="status"
            )
            self._expect_written(written)

    def _expect_written(self, written: KubeObject) -> None:
        version = metadata(written).get("resourceVersion")
        if version:
            self.rv_expectations.expect(uid(written), str(version))
