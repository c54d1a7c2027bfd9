"""Read-only views of the informer cache the controllers reconcile from.

The cache itself is kopf's indices (filled from list+watch before any handler
runs, see ``handlers.py`` of each controller); controllers only see these small
protocols, so the pure cores and the shells stay free of kopf.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Mapping
from typing import Any, Protocol

JSON = dict[str, Any]


class IndexLike(Protocol):
    """What a kopf ``Index`` offers: key -> iterable of stored values."""

    def get(self, key: Any, default: Any = None) -> Any: ...


class IndexView:
    """A named index that becomes readable once the operator's initial listing is done.

    ``bind`` is called by the kopf glue with the real index; ``ready`` is set
    when the first handler runs, which kopf only does after every indexed
    resource kind has been fully listed (so an empty view is a true "none").
    """

    def __init__(self, name: str) -> None:
        self.name = name
        self._index: IndexLike | None = None

    def bind(self, index: IndexLike) -> None:
        self._index = index

    @property
    def bound(self) -> bool:
        return self._index is not None

    def values(self, key: str) -> list[JSON]:
        """Objects stored under ``key`` (a fresh list; the objects are shared, do not mutate)."""
        if self._index is None:
            return []
        store = self._index.get(key, None)
        if store is None:
            return []
        return [v for v in store if isinstance(v, Mapping)]  # type: ignore[misc]

    def one(self, key: str) -> JSON | None:
        found = self.values(key)
        return found[0] if found else None


class CacheReady:
    """Set once every index of the operator is populated (first handler invocation)."""

    def __init__(self) -> None:
        self.event = asyncio.Event()

    def set(self) -> None:
        self.event.set()

    async def wait(self) -> None:
        await self.event.wait()


def controller_ref(obj: Mapping[str, Any], kinds: Iterable[str] | None = None) -> Mapping[str, Any] | None:
    """The ownerReference with ``controller: true`` (optionally of one of ``kinds``)."""
    for ref in (obj.get("metadata") or {}).get("ownerReferences") or []:
        if ref.get("controller") and (kinds is None or ref.get("kind") in set(kinds)):
            return ref  # type: ignore[no-any-return]
    return None
