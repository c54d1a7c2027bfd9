"""Pydantic base for Kubernetes API objects, scalar types and CRD schema markers.

Every kind we serve (and every tolerant subset of a foreign kind we edit) is a tree of
:class:`KubeModel` subclasses. The conventions mirror what ``encoding/json`` plus
controller-gen give upstream Go types:

- Python attributes are snake_case; the wire names are camelCase aliases produced by an
  alias generator (``pods_to_delete`` <-> ``podsToDelete``). Irregular names such as
  ``disablePVCReuse`` set an explicit ``Field(alias=...)``. Both names are accepted on input.
- Unknown fields are kept (``extra="allow"``), so an object read from the API server and
  written back loses nothing even if its CRD is newer than this model.
- ``to_dict()`` drops ``None`` (Go's ``omitempty`` on pointers) and renders JSON-ready values.
- Scalars are strict where Kubernetes is: ``replicas: "10"`` is a type error, as it is for the
  API server, instead of being silently coerced.

The CRD generator (:mod:`kruise.core.crdgen`) reads the markers defined here
(:class:`SchemaExtra`, :class:`SchemaOverride`, :class:`SchemaRequired`) from ``Annotated``
metadata; pydantic itself ignores them.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import UTC, datetime
from types import MappingProxyType
from typing import Annotated, Any, Self

from pydantic import BaseModel, ConfigDict, PlainSerializer, Strict
from pydantic.alias_generators import to_camel

__all__ = [
    "EMBEDDED_RESOURCE_SCHEMA",
    "INT_OR_STRING_SCHEMA",
    "PRESERVE_UNKNOWN_OBJECT_SCHEMA",
    "SCHEMALESS_SCHEMA",
    "Bool",
    "EmbeddedResource",
    "Int32",
    "Int64",
    "IntOrPercentError",
    "IntOrString",
    "KubeModel",
    "PreservedObject",
    "SchemaExtra",
    "SchemaModel",
    "SchemaOverride",
    "SchemaRequired",
    "Schemaless",
    "Time",
    "format_time",
    "int_or_percent_value",
    "scaled_value_from_int_or_percent",
]


class KubeModel(BaseModel):
    """Base of every Kubernetes API model: camelCase aliases, lossless round trips.

    Mirrors the behaviour of a Go API struct marshalled with ``encoding/json``: wire names are
    the ``json`` tags (camelCase), pointer fields left unset are omitted on output. Unlike Go,
    unknown fields are preserved rather than dropped, so a read-modify-write cycle through
    this model never deletes data written by a newer schema.
    """

    model_config = ConfigDict(
        alias_generator=to_camel,
        validate_by_name=True,
        validate_by_alias=True,
        serialize_by_alias=True,
        extra="allow",
    )

    def to_dict(self) -> dict[str, Any]:
        """Return the wire form: camelCase keys, ``None`` fields omitted, JSON-ready values.

        Equivalent to ``model_dump(mode="json", by_alias=True, exclude_none=True)``. Free-form
        embedded objects (pod templates) are returned exactly as stored, nulls included.
        """
        return self.model_dump(mode="json", by_alias=True, exclude_none=True)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Self:
        """Validate ``data`` (camelCase or snake_case keys) into a model.

        Raises ``pydantic.ValidationError`` when a field has the wrong type, as the API server
        rejects such an object against the CRD's structural schema.
        """
        return cls.model_validate(data)


# --- CRD schema markers -------------------------------------------------------------------


class SchemaExtra:
    """``Annotated`` marker: merge these keys into the generated OpenAPI node.

    Used for ``format`` (``int32``/``int64``), ``x-kubernetes-list-type``,
    ``x-kubernetes-map-type``, CRD-level ``default`` and similar controller-gen markers.
    """

    __slots__ = ("schema",)

    def __init__(self, schema: Mapping[str, Any]) -> None:
        self.schema: Mapping[str, Any] = MappingProxyType(dict(schema))

    def __repr__(self) -> str:
        return f"SchemaExtra({dict(self.schema)!r})"


class SchemaOverride:
    """``Annotated`` marker: use this OpenAPI node instead of deriving one from the type.

    The field's description is still added. Used for int-or-string and for embedded objects
    whose schema is preserved (controller-gen ``+kubebuilder:validation:Schemaless`` plus
    ``+kubebuilder:pruning:PreserveUnknownFields``).
    """

    __slots__ = ("schema",)

    def __init__(self, schema: Mapping[str, Any]) -> None:
        self.schema: Mapping[str, Any] = MappingProxyType(dict(schema))

    def __repr__(self) -> str:
        return f"SchemaOverride({dict(self.schema)!r})"


class SchemaModel:
    """``Annotated`` marker: describe this field with ``model``'s schema, keep its value as is.

    For Kubernetes objects a kind embeds (a pod template) that controllers handle as raw dicts
    but the CRD should type: ``Annotated[dict[str, Any], SchemaModel(PodTemplateSpec)]``.
    """

    __slots__ = ("model",)

    def __init__(self, model: type[BaseModel]) -> None:
        self.model = model

    def __repr__(self) -> str:
        return f"SchemaModel({self.model.__name__})"


class SchemaRequired:
    """``Annotated`` marker: force the field in (or out of) the CRD ``required`` list.

    Go fields without ``omitempty`` (``status.replicas``) are always serialised and listed as
    required by controller-gen; in Python they carry a zero default, so they need this marker.
    ``SchemaRequired(False)`` keeps a model-required field optional in the CRD.
    """

    __slots__ = ("required",)

    def __init__(self, required: bool = True) -> None:
        self.required = required

    def __repr__(self) -> str:
        return f"SchemaRequired({self.required!r})"


INT_OR_STRING_SCHEMA: Mapping[str, Any] = MappingProxyType(
    {
        "anyOf": [{"type": "integer"}, {"type": "string"}],
        "x-kubernetes-int-or-string": True,
        "minimum": -(2**31),
        "maximum": 2**31 - 1,
    }
)
"""The structural schema of ``intstr.IntOrString``: controller-gen's, plus the ``int32`` range of
its ``IntVal`` (the bounds apply to integers only; upstream's decoder refuses a larger number, the
API server's schema validation names the field here)."""

SCHEMALESS_SCHEMA: Mapping[str, Any] = MappingProxyType({"x-kubernetes-preserve-unknown-fields": True})
"""A node with no type whose content is kept as is (upstream ``Schemaless`` + preserve)."""

PRESERVE_UNKNOWN_OBJECT_SCHEMA: Mapping[str, Any] = MappingProxyType(
    {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
)
"""An object whose fields are not described and not pruned."""

EMBEDDED_RESOURCE_SCHEMA: Mapping[str, Any] = MappingProxyType(
    {
        "type": "object",
        "x-kubernetes-embedded-resource": True,
        "x-kubernetes-preserve-unknown-fields": True,
    }
)
"""A complete Kubernetes object (apiVersion, kind, metadata) embedded in a field."""


# --- scalar types -------------------------------------------------------------------------

Int32 = Annotated[int, Strict(), SchemaExtra({"format": "int32"})]
"""Go ``int32``: a JSON integer (strings and booleans are rejected), schema format int32."""

Int64 = Annotated[int, Strict(), SchemaExtra({"format": "int64"})]
"""Go ``int64``: a JSON integer, schema format int64."""

Bool = Annotated[bool, Strict()]
"""Go ``bool``: only JSON ``true``/``false`` are accepted."""


def as_utc(moment: datetime) -> datetime:
    """``moment`` as an aware UTC datetime (naive values are taken as UTC)."""
    if moment.tzinfo is None:
        return moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC)


def parse_time(value: Any) -> datetime | None:
    """Parse an RFC 3339 timestamp (``metav1.Time``: ``Z`` or an offset) into an aware UTC datetime.

    ``None``/"" (Go's zero ``metav1.Time``) and unparsable values give ``None``. Aware
    datetimes pass through (normalised to UTC); naive ones are taken as UTC.
    """
    if isinstance(value, datetime):
        return as_utc(value)
    if not isinstance(value, str) or not value:
        return None
    text = value.strip()
    if text.endswith(("Z", "z")):
        text = text[:-1] + "+00:00"
    try:
        parsed = datetime.fromisoformat(text)
    except ValueError:
        return None
    return as_utc(parsed)


def format_time(value: datetime) -> str:
    """Render ``value`` like ``metav1.Time``: RFC 3339 in UTC with second precision.

    Naive datetimes are taken to be UTC. Example: ``2024-05-01T12:00:00Z``.
    """
    if value.tzinfo is None:
        value = value.replace(tzinfo=UTC)
    return value.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


Time = Annotated[
    datetime,
    PlainSerializer(format_time, return_type=str, when_used="json"),
    SchemaExtra({"format": "date-time"}),
]
"""``metav1.Time``: parsed from RFC 3339, serialised as ``YYYY-MM-DDTHH:MM:SSZ``."""

IntOrString = Annotated[
    Annotated[int, Strict()] | Annotated[str, Strict()],
    SchemaOverride(INT_OR_STRING_SCHEMA),
]
"""``intstr.IntOrString``: an integer (``5``) or a string, usually a percentage (``"20%"``).

A quoted number such as ``"5"`` stays a string, as in Go, and is *not* a valid percentage.
"""

Schemaless = SchemaOverride(SCHEMALESS_SCHEMA)
"""Marker for fields upstream declares ``Schemaless`` + ``PreserveUnknownFields``."""

PreservedObject = Annotated[dict[str, Any], SchemaOverride(PRESERVE_UNKNOWN_OBJECT_SCHEMA)]
"""A free-form object kept verbatim (for example a pod template's content)."""

EmbeddedResource = Annotated[dict[str, Any], SchemaOverride(EMBEDDED_RESOURCE_SCHEMA)]
"""A whole Kubernetes object with apiVersion/kind/metadata, kept verbatim."""


# --- int-or-percent arithmetic ------------------------------------------------------------

_PERCENT = re.compile(r"^([0-9]+)%$")


class IntOrPercentError(ValueError):
    """An ``IntOrString`` that is neither an integer nor a ``<digits>%`` percentage."""


def int_or_percent_value(value: int | str) -> tuple[int, bool]:
    """Split an int-or-percent into ``(number, is_percent)``.

    Mirrors ``intstr.getIntOrPercentValueSafely``: an int is returned as is; a string must be a
    percentage ``^[0-9]+%$`` (``"20%"`` -> ``(20, True)``). Any other string, including a quoted
    number like ``"5"``, raises :class:`IntOrPercentError` with the Go error text.
    """
    if isinstance(value, bool):
        raise IntOrPercentError("invalid type: neither int nor percentage")
    if isinstance(value, int):
        return value, False
    if isinstance(value, str):
        if not value.endswith("%"):
            raise IntOrPercentError("invalid type: string is not a percentage")
        match = _PERCENT.match(value)
        if match is None:
            raise IntOrPercentError(f'invalid value "{value}": not a non-negative integer percentage')
        return int(match.group(1)), True
    raise IntOrPercentError("invalid type: neither int nor percentage")


def scaled_value_from_int_or_percent(value: int | str | None, total: int, round_up: bool) -> int:
    """Resolve an int-or-percent against ``total``.

    Mirrors ``intstr.GetScaledValueFromIntOrPercent``: an int is returned unchanged; a
    percentage ``p%`` becomes ``ceil(p * total / 100)`` when ``round_up`` else
    ``floor(p * total / 100)`` (exact integer arithmetic). ``None`` and malformed strings raise
    :class:`IntOrPercentError` (``"nil value for IntOrString"`` /
    ``"invalid value for IntOrString: ..."``).
    """
    if value is None:
        raise IntOrPercentError("nil value for IntOrString")
    try:
        number, is_percent = int_or_percent_value(value)
    except IntOrPercentError as err:
        raise IntOrPercentError(f"invalid value for IntOrString: {err}") from err
    if not is_percent:
        return number
    if round_up:
        return -((-number * total) // 100)
    return (number * total) // 100
