"""Adapter: the canary Service and the stable Service's selector (upstream ``trafficrouting.Manager``).

Each method is one idempotent step of the Rollout's state machine and answers with a
:class:`~kruise.traffic.intent.RouteReport` under the same contract as the routers (converged
only when nothing had to change), so the engine can wait ``gracePeriodSeconds`` after a change:

- ``ensure_canary_service``: create ``<svc>-canary`` or retarget its selector (``DoTrafficRouting``);
- ``pin_stable_service``: ``selector[revisionKey] = stableRevision`` (``PatchStableService``);
- ``restore_stable_service``: drop that selector key (``RestoreStableService``);
- ``delete_canary_service``: delete ``<svc>-canary`` (``RemoveCanaryService``).

When the canary Service *is* the stable Service (``disableGenerateCanaryService``) there is
nothing to create, pin or delete, as upstream.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kruise.core.errors import AlreadyExistsError
from kruise.core.kube import KubeClient
from kruise.traffic.intent import RouteReport, TrafficIntent
from kruise.traffic.resources import SERVICES
from kruise.traffic.retry import retry_on_conflict
from kruise.traffic.services import canary_service, selector_patch, selector_restore_patch


def _shared(intent: TrafficIntent) -> bool:
    return intent.canary_service == intent.stable_service


class ServiceManager:
    """Keeps the two Services of a canary release; all names and revisions come from the intent."""

    def __init__(self, kube: KubeClient) -> None:
        self.kube = kube

    async def ensure_canary_service(
        self, intent: TrafficIntent, owner: Mapping[str, Any] | None = None
    ) -> RouteReport:
        """``<svc>-canary`` exists and selects ``revisionKey=canaryRevision``.

        Waits (not converged, nothing written) while the stable Service is missing or the
        revisions are not known yet, as upstream.
        """
        if _shared(intent):
            return RouteReport.unchanged("canary service generation is disabled")
        if not (intent.revision_key and intent.stable_revision and intent.canary_revision):
            return RouteReport.waiting("stableRevision or podTemplateHash can not be empty")
        return await retry_on_conflict(lambda: self._ensure_canary(intent, owner))

    async def _ensure_canary(self, intent: TrafficIntent, owner: Mapping[str, Any] | None) -> RouteReport:
        ns, name = intent.namespace, intent.canary_service
        current = await self.kube.get_or_none(SERVICES, name, ns)
        if current is None:
            stable = await self.kube.get_or_none(SERVICES, intent.stable_service, ns)
            if stable is None:
                return RouteReport.waiting(f"stable Service {intent.stable_service} not found")
            body = canary_service(stable, intent.canary_revision, intent.revision_key, owner, name=name)
            try:
                await self.kube.create(SERVICES, body, ns)
            except AlreadyExistsError:
                return RouteReport.waiting(f"Service {name} appeared meanwhile")
            return RouteReport.applied(f"Service {name} created")
        patch = selector_patch(current, intent.revision_key, intent.canary_revision)
        if patch is None:
            return RouteReport.unchanged(f"Service {name} selects the canary revision")
        await self.kube.patch(SERVICES, name, patch, ns, patch_type="merge")
        return RouteReport.applied(f"Service {name} selector set to {intent.canary_revision}")

    async def pin_stable_service(self, intent: TrafficIntent) -> RouteReport:
        """The stable Service selects only ``revisionKey=stableRevision``; NotFoundError if missing."""
        if _shared(intent):
            return RouteReport.unchanged("canary service generation is disabled")
        if not (intent.revision_key and intent.stable_revision):
            return RouteReport.waiting("stableRevision can not be empty")
        return await retry_on_conflict(lambda: self._pin(intent))

    async def _pin(self, intent: TrafficIntent) -> RouteReport:
        name = intent.stable_service
        stable = await self.kube.get(SERVICES, name, intent.namespace)
        patch = selector_patch(stable, intent.revision_key, intent.stable_revision)
        if patch is None:
            return RouteReport.unchanged(f"Service {name} selects the stable revision")
        await self.kube.patch(SERVICES, name, patch, intent.namespace, patch_type="merge")
        return RouteReport.applied(f"Service {name} pinned to {intent.stable_revision}")

    async def restore_stable_service(self, intent: TrafficIntent) -> RouteReport:
        """The stable Service selects every version again; a missing Service is fine."""
        if not intent.revision_key:
            return RouteReport.unchanged("no revision label to remove")
        return await retry_on_conflict(lambda: self._unpin(intent))

    async def _unpin(self, intent: TrafficIntent) -> RouteReport:
        name = intent.stable_service
        stable = await self.kube.get_or_none(SERVICES, name, intent.namespace)
        patch = None if stable is None else selector_restore_patch(stable, intent.revision_key)
        if patch is None:
            return RouteReport.unchanged(f"Service {name} selector has no {intent.revision_key}")
        await self.kube.patch(SERVICES, name, patch, intent.namespace, patch_type="merge")
        return RouteReport.applied(f"Service {name} selector restored")

    async def delete_canary_service(self, intent: TrafficIntent) -> RouteReport:
        """``<svc>-canary`` is gone; converged when it already was."""
        if _shared(intent):
            return RouteReport.unchanged("canary service generation is disabled")
        name = intent.canary_service
        current = await self.kube.get_or_none(SERVICES, name, intent.namespace)
        if current is None:
            return RouteReport.unchanged(f"Service {name} not present")
        meta = current.get("metadata") or {}
        if meta.get("deletionTimestamp"):
            return RouteReport.waiting(f"Service {name} is being deleted")
        deleted = await self.kube.delete(
            SERVICES, name, intent.namespace, uid=meta.get("uid"), missing_ok=True
        )
        if deleted is None:
            return RouteReport.unchanged(f"Service {name} not present")
        return RouteReport.applied(f"Service {name} deleted")
