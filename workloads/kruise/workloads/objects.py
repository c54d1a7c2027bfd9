"""Typed accessors for Kubernetes objects held as plain JSON dicts.

The pure core works on the dicts the API server returns (camelCase keys, RFC 3339 timestamps),
so that it does not depend on any model layer. Every accessor tolerates missing and ``null``
fields the way Go's zero values do: an absent label map reads as empty, an absent timestamp as
"zero time" (``None`` here).
"""

from collections.abc import Mapping, Sequence
from datetime import datetime
from types import MappingProxyType
from typing import Any

from kruise.core.api.base import as_utc as as_utc
from kruise.core.api.base import format_time as format_time
from kruise.core.api.base import parse_time as parse_time

#: A Kubernetes object (Pod, CloneSet, ControllerRevision...) as a JSON mapping.
KubeObject = Mapping[str, Any]


_EMPTY: Mapping[str, Any] = MappingProxyType({})


def mapping(value: Any) -> Mapping[str, Any]:
    """Return ``value`` if it is a mapping, else an empty mapping (Go's nil map).

    Called for nearly every field read of every pod in a reconcile: decoded JSON is a ``dict``,
    so that exact type is checked first (an ABC ``isinstance`` costs several times more)."""
    if type(value) is dict or isinstance(value, Mapping):
        return value
    return _EMPTY


def sequence(value: Any) -> Sequence[Any]:
    """Return ``value`` if it is a list/tuple, else an empty sequence (Go's nil slice)."""
    return value if type(value) is list or isinstance(value, tuple) else ()


def metadata(obj: KubeObject) -> Mapping[str, Any]:
    """``obj.metadata`` or an empty mapping."""
    return mapping(obj.get("metadata"))


def spec(obj: KubeObject) -> Mapping[str, Any]:
    """``obj.spec`` or an empty mapping."""
    return mapping(obj.get("spec"))


def status(obj: KubeObject) -> Mapping[str, Any]:
    """``obj.status`` or an empty mapping."""
    return mapping(obj.get("status"))


def name(obj: KubeObject) -> str:
    """``metadata.name`` ("" when absent)."""
    return str(metadata(obj).get("name") or "")


def namespace(obj: KubeObject) -> str:
    """``metadata.namespace`` ("" when absent)."""
    return str(metadata(obj).get("namespace") or "")


def uid(obj: KubeObject) -> str:
    """``metadata.uid`` ("" when absent)."""
    return str(metadata(obj).get("uid") or "")


def labels(obj: KubeObject) -> Mapping[str, str]:
    """``metadata.labels`` (a string map; empty when absent)."""
    return mapping(metadata(obj).get("labels"))


def annotations_of(obj: KubeObject) -> Mapping[str, str]:
    """``metadata.annotations`` (a string map; empty when absent)."""
    return mapping(metadata(obj).get("annotations"))


def finalizers(obj: KubeObject) -> Sequence[str]:
    """``metadata.finalizers`` (empty when absent)."""
    return sequence(metadata(obj).get("finalizers"))


def creation_time(obj: KubeObject) -> datetime | None:
    """``metadata.creationTimestamp`` or ``None`` (zero time)."""
    return parse_time(metadata(obj).get("creationTimestamp"))


def is_being_deleted(obj: KubeObject) -> bool:
    """True when ``metadata.deletionTimestamp`` is set."""
    return metadata(obj).get("deletionTimestamp") not in (None, "")
