"""Kubernetes field errors (``k8s.io/apimachinery/pkg/util/validation/field``) and their text.

Admission webhooks answer with ``field.ErrorList.ToAggregate().Error()``, so API compatibility
means reproducing that text byte for byte. The rendering follows apimachinery as vendored by
OpenKruise v1.8 (Kubernetes 1.28-1.30, before the JSON rendering of Kubernetes 1.34):

- ``Required``, ``Forbidden``, ``TooLong`` and ``Internal`` errors print no value:
  ``spec.selector: Required value``.
- Other types print the bad value after the type: ``<field>: Invalid value: <value>: <detail>``.
  Go dereferences pointers first (a nil pointer prints as ``"null"``), then:

  * ``int32``/``int64``/``float``/``bool`` print bare (``-1``, ``true``);
  * a Go ``string`` prints ``%q``-quoted (:func:`go_quote`);
  * anything else (named string types, structs, maps, slices) prints with ``%#v`` because the
    API structs only define ``String()`` on pointer receivers. :class:`GoSyntax` carries such
    pre-rendered text; :func:`go_string_map`, :func:`go_string_slice`, :func:`go_int_or_string`
    and :func:`go_label_selector` build it for the types CloneSet validation reports.

Python values map as: ``None`` -> ``"null"``, ``bool`` -> ``true``/``false``, ``int`` -> digits,
``str`` -> quoted, :class:`GoSyntax` -> verbatim; a plain dict of strings or list of strings is
rendered as Go's ``map[string]string{...}`` / ``[]string{...}``; any other value falls back to
compact JSON (Go would print ``%#v`` of its own type; we document rather than guess).
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

__all__ = [
    "ErrorType",
    "FieldError",
    "GoSyntax",
    "aggregate",
    "duplicate",
    "forbidden",
    "go_int_or_string",
    "go_label_selector",
    "go_quote",
    "go_string_map",
    "go_string_slice",
    "go_value_list",
    "internal_error",
    "invalid",
    "not_found",
    "not_supported",
    "required",
    "too_long",
]


class ErrorType(StrEnum):
    """``field.ErrorType``: the machine-readable reason (the ``reason`` of a Status cause)."""

    NOT_FOUND = "FieldValueNotFound"
    REQUIRED = "FieldValueRequired"
    DUPLICATE = "FieldValueDuplicate"
    INVALID = "FieldValueInvalid"
    NOT_SUPPORTED = "FieldValueNotSupported"
    FORBIDDEN = "FieldValueForbidden"
    TOO_LONG = "FieldValueTooLong"
    TOO_MANY = "FieldValueTooMany"
    INTERNAL = "InternalError"
    TYPE_INVALID = "FieldValueTypeInvalid"

    @property
    def text(self) -> str:
        """``ErrorType.String()``: the human text, e.g. ``"Invalid value"``."""
        return _TYPE_TEXT[self]


_TYPE_TEXT = {
    ErrorType.NOT_FOUND: "Not found",
    ErrorType.REQUIRED: "Required value",
    ErrorType.DUPLICATE: "Duplicate value",
    ErrorType.INVALID: "Invalid value",
    ErrorType.NOT_SUPPORTED: "Unsupported value",
    ErrorType.FORBIDDEN: "Forbidden",
    ErrorType.TOO_LONG: "Too long",
    ErrorType.TOO_MANY: "Too many",
    ErrorType.INTERNAL: "Internal error",
    ErrorType.TYPE_INVALID: "Invalid value",
}
_VALUELESS = {ErrorType.REQUIRED, ErrorType.FORBIDDEN, ErrorType.TOO_LONG, ErrorType.INTERNAL}


@dataclass(frozen=True)
class GoSyntax:
    """A bad value already rendered the way Go's ``%#v`` prints it; printed verbatim."""

    text: str


@dataclass(frozen=True)
class FieldError:
    """One ``field.Error``: ``type`` at ``field`` (a path such as ``spec.template.spec.containers[0]``).

    ``bad_value`` is rendered by :meth:`body` as described in the module docstring; ``detail`` is
    appended after ``": "`` when non-empty.
    """

    type: ErrorType
    field: str
    bad_value: Any = ""
    detail: str = ""

    def body(self) -> str:
        """``Error.ErrorBody()``: the message without the field path."""
        text = self.type.text
        if self.type not in _VALUELESS:
            text = f"{text}: {render_value(self.bad_value)}"
        if self.detail:
            text = f"{text}: {self.detail}"
        return text

    def error(self) -> str:
        """``Error.Error()``: ``"<field>: <body>"``."""
        return f"{self.field}: {self.body()}"

    def __str__(self) -> str:
        return self.error()


def invalid(path: str, value: Any, detail: str) -> FieldError:
    """``field.Invalid``: a malformed value."""
    return FieldError(ErrorType.INVALID, path, value, detail)


def required(path: str, detail: str = "") -> FieldError:
    """``field.Required``: a missing value (printed without a value)."""
    return FieldError(ErrorType.REQUIRED, path, "", detail)


def forbidden(path: str, detail: str) -> FieldError:
    """``field.Forbidden``: a value not permitted here (printed without a value)."""
    return FieldError(ErrorType.FORBIDDEN, path, "", detail)


def duplicate(path: str, value: Any) -> FieldError:
    """``field.Duplicate``: a value that must be unique."""
    return FieldError(ErrorType.DUPLICATE, path, value)


def not_found(path: str, value: Any) -> FieldError:
    """``field.NotFound``: a reference to something that does not exist."""
    return FieldError(ErrorType.NOT_FOUND, path, value)


def not_supported(path: str, value: Any, valid: Sequence[str]) -> FieldError:
    """``field.NotSupported``: detail is ``supported values: "a", "b"`` (in the given order)."""
    detail = "supported values: " + ", ".join(go_quote(v) for v in valid) if valid else ""
    return FieldError(ErrorType.NOT_SUPPORTED, path, value, detail)


def too_long(path: str, max_length: int) -> FieldError:
    """``field.TooLong`` as of Kubernetes 1.28-1.30: ``must have at most <n> bytes``."""
    return FieldError(ErrorType.TOO_LONG, path, "", f"must have at most {max_length} bytes")


def internal_error(path: str, err: str) -> FieldError:
    """``field.InternalError``: a failure unrelated to the user's input."""
    return FieldError(ErrorType.INTERNAL, path, None, err)


def aggregate(errors: Iterable[FieldError | str]) -> str:
    """``ErrorList.ToAggregate().Error()``: ``""`` for none, the message for one, ``[a, b]`` for more.

    Identical messages are reported once, as ``ToAggregate`` and ``aggregate.Error`` do.
    """
    messages: list[str] = []
    for err in errors:
        text = err.error() if isinstance(err, FieldError) else err
        if text not in messages:
            messages.append(text)
    if not messages:
        return ""
    if len(messages) == 1:
        return messages[0]
    return "[" + ", ".join(messages) + "]"


# --- Go value rendering -----------------------------------------------------------------------

_ESCAPES = {"\a": "\\a", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t", "\v": "\\v"}


def go_quote(text: str) -> str:
    """Go's ``strconv.Quote`` (the ``%q`` verb): double quotes, Go escapes, printable runes kept."""
    out = ['"']
    for char in text:
        if char in ('"', "\\"):
            out.append("\\" + char)
        elif char in _ESCAPES:
            out.append(_ESCAPES[char])
        elif char.isprintable():
            out.append(char)
        elif ord(char) < 0x80:
            out.append(f"\\x{ord(char):02x}")
        elif ord(char) < 0x10000:
            out.append(f"\\u{ord(char):04x}")
        else:
            out.append(f"\\U{ord(char):08x}")
    out.append('"')
    return "".join(out)


def _go_float(value: float) -> str:
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "+Inf" if value > 0 else "-Inf"
    text = repr(value)
    return text[:-2] if text.endswith(".0") else text


def go_string_map(value: Mapping[str, Any] | None) -> GoSyntax:
    """``%#v`` of a ``map[string]string``: keys sorted, ``map[string]string(nil)`` for nil."""
    if value is None:
        return GoSyntax("map[string]string(nil)")
    items = ", ".join(f"{go_quote(str(k))}:{go_quote(str(value[k]))}" for k in sorted(value))
    return GoSyntax("map[string]string{" + items + "}")


def go_string_slice(value: Sequence[Any] | None) -> GoSyntax:
    """``%#v`` of a ``[]string``: ``[]string{"a", "b"}``, ``[]string(nil)`` for nil."""
    if value is None:
        return GoSyntax("[]string(nil)")
    return GoSyntax("[]string{" + ", ".join(go_quote(str(v)) for v in value) + "}")


def go_value_list(values: Sequence[Any]) -> str:
    """``%v`` of a ``[]string``: ``[a b]``."""
    return "[" + " ".join(str(v) for v in values) + "]"


def go_int_or_string(value: Any) -> GoSyntax:
    """``%#v`` of a dereferenced ``intstr.IntOrString`` (Type 0 = Int, 1 = String)."""
    if isinstance(value, str):
        return GoSyntax(f"intstr.IntOrString{{Type:1, IntVal:0, StrVal:{go_quote(value)}}}")
    number = value if isinstance(value, int) and not isinstance(value, bool) else 0
    return GoSyntax(f'intstr.IntOrString{{Type:0, IntVal:{number}, StrVal:""}}')


def go_label_selector(selector: Mapping[str, Any]) -> GoSyntax:
    """``%#v`` of a dereferenced ``metav1.LabelSelector`` (JSON ``null``/absent lists print as nil)."""
    labels = selector.get("matchLabels")
    exprs = selector.get("matchExpressions")
    labels_text = go_string_map(labels if isinstance(labels, Mapping) else None).text
    if isinstance(exprs, list):
        rendered = []
        for expr in exprs:
            item = expr if isinstance(expr, Mapping) else {}
            values = item.get("values")
            rendered.append(
                "v1.LabelSelectorRequirement{"
                f"Key:{go_quote(str(item.get('key') or ''))}, "
                f"Operator:{go_quote(str(item.get('operator') or ''))}, "
                f"Values:{go_string_slice(values if isinstance(values, list) else None).text}}}"
            )
        exprs_text = "[]v1.LabelSelectorRequirement{" + ", ".join(rendered) + "}"
    else:
        exprs_text = "[]v1.LabelSelectorRequirement(nil)"
    return GoSyntax(f"v1.LabelSelector{{MatchLabels:{labels_text}, MatchExpressions:{exprs_text}}}")


def _is_string_map(value: Any) -> bool:
    return isinstance(value, Mapping) and all(isinstance(v, str) for v in value.values())


def render_value(value: Any) -> str:
    """Render a bad value as ``ErrorBody`` prints it (see the module docstring)."""
    if isinstance(value, GoSyntax):
        return value.text
    if value is None:
        return go_quote("null")
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return _go_float(value)
    if isinstance(value, str):
        return go_quote(value)
    if _is_string_map(value):
        return go_string_map(value).text
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return go_string_slice(value).text
    return json.dumps(value, separators=(",", ":"), sort_keys=True, default=str)
