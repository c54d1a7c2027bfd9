"""Gateway API (``gateway.networking.k8s.io/v1beta1``) types embedded in Kruise Rollouts' API.

Kruise Rollouts reuses ``HTTPHeaderMatch``, ``HTTPQueryParamMatch``, ``HTTPPathMatch`` and
``HTTPHeaderFilter`` from gateway-api v0.8 for ``steps[].matches`` and
``steps[].requestHeaderModifier``. The CRD therefore carries gateway-api's validation (name
pattern, lengths, enums, ``listType=map`` keyed by ``name``), reproduced here with schema markers.

As everywhere in our models, the enums are plain strings for pydantic (Go decodes any string);
the API server enforces them through the CRD. gateway-api's CRD defaults (``type: Exact``,
``path: {type: PathPrefix, value: /}``) are applied by :func:`kruise.rollouts.admission.default_rollout`
because our CRDs carry no ``default`` keywords.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from kruise.core.api import KubeModel, SchemaExtra, SchemaRequired

__all__ = [
    "HEADER_MATCH_TYPES",
    "PATH_MATCH_TYPES",
    "HTTPHeader",
    "HTTPHeaderFilter",
    "HTTPHeaderMatch",
    "HTTPPathMatch",
    "HTTPQueryParamMatch",
    "list_map_by_name",
]

HEADER_MATCH_TYPES = ("Exact", "RegularExpression")
"""``HeaderMatchType`` / ``QueryParamMatchType`` values; gateway-api defaults to ``Exact``."""
PATH_MATCH_TYPES = ("Exact", "PathPrefix", "RegularExpression")
"""``PathMatchType`` values; gateway-api defaults to ``PathPrefix`` with value ``/``."""

_REQUIRED = SchemaRequired()
_HEADER_NAME = SchemaExtra(
    {"maxLength": 256, "minLength": 1, "pattern": r"^[A-Za-z0-9!#$%&'*+\-.^_\x60|~]+$"}
)


def list_map_by_name(max_items: int) -> SchemaExtra:
    """Marker for a gateway-api list: ``maxItems`` and ``x-kubernetes-list-type: map`` keyed by name."""
    return SchemaExtra(
        {
            "maxItems": max_items,
            "x-kubernetes-list-type": "map",
            "x-kubernetes-list-map-keys": ["name"],
        }
    )


class HTTPHeaderMatch(KubeModel):
    """HTTPHeaderMatch describes how to select a HTTP route by matching HTTP request headers.

    Mirrors gateway-api ``HTTPHeaderMatch``: ``name`` and ``value`` are required; ``type`` is
    ``Exact`` (default) or ``RegularExpression``.
    """

    type: Annotated[str, SchemaExtra({"enum": list(HEADER_MATCH_TYPES)})] | None = Field(
        default=None,
        description="Type specifies how to match against the value of the header. Support: Core (Exact). "
        "Support: Implementation-specific (RegularExpression).",
    )
    name: Annotated[str, _HEADER_NAME, _REQUIRED] = Field(
        default="",
        description="Name is the name of the HTTP Header to be matched. Name matching MUST be case "
        "insensitive. (See https://tools.ietf.org/html/rfc7230#section-3.2).",
    )
    value: Annotated[str, SchemaExtra({"maxLength": 4096, "minLength": 1}), _REQUIRED] = Field(
        default="", description="Value is the value of HTTP Header to be matched."
    )


class HTTPQueryParamMatch(KubeModel):
    """HTTPQueryParamMatch describes how to select a HTTP route by matching HTTP query parameters.

    Mirrors gateway-api ``HTTPQueryParamMatch``: ``name`` and ``value`` are required; ``type`` is
    ``Exact`` (default) or ``RegularExpression``.
    """

    type: Annotated[str, SchemaExtra({"enum": list(HEADER_MATCH_TYPES)})] | None = Field(
        default=None,
        description="Type specifies how to match against the value of the query parameter. Support: "
        "Extended (Exact). Support: Implementation-specific (RegularExpression).",
    )
    name: Annotated[str, _HEADER_NAME, _REQUIRED] = Field(
        default="",
        description="Name is the name of the HTTP query param to be matched. This must be an exact string "
        "match. (See https://tools.ietf.org/html/rfc7230#section-2.7.3).",
    )
    value: Annotated[str, SchemaExtra({"maxLength": 1024, "minLength": 1}), _REQUIRED] = Field(
        default="", description="Value is the value of HTTP query param to be matched."
    )


class HTTPPathMatch(KubeModel):
    """HTTPPathMatch describes how to select a HTTP route by matching the HTTP request path.

    Mirrors gateway-api ``HTTPPathMatch``; both fields default upstream (``PathPrefix``, ``/``).
    """

    type: Annotated[str, SchemaExtra({"enum": list(PATH_MATCH_TYPES)})] | None = Field(
        default=None,
        description="Type specifies how to match against the path Value. Support: Core (Exact, "
        "PathPrefix). Support: Implementation-specific (RegularExpression).",
    )
    value: Annotated[str, SchemaExtra({"maxLength": 1024})] | None = Field(
        default=None, description="Value of the HTTP path to match against."
    )


class HTTPHeader(KubeModel):
    """HTTPHeader represents an HTTP Header name and value as defined by RFC 7230.

    Mirrors gateway-api ``HTTPHeader``: both fields are required.
    """

    name: Annotated[str, _HEADER_NAME, _REQUIRED] = Field(
        default="",
        description="Name is the name of the HTTP Header to be matched. Name matching MUST be case "
        "insensitive. (See https://tools.ietf.org/html/rfc7230#section-3.2).",
    )
    value: Annotated[str, SchemaExtra({"maxLength": 4096, "minLength": 1}), _REQUIRED] = Field(
        default="", description="Value is the value of HTTP Header to be matched."
    )


class HTTPHeaderFilter(KubeModel):
    """HTTPHeaderFilter defines a filter that modifies the headers of an HTTP request.

    Mirrors gateway-api ``HTTPHeaderFilter`` (``set``, ``add``, ``remove``; at most 16 each).
    """

    set: Annotated[list[HTTPHeader], list_map_by_name(16)] | None = Field(
        default=None,
        description="Set overwrites the request with the given header (name, value) before the action.",
    )
    add: Annotated[list[HTTPHeader], list_map_by_name(16)] | None = Field(
        default=None,
        description="Add adds the given header(s) (name, value) to the request before the action. It "
        "appends to any existing values associated with the header name.",
    )
    remove: Annotated[list[str], SchemaExtra({"maxItems": 16})] | None = Field(
        default=None,
        description="Remove the given header(s) from the HTTP request before the action. The value of "
        "Remove is a list of HTTP header names. Note that the header names are case-insensitive.",
    )
