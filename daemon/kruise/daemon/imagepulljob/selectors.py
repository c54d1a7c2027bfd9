"""Label selectors (``metav1.LabelSelector``) for node and pod selection (pure).

:func:`selector_error` is what ``metav1.LabelSelectorAsSelector`` refuses (its error text);
:func:`matches` is ``Selector.Matches``: every ``matchLabels`` pair and every
``matchExpressions`` requirement (``In``, ``NotIn``, ``Exists``, ``DoesNotExist``) holds. An
empty selector matches everything.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["matches", "selector_error"]

_OPERATORS = {"In", "NotIn", "Exists", "DoesNotExist"}


def selector_error(selector: Mapping[str, Any] | None) -> str | None:
    """None when ``selector`` converts to a selector, else the reason (upstream's wording)."""
    for expr in (selector or {}).get("matchExpressions") or ():
        op = expr.get("operator")
        values = expr.get("values") or []
        if op in ("In", "NotIn") and not values:
            return "for 'in', 'notin' operators, values set can't be empty"
        if op in ("Exists", "DoesNotExist") and values:
            return "values set must be empty for exists and does not exist"
        if op not in _OPERATORS:
            return f'"{op}" is not a valid label selector operator'
    return None


def matches(selector: Mapping[str, Any] | None, labels: Mapping[str, str] | None) -> bool:
    """Whether ``labels`` satisfy ``selector`` (None or empty: everything)."""
    labels = labels or {}
    for key, value in ((selector or {}).get("matchLabels") or {}).items():
        if labels.get(key) != value:
            return False
    for expr in (selector or {}).get("matchExpressions") or ():
        key, op, values = expr.get("key"), expr.get("operator"), expr.get("values") or []
        present = key in labels
        if op == "In" and not (present and labels[key] in values):
            return False
        if op == "NotIn" and present and labels[key] in values:
            return False
        if op == "Exists" and not present:
            return False
        if op == "DoesNotExist" and present:
            return False
    return True
