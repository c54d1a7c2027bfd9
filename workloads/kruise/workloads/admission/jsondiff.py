"""JSON patch generation with the semantics of ``github.com/appscode/jsonpatch`` ``CreatePatch``.

OpenKruise's InPlaceOnly rule (``pkg/controller/cloneset/core`` ``ValidateCloneSetUpdate``)
diffs the old and new ``template.spec`` with that library and rejects the update unless every
operation is ``replace /containers/<n>/image``; its error quotes the first offending ``op`` and
``path``. So the *shape* of the operations matters, quirks included:

- objects: keys added (``add``), changed (recursively), removed (``remove``); a value whose JSON
  type changes is ``replace``d; ``null`` -> value is ``add``;
- arrays of scalars, or of flat objects (the library only inspects the *first* object), use a
  Levenshtein edit script (``add``/``remove``/``replace`` at indices); other arrays are compared
  index by index, surplus old items removed from the end and new ones added;
- paths are RFC 6901 pointers (``~`` -> ``~0``, ``/`` -> ``~1``).

Go iterates object keys in random order; here keys are visited sorted, so when several
operations exist the first one is deterministic (upstream's is not).

Operations are ``(op, path, value)`` tuples; ``value`` is ``None`` for ``remove``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["Operation", "create_patch", "normalize_for_diff", "semantic_view"]

Operation = tuple[str, str, Any]


def _kind(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, Mapping):
        return "object"
    if isinstance(value, list):
        return "array"
    return type(value).__name__


def _make_path(path: str, part: Any) -> str:
    key = str(part).replace("~", "~0").replace("/", "~1")
    if path == "":
        return "/" + key
    return path + key if path.endswith("/") else f"{path}/{key}"


def _is_basic(value: Any) -> bool:
    return _kind(value) in ("bool", "number", "string")


def _is_simple_array(items: list[Any]) -> bool:
    for item in items:
        if _is_basic(item):
            continue
        if isinstance(item, Mapping):
            # appscode/jsonpatch returns after inspecting the first object it meets.
            return all(v is None or _is_basic(v) for v in item.values())
        return False
    return True


def _diff(a: Mapping[str, Any], b: Mapping[str, Any], path: str, patch: list[Operation]) -> None:
    for key in sorted(b):
        p = _make_path(path, key)
        if key not in a:
            patch.append(("add", p, b[key]))
        else:
            _handle(a[key], b[key], p, patch)
    for key in sorted(a):
        if key not in b:
            patch.append(("remove", _make_path(path, key), None))


def _handle(av: Any, bv: Any, path: str, patch: list[Operation]) -> None:
    akind, bkind = _kind(av), _kind(bv)
    if akind is None and bkind is None:
        return
    if akind is None:
        patch.append(("add", path, bv))
        return
    if akind != bkind:
        patch.append(("replace", path, bv))
        return
    if akind == "object":
        _diff(av, bv, path, patch)
    elif akind == "array":
        if _is_simple_array(av) and _is_simple_array(bv):
            patch.extend(_edit_distance(av, bv, path))
            return
        common = min(len(av), len(bv))
        patch.extend(("remove", _make_path(path, i), None) for i in range(len(av) - 1, common - 1, -1))
        patch.extend(("add", _make_path(path, i), bv[i]) for i in range(common, len(bv)))
        for i in range(common):
            _handle(av[i], bv[i], _make_path(path, i), patch)
    elif av != bv:
        patch.append(("replace", path, bv))


def _edit_distance(s: list[Any], t: list[Any], path: str) -> list[Operation]:
    """Wagner-Fischer distance matrix, then the library's backtrace (quirks preserved)."""
    m, n = len(s), len(t)
    d = [[0] * (n + 1) for _ in range(m + 1)]
    for i in range(m + 1):
        d[i][0] = i
    for j in range(n + 1):
        d[0][j] = j
    for j in range(1, n + 1):
        for i in range(1, m + 1):
            if s[i - 1] == t[j - 1]:
                d[i][j] = d[i - 1][j - 1]
            else:
                d[i][j] = min(d[i - 1][j - 1] + 1, d[i][j - 1] + 1, d[i - 1][j] + 1)
    ops: list[Operation] = []
    i, j = m, n
    while True:
        if i > 0 and d[i - 1][j] + 1 == d[i][j]:
            ops.append(("remove", _make_path(path, i - 1), None))
            i -= 1
        elif j > 0 and d[i][j - 1] + 1 == d[i][j]:
            ops.append(("add", _make_path(path, i), t[j - 1]))
            j -= 1
        elif i > 0 and j > 0 and d[i - 1][j - 1] + 1 == d[i][j]:
            if _is_basic(s[0]):
                ops.append(("replace", _make_path(path, i - 1), t[j - 1]))
            else:
                # Upstream compares s[j-1] (not s[i-1]) here; kept for identical output.
                _handle(s[j - 1], t[j - 1], _make_path(path, i - 1), ops)
            i, j = i - 1, j - 1
        elif i > 0 and j > 0 and d[i - 1][j - 1] == d[i][j]:
            i, j = i - 1, j - 1
        else:
            return ops


def create_patch(a: Any, b: Any) -> list[Operation]:
    """Operations turning JSON value ``a`` into ``b`` (``CreatePatch`` on two documents)."""
    patch: list[Operation] = []
    _handle(a, b, "", patch)
    return patch


def normalize_for_diff(value: Any) -> Any:
    """Approximate Go's ``json.Marshal`` of a typed struct: drop ``null`` members and empty lists.

    (``omitempty`` drops nil pointers and empty slices; both sides of a comparison are
    normalised the same way, so only "absent vs empty" differences disappear.)
    """
    if isinstance(value, Mapping):
        out = {}
        for key, item in value.items():
            if item is None or (isinstance(item, list) and not item):
                continue
            out[key] = normalize_for_diff(item)
        return out
    if isinstance(value, list):
        return [normalize_for_diff(v) for v in value]
    return value


def semantic_view(value: Any) -> Any:
    """``value`` as ``apiequality.Semantic.DeepEqual`` compares it: ``null``, ``[]`` and ``{}``
    members dropped (Go's nil and empty slices and maps are equal), recursively."""
    if isinstance(value, Mapping):
        return {k: semantic_view(v) for k, v in value.items() if v is not None and v != [] and v != {}}
    if isinstance(value, list):
        return [semantic_view(v) for v in value]
    return value
