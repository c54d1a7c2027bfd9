"""Traffic-routing types of the v1beta1 API (``api/v1beta1/trafficrouting.go``, ``rollout_types.go``).

A Rollout step's traffic strategy (``traffic``, ``matches``, ``requestHeaderModifier``) is inlined
into ``CanaryStep``; ``TrafficRoutingRef`` names the stable Service and the network objects
(Ingress, HTTPRoute, Lua-driven custom objects) the traffic routers edit. The v1alpha1 shapes live
in :mod:`kruise.rollouts.api.trafficrouting` next to the TrafficRouting kind.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from kruise.core.api import Int32, KubeModel, SchemaExtra, SchemaRequired
from kruise.rollouts.api.common import ObjectRef
from kruise.rollouts.api.gateway import (
    HTTPHeaderFilter,
    HTTPHeaderMatch,
    HTTPPathMatch,
    HTTPQueryParamMatch,
    list_map_by_name,
)

__all__ = [
    "DEFAULT_GRACE_PERIOD_SECONDS",
    "DEFAULT_INGRESS_CLASS_TYPE",
    "ISTIO_CANARY_SUBSET_NAME",
    "ISTIO_STABLE_SUBSET_NAME",
    "GatewayTrafficRouting",
    "HttpRouteMatch",
    "IngressTrafficRouting",
    "TrafficRoutingRef",
    "TrafficRoutingStrategy",
]

DEFAULT_GRACE_PERIOD_SECONDS = 3
"""``+kubebuilder:default=3`` of ``TrafficRoutingRef.gracePeriodSeconds``."""
DEFAULT_INGRESS_CLASS_TYPE = "nginx"
"""The Lua script used when ``ingress.classType`` is empty (applied by the router, not stored)."""
ISTIO_STABLE_SUBSET_NAME = "istio.destinationRule.stableSubsetName"
"""``additionalParams`` key: the DestinationRule subset of the stable version."""
ISTIO_CANARY_SUBSET_NAME = "istio.destinationRule.canarySubsetName"
"""``additionalParams`` key: the DestinationRule subset of the canary version."""


class HttpRouteMatch(KubeModel):
    """HttpRouteMatch is one way of selecting requests for the canary (v1beta1).

    Mirrors ``HttpRouteMatch``: a path matcher, header matchers and query-parameter matchers,
    ANDed within one match. Headers and query params are ``listType=map`` keyed by name.
    """

    path: HTTPPathMatch | None = Field(
        default=None,
        description="Path specifies a HTTP request path matcher. Supported list: - Istio - GatewayAPI: If "
        "path is defined, the whole HttpRouteMatch will be used as a standalone matcher",
    )
    headers: Annotated[list[HTTPHeaderMatch], list_map_by_name(16)] | None = Field(
        default=None,
        description="Headers specifies HTTP request header matchers. Multiple match values are ANDed "
        "together, meaning, a request must match all the specified headers to select the route.",
    )
    query_params: Annotated[list[HTTPQueryParamMatch], list_map_by_name(16)] | None = Field(
        default=None,
        description="QueryParams specifies HTTP query parameter matchers. Multiple match values are ANDed "
        "together, meaning, a request must match all the specified query parameters to select the route.",
    )


class TrafficRoutingStrategy(KubeModel):
    """TrafficRoutingStrategy is the traffic part of a step (inlined into ``CanaryStep``).

    Mirrors v1beta1 ``TrafficRoutingStrategy``. Weight (``traffic``) and ``matches`` are not
    combined: when both are set, matches take precedence.
    """

    traffic: str | None = Field(
        default=None,
        description="Traffic indicate how many percentage of traffic the canary pods should receive Value "
        "is of string type and is a percentage, e.g. 5%.",
    )
    request_header_modifier: HTTPHeaderFilter | None = Field(
        default=None,
        description="Set overwrites the request with the given header (name, value) before the action.",
    )
    matches: Annotated[list[HttpRouteMatch], SchemaExtra({"maxItems": 16})] | None = Field(
        default=None,
        description="Matches define conditions used for matching incoming HTTP requests to the canary "
        "service. Each match is independent, i.e. this rule will be matched as long as **any** one of the "
        "matches is satisfied. It cannot support Traffic (weight-based routing) and Matches "
        "simultaneously, if both are configured. In such cases, Matches takes precedence.",
    )


class IngressTrafficRouting(KubeModel):
    """IngressTrafficRouting configuration for ingress controller to control traffic routing

    Mirrors ``IngressTrafficRouting``: ``name`` is required; an empty ``classType`` means nginx.
    """

    class_type: str | None = Field(
        default=None,
        description="ClassType refers to the type of `Ingress`. current support nginx, aliyun-alb. default "
        "is nginx.",
    )
    name: Annotated[str, SchemaRequired()] = Field(
        default="",
        description="Name refers to the name of an `Ingress` resource in the same namespace as the `Rollout`",
    )


class GatewayTrafficRouting(KubeModel):
    """GatewayTrafficRouting configuration for gateway api

    Mirrors ``GatewayTrafficRouting``: only HTTPRoute is supported.
    """

    http_route_name: str | None = Field(
        default=None,
        description="HTTPRouteName refers to the name of an `HTTPRoute` resource in the same namespace as "
        "the `Rollout`",
    )


class TrafficRoutingRef(KubeModel):
    """TrafficRoutingRef hosts all the different configuration for supported service meshes to enable
    more fine-grained traffic routing

    Mirrors v1beta1 ``TrafficRoutingRef``: ``service`` is required; ``gracePeriodSeconds`` defaults
    to 3 (applied by the Rollout defaulting, see :data:`DEFAULT_GRACE_PERIOD_SECONDS`).
    """

    service: Annotated[str, SchemaRequired()] = Field(
        default="",
        description="Service holds the name of a service which selects pods with stable version and don't "
        "select any pods with canary version.",
    )
    grace_period_seconds: Int32 | None = Field(
        default=None,
        description="Optional duration in seconds the traffic provider(e.g. nginx ingress controller) "
        "consumes the service, ingress configuration changes gracefully.",
    )
    ingress: IngressTrafficRouting | None = Field(
        default=None,
        description="Ingress holds Ingress specific configuration to route traffic, e.g. Nginx, Alb.",
    )
    gateway: GatewayTrafficRouting | None = Field(
        default=None,
        description="Gateway holds Gateway specific configuration to route traffic Gateway configuration "
        "only supports >= v0.4.0 (v1alpha2).",
    )
    custom_network_refs: list[ObjectRef] | None = Field(
        default=None, description="CustomNetworkRefs hold a list of custom providers to route traffic"
    )
    additional_params: dict[str, str] | None = Field(
        default=None,
        description="AdditionalParams are provider parameters; valid keys: "
        "istio.destinationRule.stableSubsetName, istio.destinationRule.canarySubsetName.",
    )
