"""Which field manager owns a value of an object, from its ``metadata.managedFields`` (pure).

The API server records, per field manager, the set of fields it manages (``fieldsV1``): a tree
whose keys are

- ``f:<name>``: a field of a struct or a key of a granular map (``f:metadata`` ->
  ``f:annotations`` -> ``f:nginx.ingress.kubernetes.io/canary-weight``);
- ``k:<json>``: an item of an associative list by its key fields (``k:{"name":"web"}``);
- ``v:<json>``: an item of a set list by its value; ``i:<n>``: an item by index;
- ``.``: the node itself (the manager keeps the map or the item in existence).

An empty node (``{}``) is a leaf: the manager owns that value whole, lists included. Lists
without a list type are atomic (a CRD list with no ``x-kubernetes-list-type``, such as
``HTTPRoute.spec.rules``), so their field is such a leaf and the manager owning it owns every
value inside. :func:`owns` therefore asks for the *nearest owned ancestor*: walking a path down the
tree, reaching a leaf node owns the rest of the path.

A path (:data:`Path`) names a value by keys and list indices (``("spec", "rules", 0,
"backendRefs", 1, "weight")``); a list index is matched against the tree through the live
object's item (its ``k:`` key fields, its ``v:`` value or ``i:<n>``). An item that is gone from
the live object (a removed backendRef) is owned by whoever manages items of that list: the
removal is theirs.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

Path = tuple[str | int, ...]


def leaves(value: Any, prefix: Path = ()) -> dict[Path, Any]:
    """Every leaf under ``value`` by path (prefixed with ``prefix``): scalars and empty
    maps/lists; a non-container ``value`` is the one leaf at ``prefix``."""
    out: dict[Path, Any] = {}
    if isinstance(value, Mapping) and value:
        for key, item in value.items():
            out.update(leaves(item, (*prefix, str(key))))
    elif isinstance(value, list) and value:
        for index, item in enumerate(value):
            out.update(leaves(item, (*prefix, index)))
    else:
        out[prefix] = value
    return out


def value_at(obj: Any, path: Path) -> Any:
    """The value at ``path`` (None when any step is missing)."""
    node = obj
    for step in path:
        if isinstance(step, int):
            if not isinstance(node, list) or not 0 <= step < len(node):
                return None
            node = node[step]
        elif isinstance(node, Mapping):
            node = node.get(step)
        else:
            return None
    return node


def dotted(path: Path) -> str:
    """``spec.rules[0].backendRefs[1].weight``; keys holding ``.`` or ``/`` in brackets
    (``metadata.annotations[nginx.ingress.kubernetes.io/canary-weight]``)."""
    out = ""
    for step in path:
        if isinstance(step, int) or "." in step or "/" in step:
            out += f"[{step}]"
        else:
            out += f".{step}" if out else step
    return out


def _item_key(node: Mapping[str, Any], item: Any, index: int) -> str | None:
    """The ``fieldsV1`` key of list item ``item`` (at ``index``) in the list node ``node``."""
    if f"i:{index}" in node:
        return f"i:{index}"
    for key in node:
        if key.startswith("k:") and isinstance(item, Mapping):
            with_keys = json.loads(key[2:])
            if isinstance(with_keys, Mapping) and all(item.get(k) == v for k, v in with_keys.items()):
                return key
        elif key.startswith("v:") and json.loads(key[2:]) == item:
            return key
    return None


def owns(fields_v1: Mapping[str, Any] | None, obj: Any, path: Path) -> bool:
    """Whether a ``fieldsV1`` set owns the value at ``path`` of ``obj`` (itself or through its
    nearest owned ancestor, see the module docstring); ``obj`` is only read for list items."""
    node: Any = fields_v1 or {}
    if not node:
        return False
    parent: Any = obj
    for step in path:
        if not isinstance(node, Mapping):
            return False
        if not node:
            return True  # a leaf above the path: an atomic value owned whole
        if isinstance(step, int):
            item = parent[step] if isinstance(parent, list) and 0 <= step < len(parent) else None
            if item is None:
                return any(k.startswith(("k:", "v:", "i:")) for k in node)  # removed: by the list's manager
            key = _item_key(node, item, step)
            parent = item
        else:
            key = f"f:{step}"
            parent = parent.get(step) if isinstance(parent, Mapping) else None
        if key is None or key not in node:
            return False
        node = node[key]
    return True


def writer(managed_fields: Sequence[Mapping[str, Any]], obj: Any, path: Path, ours: str) -> str | None:
    """The field manager other than ``ours`` owning ``path`` of ``obj`` (the latest by ``time``
    when several do); None when no other manager owns it."""
    owners = [
        entry
        for entry in managed_fields
        if entry.get("manager") != ours and owns(entry.get("fieldsV1"), obj, path)
    ]
    if not owners:
        return None
    latest = max(owners, key=lambda entry: str(entry.get("time") or ""))
    return str(latest.get("manager") or "") or None
