"""A pod template (JSON) as the Go value ``encoding/json`` makes of it, printed by spew's ``%#v``.

Two steps, both driven by a schema of the Go types (:class:`Schema`, generated from
``reflect`` by ``hack/gohash``):

- :func:`decode` mirrors ``json.Unmarshal`` into a ``v1.PodTemplateSpec``: unknown keys are
  dropped, keys match field names exactly or else case-insensitively, the fields of embedded
  structs without a json name are promoted, ``null`` sets pointers, slices and maps to nil and
  leaves anything else untouched, ``[]`` and ``{}`` give empty (non-nil) slices and maps, and
  the types with their own ``UnmarshalJSON`` follow it (``resource.Quantity`` via
  :func:`~.quantity.parse_quantity`, ``intstr.IntOrString``, ``metav1.Time`` when null).
- :func:`spew_format` is go-spew v1.1.1's ``formatState.format`` for ``%#v`` with
  ``DisableMethods`` and ``SortKeys`` (``spew/format.go``): ``(type)value`` except where spew
  ignores the next type (slice elements, map keys and values, a pointer's target), pointers as
  ``(*T)value`` or ``(*T)<nil>``, nil slices and maps as ``<nil>``, strings raw, structs as
  ``{Name:value ...}`` over every field including unexported ones, map keys sorted.

Go values are plain Python data: a ``dict`` of field name to value for a struct (a missing
field is the zero value), ``None`` for a nil pointer, slice or map, the target itself for a
non-nil pointer, ``list``/``dict`` for slices and maps, ``str``/``int``/``bool`` for scalars.
Inputs the port cannot represent (a non-null ``metav1.Time``, ``managedFields``, a type with
an ``UnmarshalJSON`` it does not know) raise :class:`Unsupported`; malformed JSON for a type
raises :class:`ValueError` as ``json.Unmarshal`` would fail.
"""

from __future__ import annotations

import base64
import io
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, TypedDict

from kruise.rollouts.workloads.deployment.gohash.quantity import parse_quantity

QUANTITY = "k8s.io/apimachinery/pkg/api/resource.Quantity"
INT_OR_STRING = "k8s.io/apimachinery/pkg/util/intstr.IntOrString"
META_TIME = "k8s.io/apimachinery/pkg/apis/meta/v1.Time"
FIELDS_V1 = "k8s.io/apimachinery/pkg/apis/meta/v1.FieldsV1"
_INTS = {"int", "int8", "int16", "int32", "int64"}
_UINTS = {"uint", "uint8", "uint16", "uint32", "uint64", "uintptr"}


class Unsupported(ValueError):
    """A template holds something the port does not reproduce (see the module docstring)."""


class GoField(TypedDict, total=False):
    name: str  # as spew prints it
    type: str  # key into Schema.types
    json: str  # encoding/json's key; absent when json skips the field
    inline: bool  # an embedded struct whose fields json promotes


class GoType(TypedDict, total=False):
    name: str  # reflect.Type.String(), what spew prints
    kind: str  # reflect.Kind.String()
    elem: str
    key: str
    len: int
    fields: list[GoField]
    unmarshaler: bool  # *T implements json.Unmarshaler or encoding.TextUnmarshaler


@dataclass(frozen=True)
class Schema:
    """The Go types reachable from ``root`` (``v1.PodTemplateSpec``), keyed by package path."""

    root: str
    types: Mapping[str, GoType]
    _json_fields: dict[str, dict[str, tuple[tuple[str, ...], str]]] = field(
        default_factory=dict, compare=False, repr=False
    )

    def json_fields(self, key: str) -> dict[str, tuple[tuple[str, ...], str]]:
        """json key -> (path of Go field names, type key), embedded fields promoted (shallower wins)."""
        cached = self._json_fields.get(key)
        if cached is None:
            cached = {}
            level: list[tuple[tuple[str, ...], str]] = [((), key)]
            while level:
                deeper: list[tuple[tuple[str, ...], str]] = []
                found: dict[str, tuple[tuple[str, ...], str]] = {}
                for path, struct in level:
                    for f in self.types[struct].get("fields", []):
                        if f.get("inline"):
                            target = f["type"]
                            while self.types[target]["kind"] == "ptr":
                                target = self.types[target]["elem"]
                            deeper.append(((*path, f["name"]), target))
                        elif "json" in f:
                            found.setdefault(f["json"], ((*path, f["name"]), f["type"]))
                for name, hit in found.items():
                    cached.setdefault(name, hit)
                level = deeper
            self._json_fields[key] = cached
        return cached


def decode(schema: Schema, key: str, data: Any) -> Any:
    """The Go value of type ``key`` that ``json.Unmarshal(data)`` leaves in a zero value."""
    return _decode(schema, key, data, zero(schema, key))


def zero(schema: Schema, key: str) -> Any:
    kind = schema.types[key]["kind"]
    if kind == "struct":
        return {}
    if kind == "array":
        return [zero(schema, schema.types[key]["elem"])] * schema.types[key]["len"]
    if kind == "string":
        return ""
    if kind == "bool":
        return False
    if kind in _INTS or kind in _UINTS:
        return 0
    if kind in ("ptr", "slice", "map"):
        return None
    raise Unsupported(f"no zero value for kind {kind}")


def _decode(schema: Schema, key: str, data: Any, current: Any) -> Any:
    t = schema.types[key]
    kind = t["kind"]
    if t.get("unmarshaler"):
        return _unmarshal(key, data, current)
    if data is None:
        return None if kind in ("ptr", "slice", "map") else current
    if kind == "ptr":
        target = current if current is not None else zero(schema, t["elem"])
        return _decode(schema, t["elem"], data, target)
    if kind == "struct":
        _expect(data, dict, t)
        out = dict(current)
        fields = schema.json_fields(key)
        folded = {name.casefold(): name for name in reversed(list(fields))}
        for json_key, value in data.items():
            name = json_key if json_key in fields else folded.get(json_key.casefold())
            if name is not None:
                path, type_key = fields[name]
                _set_path(schema, key, out, path, type_key, value)
        return out
    if kind == "slice":
        if t["elem"] == "uint8" and isinstance(data, str):
            return list(base64.b64decode(data))
        _expect(data, list, t)
        return [_decode(schema, t["elem"], item, zero(schema, t["elem"])) for item in data]
    if kind == "map":
        _expect(data, dict, t)
        out_map = dict(current or {})
        key_kind = schema.types[t["key"]]["kind"]
        for k, v in data.items():
            go_key = k if key_kind == "string" else int(k)
            out_map[go_key] = _decode(schema, t["elem"], v, zero(schema, t["elem"]))
        return out_map
    if kind == "string":
        _expect(data, str, t)
        return data
    if kind == "bool":
        _expect(data, bool, t)
        return data
    if kind in _INTS or kind in _UINTS:
        if isinstance(data, bool) or not isinstance(data, int):
            raise ValueError(f"json: cannot unmarshal {data!r} into Go value of type {t['name']}")
        return data
    raise Unsupported(f"cannot decode into Go kind {kind} ({t['name']})")


def _set_path(
    schema: Schema, struct: str, out: dict[str, Any], path: tuple[str, ...], type_key: str, value: Any
) -> None:
    """Decode ``value`` into the field at ``path``, allocating embedded structs on the way."""
    holder = out
    for name in path[:-1]:
        inner = holder.get(name)
        holder[name] = dict(inner) if inner is not None else {}
        holder = holder[name]
    holder[path[-1]] = _decode(schema, type_key, value, holder.get(path[-1], zero(schema, type_key)))


def _expect(data: Any, kind: type, t: GoType) -> None:
    if not isinstance(data, kind):
        raise ValueError(f"json: cannot unmarshal {type(data).__name__} into Go value of type {t['name']}")


def _unmarshal(key: str, data: Any, current: Any) -> Any:
    """The ``UnmarshalJSON`` of the types that have one (v0.28.9 to v0.37.2)."""
    if key == QUANTITY:
        if data is None:  # clears the amounts only
            return {k: v for k, v in current.items() if k not in ("i", "d")}
        if isinstance(data, bool) or not isinstance(data, (str, int)):
            raise Unsupported(f"quantity {data!r}: only strings and integers are reproduced")
        return parse_quantity(str(data).strip())
    if key == INT_OR_STRING:
        if isinstance(data, str):
            return {**current, "Type": 1, "StrVal": data}
        if data is not None and (isinstance(data, bool) or not isinstance(data, int)):
            raise ValueError(f"json: cannot unmarshal {data!r} into Go value of type int32")
        return {**current, "Type": 0} if data is None else {**current, "Type": 0, "IntVal": data}
    if key in (META_TIME, FIELDS_V1):
        if data is None:
            return {}
        raise Unsupported(f"a non-null {key.rsplit('/', 1)[-1]} in a pod template is not reproduced")
    raise Unsupported(f"{key} has its own UnmarshalJSON, which the port does not know")


def spew_format(schema: Schema, key: str, value: Any) -> str:
    """``spew.ConfigState{SortKeys, DisableMethods, SpewKeys}.Sprintf("%#v", value)``."""
    printer = _Printer(schema)
    printer.format(key, value)
    return printer.out.getvalue()


class _Printer:
    """go-spew's ``formatState`` for the ``#`` flag, ``ignoreNextType`` kept as spew keeps it."""

    def __init__(self, schema: Schema) -> None:
        self.schema = schema
        self.out = io.StringIO()
        self.ignore_next_type = False

    def format(self, key: str, value: Any) -> None:
        t = self.schema.types[key]
        kind = t["kind"]
        if kind == "ptr":
            self._format_ptr(key, value)
            return
        if not self.ignore_next_type:
            self.out.write(f"({t['name']})")
        self.ignore_next_type = False
        w = self.out.write
        if kind == "bool":
            w("true" if value else "false")
        elif kind in _INTS or kind in _UINTS:
            w(str(value))
        elif kind in ("slice", "array"):
            if value is None:
                w("<nil>")
                return
            w("[")
            for i, item in enumerate(value):
                if i:
                    w(" ")
                self.ignore_next_type = True
                self.format(t["elem"], item)
            w("]")
        elif kind == "string":
            w(value)
        elif kind == "map":
            if value is None:
                w("<nil>")
                return
            w("map[")
            for i, k in enumerate(sorted(value)):
                if i:
                    w(" ")
                self.ignore_next_type = True
                self.format(t["key"], k)
                w(":")
                self.ignore_next_type = True
                self.format(t["elem"], value[k])
            w("]")
        elif kind == "struct":
            w("{")
            for i, f in enumerate(t.get("fields", [])):
                if i:
                    w(" ")
                w(f["name"] + ":")
                self.format(f["type"], value.get(f["name"], zero(self.schema, f["type"])))
            w("}")
        else:
            raise Unsupported(f"spew output for kind {kind} is not ported")

    def _format_ptr(self, key: str, value: Any) -> None:
        """``formatPtr`` for one level of indirection (the schema has no pointer to a pointer)."""
        if value is None and self.ignore_next_type:
            self.out.write("<nil>")
            return
        elem = self.schema.types[key]["elem"]
        if self.schema.types[elem]["kind"] == "ptr":
            raise Unsupported(f"pointer to pointer {self.schema.types[key]['name']}")
        if not self.ignore_next_type:  # "(*T)": the nil pointer's own type or * and its target's
            self.out.write(f"({self.schema.types[key]['name']})")
        else:
            self.out.write("<*>")
        if value is None:
            self.out.write("<nil>")
            return
        self.ignore_next_type = True
        self.format(elem, value)
