"""Writing a PodUnavailableBudget's status, shared by the controller and the pod webhook.

Both are read-modify-writes guarded by ``metadata.resourceVersion`` (a PUT of ``/status``), as
upstream's ``RetryOnConflict`` loops: on a conflict the PUB is read again from the API server and
the change is computed afresh, so a unit the webhook spent is never overwritten by a controller
that counted from an older status, and two admissions can never spend the same unit. Within one
process the writers of one PUB also queue on a lock (upstream's ``GlobalKeyedMutex``).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable
from typing import cast

from kruise.core.errors import ConflictError, NotFoundError, TransientError
from kruise.core.informer.store import JSON
from kruise.core.kube import KubeClient
from kruise.workloads.api.podunavailablebudget import PUBS, PubStatusView

__all__ = ["CONFLICT_ATTEMPTS", "StatusWriter", "status_of"]

CONFLICT_ATTEMPTS = 4
"""Tries before giving up (upstream's ``ConflictRetry``: 4 steps)."""

Change = Callable[[JSON], PubStatusView | None]
"""The PUB as read -> the status to write, ``None`` when nothing is to be written. May raise to
abort (the exception propagates, nothing is written)."""


class StatusWriter:
    """Conflict-checked status writes of PUBs (one lock per PUB within the process)."""

    def __init__(self, kube: KubeClient) -> None:
        self.kube = kube
        self._locks: dict[str, tuple[asyncio.Lock, list[int]]] = {}  # key -> (lock, [holders+waiters])

    @contextlib.asynccontextmanager
    async def _lock(self, key: str) -> AsyncIterator[None]:
        """Hold ``key``'s lock; the last user drops it, so a deleted PUB leaves nothing behind."""
        entry = self._locks.get(key)
        if entry is None:
            entry = self._locks[key] = (asyncio.Lock(), [0])
        lock, users = entry
        users[0] += 1
        try:
            async with lock:
                yield
        finally:
            users[0] -= 1
            if not users[0]:
                del self._locks[key]

    async def update(
        self, namespace: str, name: str, change: Change, *, first: JSON | None = None
    ) -> JSON | None:
        """Apply ``change`` to the PUB's status; returns the PUB written (or read, when ``change``
        wanted nothing), ``None`` when the PUB does not exist.

        ``first`` is a copy to try before reading (the informer's); later tries read the API server.

        Raises:
            TransientError: still conflicting after :data:`CONFLICT_ATTEMPTS` tries (upstream's
                "couldn't update PodUnavailableBudget %s due to conflicts").
        """
        async with self._lock(f"{namespace}/{name}"):
            pub = first
            for _ in range(CONFLICT_ATTEMPTS):
                if pub is None:
                    try:
                        pub = await self.kube.get(PUBS, name, namespace)
                    except NotFoundError:
                        return None
                status = change(pub)
                if status is None:
                    return pub
                body = {**pub, "status": dict(status)}
                try:
                    return await self.kube.replace(PUBS, body, subresource="status")
                except NotFoundError:
                    return None
                except ConflictError:
                    pub = None
        raise TransientError(f"couldn't update PodUnavailableBudget {name} due to conflicts")


def status_of(pub: JSON) -> PubStatusView:
    """The PUB's ``status`` (empty when unset)."""
    return cast(PubStatusView, pub.get("status") or {})
