"""Services and routes for the Rollout engine, over the real API server (adapter).

Implements :class:`~kruise.rollouts.rollout.effects.TrafficPort` with
:mod:`kruise.traffic`: the canary Service ``<svc>-canary`` and the stable selector pin
(:mod:`kruise.traffic.services`), and the providers named by the Rollout's
``trafficRoutings[0]`` (Gateway API, Ingress, custom Lua objects, composed). Every
method answers "did I have to change something (or is it not there yet)?".

The writing methods go through :class:`~kruise.rollouts.rollout.trafficfights.TrafficFights`: a
second writer setting back what they wrote is named, and answered with a capped backoff instead
of on every reconcile; the restoring ones hand the objects back to it.
"""

from __future__ import annotations

import contextlib
from typing import Any

from kruise.core.errors import NotFoundError
from kruise.core.events import EventRecorder
from kruise.core.kube.client import KubeClient
from kruise.core.kube.resources import SERVICES
from kruise.rollouts.rollout.trafficfight import Target, route_targets, selector_target
from kruise.rollouts.rollout.trafficfights import TrafficConflict, TrafficFights
from kruise.traffic.configmap_source import ConfigMapLuaSource
from kruise.traffic.intent import TrafficIntent
from kruise.traffic.registry import build_router
from kruise.traffic.services import canary_service, selector_patch, selector_restore_patch

JSON = dict[str, Any]
CONFIGMAP_NAME = "kruise-rollout-configuration"


class KubeTraffic:
    """The TrafficPort of the manager; ``config_namespace`` holds ``kruise-rollout-configuration``."""

    def __init__(
        self, kube: KubeClient, config_namespace: str, recorder: EventRecorder | None = None
    ) -> None:
        self.kube = kube
        self.lua_source = ConfigMapLuaSource(kube, config_namespace, CONFIGMAP_NAME)
        self.fights = TrafficFights(kube, recorder)

    async def conflict(self, rollout: JSON) -> TrafficConflict | None:
        """The fight over the Rollout's network objects to show, if any (see :mod:`.trafficfights`)."""
        return await self.fights.conflict(rollout)

    def wake_in(self, rollout: JSON) -> float | None:
        """Seconds until a fight over the Rollout's network objects is due again (``None``: none)."""
        return self.fights.wake_in(rollout)

    # ------------------------------------------------------------------ targets
    @staticmethod
    def _stable(intent: JSON) -> list[Target]:
        return [selector_target(intent["namespace"], intent["stableService"], intent["revisionLabelKey"])]

    @staticmethod
    def _canary(intent: JSON) -> list[Target]:
        return [selector_target(intent["namespace"], intent["canaryService"], intent["revisionLabelKey"])]

    @staticmethod
    def _routes(intent: JSON) -> list[Target]:
        return route_targets(intent["routing"], intent["namespace"])

    # ------------------------------------------------------------------ services
    async def _service(self, namespace: str, name: str) -> JSON | None:
        return await self.kube.get_or_none(SERVICES, name, namespace)

    async def pin_stable(self, intent: JSON) -> bool:
        return await self.fights.guarded(self._stable(intent), lambda: self._pin_stable(intent))

    async def _pin_stable(self, intent: JSON) -> bool:
        svc = await self._service(intent["namespace"], intent["stableService"])
        if svc is None:
            return True  # not there (yet): keep waiting
        patch = selector_patch(svc, intent["revisionLabelKey"], intent["stableRevision"])
        if patch is None:
            return False
        await self.kube.patch(
            SERVICES, intent["stableService"], patch, intent["namespace"], patch_type="merge"
        )
        return True

    async def restore_stable(self, intent: JSON) -> bool:
        changed = await self._restore_stable(intent)
        self.fights.forget(self._stable(intent))
        return changed

    async def _restore_stable(self, intent: JSON) -> bool:
        svc = await self._service(intent["namespace"], intent["stableService"])
        if svc is None:
            return False
        patch = selector_restore_patch(svc, intent["revisionLabelKey"])
        if patch is None:
            return False
        await self.kube.patch(
            SERVICES, intent["stableService"], patch, intent["namespace"], patch_type="merge"
        )
        return True

    async def ensure_canary_service(self, intent: JSON) -> bool:
        return await self.fights.guarded(self._canary(intent), lambda: self._ensure_canary_service(intent))

    async def _ensure_canary_service(self, intent: JSON) -> bool:
        ns, name = intent["namespace"], intent["canaryService"]
        if name == intent["stableService"]:
            return False  # disableGenerateCanaryService
        current = await self._service(ns, name)
        if current is None:
            stable = await self._service(ns, intent["stableService"])
            if stable is None:
                return True
            body = canary_service(stable, intent["canaryRevision"], intent["revisionLabelKey"], name=name)
            await self.kube.create(SERVICES, body, ns)
            return True
        patch = selector_patch(current, intent["revisionLabelKey"], intent["canaryRevision"])
        if patch is None:
            return False
        await self.kube.patch(SERVICES, name, patch, ns, patch_type="merge")
        return True

    async def delete_canary_service(self, intent: JSON) -> bool:
        self.fights.forget(self._canary(intent))
        ns, name = intent["namespace"], intent["canaryService"]
        if name == intent["stableService"]:
            return False
        current = await self._service(ns, name)
        if current is None:
            return False
        with contextlib.suppress(NotFoundError):
            await self.kube.delete(SERVICES, name, ns)
        return True

    # ------------------------------------------------------------------ routes
    async def ensure_routes(self, intent: JSON) -> bool:
        return await self.fights.guarded(self._routes(intent), lambda: self._ensure_routes(intent))

    async def _ensure_routes(self, intent: JSON) -> bool:
        router = build_router(self.kube, intent["routing"], intent["namespace"], self.lua_source)
        report = await router.ensure(TrafficIntent.from_dict(intent))
        return report.changed or not report.converged

    async def restore_routes(self, intent: JSON) -> bool:
        router = build_router(self.kube, intent["routing"], intent["namespace"], self.lua_source)
        report = await router.restore(TrafficIntent.from_dict(intent))
        self.fights.forget(self._routes(intent))
        return report.changed or not report.converged
