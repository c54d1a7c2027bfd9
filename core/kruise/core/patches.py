"""Patches as data (DESIGN §3): RFC 7386 JSON merge patches computed from two objects."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def merge_patch(old: Mapping[str, Any], new: Mapping[str, Any]) -> dict[str, Any]:
    """The merge patch turning ``old`` into ``new``: changed keys, ``None`` for removed ones.

    Lists and scalars are replaced whole (merge-patch semantics); ``{}`` when equal.
    """
    patch: dict[str, Any] = {}
    for key in old:
        if key not in new:
            patch[key] = None
    for key, value in new.items():
        before = old.get(key)
        if isinstance(value, Mapping) and isinstance(before, Mapping):
            sub = merge_patch(before, value)
            if sub:
                patch[key] = sub
        elif key not in old or before != value:
            patch[key] = value
    return patch
