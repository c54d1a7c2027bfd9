"""Adapter: the Gateway API provider (``trafficRoutings[].gateway.httpRouteName``).

Reads the HTTPRoute, asks :mod:`kruise.traffic.gatewayapi` for the rules the step wants and
replaces the route (with the read ``resourceVersion``) only when they differ.
"""

from __future__ import annotations

import copy
from collections.abc import Callable

from kruise.core.kube import KubeClient
from kruise.traffic.gatewayapi import desired_rules, restored_rules
from kruise.traffic.intent import JSON, RouteReport, TrafficIntent
from kruise.traffic.resources import HTTPROUTES
from kruise.traffic.retry import retry_on_conflict


class GatewayRouter:
    """:class:`~kruise.traffic.intent.TrafficRouter` over one HTTPRoute (upstream ``gatewayController``)."""

    def __init__(self, kube: KubeClient, namespace: str, http_route_name: str) -> None:
        self.kube = kube
        self.namespace = namespace
        self.name = http_route_name

    async def ensure(self, intent: TrafficIntent) -> RouteReport:
        """Weights or match rules on the HTTPRoute; NotFoundError when the route is missing."""
        if not intent.routes_traffic:
            return RouteReport.unchanged(f"HTTPRoute {self.name}: step routes no traffic")

        def compute(rules: list[JSON]) -> list[JSON]:
            return desired_rules(
                rules,
                intent.stable_service,
                intent.canary_service,
                intent.weight,
                intent.matches,
                intent.request_header_modifier,
            )

        return await retry_on_conflict(lambda: self._update(compute, missing_ok=False))

    async def restore(self, intent: TrafficIntent) -> RouteReport:
        """Canary backendRefs and rules removed, stable weight 1; a missing route is fine."""

        def compute(rules: list[JSON]) -> list[JSON]:
            return restored_rules(rules, intent.stable_service, intent.canary_service)

        return await retry_on_conflict(lambda: self._update(compute, missing_ok=True))

    async def _update(self, compute: Callable[[list[JSON]], list[JSON]], *, missing_ok: bool) -> RouteReport:
        if missing_ok:
            route = await self.kube.get_or_none(HTTPROUTES, self.name, self.namespace)
            if route is None:
                return RouteReport.unchanged(f"HTTPRoute {self.name} not found")
        else:
            route = await self.kube.get(HTTPROUTES, self.name, self.namespace)
        rules = list((route.get("spec") or {}).get("rules") or [])
        desired = compute(rules)
        if desired == rules:
            return RouteReport.unchanged(f"HTTPRoute {self.name} already routes as wanted")
        updated = copy.deepcopy(route)
        updated.pop("status", None)
        updated.setdefault("spec", {})["rules"] = desired
        await self.kube.replace(HTTPROUTES, updated)
        return RouteReport.applied(f"HTTPRoute {self.name} rules updated")
