"""The daemon's container-meta controller (shell over :func:`.plan.plan_meta`).

Woken by events of its node's pods that :func:`.plan.stale` accepts (5 workers, upstream's
count). Per pod: list the pod's containers through CRI, plan, read ``env`` (``ExecSync``, 3 s)
in each running container whose hash is not known yet, plan again, stop the containers to
restart (grace 2 s: the kubelet's minimum, which upstream's restarter gets by passing no pod),
(once the pod's metadata has been stable for 1 s: see :meth:`ContainerMetaController._settle`),
and write the annotation with a strategic-merge patch of ``pods/status`` when it changed. An
``env`` that fails is retried in 3 s. Env hashes are remembered per container ID, so a pod event
that arrives before our own write is seen does not run ``env`` again.
"""

from __future__ import annotations

import json
import logging
import time

from kruise.core.containermeta import RUNTIME_CONTAINERS_META_KEY, current_hash, parse_env_output
from kruise.core.informer.store import JSON, Delta, EventType, object_key
from kruise.core.kube.resources import PODS
from kruise.core.runtime import CacheReader, ControllerSpec, Watch
from kruise.core.workqueue import Result
from kruise.daemon.containermeta.plan import plan_meta, stale
from kruise.daemon.cri.port import CriError
from kruise.daemon.node import NodeDeps

__all__ = ["ContainerMetaController"]

log = logging.getLogger("kruise.daemon.containermeta")
ENV_TIMEOUT = 3
STOP_GRACE = 2
RETRY_SECONDS = 3.0
SETTLE_SECONDS = 1.0
"""Seconds the pod's metadata must be unchanged before a stale container is stopped."""


class ContainerMetaController:
    """``apps.kruise.io/runtime-containers-meta`` for the pods of ``node_name``."""

    name = "containermeta"

    def __init__(
        self,
        node: NodeDeps,
        cache: CacheReader,
        *,
        env_gate: bool = True,
        workers: int = 5,
    ) -> None:
        self.kube, self.cri, self.node_name = node.kube, node.cri, node.node_name
        self.recorder = node.recorder(self.name)
        self.cache = cache
        self.env_gate = env_gate
        self.workers = workers
        self._env_hashes: dict[str, dict[str, int]] = {}  # pod key -> runtime ID -> hash
        self._stale_since: dict[str, tuple[object, float]] = {}  # pod key -> (what was stale, since)

    def spec(self) -> ControllerSpec:
        def accept(delta: Delta) -> bool:
            return delta.type is not EventType.DELETED and stale(delta.obj, self.env_gate)

        def forget(delta: Delta) -> None:
            if delta.type is EventType.DELETED:
                self._env_hashes.pop(object_key(delta.obj), None)
                self._stale_since.pop(object_key(delta.obj), None)

        watch = Watch(PODS, lambda obj: (object_key(obj),), observe=forget, accept=accept)
        return ControllerSpec(name=self.name, watches=(watch,), workers=self.workers)

    async def stop(self) -> None:
        return None

    async def reconcile(self, key: str) -> Result | None:
        pod = self.cache.get(PODS, key)
        if pod is None or not stale(pod, self.env_gate):
            return None
        meta = pod["metadata"]
        containers = {c.id: c for c in await self.cri.list_containers(pod_uid=meta["uid"])}
        known = {cid: h for cid, h in self._env_hashes.get(key, {}).items() if cid in containers}
        self._env_hashes[key] = known
        plan = plan_meta(pod, containers, known, env_gate=self.env_gate)
        retry = False
        if plan.needs_env:
            specs = {c["name"]: c for c in pod["spec"]["containers"]}
            for container_id in plan.needs_env:
                try:
                    result = await self.cri.exec_sync(container_id, ["env"], ENV_TIMEOUT)
                except CriError as err:
                    log.warning("pod %s: env of container %s: %s", key, container_id, err)
                    retry = True
                    continue
                spec = specs[containers[container_id].name]
                known[container_id] = current_hash(spec, parse_env_output(result.stdout))
            plan = plan_meta(pod, containers, known, env_gate=self.env_gate)
        wait = self._settle(key, pod, plan.restart)
        for container_id in plan.restart if wait is None else ():
            name = containers[container_id].name
            message = f"Stopping containerID {container_id} by container meta restarter"
            self.recorder.event(pod, "Normal", "Killing", f"Container {name}: {message}")
            await self.cri.stop_container(container_id, STOP_GRACE)
        if plan.changed:
            value = json.dumps(plan.meta, separators=(",", ":"))
            patch = {"metadata": {"annotations": {RUNTIME_CONTAINERS_META_KEY: value}}}
            await self.kube.patch(
                PODS, meta["name"], patch, meta["namespace"], patch_type="strategic", subresource="status"
            )
        if wait is not None:
            return Result(requeue_after=wait)
        return Result(requeue_after=RETRY_SECONDS) if retry else None

    def _settle(self, key: str, pod: JSON, restart: tuple[str, ...]) -> float | None:
        """Seconds still to wait before stopping ``restart`` (None: stop now). A container is
        stopped only once the pod's metadata has been what it is for :data:`SETTLE_SECONDS`: the
        kubelet resolves the env of the container it starts next from its own copy of the pod,
        and one that has not seen the new labels yet would start it with the old values (a second
        restart). Upstream's daemon gets the same slack by enqueueing pod events 1 s late."""
        if not restart:
            self._stale_since.pop(key, None)
            return None
        meta = pod["metadata"]
        seen = (json.dumps([meta.get("labels"), meta.get("annotations")], sort_keys=True), tuple(restart))
        since = self._stale_since.get(key)
        now = time.monotonic()
        if since is None or since[0] != seen:
            self._stale_since[key] = (seen, now)
            return SETTLE_SECONDS
        left = SETTLE_SECONDS - (now - since[1])
        if left > 0:
            return left
        del self._stale_since[key]
        return None
