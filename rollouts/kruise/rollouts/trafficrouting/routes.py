"""The TrafficRouting's routes over the real API server (adapter): check, ensure, restore.

Every ``objectRef`` entry gets the routers the Rollout uses (:func:`kruise.traffic.registry.build_router`:
Ingress by class script, Gateway API HTTPRoute, Lua-driven custom objects), with the
TrafficRouting as the owner of what they create (the canary Ingress). Each call answers an
:class:`~kruise.rollouts.trafficrouting.phases.Outcome`: done only when no router had to change
anything; a missing object or a broken script is not done, with the cause as its note.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kruise.core.errors import ApiError, NotFoundError, ProviderError
from kruise.core.kube import KubeClient
from kruise.core.kube.resources import SERVICES
from kruise.rollouts.trafficrouting.links import Strategy, intent
from kruise.rollouts.trafficrouting.phases import Outcome, grace_seconds
from kruise.traffic.custom_router import resolve_resource
from kruise.traffic.intent import RouteReport, TrafficIntent
from kruise.traffic.registry import build_router
from kruise.traffic.resources import HTTPROUTES, INGRESSES
from kruise.traffic.scripts import LuaScriptSource

JSON = dict[str, Any]


def owner_reference(traffic_routing: Mapping[str, Any]) -> JSON:
    """The controller ownerReference (``NewControllerRef``) put on the objects routers create."""
    meta = traffic_routing["metadata"]
    return {
        "apiVersion": str(traffic_routing.get("apiVersion") or "rollouts.kruise.io/v1alpha1"),
        "kind": "TrafficRouting",
        "name": meta["name"],
        "uid": meta["uid"],
        "controller": True,
        "blockOwnerDeletion": True,
    }


def _refs(traffic_routing: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    return list((traffic_routing.get("spec") or {}).get("objectRef") or ())


class TrafficRoutingRoutes:
    """Routes of one manager: ``lua`` supplies user scripts (the configuration ConfigMap)."""

    def __init__(self, kube: KubeClient, lua: LuaScriptSource) -> None:
        self.kube = kube
        self.lua = lua

    async def check(self, traffic_routing: Mapping[str, Any]) -> Outcome:
        """Initial: the Service and every routed object of each entry exist
        (upstream ``InitializeTrafficRouting``)."""
        ns = str(traffic_routing["metadata"]["namespace"])
        for ref in _refs(traffic_routing):
            wanted = [(SERVICES, str(ref.get("service") or ""))]
            if ref.get("ingress"):
                wanted.append((INGRESSES, str(ref["ingress"].get("name") or "")))
            if ref.get("gateway"):
                wanted.append((HTTPROUTES, str(ref["gateway"].get("httpRouteName") or "")))
            try:
                for custom in ref.get("customNetworkRefs") or ():
                    api_version, kind = str(custom.get("apiVersion")), str(custom.get("kind"))
                    res = await resolve_resource(self.kube, api_version, kind)
                    wanted.append((res, str(custom.get("name") or "")))
                for res, name in wanted:
                    if not name or await self.kube.get_or_none(res, name, ns) is None:
                        return Outcome(done=False, note=f"{res.kind} {name} not found")
            except (ProviderError, ApiError) as err:
                return Outcome(done=False, note=str(err))
        return Outcome(done=True)

    async def ensure(self, traffic_routing: Mapping[str, Any], strategy: Strategy) -> Outcome:
        """Progressing: route ``strategy`` on every entry (nothing to do without weight or matches)."""
        if not strategy.routes_traffic:
            return Outcome(done=True)
        return await self._each(traffic_routing, strategy, restore=False)

    async def restore(self, traffic_routing: Mapping[str, Any]) -> Outcome:
        """Finalizing/Terminating: every entry back to its stable route."""
        return await self._each(traffic_routing, Strategy(), restore=True)

    async def _each(
        self, traffic_routing: Mapping[str, Any], strategy: Strategy, *, restore: bool
    ) -> Outcome:
        ns = str(traffic_routing["metadata"]["namespace"])
        refs = _refs(traffic_routing)
        grace = float(grace_seconds(refs))
        owner = owner_reference(traffic_routing)
        reports: list[RouteReport] = []
        for ref in refs:
            want = TrafficIntent.from_dict(intent(ns, ref, strategy))
            try:
                router = build_router(self.kube, ref, ns, self.lua, owner=owner)
                reports.append(await (router.restore(want) if restore else router.ensure(want)))
            except NotFoundError as err:
                if restore:  # an object gone has nothing left to restore
                    continue
                return Outcome(done=False, note=str(err), grace=grace)
            except (ProviderError, ApiError) as err:
                return Outcome(done=False, note=str(err), grace=grace)
        combined = RouteReport.combine(reports)
        done = combined.converged and not combined.changed
        return Outcome(done=done, note="" if done else combined.message, grace=grace)
