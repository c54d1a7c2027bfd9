"""Matching a ``metav1.LabelSelector`` dict against a label map.

Used by the workloads' ``updateStrategy.priorityStrategy.weightPriority[].matchSelector`` and by
SidecarSet selectors (pods, namespaces, ``updateStrategy.selector``). Mirrors
``metav1.LabelSelectorAsSelector`` semantics: ``matchLabels`` are equality requirements,
``matchExpressions`` support ``In``/``NotIn``/``Exists``/``DoesNotExist``, an empty selector
matches everything and a ``None`` selector matches nothing. Label key/value syntax is not
validated here (the webhooks validate the objects); structurally invalid requirements raise.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kruise.workloads.objects import mapping, sequence


class SelectorError(ValueError):
    """A label selector requirement is malformed (unknown operator, missing/extra values)."""


def _requirement_matches(expression: Mapping[str, Any], labels: Mapping[str, str]) -> bool:
    key = str(expression.get("key") or "")
    operator = expression.get("operator")
    values = [str(v) for v in sequence(expression.get("values"))]
    if operator in ("In", "NotIn"):
        if not values:
            raise SelectorError(f"for 'in', 'notin' operators, values set can't be empty (key {key!r})")
        if operator == "In":
            return key in labels and labels[key] in values
        return key not in labels or labels[key] not in values
    if operator in ("Exists", "DoesNotExist"):
        if values:
            raise SelectorError(f"values set must be empty for exists and does not exist (key {key!r})")
        exists = key in labels
        return exists if operator == "Exists" else not exists
    raise SelectorError(f"{operator!r} is not a valid label selector operator")


def selector_matches(selector: Mapping[str, Any] | None, labels: Mapping[str, str]) -> bool:
    """Whether ``labels`` satisfy ``selector`` (``{"matchLabels": ..., "matchExpressions": [...]}``).

    Raises:
        SelectorError: a malformed ``matchExpressions`` entry (upstream callers skip such terms).
    """
    if selector is None:
        return False
    match_labels = mapping(selector.get("matchLabels"))
    expressions = [mapping(e) for e in sequence(selector.get("matchExpressions"))]
    results = [_requirement_matches(e, labels) for e in expressions]
    return all(k in labels and labels[k] == str(v) for k, v in match_labels.items()) and all(results)
