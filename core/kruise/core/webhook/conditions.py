"""CEL ``matchConditions`` for webhook configurations (pure: strings, no I/O).

The API server calls a webhook only when all of its ``matchConditions`` are true, so a condition
that leaves out what a webhook cannot act on saves the call (and, under ``failurePolicy: Fail``,
the dependency on the manager). :func:`operation_or_changed` and :func:`operation_or` build
"anything but an UPDATE, or an UPDATE that changes X"; :func:`field_changed` and
:func:`entry_changed` are the "X changed" parts. :mod:`.configuration` renders them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

JSON = dict[str, Any]


@dataclass(frozen=True)
class MatchCondition:
    """One CEL ``matchConditions`` entry: the API server calls the webhook only when all are true."""

    name: str
    expression: str

    def to_dict(self) -> JSON:
        return {"name": self.name, "expression": self.expression}


def field_changed(path: str) -> str:
    """CEL: ``object.<path>`` differs from ``oldObject.<path>`` (presence included)."""
    parent, _, leaf = path.rpartition(".")
    new, old = f"object.{parent}" if parent else "object", f"oldObject.{parent}" if parent else "oldObject"
    return f"has({new}.{leaf}) != has({old}.{leaf}) || (has({new}.{leaf}) && {new}.{leaf} != {old}.{leaf})"


def _entry(side: str, path: str, key: str) -> str:
    """CEL: the ``key`` entry of the string map ``<side>.<path>``, ``''`` when the map or the
    entry is absent."""
    parent, _, leaf = path.rpartition(".")
    owner = f"{side}.{parent}" if parent else side
    return f"(has({owner}.{leaf}) && '{key}' in {owner}.{leaf} ? {owner}.{leaf}['{key}'] : '')"


def entry_changed(path: str, key: str) -> str:
    """CEL: the ``key`` entry of the string map at ``path`` (``metadata.labels``) differs between
    ``object`` and ``oldObject``, an absent entry counting as ``''``; for a key a dotted path
    cannot name (``rollouts.kruise.io/rollout-id``). Read ``oldObject``: UPDATE only."""
    return f"{_entry('object', path, key)} != {_entry('oldObject', path, key)}"


def operation_or_changed(*paths: str, name: str = "relevant-change") -> MatchCondition:
    """Call the webhook for anything but an UPDATE, and for an UPDATE changing one of ``paths``.

    ``paths`` are dotted fields under the object (``spec``, ``metadata.annotations``). CEL's
    ``||`` short-circuits, so ``oldObject`` is only read on UPDATE (it is null on CREATE).
    """
    return operation_or(*(field_changed(p) for p in paths), name=name)


def operation_or(*changes: str, name: str = "relevant-change") -> MatchCondition:
    """Call the webhook for anything but an UPDATE, and for an UPDATE where one of the CEL
    ``changes`` (:func:`entry_changed`, or any expression over ``object``/``oldObject``) holds."""
    changed = " || ".join(f"({c})" for c in changes)
    return MatchCondition(name, f"request.operation != 'UPDATE' || {changed}")
