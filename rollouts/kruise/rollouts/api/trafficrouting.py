"""TrafficRouting (``rollouts.kruise.io/v1alpha1``) and the v1alpha1 traffic types.

Mirrors Kruise Rollouts' ``api/v1alpha1/trafficrouting_types.go``. A TrafficRouting routes a
chain of services (a -> b -> c) with one strategy; a Rollout links to it through
``canary.trafficRoutingRef`` (v1alpha1: the ``rollouts.kruise.io/trafficrouting`` annotation).
The kind exists in v1alpha1 only. The v1alpha1 Rollout reuses this module's
``TrafficRoutingRefV1alpha1`` (custom network refs without descriptions, no ``additionalParams``)
and ``TrafficRoutingStrategyV1alpha1`` (integer ``weight``, header-only matches).
"""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated, ClassVar

from pydantic import Field

from kruise.core.api import Int32, Int64, KubeModel, KubeObject, SchemaExtra, SchemaRequired
from kruise.core.crdgen import CRDSpec, CRDVersion, PrinterColumn
from kruise.rollouts.api.common import GROUP, V1ALPHA1
from kruise.rollouts.api.gateway import HTTPHeaderFilter, HTTPHeaderMatch
from kruise.rollouts.api.traffic import GatewayTrafficRouting, IngressTrafficRouting

__all__ = [
    "PROGRESSING_ROLLOUT_FINALIZER_PREFIX",
    "TRAFFICROUTING_CRD",
    "CustomNetworkRef",
    "HttpRouteMatchV1alpha1",
    "TrafficRouting",
    "TrafficRoutingPhase",
    "TrafficRoutingRefV1alpha1",
    "TrafficRoutingSpec",
    "TrafficRoutingStatus",
    "TrafficRoutingStrategyV1alpha1",
]

PROGRESSING_ROLLOUT_FINALIZER_PREFIX = "progressing.rollouts.kruise.io"
"""A Rollout using a TrafficRouting adds the finalizer ``progressing.rollouts.kruise.io/<rollout>``."""

_REQUIRED = SchemaRequired()
ROUTED_ENTRY = SchemaExtra(
    {
        "x-kubernetes-validations": [
            {"rule": "size(self.service) > 0", "message": "TrafficRouting.Service cannot be empty"},
            {
                "rule": "has(self.ingress) || has(self.gateway) || "
                "(has(self.customNetworkRefs) && size(self.customNetworkRefs) > 0)",
                "message": "TrafficRoutings are not set: set ingress, gateway or customNetworkRefs",
            },
        ]
    }
)
"""kruise: an ``objectRef`` entry must name its Service and at least one routed object (the
Rollout webhook's rule for ``trafficRoutings``, upstream's messages); the API server refuses it
at ``spec.objectRef[i]`` otherwise. Upstream's CRD accepts such an entry and its controller fails."""


class TrafficRoutingPhase(StrEnum):
    """``TrafficRoutingPhase`` values."""

    INITIAL = "Initial"
    HEALTHY = "Healthy"
    PROGRESSING = "Progressing"
    FINALIZING = "Finalizing"
    TERMINATING = "Terminating"


class CustomNetworkRef(KubeModel):
    """CustomNetworkRef names a Lua-driven network object (v1alpha1; same shape as ``ObjectRef``)."""

    api_version: Annotated[str, _REQUIRED] = ""
    kind: Annotated[str, _REQUIRED] = ""
    name: Annotated[str, _REQUIRED] = ""


class HttpRouteMatchV1alpha1(KubeModel):
    """HttpRouteMatch selects requests for the canary by headers (v1alpha1).

    Mirrors v1alpha1 ``HttpRouteMatch``: headers only (v1beta1 adds ``path`` and ``queryParams``).
    """

    headers: Annotated[list[HTTPHeaderMatch], SchemaExtra({"maxItems": 16})] | None = Field(
        default=None,
        description="Headers specifies HTTP request header matchers. Multiple match values are ANDed "
        "together, meaning, a request must match all the specified headers to select the route.",
    )


class TrafficRoutingStrategyV1alpha1(KubeModel):
    """TrafficRoutingStrategy is the traffic part of a v1alpha1 step and of a TrafficRouting.

    Mirrors v1alpha1 ``TrafficRoutingStrategy``: ``weight`` is an integer percentage.
    """

    weight: Int32 | None = Field(
        default=None,
        description="Weight indicate how many percentage of traffic the canary pods should receive",
    )
    request_header_modifier: HTTPHeaderFilter | None = Field(
        default=None,
        description="Set overwrites the request with the given header (name, value) before the action.",
    )
    matches: list[HttpRouteMatchV1alpha1] | None = Field(
        default=None,
        description="Matches define conditions used for matching the incoming HTTP requests to canary "
        "service. Each match is independent, i.e. this rule will be matched if **any** one of the matches "
        "is satisfied. If Gateway API, current only support one match. And cannot support both weight and "
        "matches, if both are configured, then matches takes precedence.",
    )


class TrafficRoutingRefV1alpha1(KubeModel):
    """TrafficRoutingRef hosts all the different configuration for supported service meshes to enable
    more fine-grained traffic routing

    Mirrors v1alpha1 ``TrafficRoutingRef``: like v1beta1 but with ``CustomNetworkRef`` entries.
    """

    service: Annotated[str, _REQUIRED] = Field(
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
    custom_network_refs: list[CustomNetworkRef] | None = Field(
        default=None, description="CustomNetworkRefs hold a list of custom providers to route traffic"
    )


class TrafficRoutingSpec(KubeModel):
    """TrafficRoutingSpec names the routed objects and the strategy applied to all of them.

    Mirrors ``TrafficRoutingSpec``: ``objectRef`` and ``strategy`` are required in the CRD; kruise
    also requires at least one ``objectRef`` entry, each routing something (:data:`ROUTED_ENTRY`).
    """

    object_ref: Annotated[
        list[Annotated[TrafficRoutingRefV1alpha1, ROUTED_ENTRY]], _REQUIRED, SchemaExtra({"minItems": 1})
    ] = Field(default_factory=list, description="ObjectRef indicates trafficRouting ref")
    strategy: Annotated[TrafficRoutingStrategyV1alpha1, _REQUIRED] = Field(
        default_factory=TrafficRoutingStrategyV1alpha1, description="trafficrouting strategy"
    )


class TrafficRoutingStatus(KubeModel):
    """TrafficRoutingStatus is the observed state of a TrafficRouting.

    Mirrors ``TrafficRoutingStatus``: phase (see :class:`TrafficRoutingPhase`) and message.
    """

    observed_generation: Int64 | None = Field(
        default=None,
        description="observedGeneration is the most recent generation observed for this Rollout.",
    )
    phase: str | None = Field(default=None, description="Phase is the trafficRouting phase.")
    message: str | None = Field(
        default=None, description="Message provides details on why the rollout is in its current phase"
    )


class TrafficRouting(KubeObject):
    """TrafficRouting is the Schema for the TrafficRoutings API

    Mirrors Kruise Rollouts' v1alpha1 ``TrafficRouting``.
    """

    API_VERSION: ClassVar[str] = f"{GROUP}/{V1ALPHA1}"
    KIND: ClassVar[str] = "TrafficRouting"

    spec: Annotated[TrafficRoutingSpec, SchemaRequired(False)] = Field(default_factory=TrafficRoutingSpec)
    status: TrafficRoutingStatus | None = None


TRAFFICROUTING_CRD = CRDSpec(
    group=GROUP,
    kind="TrafficRouting",
    plural="trafficroutings",
    singular="trafficrouting",
    scope="Namespaced",
    versions=(
        CRDVersion(
            name=V1ALPHA1,
            model=TrafficRouting,
            served=True,
            storage=True,
            printer_columns=(
                PrinterColumn("STATUS", "string", ".status.phase", "The TrafficRouting status phase"),
                PrinterColumn(
                    "MESSAGE", "string", ".status.message", "The TrafficRouting canary status message"
                ),
                PrinterColumn("AGE", "date", ".metadata.creationTimestamp"),
            ),
        ),
    ),
)
"""The TrafficRouting CRD: v1alpha1 only, status subresource, STATUS/MESSAGE/AGE columns."""
