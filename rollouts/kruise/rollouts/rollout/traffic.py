"""Services and routes for the Rollout engine, over the real API server (adapter).

Implements :class:`~kruise.rollouts.rollout.effects.TrafficPort` with
:mod:`kruise.traffic`: the canary Service ``<svc>-canary`` and the stable selector pin
(:mod:`kruise.traffic.services`), and the providers named by the Rollout's
``trafficRoutings[0]`` (Gateway API, Ingress, custom Lua objects, composed). Every
method answers "did I have to change something (or is it not there yet)?".
"""

from __future__ import annotations

import contextlib
from typing import Any

from kruise.core.errors import NotFoundError
from kruise.core.kube.client import KubeClient
from kruise.core.kube.resources import SERVICES
from kruise.traffic.configmap_source import ConfigMapLuaSource
from kruise.traffic.intent import TrafficIntent
from kruise.traffic.registry import build_router
from kruise.traffic.services import canary_service, selector_patch, selector_restore_patch

JSON = dict[str, Any]
CONFIGMAP_NAME = "kruise-rollout-configuration"


class KubeTraffic:
    """The TrafficPort of the manager; ``config_namespace`` holds ``kruise-rollout-configuration``."""

    def __init__(self, kube: KubeClient, config_namespace: str) -> None:
        self.kube = kube
        self.lua_source = ConfigMapLuaSource(kube, config_namespace, CONFIGMAP_NAME)

    # ------------------------------------------------------------------ services
    async def _service(self, namespace: str, name: str) -> JSON | None:
        return await self.kube.get_or_none(SERVICES, name, namespace)

    async def pin_stable(self, intent: JSON) -> bool:
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
        router = build_router(self.kube, intent["routing"], intent["namespace"], self.lua_source)
        report = await router.ensure(TrafficIntent.from_dict(intent))
        return report.changed or not report.converged

    async def restore_routes(self, intent: JSON) -> bool:
        router = build_router(self.kube, intent["routing"], intent["namespace"], self.lua_source)
        report = await router.restore(TrafficIntent.from_dict(intent))
        return report.changed or not report.converged
