"""The ImagePullJob controller (shell over :func:`.plan.plan`).

Upstream's ``imagepulljob-controller`` (``--imagepulljob-workers`` 3, gate ``ImagePullJobGate``):
woken by its jobs, by NodeImage changes (every unfinished job; the plan picks its targets) and by
pod changes in a job's namespace when the job has a ``podSelector``. A round: a deleted job
releases its secret copies and drops the ``apps.kruise.io/deletion-protection`` finalizer (the
NodeImage controller then removes its tags); a completed job does the same and is deleted
``ttlSecondsAfterFinished`` after ``completionTime``; a running job gets the finalizer, its secret
copies, its tag on up to ``parallelism - active`` more NodeImages and its status written once.

A round's NodeImage writes run concurrently, at most :data:`SYNC_CONCURRENCY` in flight (upstream
writes them one after another; a job fanned out to 1,000 nodes then took three times as long as a
client sending the same writes at the manager's QPS, ``bench/nodeimage_fanout.py``). Each write
starts from the informer's copy, as upstream's cached ``Get``, and only after a conflict reads the
NodeImage fresh from the API server and tries again (at most :data:`CONFLICT_RETRIES` times).
As upstream, every NodeImage written is expected back in the cache at its new resourceVersion:
while one of a job's targets is not, the job's round waits (woken by that NodeImage's event, or
after :data:`EXPECTATION_REQUEUE` seconds), so a stale copy never yields a second write.
"""

from __future__ import annotations

import contextlib
import logging
import random
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from typing import Any

from kruise.core.concurrency import bounded_gather
from kruise.core.errors import ConflictError, NotFoundError
from kruise.core.expectations import ResourceVersionExpectations
from kruise.core.informer.store import JSON, Delta, EventType, object_key
from kruise.core.kube import KubeClient
from kruise.core.kube.resources import PODS
from kruise.core.runtime import CacheReader, ControllerSpec, primary
from kruise.core.runtime.spec import Watch
from kruise.core.workqueue import Result
from kruise.daemon.api.imagepulljob import IMAGEPULLJOBS
from kruise.daemon.api.nodeimage import NODEIMAGES
from kruise.daemon.imagepulljob.admission import PROTECTION_FINALIZER
from kruise.daemon.imagepulljob.plan import (
    DEFAULT_TTL_FOR_ALWAYS,
    add_tag,
    after_completion,
    plan,
    tag_pull_policy,
    targets,
)
from kruise.daemon.imagepulljob.secrets import sync_secrets
from kruise.daemon.imagepulljob.selectors import matches

__all__ = ["ImagePullJobController"]

log = logging.getLogger("kruise.imagepulljob")
WORKERS = 3
CONFLICT_RETRIES = 5
SYNC_CONCURRENCY = 32
"""NodeImage writes of one round in flight at once (the client's QPS/burst still bound them)."""
EXPECTATION_REQUEUE = 5.0
"""Seconds before a round waiting for the cache to show its NodeImage writes looks again."""


def _unfinished(job: Mapping[str, Any]) -> bool:
    return not (job.get("status") or {}).get("completionTime")


class ImagePullJobController:
    """Writes each job's tag into its nodes' NodeImages and reads progress back (module docstring)."""

    name = "imagepulljob-controller"

    def __init__(
        self,
        kube: KubeClient,
        cache: CacheReader,
        *,
        workers: int = WORKERS,
        ttl_for_always: int = DEFAULT_TTL_FOR_ALWAYS,
    ) -> None:
        self.kube = kube
        self.cache = cache
        self.workers = workers
        self.ttl_for_always = ttl_for_always
        self._rng = random.Random()
        self._written = ResourceVersionExpectations()

    def spec(self) -> ControllerSpec:
        return ControllerSpec(
            name=self.name,
            watches=(
                primary(IMAGEPULLJOBS),
                Watch(NODEIMAGES, lambda _obj: self._jobs(None), observe=self._nodeimage_event),
                Watch(PODS, self._jobs_for_pod),
            ),
            workers=self.workers,
        )

    def _nodeimage_event(self, delta: Delta) -> None:
        """A deleted NodeImage (its node gone) will never show the write expected of it: forget it,
        as upstream's expectations are deleted with their object."""
        if delta.type is EventType.DELETED:
            self._written.delete(str(delta.obj["metadata"].get("uid")))

    def _jobs(self, namespace: str | None) -> Iterable[str]:
        for job in self.cache.list(IMAGEPULLJOBS):
            if _unfinished(job) and (namespace is None or job["metadata"].get("namespace") == namespace):
                yield object_key(job)

    def _jobs_for_pod(self, pod: JSON) -> Iterable[str]:
        namespace = pod["metadata"].get("namespace")
        for job in self.cache.list(IMAGEPULLJOBS):
            selector = (job.get("spec") or {}).get("podSelector")
            if selector is None or job["metadata"].get("namespace") != namespace or not _unfinished(job):
                continue
            if matches(selector, pod["metadata"].get("labels")):
                yield object_key(job)

    async def reconcile(self, key: str) -> Result | None:
        job = self.cache.get(IMAGEPULLJOBS, key)
        if job is None:
            return None
        now = datetime.now(UTC)
        if job["metadata"].get("deletionTimestamp"):
            await self._finalize(job)
            return None
        if (job.get("status") or {}).get("completionTime"):
            await self._finalize(job)
            delete, requeue = after_completion(job, now)
            if delete:
                log.info("deleting ImagePullJob %s for ttlSecondsAfterFinished", key)
                await self.kube.delete(
                    IMAGEPULLJOBS, job["metadata"]["name"], job["metadata"]["namespace"], missing_ok=True
                )
                return None
            return Result(requeue_after=requeue) if requeue else None
        job = await self._protect(job)
        secrets = await sync_secrets(self.kube, job)
        pods = self.cache.list(PODS) if (job.get("spec") or {}).get("podSelector") is not None else []
        namespace = job["metadata"]["namespace"]
        nodeimages = self.cache.list(NODEIMAGES)
        pods = [p for p in pods if p["metadata"].get("namespace") == namespace]
        for target in targets(job, nodeimages, pods):
            meta = target["metadata"]
            if not self._written.check(meta["uid"], meta.get("resourceVersion")):
                log.debug("ImagePullJob %s waits for NodeImage %s in the cache", key, meta["name"])
                return Result(requeue_after=EXPECTATION_REQUEUE)
        decided = plan(job, nodeimages, pods, now, secrets)
        cached = {n["metadata"]["name"]: n for n in nodeimages}
        await bounded_gather(
            (self._write_tag(job, cached.get(node), node, now, secrets) for node in decided.sync),
            SYNC_CONCURRENCY,
        )
        if decided.status != (job.get("status") or {}):
            await self.kube.replace(IMAGEPULLJOBS, {**job, "status": decided.status}, subresource="status")
        return Result(requeue_after=decided.requeue_after) if decided.requeue_after else None

    async def _protect(self, job: JSON) -> JSON:
        finalizers = list(job["metadata"].get("finalizers") or [])
        if PROTECTION_FINALIZER in finalizers:
            return job
        body = {**job, "metadata": {**job["metadata"], "finalizers": [*finalizers, PROTECTION_FINALIZER]}}
        return await self.kube.replace(IMAGEPULLJOBS, body)

    async def _finalize(self, job: JSON) -> None:
        finalizers = list(job["metadata"].get("finalizers") or [])
        if PROTECTION_FINALIZER not in finalizers:
            return
        await sync_secrets(self.kube, job, release=True)
        kept = [f for f in finalizers if f != PROTECTION_FINALIZER]
        patch = [
            {"op": "test", "path": "/metadata/resourceVersion", "value": job["metadata"]["resourceVersion"]},
            {"op": "replace", "path": "/metadata/finalizers", "value": kept},
        ]
        with contextlib.suppress(NotFoundError):
            await self.kube.patch(
                IMAGEPULLJOBS, job["metadata"]["name"], patch, job["metadata"]["namespace"], patch_type="json"
            )

    async def _write_tag(
        self, job: JSON, cached: JSON | None, node: str, now: datetime, secrets: list[tuple[str, str]]
    ) -> None:
        """Add the job's tag to NodeImage ``node``: first onto ``cached`` (the informer's copy, or
        None to read it), after a conflict onto a fresh read; a NodeImage gone is skipped."""
        policy = tag_pull_policy(job, self._rng.randrange, ttl_for_always=self.ttl_for_always)
        nodeimage = cached
        for _ in range(CONFLICT_RETRIES):
            if nodeimage is None:
                try:
                    nodeimage = await self.kube.get(NODEIMAGES, node)
                except NotFoundError:
                    return
            spec = add_tag(nodeimage, job, now, policy, secrets)
            if spec is None:
                return
            try:
                written = await self.kube.replace(NODEIMAGES, {**nodeimage, "spec": spec})
            except ConflictError:
                nodeimage = None
                continue
            except NotFoundError:
                return
            self._written.expect(written["metadata"]["uid"], written["metadata"]["resourceVersion"])
            log.info(
                "ImagePullJob %s synced %s into NodeImage %s", object_key(job), job["spec"]["image"], node
            )
            return
