"""The NodeImage controller (shell over :mod:`.nodeimage_core`).

Upstream's ``nodeimage-controller`` (``--nodeimage-workers`` 3): woken by NodeImages, by Nodes
(created, relabelled, deleted) and by deleted ImagePullJobs (the NodeImages holding their tags).
It creates and deletes NodeImages with their Nodes, keeps their labels, drops tags whose owners
are gone or whose TTL passed, and fails tags the daemon did not answer in time.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from datetime import UTC, datetime

from kruise.core.errors import AlreadyExistsError, ConflictError, NotFoundError
from kruise.core.events import EventRecorder
from kruise.core.informer.store import JSON, Delta, EventType
from kruise.core.kube import KubeClient
from kruise.core.kube.resources import NODES
from kruise.core.runtime import CacheReader, ControllerSpec, primary
from kruise.core.runtime.spec import Watch
from kruise.core.workqueue import Result
from kruise.daemon.api.imagepulljob import IMAGEPULLJOBS
from kruise.daemon.api.nodeimage import NODEIMAGES
from kruise.daemon.imagepulljob.nodeimage_core import (
    DEFAULT_CREATION_DELAY,
    FAKE_LABEL,
    creation_wait,
    prune_spec,
    timeout_status,
)

__all__ = ["NodeImageController"]

log = logging.getLogger("kruise.nodeimage")
WORKERS = 3
MIN_REQUEUE = 3.0


class NodeImageController:
    """One NodeImage per Node, pruned of tags nobody wants (module docstring)."""

    name = "nodeimage-controller"

    def __init__(
        self,
        kube: KubeClient,
        recorder: EventRecorder,
        cache: CacheReader,
        *,
        workers: int = WORKERS,
        creation_delay: float = DEFAULT_CREATION_DELAY,
    ) -> None:
        self.kube = kube
        self.recorder = recorder
        self.cache = cache
        self.workers = workers
        self.creation_delay = creation_delay

    def spec(self) -> ControllerSpec:
        return ControllerSpec(
            name=self.name,
            watches=(
                primary(NODEIMAGES),
                Watch(NODES, lambda node: (node["metadata"]["name"],)),
                Watch(IMAGEPULLJOBS, lambda _obj: (), delta_keys=self._holders),
            ),
            workers=self.workers,
        )

    def _holders(self, delta: Delta) -> Iterable[str]:
        if delta.type is not EventType.DELETED:
            return ()
        uid = delta.obj["metadata"].get("uid")
        return [
            n["metadata"]["name"]
            for n in self.cache.list(NODEIMAGES)
            if any(
                ref.get("uid") == uid
                for image in ((n.get("spec") or {}).get("images") or {}).values()
                for tag in image.get("tags") or ()
                for ref in tag.get("ownerReferences") or ()
            )
        ]

    def _job_uid(self, namespace: str, name: str) -> str | None:
        job = self.cache.get(IMAGEPULLJOBS, f"{namespace}/{name}")
        return None if job is None else job["metadata"].get("uid")

    async def reconcile(self, key: str) -> Result | None:
        now = datetime.now(UTC)
        node = self.cache.get(NODES, key)
        nodeimage = self.cache.get(NODEIMAGES, key)
        if node is None or node["metadata"].get("deletionTimestamp"):
            if nodeimage is None or nodeimage["metadata"].get("deletionTimestamp"):
                return None
            if FAKE_LABEL not in (nodeimage["metadata"].get("labels") or {}):
                await self.kube.delete(NODEIMAGES, key, missing_ok=True)
                log.info("NodeImage %s deleted with its Node", key)
                return None
        if nodeimage is None:
            assert node is not None
            wait = creation_wait(node, now, self.creation_delay)
            if wait is None:
                return None
            if wait > 0:
                return Result(requeue_after=wait)
            body: JSON = {
                "apiVersion": "apps.kruise.io/v1alpha1",
                "kind": "NodeImage",
                "metadata": {"name": key},
                "spec": {},
            }
            try:
                await self.kube.create(NODEIMAGES, body)
                log.info("NodeImage %s created", key)
            except AlreadyExistsError:
                pass
            return None
        if nodeimage["metadata"].get("deletionTimestamp"):
            return None
        change = prune_spec(nodeimage, node, self._job_uid, now)
        if change.modified:
            await self._write_spec(key, node)
            return None
        status = timeout_status(nodeimage, now)
        if status.status is not None:
            try:
                await self.kube.replace(
                    NODEIMAGES, {**nodeimage, "status": status.status}, subresource="status"
                )
            except ConflictError:
                return Result(requeue_after=MIN_REQUEUE)
            for failure in status.failures:
                message = f"Failed to pull image {failure.image} on node {key} for {failure.message}"
                for owner in failure.owners:
                    ref = {
                        "apiVersion": owner.get("apiVersion"),
                        "kind": owner.get("kind"),
                        "metadata": {k: owner.get(k) for k in ("name", "namespace", "uid")},
                    }
                    self.recorder.event(ref, "Warning", "PullImageFailed", message)
                self.recorder.event(nodeimage, "Warning", "PullImageFailed", message)
        waits = [w for w in (change.requeue_after, status.requeue_after) if w is not None]
        return Result(requeue_after=max(min(waits), MIN_REQUEUE)) if waits else None

    async def _write_spec(self, key: str, node: JSON | None) -> None:
        for _ in range(5):
            try:
                fresh = await self.kube.get(NODEIMAGES, key)
            except NotFoundError:
                return
            change = prune_spec(fresh, node, self._job_uid, datetime.now(UTC))
            if not change.modified:
                return
            meta = dict(fresh["metadata"])
            if change.labels is not None:
                meta["labels"] = change.labels
            body = {
                **fresh,
                "metadata": meta,
                "spec": change.spec if change.spec is not None else fresh.get("spec"),
            }
            try:
                await self.kube.replace(NODEIMAGES, body)
            except ConflictError:
                continue
            log.info("NodeImage %s updated: %s", key, "; ".join(change.messages) or "node labels changed")
            return
