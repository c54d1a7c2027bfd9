"""The ImageListPullJob controller (shell over :func:`.listplan.list_plan`).

Upstream's ``imagelistpulljob-controller``: woken by its lists and their ImagePullJobs; creates
and deletes the children the plan names (``Successful create ImagePullJob`` / ``Successful delete
ImagePullJob`` Normal events, as upstream words them), writes the aggregated status, and deletes a
completed list after ``ttlSecondsAfterFinished``. Creations are guarded by scale expectations
(counted children) so a stale cache never creates a child twice.
"""

from __future__ import annotations

import logging
import time
from datetime import UTC, datetime

from kruise.core.events import EventRecorder
from kruise.core.kube import KubeClient
from kruise.core.runtime import CacheReader, ControllerSpec, owned, primary
from kruise.core.runtime.spec import OWNER_UID
from kruise.core.workqueue import Result
from kruise.daemon.api.imagepulljob import IMAGELISTPULLJOBS, IMAGEPULLJOBS
from kruise.daemon.imagepulljob.listplan import list_plan
from kruise.daemon.imagepulljob.plan import after_completion

__all__ = ["ImageListPullJobController"]

log = logging.getLogger("kruise.imagelistpulljob")
WORKERS = 3


class ImageListPullJobController:
    """One ImagePullJob per image of each list (module docstring)."""

    name = "imagelistpulljob-controller"

    def __init__(
        self,
        kube: KubeClient,
        recorder: EventRecorder,
        cache: CacheReader,
        *,
        workers: int = WORKERS,
        expectation_timeout: float = 300.0,
    ) -> None:
        self.kube = kube
        self.recorder = recorder
        self.cache = cache
        self.workers = workers
        self.expectation_timeout = expectation_timeout
        self._expected: dict[str, tuple[set[str], set[str], float]] = {}

    def spec(self) -> ControllerSpec:
        return ControllerSpec(
            name=self.name,
            watches=(primary(IMAGELISTPULLJOBS), owned(IMAGEPULLJOBS, IMAGELISTPULLJOBS)),
            workers=self.workers,
        )

    async def reconcile(self, key: str) -> Result | None:
        lst = self.cache.get(IMAGELISTPULLJOBS, key)
        if lst is None:
            self._expected.pop(key, None)
            return None
        now = datetime.now(UTC)
        if (lst.get("status") or {}).get("completionTime"):
            delete, requeue = after_completion(lst, now)
            if delete:
                log.info("deleting ImageListPullJob %s for ttlSecondsAfterFinished", key)
                await self.kube.delete(
                    IMAGELISTPULLJOBS, lst["metadata"]["name"], lst["metadata"]["namespace"], missing_ok=True
                )
                return None
            return Result(requeue_after=requeue) if requeue else None
        children = self.cache.by_index(IMAGEPULLJOBS, OWNER_UID, lst["metadata"]["uid"])
        images = {c["spec"]["image"] for c in children if not c["metadata"].get("deletionTimestamp")}
        names = {c["metadata"]["name"] for c in children}
        pending = self._expected.get(key)
        if pending is not None:
            created, deleted, since = pending
            if (
                created <= images and not (deleted & names)
            ) or time.monotonic() - since > self.expectation_timeout:
                self._expected.pop(key, None)
            else:
                return Result(requeue_after=1.0)
        decided = list_plan(lst, children, now)
        namespace = lst["metadata"]["namespace"]
        if decided.delete:
            for child_key in decided.delete:
                await self.kube.delete(IMAGEPULLJOBS, child_key.split("/", 1)[1], namespace, missing_ok=True)
            self.recorder.event(
                lst, "Normal", "Successful delete ImagePullJob", f"Delete {len(decided.delete)} ImagePullJob"
            )
        if decided.create:
            for body in decided.create:
                await self.kube.create(IMAGEPULLJOBS, body, namespace)
            self.recorder.event(
                lst, "Normal", "Successful create ImagePullJob", f"Create {len(decided.create)} ImagePullJob"
            )
        if decided.create or decided.delete:
            self._expected[key] = (
                {b["spec"]["image"] for b in decided.create},
                {k.split("/", 1)[1] for k in decided.delete},
                time.monotonic(),
            )
        if decided.status != (lst.get("status") or {}):
            await self.kube.replace(
                IMAGELISTPULLJOBS, {**lst, "status": decided.status}, subresource="status"
            )
        return None
