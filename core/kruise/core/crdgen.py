"""Generate structural ``apiextensions.k8s.io/v1`` CRDs from the pydantic API models.

This plays the role of controller-gen's ``crd`` generator for our models. The schema is built
by walking the model classes (not from pydantic's JSON Schema, whose ``$ref``/``anyOf: null``
shapes the API server would reject), so every node is structural by construction:

- nested models are inlined (no ``$ref``); a recursive model is an error;
- ``X | None`` is just ``X``: optional fields are left out of ``required``, never ``nullable``;
- ``list[X]`` -> ``array``/``items``, ``dict[str, X]`` -> ``object``/``additionalProperties``;
- ``Literal``/``Enum`` -> ``enum``; ``datetime`` -> ``string``/``date-time``;
- ``Annotated`` markers from :mod:`kruise.core.api.base` add keys (``format``, list types),
  replace the node (int-or-string, preserve-unknown-fields, another model's schema for a raw
  dict) or force ``required``;
- descriptions come from ``Field(description=...)``, else from the first paragraph of the
  model's docstring, as controller-gen uses the field comment over the type comment.

Defaults are not emitted: OpenKruise applies them in mutating webhooks, and so do we.
"""

from __future__ import annotations

import copy
import datetime as dt
import enum
import inspect
import types
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Annotated, Any, Literal, Union, get_args, get_origin

import yaml
from pydantic import BaseModel

from kruise.core.api.base import SchemaExtra, SchemaModel, SchemaOverride, SchemaRequired

__all__ = [
    "AGE_COLUMN",
    "CRDSchemaError",
    "CRDSpec",
    "CRDVersion",
    "PrinterColumn",
    "ScaleSubresource",
    "model_schema",
    "render_crd",
    "render_crd_yaml",
    "structural_violations",
]


class CRDSchemaError(ValueError):
    """A model cannot be expressed as a structural schema, or a CRDSpec is inconsistent."""


@dataclass(frozen=True)
class PrinterColumn:
    """One ``additionalPrinterColumns`` entry (``+kubebuilder:printcolumn``).

    ``type`` is an OpenAPI type (``integer``, ``string``, ``date``...); ``priority`` > 0 columns
    show only with ``kubectl get -o wide``.
    """

    name: str
    type: str
    json_path: str
    description: str = ""
    priority: int = 0
    format: str | None = None

    @classmethod
    def integer(cls, name: str, json_path: str, description: str) -> PrinterColumn:
        """An ``integer`` column (most status counters)."""
        return cls(name=name, type="integer", json_path=json_path, description=description)

    def render(self) -> dict[str, Any]:
        """Return the column in CRD wire form (``jsonPath``, ``priority`` only when non-zero)."""
        out: dict[str, Any] = {"name": self.name, "type": self.type, "jsonPath": self.json_path}
        if self.description:
            out["description"] = self.description
        if self.priority:
            out["priority"] = self.priority
        if self.format:
            out["format"] = self.format
        return out


AGE_COLUMN = PrinterColumn(
    name="AGE",
    type="date",
    json_path=".metadata.creationTimestamp",
    description="CreationTimestamp is a timestamp representing the server time when this object was "
    "created. It is not guaranteed to be set in happens-before order across separate operations. "
    "Clients may not set this value. It is represented in RFC3339 form and is in UTC.",
)
"""The ``AGE`` column every kubebuilder CRD carries."""


@dataclass(frozen=True)
class ScaleSubresource:
    """The ``scale`` subresource paths (``+kubebuilder:subresource:scale``)."""

    spec_replicas_path: str = ".spec.replicas"
    status_replicas_path: str = ".status.replicas"
    label_selector_path: str | None = ".status.labelSelector"

    def render(self) -> dict[str, Any]:
        """Return the subresource in CRD wire form."""
        out: dict[str, Any] = {
            "specReplicasPath": self.spec_replicas_path,
            "statusReplicasPath": self.status_replicas_path,
        }
        if self.label_selector_path:
            out["labelSelectorPath"] = self.label_selector_path
        return out


@dataclass(frozen=True)
class CRDVersion:
    """One served version of a kind: its root model, flags, subresources and printer columns."""

    name: str
    model: type[BaseModel]
    served: bool = True
    storage: bool = True
    status_subresource: bool = True
    scale: ScaleSubresource | None = None
    printer_columns: tuple[PrinterColumn, ...] = ()
    deprecated: bool = False


@dataclass(frozen=True)
class CRDSpec:
    """Everything needed to render one CustomResourceDefinition.

    ``scope`` is ``Namespaced`` or ``Cluster``; exactly one version must have ``storage=True``.
    """

    group: str
    kind: str
    plural: str
    singular: str
    versions: tuple[CRDVersion, ...]
    short_names: tuple[str, ...] = ()
    scope: Literal["Namespaced", "Cluster"] = "Namespaced"
    list_kind: str | None = None
    categories: tuple[str, ...] = field(default_factory=tuple)

    @property
    def name(self) -> str:
        """The CRD object name, ``<plural>.<group>``."""
        return f"{self.plural}.{self.group}"

    @property
    def filename(self) -> str:
        """The file name controller-gen uses in ``config/crd/bases``: ``<group>_<plural>.yaml``."""
        return f"{self.group}_{self.plural}.yaml"


# --- schema walking -----------------------------------------------------------------------


def _model_description(model: type[BaseModel]) -> str:
    doc = model.__dict__.get("__doc__")
    if not doc:
        return ""
    first = inspect.cleandoc(doc).split("\n\n", 1)[0]
    return " ".join(first.split())


def _is_union(origin: Any) -> bool:
    return origin is Union or origin is types.UnionType


def _leaf_node(tp: Any, stack: tuple[type[BaseModel], ...]) -> dict[str, Any]:
    """The node for an un-annotated type (markers are applied by the caller)."""
    origin = get_origin(tp)
    if tp is Any:
        return {"x-kubernetes-preserve-unknown-fields": True}
    if origin is Literal:
        values = list(get_args(tp))
        return {"type": _scalar_type(type(values[0])), "enum": values}
    if isinstance(tp, type) and issubclass(tp, enum.Enum):
        values = [member.value for member in tp]
        return {"type": _scalar_type(type(values[0])), "enum": values}
    if isinstance(tp, type) and issubclass(tp, BaseModel):
        return _model_node(tp, stack)
    if origin in (list, tuple, set, frozenset, Sequence):
        args = get_args(tp)
        if not args:
            raise CRDSchemaError(f"list type {tp!r} needs an item type")
        return {"type": "array", "items": _type_node(args[0], [], stack)}
    if origin in (dict, Mapping):
        key, value = get_args(tp)
        if key is not str:
            raise CRDSchemaError(f"map type {tp!r} must have str keys")
        if value is Any:
            return {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
        return {"type": "object", "additionalProperties": _type_node(value, [], stack)}
    if tp in (dt.datetime,):
        return {"type": "string", "format": "date-time"}
    if isinstance(tp, type):
        return {"type": _scalar_type(tp)}
    raise CRDSchemaError(f"unsupported type {tp!r}")


def _scalar_type(tp: type) -> str:
    if issubclass(tp, bool):
        return "boolean"
    if issubclass(tp, int):
        return "integer"
    if issubclass(tp, float):
        return "number"
    if issubclass(tp, str):
        return "string"
    raise CRDSchemaError(f"unsupported scalar type {tp!r}")


def _type_node(tp: Any, markers: list[Any], stack: tuple[type[BaseModel], ...]) -> dict[str, Any]:
    """The node for ``tp``; ``markers`` are Annotated metadata collected on the way down."""
    origin = get_origin(tp)
    if origin is Annotated:
        inner, *meta = get_args(tp)
        return _type_node(inner, [*meta, *markers], stack)
    overrides = [m for m in markers if isinstance(m, SchemaOverride)]
    models = [m for m in markers if isinstance(m, SchemaModel)]
    if models:
        node = _model_node(models[-1].model, stack)
    elif overrides:
        node = copy.deepcopy(dict(overrides[-1].schema))
    elif _is_union(origin):
        members = [a for a in get_args(tp) if a is not type(None)]
        if len(members) != 1:
            raise CRDSchemaError(f"union {tp!r} is not structural; annotate it with SchemaOverride")
        return _type_node(members[0], markers, stack)
    else:
        node = _leaf_node(tp, stack)
    for marker in markers:
        if isinstance(marker, SchemaExtra):
            node.update(copy.deepcopy(dict(marker.schema)))
    return node


def _model_node(model: type[BaseModel], stack: tuple[type[BaseModel], ...]) -> dict[str, Any]:
    if model in stack:
        chain = " -> ".join(m.__name__ for m in (*stack, model))
        raise CRDSchemaError(f"recursive model cannot be inlined in a structural schema: {chain}")
    inner_stack = (*stack, model)
    properties: dict[str, Any] = {}
    required: list[str] = []
    for name, info in model.model_fields.items():
        key = info.serialization_alias or info.alias or name
        node = _type_node(info.annotation, list(info.metadata), inner_stack)
        if info.description:
            node["description"] = " ".join(info.description.split())
        properties[key] = node
        is_required = info.is_required()
        for marker in info.metadata:
            if isinstance(marker, SchemaRequired):
                is_required = marker.required
        if is_required:
            required.append(key)
    node = {"type": "object", "properties": properties}
    if required:
        node["required"] = sorted(required)
    description = _model_description(model)
    if description:
        node["description"] = description
    extra = model.model_config.get("json_schema_extra")
    if isinstance(extra, dict):
        node.update(copy.deepcopy(extra))
    return node


def model_schema(model: type[BaseModel]) -> dict[str, Any]:
    """Return the structural OpenAPI v3 schema of ``model`` (an ``object`` node).

    Raises :class:`CRDSchemaError` for recursive models, non-str map keys, and unions other
    than ``X | None`` that carry no ``SchemaOverride``.
    """
    return _model_node(model, ())


# --- structural checks --------------------------------------------------------------------

_FORBIDDEN_KEYS = ("$ref", "allOf", "oneOf", "not", "definitions", "$defs", "nullable")


def _walk(node: Mapping[str, Any], path: str) -> Iterator[tuple[str, Mapping[str, Any]]]:
    yield path, node
    for key, child in node.get("properties", {}).items():
        yield from _walk(child, f"{path}.{key}")
    items = node.get("items")
    if isinstance(items, Mapping):
        yield from _walk(items, f"{path}[*]")
    extra = node.get("additionalProperties")
    if isinstance(extra, Mapping):
        yield from _walk(extra, f"{path}{{*}}")


def structural_violations(schema: Mapping[str, Any]) -> list[str]:
    """List the ways ``schema`` breaks the API server's structural-schema rules (empty = valid).

    Checked: no ``$ref``/``allOf``/``oneOf``/``not``/``nullable``; ``anyOf`` only in the
    int-or-string form; every node typed unless int-or-string or preserve-unknown-fields;
    ``type`` a single string, never ``null``; ``properties`` and ``additionalProperties`` not
    together; ``items`` a single schema; embedded resources are objects.
    """
    problems: list[str] = []
    for path, node in _walk(schema, ""):
        where = path or "<root>"
        problems.extend(f"{where}: forbidden key {key}" for key in _FORBIDDEN_KEYS if key in node)
        int_or_string = node.get("x-kubernetes-int-or-string") is True
        preserve = node.get("x-kubernetes-preserve-unknown-fields") is True
        if "anyOf" in node and (
            not int_or_string or node["anyOf"] != [{"type": "integer"}, {"type": "string"}]
        ):
            problems.append(f"{where}: anyOf is only allowed for int-or-string")
        node_type = node.get("type")
        if node_type is None and not (int_or_string or preserve):
            problems.append(f"{where}: missing type")
        if node_type is not None and (not isinstance(node_type, str) or node_type == "null"):
            problems.append(f"{where}: type must be a single non-null type, got {node_type!r}")
        if "properties" in node and "additionalProperties" in node:
            problems.append(f"{where}: properties and additionalProperties are exclusive")
        if "additionalProperties" in node and not isinstance(node["additionalProperties"], Mapping):
            problems.append(f"{where}: additionalProperties must be a schema")
        if "items" in node and not isinstance(node["items"], Mapping):
            problems.append(f"{where}: items must be a single schema")
        if node.get("x-kubernetes-embedded-resource") and node_type != "object":
            problems.append(f"{where}: embedded resources must be type object")
    metadata = schema.get("properties", {}).get("metadata")
    if metadata is not None and dict(metadata) != {"type": "object"}:
        problems.append(".metadata: must be exactly {type: object} at the root")
    return problems


# --- rendering ----------------------------------------------------------------------------


def _render_version(version: CRDVersion) -> dict[str, Any]:
    schema = model_schema(version.model)
    problems = structural_violations(schema)
    if problems:
        raise CRDSchemaError(f"{version.model.__name__} is not structural: " + "; ".join(problems))
    out: dict[str, Any] = {
        "name": version.name,
        "served": version.served,
        "storage": version.storage,
        "schema": {"openAPIV3Schema": schema},
    }
    if version.deprecated:
        out["deprecated"] = True
    if version.printer_columns:
        out["additionalPrinterColumns"] = [column.render() for column in version.printer_columns]
    subresources: dict[str, Any] = {}
    if version.status_subresource:
        subresources["status"] = {}
    if version.scale is not None:
        subresources["scale"] = version.scale.render()
    if subresources:
        out["subresources"] = subresources
    return out


def render_crd(spec: CRDSpec) -> dict[str, Any]:
    """Render ``spec`` as an ``apiextensions.k8s.io/v1`` CustomResourceDefinition dict.

    Raises :class:`CRDSchemaError` when the versions do not have exactly one storage version
    or a model's schema is not structural.
    """
    storage = [v.name for v in spec.versions if v.storage]
    if len(storage) != 1:
        raise CRDSchemaError(f"{spec.name}: exactly one storage version required, got {storage}")
    names: dict[str, Any] = {
        "kind": spec.kind,
        "listKind": spec.list_kind or f"{spec.kind}List",
        "plural": spec.plural,
        "singular": spec.singular,
    }
    if spec.short_names:
        names["shortNames"] = list(spec.short_names)
    if spec.categories:
        names["categories"] = list(spec.categories)
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": spec.name},
        "spec": {
            "group": spec.group,
            "names": names,
            "scope": spec.scope,
            "versions": [_render_version(v) for v in spec.versions],
        },
    }


def render_crd_yaml(spec: CRDSpec) -> str:
    """Render ``spec`` as deterministic YAML (keys sorted, block style), like controller-gen."""
    return "---\n" + yaml.safe_dump(
        render_crd(spec), sort_keys=True, default_flow_style=False, allow_unicode=True, width=100
    )
