"""Typed accessors for Kubernetes objects held as plain JSON dicts.

The pure core works on the dicts the API server returns (camelCase keys, RFC 3339 timestamps),
so that it does not depend on any model layer. Every accessor tolerates missing and ``null``
fields the way Go's zero values do: an absent label map reads as empty, an absent timestamp as
"zero time" (``None`` here).
"""

from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from types import MappingProxyType
from typing import Any

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


def parse_time(value: Any) -> datetime | None:
    """Parse an RFC 3339 timestamp (``metav1.Time``) into an aware UTC datetime.

    ``None``/"" (Go's zero ``metav1.Time``) and unparsable values give ``None``. Aware
    datetimes pass through (normalised to UTC); naive ones are taken as UTC.
    """
    if isinstance(value, datetime):
        return as_utc(value)
    if not isinstance(value, str) or not value:
        return None
    text = value.strip()
    if text.endswith(("Z", "z")):
        text = text[:-1] + "+00:00"
    try:
        parsed = datetime.fromisoformat(text)
    except ValueError:
        return None
    return as_utc(parsed)


def as_utc(moment: datetime) -> datetime:
    """Return ``moment`` as an aware UTC datetime (naive values are taken as UTC)."""
    if moment.tzinfo is None:
        return moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC)


def format_time(moment: datetime) -> str:
    """Format like Go's ``time.RFC3339`` for UTC: ``2006-01-02T15:04:05Z`` (seconds precision)."""
    return as_utc(moment).strftime("%Y-%m-%dT%H:%M:%SZ")


def creation_time(obj: KubeObject) -> datetime | None:
    """``metadata.creationTimestamp`` or ``None`` (zero time)."""
    return parse_time(metadata(obj).get("creationTimestamp"))


def is_being_deleted(obj: KubeObject) -> bool:
    """True when ``metadata.deletionTimestamp`` is set."""
    return metadata(obj).get("deletionTimestamp") not in (None, "")
