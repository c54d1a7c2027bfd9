"""The advanced Deployment controller (I/O shell around :func:`~.rolling.decide_rollout`).

Mirrors Kruise Rollouts' "advanced deployment" controller (``pkg/controller/deployment``,
feature gate ``AdvancedDeployment``): for a Deployment under rollout control (any strategy
annotation style but ``Canary``, see :func:`~.rolling.under_control`) it
creates and scales the ReplicaSets itself, then writes the Deployment status and the
``rollouts.kruise.io/deployment-extra-status`` annotation.

- Reads the Deployment and its ReplicaSets from the shared Rollout cache.
- Every ReplicaSet scale is a merge patch guarded by the ReplicaSet's cached
  ``resourceVersion`` (a stale cache gets a conflict and a requeue, never a double scale); after
  a write the next decision waits until the cache shows the written ReplicaSets
  (:class:`~kruise.core.expectations.ResourceVersionExpectations`).
- A new ReplicaSet has a deterministic name: ``AlreadyExists`` from a stale cache is harmless; a
  ReplicaSet of that name with another template (a hash collision) bumps ``status.collisionCount``.
- kube-controller-manager still ``sync``s the paused Deployment (status, revision annotations,
  scaling a lone active ReplicaSet); both compute the same values, see :mod:`.rolling`.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any, Protocol

from kruise.core.errors import AlreadyExistsError, ConflictError, NotFoundError
from kruise.core.events import NORMAL, EventRecorder
from kruise.core.expectations import ResourceVersionExpectations
from kruise.core.informer import object_key
from kruise.core.kube.client import KubeClient
from kruise.core.kube.resources import DEPLOYMENTS, REPLICASETS
from kruise.core.runtime import OWNER_UID, ControllerSpec, Watch, controller_ref, index_by_owner_uid
from kruise.core.workqueue import Result
from kruise.rollouts.advanceddeployment.replicasets import (
    DESIRED_REPLICAS_ANNOTATION,
    MAX_REPLICAS_ANNOTATION,
)
from kruise.rollouts.advanceddeployment.rolling import RolloutDecision, decide_rollout
from kruise.rollouts.release.objects import spec_replicas
from kruise.rollouts.workloads.deployment.podtemplate import equal_ignore_hash
from kruise.rollouts.workloads.deployment.strategy import DEPLOYMENT_EXTRA_STATUS_ANNOTATION, under_control

log = logging.getLogger(__name__)
JSON = dict[str, Any]
REASON_SCALING = "ScalingReplicaSet"  # kube's Deployment controller reason


class DeploymentCache(Protocol):
    def deployment(self, key: str) -> JSON | None: ...

    def replicasets_of(self, namespace: str, owner_uid: str) -> list[JSON]: ...


class AdvancedDeploymentController:
    """Reconciles partition-style Deployments by key ``namespace/name``."""

    name = "advanced-deployment-controller"

    def __init__(
        self,
        kube: KubeClient,
        cache: DeploymentCache,
        recorder: EventRecorder,
        *,
        workers: int = 2,
        expectation_timeout: float = 10.0,
    ) -> None:
        self.kube = kube
        self.cache = cache
        self.recorder = recorder
        self.workers = workers
        self.expectations = ResourceVersionExpectations(timeout=expectation_timeout)

    def wants(self, deployment: Mapping[str, Any]) -> bool:
        """Whether a Deployment event concerns this controller."""
        return under_control(deployment)

    def spec(self) -> ControllerSpec:
        """Woken by partition-style Deployments and by the ReplicaSets they control."""

        def deployment_keys(deployment: JSON) -> tuple[str, ...]:
            return (object_key(deployment),) if deployment.get("metadata") and self.wants(deployment) else ()

        def replicaset_keys(rs: JSON) -> tuple[str, ...]:
            owner = controller_ref(rs, ("Deployment",))
            if owner is None:
                return ()
            key = f"{rs['metadata'].get('namespace')}/{owner.get('name')}"
            deployment = self.cache.deployment(key)
            return (key,) if deployment is not None and self.wants(deployment) else ()

        return ControllerSpec(
            name=self.name,
            watches=(
                Watch(DEPLOYMENTS, deployment_keys),
                Watch(REPLICASETS, replicaset_keys, {OWNER_UID: index_by_owner_uid}),
            ),
            workers=self.workers,
        )

    async def reconcile(self, key: str) -> Result:
        deployment = self.cache.deployment(key)
        if deployment is None or not under_control(deployment):
            return Result()
        ns = str(deployment["metadata"]["namespace"])
        uid = str(deployment["metadata"].get("uid") or "")
        replicasets = [
            rs
            for rs in self.cache.replicasets_of(ns, uid)
            if not (rs.get("metadata") or {}).get("deletionTimestamp")
        ]
        for rs in replicasets:
            rs_meta = rs.get("metadata") or {}
            if not self.expectations.check(str(rs_meta.get("uid")), rs_meta.get("resourceVersion")):
                return Result(requeue_after=0.2)
        decision = decide_rollout(deployment, replicasets)
        try:
            changed = await self._act(deployment, replicasets, decision)
            await self._report(deployment, decision)
        except ConflictError:
            return Result(requeue_after=0.2)
        except NotFoundError:
            return Result()
        if changed:
            return Result(requeue_after=1.0)
        return Result(requeue_after=None if decision.done else 2.0)

    async def _act(self, deployment: JSON, replicasets: list[JSON], decision: RolloutDecision) -> bool:
        ns = str(deployment["metadata"]["namespace"])
        by_name = {str(rs["metadata"]["name"]): rs for rs in replicasets}
        if decision.create is not None:
            body = decision.create
            try:
                created = await self.kube.create(REPLICASETS, body, ns)
            except AlreadyExistsError:
                await self._on_name_taken(deployment, body)
                return True
            self.expectations.expect(
                str(created["metadata"]["uid"]), str(created["metadata"]["resourceVersion"])
            )
            self._event(
                deployment, f"Scaled up replica set {body['metadata']['name']} to {body['spec']['replicas']}"
            )
            return True
        replicas = str(spec_replicas(deployment))
        for scale in decision.scales:
            rs = by_name[scale.name]
            patch = {  # scaleReplicaSet also records the Deployment size the ReplicaSet was sized for
                "metadata": {
                    "resourceVersion": scale.resource_version,
                    "annotations": {DESIRED_REPLICAS_ANNOTATION: replicas, MAX_REPLICAS_ANNOTATION: replicas},
                },
                "spec": {"replicas": scale.replicas},
            }
            updated = await self.kube.patch(REPLICASETS, scale.name, patch, ns, patch_type="merge")
            self.expectations.expect(str(rs["metadata"]["uid"]), str(updated["metadata"]["resourceVersion"]))
            before = int((rs.get("spec") or {}).get("replicas") or 0)
            if before == scale.replicas:  # only its replicas annotations were refreshed
                continue
            direction = "up" if scale.replicas > before else "down"
            self._event(
                deployment, f"Scaled {direction} replica set {scale.name} from {before} to {scale.replicas}"
            )
        return bool(decision.scales)

    async def _on_name_taken(self, deployment: JSON, body: JSON) -> None:
        """A ReplicaSet already has the new one's name: ours from a stale cache (fine), or a hash
        collision, which bumps ``status.collisionCount`` so the next name differs (as kube does)."""
        meta = deployment["metadata"]
        ns = str(meta["namespace"])
        existing = await self.kube.get_or_none(REPLICASETS, body["metadata"]["name"], ns)
        if existing is None:
            return
        owner = controller_ref(existing)
        same = equal_ignore_hash((existing.get("spec") or {}).get("template"), body["spec"]["template"])
        if owner is not None and owner.get("uid") == meta.get("uid") and same:
            return
        count = int((deployment.get("status") or {}).get("collisionCount") or 0) + 1
        log.info("Deployment %s/%s: ReplicaSet name collision, collisionCount -> %d", ns, meta["name"], count)
        await self.kube.patch(
            DEPLOYMENTS,
            str(meta["name"]),
            {"status": {"collisionCount": count}},
            ns,
            patch_type="merge",
            subresource="status",
        )

    async def _report(self, deployment: JSON, decision: RolloutDecision) -> None:
        """Extra-status annotation first (a plain merge patch: its value is computed from the
        ReplicaSets, not from the Deployment), then the status fields that differ."""
        meta = deployment["metadata"]
        ns, name = str(meta["namespace"]), str(meta["name"])
        annotations = meta.get("annotations") or {}
        extra = decision.extra_status
        if extra is not None and annotations.get(DEPLOYMENT_EXTRA_STATUS_ANNOTATION) != extra:
            patch = {"metadata": {"annotations": {DEPLOYMENT_EXTRA_STATUS_ANNOTATION: extra}}}
            await self.kube.patch(DEPLOYMENTS, name, patch, ns, patch_type="merge")
        if decision.status is not None:
            current = deployment.get("status") or {}
            if any(current.get(k, 0) != v for k, v in decision.status.items()):
                await self.kube.patch(
                    DEPLOYMENTS,
                    name,
                    {"status": decision.status},
                    ns,
                    patch_type="merge",
                    subresource="status",
                )

    def _event(self, deployment: JSON, message: str) -> None:
        self.recorder.event(
            {"apiVersion": "apps/v1", "kind": "Deployment", **deployment}, NORMAL, REASON_SCALING, message
        )
