"""The RolloutHistory controller shell (feature gate ``RolloutHistory``): reconciles Rollouts.

Per Rollout (from the cache): the release's rollout-id (:func:`~.record.recorded_id`; none -> nothing
to do), its history found by the labels ``rollouts.kruise.io/rollout-name``/``rollout-id``; a
``Progressing`` release without one gets it created with the snapshots (the Rollout, its workload,
Service, Ingress or HTTPRoute, read from the API server); an open history gets the steps released
so far (pods from the shared pod informer, indexed by rollout-id), and once the release succeeded
its snapshots refreshed, then the ``Completed`` Event and ``phase: completed`` (the Event first, as
for every recorded transition).
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Mapping
from typing import Any

from kruise.core.errors import AlreadyExistsError, ConflictError, NotFoundError
from kruise.core.events import EventRecorder
from kruise.core.kube.client import KubeClient
from kruise.core.kube.resources import CLONESETS, DEPLOYMENTS, PODS, SERVICES, Resource
from kruise.core.runtime import CacheReader, ControllerSpec, Read, Watch, primary
from kruise.core.workqueue import Result
from kruise.rollouts.api.common import ROLLOUT_ID_LABEL
from kruise.rollouts.api.rollouthistory import ROLLOUT_NAME_LABEL
from kruise.rollouts.resources import ROLLOUT_HISTORIES, ROLLOUTS
from kruise.rollouts.rollouthistory.record import (
    history_labels,
    history_name,
    recorded_id,
    routed_names,
    snapshot_spec,
    wanted_status,
)
from kruise.traffic.resources import HTTPROUTES, INGRESSES

log = logging.getLogger(__name__)
JSON = dict[str, Any]
PODS_BY_ROLLOUT_ID = "pods-by-rollout-id"
"""Index of pods by ``namespace/<rollouts.kruise.io/rollout-id>``."""
HISTORIES_OF_ROLLOUT = "histories-of-rollout"
"""Index of RolloutHistories by ``namespace/<rollouts.kruise.io/rollout-name>``."""
WORKLOADS: dict[str, Resource] = {"CloneSet": CLONESETS, "Deployment": DEPLOYMENTS}
"""The workload kinds a history is recorded for (read from the shared informers)."""


def _label_key(label: str) -> Any:
    def index(obj: JSON) -> tuple[str, ...]:
        meta = obj.get("metadata") or {}
        value = (meta.get("labels") or {}).get(label)
        return (f"{meta.get('namespace')}/{value}",) if value else ()

    return index


index_pod_rollout_id = _label_key(ROLLOUT_ID_LABEL)
index_history_rollout = _label_key(ROLLOUT_NAME_LABEL)


class RolloutHistoryController:
    name = "rollouthistory-controller"

    def __init__(
        self, kube: KubeClient, recorder: EventRecorder, cache: CacheReader, *, workers: int = 3
    ) -> None:
        self.kube = kube
        self.recorder = recorder
        self.cache = cache
        self.workers = workers

    def spec(self) -> ControllerSpec:
        """Woken by Rollouts and by the histories naming them; reads workloads and pods."""
        return ControllerSpec(
            name=self.name,
            watches=(
                primary(ROLLOUTS),
                Watch(
                    ROLLOUT_HISTORIES, index_history_rollout, {HISTORIES_OF_ROLLOUT: index_history_rollout}
                ),
            ),
            reads=(
                Read(PODS, {PODS_BY_ROLLOUT_ID: index_pod_rollout_id}),
                *(Read(res) for res in WORKLOADS.values()),
            ),
            workers=self.workers,
        )

    async def reconcile(self, key: str) -> Result:
        rollout = self.cache.get(ROLLOUTS, key)
        if rollout is None:
            return Result()
        workload = self._workload(rollout)
        rollout_id = recorded_id(rollout, workload)
        if not rollout_id:
            return Result()
        found = [
            h
            for h in self.cache.by_index(ROLLOUT_HISTORIES, HISTORIES_OF_ROLLOUT, key)
            if (h["metadata"].get("labels") or {}).get(ROLLOUT_ID_LABEL) == rollout_id
        ]
        if not found:
            if (rollout.get("status") or {}).get("phase") == "Progressing":
                await self._create(rollout, rollout_id, workload)
            return Result()
        history = found[0]
        selector = ((workload or {}).get("spec") or {}).get("selector")
        pods = self.cache.by_index(
            PODS, PODS_BY_ROLLOUT_ID, f"{rollout['metadata']['namespace']}/{rollout_id}"
        )
        wanted = wanted_status(rollout, history, selector, pods)
        if wanted.status is None:
            return Result()
        if wanted.completed:
            spec = await self._snapshot(rollout, rollout_id, workload)
            if spec != history.get("spec"):
                await self._replace_spec(history, spec)
                return Result()
            message = f"Rollout {rollout['metadata']['name']} completed release {rollout_id}"
            if not await self.recorder.transition(
                history, "Normal", "Completed", message, leaving=history.get("status") or {}
            ):
                return Result(requeue_after=5.0)
        current = history.get("status") or {}
        if any(current.get(k) != v for k, v in wanted.status.items()):
            await self._write_status(history, wanted.status)
        return Result()

    def _workload(self, rollout: Mapping[str, Any]) -> JSON | None:
        ref = (rollout.get("spec") or {}).get("workloadRef") or {}
        res = WORKLOADS.get(str(ref.get("kind")))
        if res is None or str(ref.get("apiVersion") or "").rpartition("/")[0] != res.group:
            return None
        return self.cache.get(res, f"{rollout['metadata']['namespace']}/{ref.get('name')}")

    async def _snapshot(self, rollout: Mapping[str, Any], rollout_id: str, workload: JSON | None) -> JSON:
        ns = str(rollout["metadata"]["namespace"])
        service, ingress, route = routed_names(rollout)
        objects = []
        for res, name in ((SERVICES, service), (INGRESSES, ingress), (HTTPROUTES, route)):
            objects.append(await self.kube.get_or_none(res, name, ns) if name else None)
        return snapshot_spec(rollout, rollout_id, workload, *objects)

    async def _create(self, rollout: Mapping[str, Any], rollout_id: str, workload: JSON | None) -> None:
        meta = rollout["metadata"]
        name = history_name(meta["name"], rollout_id)
        body: JSON = {
            "apiVersion": ROLLOUT_HISTORIES.api_version,
            "kind": ROLLOUT_HISTORIES.kind,
            "metadata": {
                "name": name,
                "namespace": meta["namespace"],
                "labels": history_labels(meta["name"], rollout_id),
            },
            "spec": await self._snapshot(rollout, rollout_id, workload),
        }
        with contextlib.suppress(AlreadyExistsError):
            await self.kube.create(ROLLOUT_HISTORIES, body, meta["namespace"])
            log.info("RolloutHistory %s/%s created for release %s", meta["namespace"], name, rollout_id)

    async def _replace_spec(self, history: Mapping[str, Any], spec: JSON) -> None:
        """Update the whole object with the new snapshots (its resourceVersion is the precondition)."""
        with contextlib.suppress(NotFoundError, ConflictError):
            await self.kube.replace(ROLLOUT_HISTORIES, {**history, "spec": spec})

    async def _write_status(self, history: Mapping[str, Any], status: JSON) -> None:
        meta = history["metadata"]
        body = {"metadata": {"resourceVersion": meta["resourceVersion"]}, "status": status}
        with contextlib.suppress(NotFoundError, ConflictError):
            await self.kube.patch(
                ROLLOUT_HISTORIES,
                meta["name"],
                body,
                meta["namespace"],
                patch_type="merge",
                subresource="status",
            )
