"""Label selectors as dicts: matching a label map, and the ``labelSelector`` status string.

Needed by ``priorityStrategy.weightPriority[].matchSelector``, pod adoption, every
workload's ``status.labelSelector`` and the Advanced DaemonSet's ``rollingUpdate.selector``
(matched against node labels). Mirrors
``metav1.LabelSelectorAsSelector`` semantics: ``matchLabels`` are equality requirements,
``matchExpressions`` support ``In``/``NotIn``/``Exists``/``DoesNotExist``, an empty selector
matches everything and a ``None`` selector matches nothing. Label key/value syntax is not
validated here (the API server validates the CloneSet); structurally invalid requirements raise.
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


def format_label_selector(selector: Mapping[str, Any] | None) -> str:
    """``metav1.FormatLabelSelector``: ``a=b,c in (d,e),!f``; requirements sorted by key."""
    sel = mapping(selector)
    reqs: list[tuple[str, str]] = []
    for key, value in sorted(mapping(sel.get("matchLabels")).items()):
        reqs.append((str(key), f"{key}={value}"))
    for expr in sequence(sel.get("matchExpressions")):
        e = mapping(expr)
        key, op = str(e.get("key")), str(e.get("operator"))
        values = ",".join(sorted(str(v) for v in sequence(e.get("values"))))
        text = {
            "In": f"{key} in ({values})",
            "NotIn": f"{key} notin ({values})",
            "Exists": key,
            "DoesNotExist": f"!{key}",
        }.get(op, f"{key} {op} ({values})")
        reqs.append((key, text))
    if not reqs:
        return ""
    return ",".join(text for _, text in sorted(reqs, key=lambda r: r[0]))
