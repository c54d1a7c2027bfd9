"""The informer's store: objects by key, named indices over them, and the relist diff.

Pure and synchronous (no I/O, no awaits), so the informer can apply a whole chunk of watch
events without yielding and the rules here are unit-tested on their own.

- A *key* is ``namespace/name`` for namespaced objects and ``name`` for cluster-scoped ones
  (client-go's ``MetaNamespaceKeyFunc``).
- An *indexer* maps an object to the index values it is filed under (``[]`` for none), as
  client-go's ``cache.Indexers``; ``by_index(name, value)`` returns the objects filed under a
  value. Index entries are recomputed on every update, so an owner change moves the object from
  the old owner's entry to the new one, and a removal cleans every index.
- :meth:`Store.replace` is a relist: it returns the events that take the store from what it held
  to the new list, including ``DELETED`` (with the last known object) for what vanished while the
  watch was down, and skips objects whose ``resourceVersion`` did not change.

Stored objects are shared with every reader: nobody mutates them.

**Threads.** One event loop writes; readers may sit on other threads (the admission webhooks run
on their own loop, :mod:`kruise.core.loopthread`). A lock makes each write (an upsert, a removal,
a whole relist) and each read atomic, so a reader on another thread sees the store as it was
between two watch events or relists, never half an update, whatever the interpreter's GIL does.
It is held only for dict operations and the indexers (which must not read the store), never
across an ``await`` or a handler.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

JSON = dict[str, Any]
Indexer = Callable[[JSON], Iterable[str]]
"""Object -> the index values it is filed under (empty: not in this index)."""


class EventType(StrEnum):
    """What happened to an object, as a watch reports it."""

    ADDED = "ADDED"
    MODIFIED = "MODIFIED"
    DELETED = "DELETED"


@dataclass(frozen=True, slots=True)
class Delta:
    """One change applied to the store: ``obj`` is the new object (the last known one for
    ``DELETED``), ``old`` what the store held before (``None`` for ``ADDED``)."""

    type: EventType
    obj: JSON
    old: JSON | None


def object_key(obj: Mapping[str, Any]) -> str:
    """``namespace/name``, or ``name`` for a cluster-scoped object."""
    meta = obj.get("metadata") or {}
    namespace = meta.get("namespace")
    return f"{namespace}/{meta.get('name')}" if namespace else str(meta.get("name"))


def resource_version(obj: Mapping[str, Any]) -> str | None:
    rv = (obj.get("metadata") or {}).get("resourceVersion")
    return str(rv) if rv is not None else None


class Store:
    """Objects by key with named indices. One event loop writes; any thread may read."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._items: dict[str, JSON] = {}
        self._indexers: dict[str, Indexer] = {}
        # index name -> value -> key -> object
        self._indices: dict[str, dict[str, dict[str, JSON]]] = {}
        # index name -> key -> the values the object is filed under now
        self._filed: dict[str, dict[str, tuple[str, ...]]] = {}

    # ------------------------------------------------------------------ indexers
    def add_indexer(self, name: str, indexer: Indexer) -> None:
        """Add the index ``name`` (filing what is already stored). Adding the same function
        under the same name again is a no-op; another function under a taken name is an error."""
        with self._lock:
            existing = self._indexers.get(name)
            if existing is not None:
                if existing is not indexer:
                    raise ValueError(f"index {name!r} is already defined by another function")
                return
            self._indexers[name] = indexer
            self._indices[name] = {}
            self._filed[name] = {}
            for key, obj in self._items.items():
                self._file(name, key, obj)

    def has_index(self, name: str) -> bool:
        return name in self._indexers

    # ------------------------------------------------------------------ reads
    def get(self, key: str) -> JSON | None:
        with self._lock:
            return self._items.get(key)

    def __len__(self) -> int:
        return len(self._items)

    def __contains__(self, key: object) -> bool:
        return key in self._items

    def keys(self) -> list[str]:
        with self._lock:
            return list(self._items)

    def values(self) -> list[JSON]:
        with self._lock:
            return list(self._items.values())

    def __iter__(self) -> Iterator[JSON]:
        return iter(self.values())

    def by_index(self, name: str, value: str) -> list[JSON]:
        """The objects filed under ``value`` in index ``name`` (a fresh list). Raises
        ``KeyError`` for an index that was never added (a wiring mistake, not an empty answer)."""
        with self._lock:
            return list(self._indices[name].get(value, {}).values())

    def index_values(self, name: str) -> list[str]:
        """Every value with at least one object in index ``name``."""
        with self._lock:
            return list(self._indices[name])

    # ------------------------------------------------------------------ writes
    def upsert(self, obj: JSON) -> Delta | None:
        """Store ``obj``; the delta, or ``None`` when the stored copy has the same
        resourceVersion (a replayed event)."""
        with self._lock:
            return self._upsert(obj)

    def remove(self, obj: JSON) -> Delta | None:
        """Remove the object with ``obj``'s key (``obj`` is the deleted object as the watch
        reports it); ``None`` when nothing was stored under that key."""
        with self._lock:
            return self._remove(obj)

    def replace(self, objects: Iterable[JSON]) -> list[Delta]:
        """Make the store hold exactly ``objects`` (a fresh list); the deltas, deletions last."""
        objects = list(objects)
        with self._lock:
            deltas: list[Delta] = []
            seen: set[str] = set()
            for obj in objects:
                seen.add(object_key(obj))
                delta = self._upsert(obj)
                if delta is not None:
                    deltas.append(delta)
            for key in [k for k in self._items if k not in seen]:
                delta = self._remove(self._items[key])  # gone while unwatched: its last known state
                if delta is not None:
                    deltas.append(delta)
            return deltas

    # ------------------------------------------------------------------ internals (lock held)
    def _upsert(self, obj: JSON) -> Delta | None:
        key = object_key(obj)
        old = self._items.get(key)
        if old is not None:
            rv = resource_version(obj)
            if rv is not None and rv == resource_version(old):
                return None
        self._items[key] = obj
        for name in self._indexers:
            self._unfile(name, key)
            self._file(name, key, obj)
        return Delta(EventType.ADDED if old is None else EventType.MODIFIED, obj, old)

    def _remove(self, obj: JSON) -> Delta | None:
        key = object_key(obj)
        old = self._items.pop(key, None)
        if old is None:
            return None
        for name in self._indexers:
            self._unfile(name, key)
        return Delta(EventType.DELETED, obj, old)

    def _file(self, name: str, key: str, obj: JSON) -> None:
        values = tuple(dict.fromkeys(self._indexers[name](obj)))
        if not values:
            return
        index = self._indices[name]
        for value in values:
            bucket = index.get(value)
            if bucket is None:
                index[value] = {key: obj}
            else:
                bucket[key] = obj
        self._filed[name][key] = values

    def _unfile(self, name: str, key: str) -> None:
        values = self._filed[name].pop(key, None)
        if not values:
            return
        index = self._indices[name]
        for value in values:
            bucket = index.get(value)
            if bucket is not None:
                bucket.pop(key, None)
                if not bucket:
                    del index[value]
