"""Carry out the state machine's actions against the API server (I/O shell).

Each action is idempotent and answers one question for the machine: *did I have to
change anything?* (``True``) or was the world already as wanted (``False``). A
traffic router that reports "not converged yet" without writing counts as a change,
so the machine keeps waiting.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable, Mapping
from typing import Any, Protocol

from kruise.core.errors import AlreadyExistsError, ConflictError, NotFoundError
from kruise.core.jsoncopy import json_copy
from kruise.core.kube.client import KubeClient
from kruise.core.kube.resources import CLONESETS, DEPLOYMENTS, PODS, REPLICASETS
from kruise.rollouts.api.common import ROLLBACK_IN_BATCH_ANNOTATION
from kruise.rollouts.release.constants import IN_PROGRESSING_ANNOTATION, POD_TEMPLATE_HASH_LABEL
from kruise.rollouts.resources import BATCH_RELEASES
from kruise.rollouts.rollout import analysis_effects
from kruise.rollouts.rollout.model import Action, ActionKind
from kruise.rollouts.rollout.trafficfights import TrafficConflict
from kruise.rollouts.workloads.deployment.stablehold import deployment_stable_hold
from kruise.rollouts.workloads.registry import Found, resources

log = logging.getLogger(__name__)
JSON = dict[str, Any]
WORKLOAD_RESOURCES = resources()
STABLE_HOLD_TARGETS = (DEPLOYMENTS, REPLICASETS)
"""What a held abort of a Deployment patches (its strategy annotation, its ReplicaSets' replicas)."""
"""What the workload writes here may target (every registered kind's resource)."""


class TrafficPort(Protocol):
    """Services and routes for one Rollout (see :mod:`kruise.rollouts.rollout.traffic`)."""

    async def pin_stable(self, intent: JSON) -> bool: ...

    async def restore_stable(self, intent: JSON) -> bool: ...

    async def ensure_canary_service(self, intent: JSON) -> bool: ...

    async def delete_canary_service(self, intent: JSON) -> bool: ...

    async def ensure_routes(self, intent: JSON) -> bool: ...

    async def restore_routes(self, intent: JSON) -> bool: ...

    async def conflict(self, rollout: JSON) -> TrafficConflict | None:
        """Another writer fighting what the traffic actions wrote, for the ``Conflict`` condition."""
        ...

    def wake_in(self, rollout: JSON) -> float | None:
        """Seconds until such a fight is due to be judged again; ``None`` outside a fight."""
        ...


class Effects:
    """Executes :class:`Action` values for one Rollout object."""

    def __init__(
        self, kube: KubeClient, traffic: TrafficPort, cached_batch: Callable[[str], JSON | None] | None = None
    ) -> None:
        self.kube = kube
        self.traffic = traffic
        self.cached_batch = cached_batch
        self._seen: dict[str, tuple[str, int]] = {}
        """BatchRelease ``ns/name`` -> ``(uid, metadata.generation)`` last read from or written to
        the API server: a cached copy at least that new has every spec write of ours."""

    async def run(self, rollout: Mapping[str, Any], found: Found | None, action: Action) -> bool:
        """Run ``action`` for ``rollout`` (``found``: its workload, None when it is gone)."""
        kind = action.kind
        payload = action.payload
        if kind == ActionKind.ENSURE_BATCH_RELEASE:
            return await self._ensure_batch_release(rollout, payload["spec"], payload.get("annotations"))
        if kind == ActionKind.SYNC_BATCH_RELEASE_ID:
            meta = rollout["metadata"]
            body = {"spec": {"releasePlan": {"rolloutID": payload["rolloutID"]}}}
            with contextlib.suppress(NotFoundError):
                await self.kube.patch(
                    BATCH_RELEASES, meta["name"], body, meta["namespace"], patch_type="merge"
                )
            return True
        if kind == ActionKind.FINALIZE_BATCH_RELEASE:
            if payload.get("exists"):
                return await self._ensure_batch_release(rollout, payload["spec"])
            return await self._resume_workload(found)
        if kind == ActionKind.DELETE_BATCH_RELEASE:
            meta = rollout["metadata"]
            return (
                await self.kube.delete(BATCH_RELEASES, meta["name"], meta["namespace"], missing_ok=True)
                is not None
            )
        if kind == ActionKind.RELEASE_WORKLOAD:
            return await self._release_workload(found)
        intent = payload.get("intent") or {}
        if kind == ActionKind.ENSURE_ANALYSIS_RUN:
            return await analysis_effects.ensure_run(self.kube, rollout, payload)
        if kind == ActionKind.TERMINATE_ANALYSIS_RUNS:
            return await analysis_effects.terminate_runs(self.kube, rollout)
        if kind == ActionKind.REVERT_WORKLOAD:
            return await analysis_effects.revert_workload(
                self.kube, found, str(payload.get("stableRevision"))
            )
        if kind == ActionKind.HOLD_STABLE_PODS:
            return await self._hold_stable_pods(found, str(payload.get("stableRevision") or ""))
        if kind == ActionKind.PIN_STABLE_SERVICE:
            return await self.traffic.pin_stable(intent)
        if kind == ActionKind.RESTORE_STABLE_SERVICE:
            return await self.traffic.restore_stable(intent)
        if kind == ActionKind.ENSURE_CANARY_SERVICE:
            return await self.traffic.ensure_canary_service(intent)
        if kind == ActionKind.DELETE_CANARY_SERVICE:
            return await self.traffic.delete_canary_service(intent)
        if kind == ActionKind.ENSURE_ROUTES:
            return await self.traffic.ensure_routes(intent)
        if kind == ActionKind.RESTORE_ROUTES:
            return await self.traffic.restore_routes(intent)
        raise ValueError(f"unknown action {kind}")

    async def _ensure_batch_release(
        self, rollout: Mapping[str, Any], spec: JSON, annotations: Mapping[str, str] | None = None
    ) -> bool:
        """Create or update the BatchRelease to ``spec``; ``annotations`` (when given) are the
        ``rollouts.kruise.io/*`` annotations it must carry, and no other of ours (rollback-in-batch)."""
        meta = rollout["metadata"]
        ns, name = meta["namespace"], meta["name"]
        key = f"{ns}/{name}"
        cached = self.cached_batch(key) if self.cached_batch is not None else None
        fresh = cached is not None and self._fresh(key, cached)
        if cached is not None and fresh and _satisfies(cached, spec, annotations):
            return False  # the informer's copy has our last spec write: nothing to read or write
        # the informer's copy has our last write: update from it (a write by someone else since
        # makes the update conflict, and then it is read); else read it from the API server
        current = cached if fresh else await self.kube.get_or_none(BATCH_RELEASES, name, ns)
        if current is None:
            self._seen.pop(key, None)
            body = {
                "apiVersion": BATCH_RELEASES.api_version,
                "kind": "BatchRelease",
                "metadata": {
                    "name": name,
                    "namespace": ns,
                    **({"annotations": dict(annotations)} if annotations else {}),
                    "ownerReferences": [
                        {
                            "apiVersion": rollout.get("apiVersion", "rollouts.kruise.io/v1beta1"),
                            "kind": "Rollout",
                            "name": name,
                            "uid": meta["uid"],
                            "controller": True,
                            "blockOwnerDeletion": True,
                        }
                    ],
                },
                "spec": spec,
            }
            with contextlib.suppress(AlreadyExistsError):
                self._note(key, await self.kube.create(BATCH_RELEASES, body, ns))
            return True
        self._note(key, current)
        if _satisfies(current, spec, annotations):
            return False
        have_annotations = (current.get("metadata") or {}).get("annotations") or {}
        updated = json_copy(current)
        updated["spec"] = spec
        if not _same_annotations(current, annotations) and annotations is not None:
            kept = {k: v for k, v in have_annotations.items() if k != ROLLBACK_IN_BATCH_ANNOTATION}
            updated["metadata"]["annotations"] = {**kept, **annotations} or None
        try:
            self._note(key, await self.kube.replace(BATCH_RELEASES, updated))
        except ConflictError:
            if not fresh:
                raise
            self._seen.pop(key, None)  # read it next round
        return True

    def _note(self, key: str, batch: Mapping[str, Any]) -> None:
        meta = batch.get("metadata") or {}
        self._seen[key] = (str(meta.get("uid")), int(meta.get("generation") or 0))

    def _fresh(self, key: str, cached: Mapping[str, Any]) -> bool:
        """Whether ``cached`` is the object last seen from the API server (same uid), at its
        generation or later. Unknown (first look since start): not fresh, read it."""
        seen = self._seen.get(key)
        meta = cached.get("metadata") or {}
        return seen is not None and seen[0] == meta.get("uid") and int(meta.get("generation") or 0) >= seen[1]

    async def _resume_workload(self, found: Found | None) -> bool:
        """No BatchRelease to hand the workload back: lift the webhook's hold directly (the
        kind's resume patch, guarded by the workload's resourceVersion)."""
        patch = None if found is None else found.kind.resume(found.workload)
        if found is None or patch is None:
            return False
        meta = found.workload["metadata"]
        body = {
            **patch,
            "metadata": {**(patch.get("metadata") or {}), "resourceVersion": meta["resourceVersion"]},
        }
        resource = found.kind.resource
        await self.kube.patch(resource, meta["name"], body, meta["namespace"], patch_type="merge")
        return True

    async def _hold_stable_pods(self, found: Found | None, stable_revision: str) -> bool:
        """A held abort (:mod:`.deadline`): the CloneSet's partition at every replica (its template
        untouched), then its pods of another revision deleted: the CloneSet recreates them at the
        stable revision, as partition asks. A Deployment: as
        :mod:`~kruise.rollouts.workloads.deployment.stablehold` decides (canary style: wait for
        the canary Deployments to go; partition style: partition 0, the other ReplicaSets at 0).
        Other workload kinds: nothing (not supported yet)."""
        if found is not None and found.kind.resource is DEPLOYMENTS:
            return await self._hold_stable_deployment(found, stable_revision)
        if found is None or found.kind.resource is not CLONESETS or not stable_revision:
            return False
        meta, spec = found.workload["metadata"], found.workload.get("spec") or {}
        replicas = int(spec.get("replicas", 1))
        strategy = spec.get("updateStrategy") or {}
        if strategy.get("partition") != replicas or strategy.get("paused"):
            patch = {
                "metadata": {"resourceVersion": meta["resourceVersion"]},
                "spec": {"updateStrategy": {"partition": replicas, "paused": False}},
            }
            with contextlib.suppress(ConflictError):  # a stale copy: the next round looks again
                await self.kube.patch(CLONESETS, meta["name"], patch, meta["namespace"], patch_type="merge")
            return True
        selector = ",".join(
            f"{k}={v}" for k, v in ((spec.get("selector") or {}).get("matchLabels") or {}).items()
        )
        pods = (await self.kube.list(PODS, meta["namespace"], label_selector=selector or None))["items"]
        canary = [
            p
            for p in pods
            if any(o.get("uid") == meta.get("uid") for o in p["metadata"].get("ownerReferences") or ())
            and (p["metadata"].get("labels") or {}).get(POD_TEMPLATE_HASH_LABEL) != stable_revision
        ]
        for pod in canary:
            if not pod["metadata"].get("deletionTimestamp"):
                await self.kube.delete(PODS, pod["metadata"]["name"], meta["namespace"], missing_ok=True)
        if canary:
            log.info(
                "held abort: %d pods of %s/%s back to %s",
                len(canary),
                meta["namespace"],
                meta["name"],
                stable_revision,
            )
        return bool(canary)

    async def _hold_stable_deployment(self, found: Found, stable_revision: str) -> bool:
        obs = found.obs
        hold = deployment_stable_hold(obs.workload, obs.replicasets, obs.canaries, stable_revision)
        namespace = str(found.workload["metadata"]["namespace"])
        for op in hold.ops:
            try:  # guarded writes: a stale copy is looked at again next round
                await self.kube.patch(op.target, op.name, op.body, namespace, patch_type="merge")
            except (ConflictError, NotFoundError):
                return True
        if hold.ops:
            log.info(
                "held abort: Deployment %s/%s back to %s",
                namespace,
                found.workload["metadata"]["name"],
                stable_revision,
            )
        return hold.waiting

    async def _release_workload(self, found: Found | None) -> bool:
        """Drop ``rollouts.kruise.io/in-progressing`` so the next template change starts a new release."""
        if found is None:
            return False
        meta = found.workload["metadata"]
        if IN_PROGRESSING_ANNOTATION not in (meta.get("annotations") or {}):
            return False
        patch = {"metadata": {"annotations": {IN_PROGRESSING_ANNOTATION: None}}}
        resource = found.kind.resource
        try:
            await self.kube.patch(resource, meta["name"], patch, meta["namespace"], patch_type="merge")
        except NotFoundError:
            return False
        return True


def _same_annotations(batch: Mapping[str, Any], annotations: Mapping[str, str] | None) -> bool:
    have = (batch.get("metadata") or {}).get("annotations") or {}
    return annotations is None or have.get(ROLLBACK_IN_BATCH_ANNOTATION) == annotations.get(
        ROLLBACK_IN_BATCH_ANNOTATION
    )


def _satisfies(
    batch: Mapping[str, Any], spec: Mapping[str, Any], annotations: Mapping[str, str] | None
) -> bool:
    """Whether the BatchRelease ``batch`` already has ``spec`` (its batch partition, and every
    field of ``spec`` as :func:`_covers` compares) and the rollback-in-batch annotation wanted."""
    have = batch.get("spec") or {}
    same_partition = (have.get("releasePlan") or {}).get("batchPartition") == (
        spec.get("releasePlan") or {}
    ).get("batchPartition")
    return same_partition and _same_annotations(batch, annotations) and _covers(have, spec)


def _covers(got: Any, want: Any) -> bool:
    """Whether ``got`` holds everything ``want`` sets (server defaults may add more)."""
    if isinstance(want, dict):
        return isinstance(got, dict) and all(_covers(got.get(k), v) for k, v in want.items())
    if isinstance(want, list):
        return (
            isinstance(got, list)
            and len(got) == len(want)
            and all(_covers(g, w) for g, w in zip(got, want, strict=True))
        )
    return bool(got == want)
