"""Pick the routers a ``trafficRoutings[]`` entry names (upstream ``newNetworkProvider``).

The entry is the Rollout's ``TrafficRoutingRef`` as a dict: ``service``,
``gracePeriodSeconds``, ``ingress{name, classType}``, ``gateway{httpRouteName}``,
``customNetworkRefs[{apiVersion, kind, name}]`` (and upstream's newer ``additionalParams`` for
DestinationRule subset names). Providers are built in upstream's order (custom, ingress,
gateway) and composed when there are several.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kruise.core.errors import ProviderError
from kruise.core.kube import KubeClient
from kruise.traffic.composite import CompositeRouter
from kruise.traffic.custom_router import CustomRouter
from kruise.traffic.gateway_router import GatewayRouter
from kruise.traffic.ingress_router import IngressRouter
from kruise.traffic.intent import TrafficRouter
from kruise.traffic.scripts import DEFAULT_INGRESS_CLASS, LuaScriptSource, StaticLuaSource

DEFAULT_GRACE_PERIOD_SECONDS = 3


def grace_period_seconds(ref: Mapping[str, Any]) -> int:
    """``gracePeriodSeconds`` of the entry; 3 when unset or negative (``GetGraceSeconds``)."""
    value = ref.get("gracePeriodSeconds")
    if value is None or int(value) < 0:
        return DEFAULT_GRACE_PERIOD_SECONDS
    return int(value)


def build_router(
    kube: KubeClient,
    ref: Mapping[str, Any],
    namespace: str,
    lua_config_source: LuaScriptSource | None = None,
    *,
    owner: Mapping[str, Any] | None = None,
) -> TrafficRouter:
    """The router for one ``trafficRoutings[]`` entry in ``namespace``.

    ``lua_config_source`` supplies user scripts (normally a
    :class:`~kruise.traffic.configmap_source.ConfigMapLuaSource`); ``owner`` is the
    ownerReference put on objects we create (the canary Ingress). Raises ProviderError when the
    entry names no provider or lacks a required name, with upstream's messages.
    """
    scripts = lua_config_source or StaticLuaSource()
    routers: list[TrafficRouter] = []
    custom_refs = ref.get("customNetworkRefs") or []
    if custom_refs:
        params = {str(k): str(v) for k, v in (ref.get("additionalParams") or {}).items()}
        routers.append(CustomRouter(kube, namespace, custom_refs, scripts, params))
    ingress = ref.get("ingress")
    if ingress is not None:
        if not ingress.get("name"):
            raise ProviderError("TrafficRouting.Ingress.Ingress cannot be empty")
        class_type = str(ingress.get("classType") or DEFAULT_INGRESS_CLASS)
        routers.append(IngressRouter(kube, namespace, str(ingress["name"]), scripts, class_type, owner))
    gateway = ref.get("gateway")
    if gateway is not None:
        if not gateway.get("httpRouteName"):
            raise ProviderError("TrafficRouting.Gateway must set the name of HTTPRoute or HTTPsRoute")
        routers.append(GatewayRouter(kube, namespace, str(gateway["httpRouteName"])))
    if not routers:
        raise ProviderError("TrafficRouting current only supports Ingress, Gateway API and CustomNetworkRefs")
    if len(routers) == 1:
        return routers[0]
    return CompositeRouter(routers)
