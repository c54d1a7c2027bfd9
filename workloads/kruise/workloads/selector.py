"""Matching a ``metav1.LabelSelector`` dict against a label map.

:func:`compile_selector` parses a selector once for many label maps.

Used by the workloads' ``updateStrategy.priorityStrategy.weightPriority[].matchSelector``, by
SidecarSet selectors (pods, namespaces, ``updateStrategy.selector``), by the Advanced DaemonSet's
``rollingUpdate.selector`` (matched against node labels), pod adoption, and every workload's
``status.labelSelector`` (:func:`format_label_selector`). Mirrors
``metav1.LabelSelectorAsSelector`` semantics: ``matchLabels`` are equality requirements,
``matchExpressions`` support ``In``/``NotIn``/``Exists``/``DoesNotExist``, an empty selector
matches everything and a ``None`` selector matches nothing. Label key/value syntax is not
validated here (the webhooks validate the objects); structurally invalid requirements raise.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from kruise.workloads.objects import mapping, sequence


class SelectorError(ValueError):
    """A label selector requirement is malformed (unknown operator, missing/extra values)."""


@dataclass(frozen=True)
class CompiledSelector:
    """A LabelSelector parsed once (:func:`compile_selector`); call it with a label map."""

    match_labels: tuple[tuple[str, str], ...]
    requirements: tuple[tuple[str, str, frozenset[str]], ...]  # (key, operator, values)

    def __call__(self, labels: Mapping[str, str]) -> bool:
        for key, value in self.match_labels:
            if labels.get(key) != value:
                return False
        for key, operator, values in self.requirements:
            present = key in labels
            if operator == "In":
                ok = present and labels[key] in values
            elif operator == "NotIn":
                ok = not present or labels[key] not in values
            elif operator == "Exists":
                ok = present
            else:
                ok = not present
            if not ok:
                return False
        return True


def _requirement(expression: Mapping[str, Any]) -> tuple[str, str, frozenset[str]]:
    key = str(expression.get("key") or "")
    operator = expression.get("operator")
    values = [str(v) for v in sequence(expression.get("values"))]
    if operator in ("In", "NotIn"):
        if not values:
            raise SelectorError(f"for 'in', 'notin' operators, values set can't be empty (key {key!r})")
    elif operator in ("Exists", "DoesNotExist"):
        if values:
            raise SelectorError(f"values set must be empty for exists and does not exist (key {key!r})")
    else:
        raise SelectorError(f"{operator!r} is not a valid label selector operator")
    return key, str(operator), frozenset(values)


def compile_selector(selector: Mapping[str, Any]) -> CompiledSelector:
    """``selector`` (``{"matchLabels": ..., "matchExpressions": [...]}``) parsed for repeated matching.

    Raises:
        SelectorError: a malformed ``matchExpressions`` entry.
    """
    return CompiledSelector(
        tuple((str(k), str(v)) for k, v in mapping(selector.get("matchLabels")).items()),
        tuple(_requirement(mapping(e)) for e in sequence(selector.get("matchExpressions"))),
    )


def selector_matches(selector: Mapping[str, Any] | None, labels: Mapping[str, str]) -> bool:
    """Whether ``labels`` satisfy ``selector`` (``{"matchLabels": ..., "matchExpressions": [...]}``).

    Raises:
        SelectorError: a malformed ``matchExpressions`` entry (upstream callers skip such terms).
    """
    if selector is None:
        return False
    return compile_selector(selector)(labels)


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
