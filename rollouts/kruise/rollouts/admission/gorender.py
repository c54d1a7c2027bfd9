"""Render Rollout spec values the way Go's ``%#v`` prints them in ``field.Invalid`` messages.

Kruise Rollouts' webhook passes whole Go values as the "bad value" of its field errors (the
``steps`` slice, a ``TrafficRoutingRef`` slice, an ``IngressTrafficRouting``...), and
apimachinery prints those with ``%#v``: type names, Go field names, ``(nil)`` for nil pointers,
slices and maps. This module reproduces that text from the wire form of our models, with one
unavoidable difference: a non-nil pointer prints its address in Go (``(*string)(0xc0004a2b10)``),
which cannot be reproduced; we print the fixed placeholder :data:`POINTER`.

Types are described by a small table (:class:`Struct`, :class:`Ptr`, :class:`Slice`, ...) that
mirrors the Go structs field by field, in declaration order.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from kruise.workloads.admission.fielderrors import GoSyntax, go_int_or_string, go_quote, go_string_map

__all__ = [
    "GATEWAY",
    "GATEWAY_V1ALPHA1",
    "INGRESS",
    "INGRESS_V1ALPHA1",
    "INT_OR_STRING",
    "OBJECT_REF",
    "POINTER",
    "STEPS",
    "STEPS_V1ALPHA1",
    "TRAFFIC_ROUTINGS",
    "TRAFFIC_ROUTINGS_V1ALPHA1",
    "WORKLOAD_REF",
    "Field",
    "GoType",
    "IntOrStringValue",
    "Ptr",
    "Scalar",
    "Slice",
    "StringMap",
    "Struct",
    "render",
]

POINTER = "0xc000000000"
"""Printed for every non-nil pointer (Go prints the real, run-dependent address)."""


@dataclass(frozen=True)
class Scalar:
    """A Go scalar: ``string`` (also named string types), ``int32``/``int64`` or ``bool``."""

    kind: str


@dataclass(frozen=True)
class Ptr:
    """A pointer field; ``target`` is the pointed-to type name as ``%#v`` prints it."""

    target: str


@dataclass(frozen=True)
class StringMap:
    """A ``map[string]string``."""


@dataclass(frozen=True)
class IntOrStringValue:
    """A non-pointer ``intstr.IntOrString``."""


@dataclass(frozen=True)
class Field:
    """One struct field: Go name, JSON key (``None`` for an inlined struct) and type."""

    go_name: str
    json_key: str | None
    type: GoType


@dataclass(frozen=True)
class Struct:
    """A Go struct: qualified type name (``v1beta1.CanaryStep``) and fields in declaration order."""

    name: str
    fields: tuple[Field, ...]


@dataclass(frozen=True)
class Slice:
    """A slice: the element type name as printed and the element type."""

    elem_name: str
    elem: GoType


GoType = Scalar | Ptr | StringMap | IntOrStringValue | Struct | Slice


def _text(go_type: GoType, value: Any) -> str:
    if isinstance(go_type, Scalar):
        if go_type.kind == "string":
            return go_quote(value if isinstance(value, str) else "")
        if go_type.kind == "bool":
            return "true" if value is True else "false"
        return str(value if isinstance(value, int) and not isinstance(value, bool) else 0)
    if isinstance(go_type, Ptr):
        return f"(*{go_type.target})(nil)" if value is None else f"(*{go_type.target})({POINTER})"
    if isinstance(go_type, StringMap):
        return go_string_map(value if isinstance(value, Mapping) else None).text
    if isinstance(go_type, IntOrStringValue):
        return go_int_or_string(value).text
    if isinstance(go_type, Slice):
        if not isinstance(value, list):
            return f"[]{go_type.elem_name}(nil)"
        return f"[]{go_type.elem_name}{{" + ", ".join(_text(go_type.elem, v) for v in value) + "}"
    data = value if isinstance(value, Mapping) else {}
    parts = []
    for field in go_type.fields:
        inner = data if field.json_key is None else data.get(field.json_key)
        parts.append(f"{field.go_name}:{_text(field.type, inner)}")
    return f"{go_type.name}{{" + ", ".join(parts) + "}"


def render(go_type: GoType, value: Any) -> GoSyntax:
    """``%#v`` of ``value`` (wire JSON: dicts, lists, scalars, ``None`` for absent) as ``go_type``."""
    return GoSyntax(_text(go_type, value))


# --- the Kruise Rollouts types ----------------------------------------------------------------

_STRING = Scalar("string")
_INT32 = Scalar("int32")


def _object_ref(name: str) -> Struct:
    return Struct(
        name,
        (
            Field("APIVersion", "apiVersion", _STRING),
            Field("Kind", "kind", _STRING),
            Field("Name", "name", _STRING),
        ),
    )


OBJECT_REF = _object_ref("v1beta1.ObjectRef")
WORKLOAD_REF = _object_ref("v1alpha1.WorkloadRef")
CUSTOM_NETWORK_REF = _object_ref("v1alpha1.CustomNetworkRef")

_HEADER_MATCH = Struct(
    "v1beta1.HTTPHeaderMatch",
    (
        Field("Type", "type", Ptr("v1beta1.HeaderMatchType")),
        Field("Name", "name", _STRING),
        Field("Value", "value", _STRING),
    ),
)
_QUERY_MATCH = Struct(
    "v1beta1.HTTPQueryParamMatch",
    (
        Field("Type", "type", Ptr("v1beta1.QueryParamMatchType")),
        Field("Name", "name", _STRING),
        Field("Value", "value", _STRING),
    ),
)
_HEADERS = Slice("v1beta1.HTTPHeaderMatch", _HEADER_MATCH)

INGRESS = Struct(
    "v1beta1.IngressTrafficRouting",
    (Field("ClassType", "classType", _STRING), Field("Name", "name", _STRING)),
)
GATEWAY = Struct("v1beta1.GatewayTrafficRouting", (Field("HTTPRouteName", "httpRouteName", Ptr("string")),))
INGRESS_V1ALPHA1 = Struct("v1alpha1.IngressTrafficRouting", INGRESS.fields)
GATEWAY_V1ALPHA1 = Struct("v1alpha1.GatewayTrafficRouting", GATEWAY.fields)

_ROUTING_HEAD = (
    Field("Service", "service", _STRING),
    Field("GracePeriodSeconds", "gracePeriodSeconds", _INT32),
)
TRAFFIC_ROUTING_REF = Struct(
    "v1beta1.TrafficRoutingRef",
    (
        *_ROUTING_HEAD,
        Field("Ingress", "ingress", Ptr("v1beta1.IngressTrafficRouting")),
        Field("Gateway", "gateway", Ptr("v1beta1.GatewayTrafficRouting")),
        Field("CustomNetworkRefs", "customNetworkRefs", Slice("v1beta1.ObjectRef", OBJECT_REF)),
        Field("AdditionalParams", "additionalParams", StringMap()),
    ),
)
TRAFFIC_ROUTING_REF_V1ALPHA1 = Struct(
    "v1alpha1.TrafficRoutingRef",
    (
        *_ROUTING_HEAD,
        Field("Ingress", "ingress", Ptr("v1alpha1.IngressTrafficRouting")),
        Field("Gateway", "gateway", Ptr("v1alpha1.GatewayTrafficRouting")),
        Field(
            "CustomNetworkRefs", "customNetworkRefs", Slice("v1alpha1.CustomNetworkRef", CUSTOM_NETWORK_REF)
        ),
    ),
)
TRAFFIC_ROUTINGS = Slice("v1beta1.TrafficRoutingRef", TRAFFIC_ROUTING_REF)
TRAFFIC_ROUTINGS_V1ALPHA1 = Slice("v1alpha1.TrafficRoutingRef", TRAFFIC_ROUTING_REF_V1ALPHA1)

_ROUTE_MATCH = Struct(
    "v1beta1.HttpRouteMatch",
    (
        Field("Path", "path", Ptr("v1beta1.HTTPPathMatch")),
        Field("Headers", "headers", _HEADERS),
        Field("QueryParams", "queryParams", Slice("v1beta1.HTTPQueryParamMatch", _QUERY_MATCH)),
    ),
)
_ROUTE_MATCH_V1ALPHA1 = Struct("v1alpha1.HttpRouteMatch", (Field("Headers", "headers", _HEADERS),))

_DURATION = Field("Duration", "duration", Ptr("int32"))
_MODIFIER = Field("RequestHeaderModifier", "requestHeaderModifier", Ptr("v1beta1.HTTPHeaderFilter"))
CANARY_STEP = Struct(
    "v1beta1.CanaryStep",
    (
        Field(
            "TrafficRoutingStrategy",
            None,
            Struct(
                "v1beta1.TrafficRoutingStrategy",
                (
                    Field("Traffic", "traffic", Ptr("string")),
                    _MODIFIER,
                    Field("Matches", "matches", Slice("v1beta1.HttpRouteMatch", _ROUTE_MATCH)),
                ),
            ),
        ),
        Field("Replicas", "replicas", Ptr("intstr.IntOrString")),
        Field("Pause", "pause", Struct("v1beta1.RolloutPause", (_DURATION,))),
    ),
)
CANARY_STEP_V1ALPHA1 = Struct(
    "v1alpha1.CanaryStep",
    (
        Field(
            "TrafficRoutingStrategy",
            None,
            Struct(
                "v1alpha1.TrafficRoutingStrategy",
                (
                    Field("Weight", "weight", Ptr("int32")),
                    _MODIFIER,
                    Field("Matches", "matches", Slice("v1alpha1.HttpRouteMatch", _ROUTE_MATCH_V1ALPHA1)),
                ),
            ),
        ),
        Field("Replicas", "replicas", Ptr("intstr.IntOrString")),
        Field("Pause", "pause", Struct("v1alpha1.RolloutPause", (_DURATION,))),
    ),
)
STEPS = Slice("v1beta1.CanaryStep", CANARY_STEP)
STEPS_V1ALPHA1 = Slice("v1alpha1.CanaryStep", CANARY_STEP_V1ALPHA1)
INT_OR_STRING = IntOrStringValue()
