"""Carry out a BatchRelease control's decision against the API server (I/O shell).

The controls are pure (:class:`~kruise.rollouts.workloads.ops.ControlDecision`); this runs their
:class:`~kruise.rollouts.workloads.ops.Op` list in order and writes the BatchRelease status once:

- a conflict (a write guarded by the object's ``resourceVersion``) ends the round: look again;
- an object gone meanwhile (a pod) is skipped;
- an object created (a canary Deployment) is expected: the next rounds wait until the cache shows
  it among the workload's canaries (or the expectation times out), so a stale cache never creates
  it twice;
- the resourceVersion of each write to the BatchRelease or its workload is expected too: no round
  decides on a cached copy older than the last write (it would write the same again);
- a round that removes the BatchRelease's own finalizer writes no status (the object is going);
- the namespace's HPAs are listed only when the style says the round may touch one.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Mapping
from typing import Any

from kruise.core.errors import ConflictError, NotFoundError
from kruise.core.expectations import ResourceVersionExpectations, ScaleAction, ScaleExpectations
from kruise.core.kube.client import KubeClient
from kruise.core.kube.resources import DEPLOYMENTS, PODS, REPLICASETS, Resource
from kruise.core.patches import merge_patch
from kruise.core.workqueue import Result
from kruise.rollouts.resources import BATCH_RELEASES, HPAS_V1, HPAS_V2
from kruise.rollouts.workloads.ops import ControlDecision, Op, OpKind
from kruise.rollouts.workloads.port import Observation
from kruise.rollouts.workloads.registry import resources

log = logging.getLogger(__name__)
JSON = dict[str, Any]

RESOURCES: tuple[Resource, ...] = (*resources(), REPLICASETS, PODS, BATCH_RELEASES, HPAS_V2, HPAS_V1)
"""Every resource an Op may target (the registry's workloads and what the controls touch beside)."""
CANARY_TARGETS: tuple[Resource, ...] = (DEPLOYMENTS,)
"""What an Op may create: a canary Deployment."""
FINALIZER_TARGETS: tuple[Resource, ...] = (DEPLOYMENTS, BATCH_RELEASES)
"""Whose finalizers an Op may change: canary Deployments and the BatchRelease itself."""


class ReleaseExecutor:
    """Runs decisions for BatchReleases; holds the create expectations of its controller."""

    def __init__(self, kube: KubeClient, *, expectation_timeout: float = 30.0) -> None:
        self.kube = kube
        self.expectations = ScaleExpectations(timeout=expectation_timeout)
        self.written = ResourceVersionExpectations(timeout=expectation_timeout)

    def stale(self, br: Mapping[str, Any], obs: Observation | None) -> bool:
        """Whether the cache still shows the BatchRelease or its workload older than this
        executor's last write to it: a round decided on that copy would write again what the
        last round wrote (and a write guarded by its resourceVersion would only conflict)."""
        objects = (br,) if obs is None or obs.workload is None else (br, obs.workload)
        return not all(self.written.caught_up(obj) for obj in objects)

    def waiting(self, key: str, obs: Observation | None) -> bool:
        """Whether an object this BatchRelease created is not in the cache yet (keep waiting)."""
        shown = {str((d.get("metadata") or {}).get("name")) for d in (obs.canaries if obs else ())}
        pending = self.expectations.check(key, lambda name: name in shown)
        if pending.satisfied:
            return False
        if self.expectations.timed_out(pending):
            self.expectations.delete(key)
            return False
        return True

    async def hpas(self, namespace: str) -> list[tuple[Resource, JSON]]:
        """The namespace's HPAs, autoscaling/v2 if served, else v1."""
        for res in (HPAS_V2, HPAS_V1):
            try:
                items = (await self.kube.list(res, namespace))["items"]
            except NotFoundError:
                continue
            return [(res, item) for item in items]
        return []

    async def apply(
        self, key: str, br: JSON, decision: ControlDecision, applied: list[Op] | None = None
    ) -> Result:
        """Run ``decision``; the ops the API server accepted are appended to ``applied``."""
        ns = br["metadata"]["namespace"]
        for op in decision.ops:
            try:
                await self._run(key, ns, op)
            except ConflictError:
                return Result(requeue_after=0.2)
            except NotFoundError:
                continue
            if applied is not None:
                applied.append(op)
            log.info("BatchRelease %s: %s %s %s", key, op.kind, op.target.plural, op.name or "(new)")
        if not any(op.kind == OpKind.REMOVE_FINALIZER and op.target == BATCH_RELEASES for op in decision.ops):
            await self.write_status(br, decision.status)
        return Result(requeue_after=decision.requeue_after)

    async def _run(self, key: str, ns: str, op: Op) -> None:
        res = op.target
        if op.kind == OpKind.PATCH:
            written = await self.kube.patch(res, op.name, op.body, ns, patch_type="merge")
            if res != PODS:  # the workload (pods: many, each patched once a round at most)
                self.written.expect_written(written)
        elif op.kind == OpKind.CREATE:
            created = await self.kube.create(res, op.body, ns)
            self.expectations.expect(key, ScaleAction.CREATE, str(created["metadata"]["name"]))
        else:
            current = await self.kube.get(res, op.name, ns)
            finalizers = list((current.get("metadata") or {}).get("finalizers") or [])
            wanted = op.body["finalizer"]
            if op.kind == OpKind.ADD_FINALIZER and wanted not in finalizers:
                finalizers.append(wanted)
            elif op.kind == OpKind.REMOVE_FINALIZER and wanted in finalizers:
                finalizers.remove(wanted)
            else:
                return
            body = {
                "metadata": {
                    "resourceVersion": current["metadata"]["resourceVersion"],
                    "finalizers": finalizers,
                }
            }
            self.written.expect_written(await self.kube.patch(res, op.name, body, ns, patch_type="merge"))

    async def write_status(self, br: JSON, status: Mapping[str, Any]) -> None:
        """Merge-patch the status subresource, when it changed (a BatchRelease gone is fine)."""
        if status == (br.get("status") or {}):
            return
        with contextlib.suppress(NotFoundError):
            written = await self.kube.patch(
                BATCH_RELEASES,
                br["metadata"]["name"],
                {"status": merge_patch(br.get("status") or {}, status)},
                br["metadata"]["namespace"],
                patch_type="merge",
                subresource="status",
            )
            self.written.expect_written(written)
