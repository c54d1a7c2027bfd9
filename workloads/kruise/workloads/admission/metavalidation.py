"""Names, labels, object metadata and label selectors, validated as apimachinery does.

Mirrors ``k8s.io/apimachinery/pkg/util/validation`` (``IsDNS1123Label``, ``IsDNS1123Subdomain``,
``IsQualifiedName``, ``IsValidLabelValue``), ``pkg/api/validation`` (``ValidateObjectMeta`` for
the name/namespace/generation/labels/annotations parts), ``pkg/apis/meta/v1/validation``
(``ValidateLabels``, ``ValidateLabelSelector``) and ``metav1.LabelSelectorAsSelector`` with
``labels.NewRequirement`` — messages as of Kubernetes 1.28-1.30 (OpenKruise v1.8).

Go iterates maps in random order; where several keys are wrong this module reports them in
sorted key order, so the text is deterministic (upstream's order is not).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

from kruise.workloads.admission.fielderrors import (
    FieldError,
    aggregate,
    forbidden,
    go_quote,
    go_string_slice,
    invalid,
    required,
    too_long,
)

__all__ = [
    "LabelSelectorError",
    "NameValidator",
    "is_dns1123_label",
    "is_dns1123_subdomain",
    "is_qualified_name",
    "is_valid_label_value",
    "max_len_error",
    "name_is_dns_subdomain",
    "regex_error",
    "selector_matches",
    "selector_requirements",
    "validate_annotations",
    "validate_label_selector",
    "validate_labels",
    "validate_object_meta",
]

_DNS1123_LABEL_FMT = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_DNS1123_SUBDOMAIN_FMT = _DNS1123_LABEL_FMT + "(\\." + _DNS1123_LABEL_FMT + ")*"
_DNS1123_LABEL_MSG = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', "
    "and must start and end with an alphanumeric character"
)
_DNS1123_SUBDOMAIN_MSG = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', "
    "and must start and end with an alphanumeric character"
)
_QNAME_FMT = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
_QNAME_MSG = (
    "must consist of alphanumeric characters, '-', '_' or '.', "
    "and must start and end with an alphanumeric character"
)
_LABEL_VALUE_FMT = "(" + _QNAME_FMT + ")?"
_LABEL_VALUE_MSG = (
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', "
    "and must start and end with an alphanumeric character"
)
_DNS1123_LABEL_RE = re.compile(_DNS1123_LABEL_FMT)
_DNS1123_SUBDOMAIN_RE = re.compile(_DNS1123_SUBDOMAIN_FMT)
_QNAME_RE = re.compile(_QNAME_FMT)
_LABEL_VALUE_RE = re.compile(_LABEL_VALUE_FMT)
TOTAL_ANNOTATION_SIZE_LIMIT_B = 256 * (1 << 10)
IS_NEGATIVE_ERROR_MSG = "must be greater than or equal to 0"


def max_len_error(length: int) -> str:
    """``validation.MaxLenError``."""
    return _max_len_error(length)


def regex_error(msg: str, fmt: str, *examples: str) -> str:
    """``validation.RegexError``: ``msg (e.g. 'a',  or 'b', regex used for validation is 'fmt')``."""
    return _regex_error(msg, fmt, *examples)


def _max_len_error(length: int) -> str:
    return f"must be no more than {length} characters"


def _regex_error(msg: str, fmt: str, *examples: str) -> str:
    if not examples:
        return f"{msg} (regex used for validation is '{fmt}')"
    return (
        msg + " (e.g. " + " or ".join(f"'{e}', " for e in examples) + f"regex used for validation is '{fmt}')"
    )


def is_dns1123_label(value: str) -> list[str]:
    """``validation.IsDNS1123Label``: at most 63 characters of ``[a-z0-9-]``, alphanumeric ends."""
    errs = []
    if len(value) > 63:
        errs.append(_max_len_error(63))
    if not _DNS1123_LABEL_RE.fullmatch(value):
        if _DNS1123_SUBDOMAIN_RE.fullmatch(value):
            errs.append("must not contain dots")
        else:
            errs.append(_regex_error(_DNS1123_LABEL_MSG, _DNS1123_LABEL_FMT, "my-name", "123-abc"))
    return errs


def is_dns1123_subdomain(value: str) -> list[str]:
    """``validation.IsDNS1123Subdomain``: at most 253 characters, dot-separated DNS labels."""
    errs = []
    if len(value) > 253:
        errs.append(_max_len_error(253))
    if not _DNS1123_SUBDOMAIN_RE.fullmatch(value):
        errs.append(_regex_error(_DNS1123_SUBDOMAIN_MSG, _DNS1123_SUBDOMAIN_FMT, "example.com"))
    return errs


def name_is_dns_subdomain(name: str, prefix: bool) -> list[str]:
    """``NameIsDNSSubdomain``: a ``generateName`` prefix may end in ``-`` (upstream's mask)."""
    if prefix and len(name) > 1 and name.endswith("-"):
        name = name[:-2] + "a"
    return is_dns1123_subdomain(name)


def is_qualified_name(value: str) -> list[str]:
    """``validation.IsQualifiedName``: ``[prefix/]name``, name at most 63 characters."""
    errs: list[str] = []
    parts = value.split("/")
    if len(parts) == 1:
        name = parts[0]
    elif len(parts) == 2:
        prefix, name = parts
        if not prefix:
            errs.append("prefix part must be non-empty")
        else:
            errs.extend("prefix part " + msg for msg in is_dns1123_subdomain(prefix))
    else:
        return [
            "a qualified name "
            + _regex_error(_QNAME_MSG, _QNAME_FMT, "MyName", "my.name", "123-abc")
            + " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"
        ]
    if not name:
        errs.append("name part must be non-empty")
    elif len(name) > 63:
        errs.append("name part " + _max_len_error(63))
    if not _QNAME_RE.fullmatch(name):
        errs.append("name part " + _regex_error(_QNAME_MSG, _QNAME_FMT, "MyName", "my.name", "123-abc"))
    return errs


def is_valid_label_value(value: str) -> list[str]:
    """``validation.IsValidLabelValue``: empty, or at most 63 qualified-name characters."""
    errs = []
    if len(value) > 63:
        errs.append(_max_len_error(63))
    if not _LABEL_VALUE_RE.fullmatch(value):
        errs.append(_regex_error(_LABEL_VALUE_MSG, _LABEL_VALUE_FMT, "MyValue", "my_value", "12345"))
    return errs


def _string_map(value: Any) -> dict[str, str]:
    if not isinstance(value, Mapping):
        return {}
    return {str(k): "" if v is None else str(v) for k, v in value.items()}


def validate_labels(labels: Any, path: str) -> list[FieldError]:
    """``ValidateLabels``: every key a qualified name, every value a label value (errors at ``path``)."""
    errs: list[FieldError] = []
    items = _string_map(labels)
    for key in sorted(items):
        errs.extend(invalid(path, key, msg) for msg in is_qualified_name(key))
        errs.extend(invalid(path, items[key], msg) for msg in is_valid_label_value(items[key]))
    return errs


def validate_annotations(annotations: Any, path: str) -> list[FieldError]:
    """``ValidateAnnotations``: lower-cased keys are qualified names; total size at most 256 KiB."""
    errs: list[FieldError] = []
    items = _string_map(annotations)
    for key in sorted(items):
        errs.extend(invalid(path, key, msg) for msg in is_qualified_name(key.lower()))
    if sum(len(k) + len(v) for k, v in items.items()) > TOTAL_ANNOTATION_SIZE_LIMIT_B:
        errs.append(too_long(path, TOTAL_ANNOTATION_SIZE_LIMIT_B))
    return errs


NameValidator = Callable[[str, bool], list[str]]
"""``(name, is_prefix) -> messages``, as apimachinery's ``ValidateNameFunc``."""


def validate_object_meta(
    meta: Any,
    *,
    requires_namespace: bool,
    path: str = "metadata",
    name_validator: NameValidator = name_is_dns_subdomain,
) -> list[FieldError]:
    """``ValidateObjectMeta`` (names checked by ``name_validator``, default ``NameIsDNSSubdomain``):
    generateName, name, namespace, generation, labels and annotations (ownerReferences,
    finalizers and managedFields are not checked here).
    """
    meta = meta if isinstance(meta, Mapping) else {}
    errs: list[FieldError] = []
    generate_name = str(meta.get("generateName") or "")
    if generate_name:
        errs.extend(
            invalid(f"{path}.generateName", generate_name, m) for m in name_validator(generate_name, True)
        )
    name = str(meta.get("name") or "")
    if not name:
        errs.append(required(f"{path}.name", "name or generateName is required"))
    else:
        errs.extend(invalid(f"{path}.name", name, m) for m in name_validator(name, False))
    namespace = str(meta.get("namespace") or "")
    if requires_namespace:
        if not namespace:
            errs.append(required(f"{path}.namespace"))
        else:
            errs.extend(invalid(f"{path}.namespace", namespace, m) for m in is_dns1123_label(namespace))
    elif namespace:
        errs.append(forbidden(f"{path}.namespace", "not allowed on this type"))
    generation = meta.get("generation")
    if isinstance(generation, int) and generation < 0:
        errs.append(invalid(f"{path}.generation", generation, IS_NEGATIVE_ERROR_MSG))
    errs.extend(validate_labels(meta.get("labels"), f"{path}.labels"))
    errs.extend(validate_annotations(meta.get("annotations"), f"{path}.annotations"))
    return errs


def _expressions(selector: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    exprs = selector.get("matchExpressions")
    return [e if isinstance(e, Mapping) else {} for e in exprs] if isinstance(exprs, list) else []


def _values(expr: Mapping[str, Any]) -> list[str] | None:
    values = expr.get("values")
    return [str(v) for v in values] if isinstance(values, list) else None


def validate_label_selector(selector: Any, path: str) -> list[FieldError]:
    """``ValidateLabelSelector``: matchLabels as labels, each matchExpressions entry checked."""
    if not isinstance(selector, Mapping):
        return []
    errs = validate_labels(selector.get("matchLabels"), f"{path}.matchLabels")
    for i, expr in enumerate(_expressions(selector)):
        epath = f"{path}.matchExpressions[{i}]"
        operator = str(expr.get("operator") or "")
        values = _values(expr) or []
        if operator in ("In", "NotIn"):
            if not values:
                errs.append(
                    required(f"{epath}.values", "must be specified when `operator` is 'In' or 'NotIn'")
                )
        elif operator in ("Exists", "DoesNotExist"):
            if values:
                errs.append(
                    forbidden(
                        f"{epath}.values",
                        "may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
                    )
                )
        else:
            errs.append(invalid(f"{epath}.operator", operator, "not a valid selector operator"))
        key = str(expr.get("key") or "")
        errs.extend(invalid(f"{epath}.key", key, m) for m in is_qualified_name(key))
        for j, value in enumerate(values):
            errs.extend(invalid(f"{epath}.values[{j}]", value, m) for m in is_valid_label_value(value))
    return errs


class LabelSelectorError(ValueError):
    """``LabelSelectorAsSelector`` failed; ``str(err)`` is Go's error text."""


_Requirement = tuple[str, str, list[str]]


def _new_requirement(key: str, operator: str, values: list[str] | None) -> _Requirement:
    """``labels.NewRequirement`` for the operators a LabelSelector can produce."""
    errs: list[FieldError] = []
    key_msgs = is_qualified_name(key)
    if key_msgs:
        errs.append(invalid("key", key, "; ".join(key_msgs)))
    vals = values or []
    if operator in ("in", "notin") and not vals:
        errs.append(
            invalid(
                "values",
                go_string_slice(vals or None),
                "for 'in', 'notin' operators, values set can't be empty",
            )
        )
    elif operator == "=" and len(vals) != 1:
        errs.append(
            invalid(
                "values", go_string_slice(vals or None), "exact-match compatibility requires one single value"
            )
        )
    elif operator in ("exists", "!") and vals:
        errs.append(
            invalid(
                "values",
                go_string_slice(vals or None),
                "values set must be empty for exists and does not exist",
            )
        )
    for i, value in enumerate(vals):
        msgs = is_valid_label_value(value)
        if msgs:
            errs.append(invalid(f"values[{i}][{key}]", value, "; ".join(msgs)))
    if errs:
        raise LabelSelectorError(aggregate(errs))
    return key, operator, vals


_OPERATORS = {"In": "in", "NotIn": "notin", "Exists": "exists", "DoesNotExist": "!"}


def selector_requirements(selector: Any) -> list[_Requirement] | None:
    """``metav1.LabelSelectorAsSelector`` as a list of ``(key, op, values)``.

    Returns ``None`` for a nil selector (matches nothing) and ``[]`` for an empty one (matches
    everything). Raises :class:`LabelSelectorError` with Go's text for an invalid selector
    (``"Foo" is not a valid label selector operator``, ``values: Invalid value: ...``).
    """
    if not isinstance(selector, Mapping):
        return None
    reqs = [
        _new_requirement(k, "=", [v]) for k, v in sorted(_string_map(selector.get("matchLabels")).items())
    ]
    for expr in _expressions(selector):
        operator = str(expr.get("operator") or "")
        if operator not in _OPERATORS:
            raise LabelSelectorError(f"{go_quote(operator)} is not a valid label selector operator")
        reqs.append(_new_requirement(str(expr.get("key") or ""), _OPERATORS[operator], _values(expr)))
    return reqs


def selector_matches(requirements: list[_Requirement] | None, labels: Any) -> bool:
    """``Selector.Matches`` for requirements built by :func:`selector_requirements`."""
    if requirements is None:
        return False
    items = _string_map(labels)
    for key, operator, values in requirements:
        present = key in items
        if operator in ("=", "in"):
            ok = present and items[key] in values
        elif operator == "notin":
            ok = not present or items[key] not in values
        elif operator == "exists":
            ok = present
        else:
            ok = not present
        if not ok:
            return False
    return True
