"""Adapter: the Ingress provider (``trafficRoutings[].ingress{name, classType}``).

Keeps ``<ingress>-canary`` as :mod:`kruise.traffic.ingress` computes it: created when missing,
replaced (with the read ``resourceVersion``) when its annotations or rules differ, deleted on
restore. The class script is looked up on every call, so an edited ConfigMap takes effect on
the next reconcile.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kruise.core.errors import AlreadyExistsError
from kruise.core.kube import KubeClient
from kruise.traffic.ingress import (
    canary_ingress_name,
    desired_canary_ingress,
    needs_update,
    updated_canary_ingress,
)
from kruise.traffic.intent import RouteReport, TrafficIntent
from kruise.traffic.resources import INGRESSES
from kruise.traffic.retry import retry_on_conflict
from kruise.traffic.scripts import DEFAULT_INGRESS_CLASS, LuaScriptSource, ingress_script


class IngressRouter:
    """:class:`~kruise.traffic.intent.TrafficRouter` over one Ingress (upstream ``ingressController``)."""

    def __init__(
        self,
        kube: KubeClient,
        namespace: str,
        ingress_name: str,
        scripts: LuaScriptSource,
        class_type: str = DEFAULT_INGRESS_CLASS,
        owner: Mapping[str, Any] | None = None,
    ) -> None:
        self.kube = kube
        self.namespace = namespace
        self.name = ingress_name
        self.canary_name = canary_ingress_name(ingress_name)
        self.scripts = scripts
        self.class_type = class_type or DEFAULT_INGRESS_CLASS
        self.owner = dict(owner) if owner else None

    async def ensure(self, intent: TrafficIntent) -> RouteReport:
        """Create or update the canary Ingress; NotFoundError when the stable Ingress is missing.

        As upstream, a missing canary Ingress and a step asking for 0% without matches is
        already converged (nothing to route, nothing to create).
        """
        if not intent.routes_traffic:
            return RouteReport.unchanged(f"Ingress {self.canary_name}: step routes no traffic")
        script = await ingress_script(self.scripts, self.class_type)
        return await retry_on_conflict(lambda: self._ensure(intent, script))

    async def _ensure(self, intent: TrafficIntent, script: str) -> RouteReport:
        current = await self.kube.get_or_none(INGRESSES, self.canary_name, self.namespace)
        if current is None and intent.weight == 0 and not intent.matches:
            return RouteReport.unchanged(f"Ingress {self.canary_name} absent and no traffic to shift")
        if current is not None and (current.get("metadata") or {}).get("deletionTimestamp"):
            return RouteReport.waiting(f"Ingress {self.canary_name} is being deleted")
        stable = await self.kube.get(INGRESSES, self.name, self.namespace)
        desired = desired_canary_ingress(stable, current, intent, script, self.owner)
        if current is None:
            try:
                await self.kube.create(INGRESSES, desired, self.namespace)
            except AlreadyExistsError:
                return RouteReport.waiting(f"Ingress {self.canary_name} appeared meanwhile")
            return RouteReport.applied(f"Ingress {self.canary_name} created")
        if not needs_update(current, desired):
            return RouteReport.unchanged(f"Ingress {self.canary_name} already routes as wanted")
        await self.kube.replace(INGRESSES, updated_canary_ingress(current, desired))
        return RouteReport.applied(f"Ingress {self.canary_name} updated")

    async def restore(self, intent: TrafficIntent) -> RouteReport:
        """Delete the canary Ingress (upstream ``Finalise``); converged once it is gone."""
        current = await self.kube.get_or_none(INGRESSES, self.canary_name, self.namespace)
        if current is None:
            return RouteReport.unchanged(f"Ingress {self.canary_name} not present")
        meta = current.get("metadata") or {}
        if meta.get("deletionTimestamp"):
            return RouteReport.waiting(f"Ingress {self.canary_name} is being deleted")
        deleted = await self.kube.delete(
            INGRESSES, self.canary_name, self.namespace, uid=meta.get("uid"), missing_ok=True
        )
        if deleted is None:
            return RouteReport.unchanged(f"Ingress {self.canary_name} not present")
        return RouteReport.applied(f"Ingress {self.canary_name} deleted")
