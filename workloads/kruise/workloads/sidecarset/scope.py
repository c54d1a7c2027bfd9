"""Which pod creations the API server sends to the pod webhook (pure): a CEL match condition.

Upstream's ``mpod.kb.io`` sees every pod created outside ``kube-system`` and the
``control-plane: openkruise`` namespaces, with ``failurePolicy: Fail``: while kruise-manager is
down no pod can be created anywhere. Here the webhook also carries a ``matchConditions`` entry
(:func:`pod_match_condition`) true only for a pod some SidecarSet could inject: the OR, over the
SidecarSets not paused for injection, of

- ``request.namespace == '<spec.namespace>'`` when ``spec.namespace`` is set, and
- the ``spec.selector`` over ``object.metadata.labels`` (``matchLabels`` and the four
  ``matchExpressions`` operators; an empty selector selects nothing, as in :mod:`.matching`).

``namespaceSelector`` (namespace labels, which CEL cannot read) is not narrowed: such a SidecarSet
is asked about every pod its selector matches. The webhook's other features add fixed terms
(``also``: container launch priority sends the pods that ask for a launch order). Without
SidecarSets and such pods the webhook is never called; our outage then blocks only the pods a
feature would have changed, which would rather be refused than started without it. The condition is
exact for what it checks and otherwise wider, never narrower, than :func:`~.matching.pod_matches`.

A key or value that is not a valid label string (the webhook refuses such selectors; they can
only predate it) makes its SidecarSet's term ``true``. Past :data:`MAX_EXPRESSION_LENGTH`
characters the condition is dropped (``None``: every pod is sent) rather than risk the API
server's CEL cost limits.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from kruise.workloads.objects import KubeObject, mapping, sequence, spec

__all__ = [
    "MAX_EXPRESSION_LENGTH",
    "POD_CONDITION_NAME",
    "cel_literal",
    "pod_match_condition",
    "selector_expression",
]

POD_CONDITION_NAME = "sidecarset-selected"
MAX_EXPRESSION_LENGTH = 32_768
"""Beyond this the pod webhook is scoped by its namespace selector only."""

_LABEL = re.compile(r"^[A-Za-z0-9._/-]*$")
_LABELS = "object.metadata.labels"
_HAS = f"has({_LABELS})"


class _Unscopable(ValueError):
    """A selector CEL cannot express safely: the term is widened to ``true``."""


def cel_literal(text: Any) -> str | None:
    """``text`` as a CEL string literal, or ``None`` when it is not a label key/value or object
    name (only ``[A-Za-z0-9._/-]``: nothing that could close the quotes)."""
    value = str(text)
    return f"'{value}'" if _LABEL.match(value) else None


def _quote(text: Any) -> str:
    literal = cel_literal(text)
    if literal is None:
        raise _Unscopable(str(text))
    return literal


def _present(key: str) -> str:
    return f"({_HAS} && {key} in {_LABELS})"


def _requirement(expression: Mapping[str, Any]) -> str:
    key = _quote(expression.get("key") or "")
    operator = expression.get("operator")
    values = "[" + ", ".join(_quote(v) for v in sequence(expression.get("values"))) + "]"
    if operator == "In":
        return f"({_present(key)} && {_LABELS}[{key}] in {values})"
    if operator == "NotIn":
        return f"(!{_present(key)} || !({_LABELS}[{key}] in {values}))"
    if operator == "Exists":
        return _present(key)
    if operator == "DoesNotExist":
        return f"!{_present(key)}"
    raise _Unscopable(str(operator))


def selector_expression(selector: Mapping[str, Any] | None) -> str:
    """CEL over ``object.metadata.labels`` for a LabelSelector; ``false`` for none or empty.

    Raises:
        ValueError: the selector holds a string that is not a label key/value or an unknown operator.
    """
    selector = mapping(selector)
    terms = [
        f"({_present(_quote(k))} && {_LABELS}[{_quote(k)}] == {_quote(v)})"
        for k, v in sorted(mapping(selector.get("matchLabels")).items())
    ]
    terms.extend(_requirement(mapping(e)) for e in sequence(selector.get("matchExpressions")))
    return " && ".join(terms) if terms else "false"


def _term(sidecarset: KubeObject) -> str | None:
    body = spec(sidecarset)
    try:
        selected = selector_expression(mapping(body.get("selector")))
        if selected == "false":
            return None
        namespace = body.get("namespace")
        return f"(request.namespace == {_quote(namespace)} && {selected})" if namespace else f"({selected})"
    except _Unscopable:
        return "true"


def pod_match_condition(sidecarsets: Iterable[KubeObject], also: Iterable[str] = ()) -> str | None:
    """The CEL expression of the pod webhook's ``matchConditions`` entry (see the module docstring),
    OR'ed with ``also`` (the fixed terms of the webhook's other features, e.g. container launch
    priority's); ``None`` when too long to be worth it."""
    terms: Sequence[str] = sorted(
        {
            *also,
            *(
                term
                for s in sidecarsets
                if not mapping(spec(s).get("injectionStrategy")).get("paused")
                for term in (_term(s),)
                if term is not None
            ),
        }
    )
    if "true" in terms:
        return "true"
    expression = " || ".join(terms) if terms else "false"
    return None if len(expression) > MAX_EXPRESSION_LENGTH else expression
