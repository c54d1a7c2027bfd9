"""The container launch priority controller (shell over :func:`.core.decide`).

Upstream's ``container-launch-priority-controller`` (4 workers): woken by pod events that
:func:`.core.needs_attention` accepts; for such a pod it reads the barrier ConfigMap
``<pod>-barrier`` (created, owned by the pod so the garbage collector removes it with the pod,
when missing), adds the next key, and marks the pod completed. ConfigMaps are read with a GET per
reconcile instead of a cluster-wide ConfigMap informer: only pods waiting on a barrier get here.
"""

from __future__ import annotations

import logging

from kruise.core.errors import AlreadyExistsError, NotFoundError
from kruise.core.informer.store import JSON, Delta, EventType
from kruise.core.kube import KubeClient
from kruise.core.kube.resources import CONFIGMAPS, PODS
from kruise.core.runtime import CacheReader, ControllerSpec, primary
from kruise.core.workqueue import Result
from kruise.workloads.launchpriority.core import COMPLETED_KEY, barrier_name, decide, needs_attention

__all__ = ["LaunchPriorityController"]

log = logging.getLogger("kruise.launchpriority")
WORKERS = 4


def _wanted(delta: Delta) -> bool:
    return delta.type is not EventType.DELETED and needs_attention(delta.obj)


class LaunchPriorityController:
    """Opens each pod's barrier one priority at a time (see the module docstring)."""

    name = "container-launch-priority"

    def __init__(self, kube: KubeClient, cache: CacheReader, *, workers: int = WORKERS) -> None:
        self.kube = kube
        self.cache = cache
        self.workers = workers

    def spec(self) -> ControllerSpec:
        return ControllerSpec(name=self.name, watches=(primary(PODS, accept=_wanted),), workers=self.workers)

    async def reconcile(self, key: str) -> Result | None:
        pod = self.cache.get(PODS, key)
        if pod is None or not needs_attention(pod):
            return None
        meta = pod["metadata"]
        namespace, name = meta["namespace"], meta["name"]
        barrier = await self._barrier(pod)
        step = decide(pod, barrier.get("data") or {})
        if step.add is not None:
            await self.kube.patch(CONFIGMAPS, barrier_name(name), {"data": {step.add: "true"}}, namespace)
            log.info("pod %s/%s: barrier %s opened", namespace, name, step.add)
        if step.complete:
            await self.kube.patch(
                PODS, name, {"metadata": {"annotations": {COMPLETED_KEY: "true"}}}, namespace
            )
        return None

    async def _barrier(self, pod: JSON) -> JSON:
        meta = pod["metadata"]
        namespace, name = meta["namespace"], meta["name"]
        try:
            return await self.kube.get(CONFIGMAPS, barrier_name(name), namespace)
        except NotFoundError:
            pass
        body: JSON = {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {
                "name": barrier_name(name),
                "namespace": namespace,
                "ownerReferences": [{"apiVersion": "v1", "kind": "Pod", "name": name, "uid": meta["uid"]}],
            },
        }
        try:
            return await self.kube.create(CONFIGMAPS, body, namespace)
        except AlreadyExistsError:
            return await self.kube.get(CONFIGMAPS, barrier_name(name), namespace)
