"""Expectations: what a controller must see in its cache before acting again.

A controller that creates pods and then reconciles again on a cache that does not
show them yet would create them twice. OpenKruise guards against it with *scale
expectations* (names of objects created or deleted, per owner) and
*resourceVersion expectations* (after patching an object, the cache must show a
resourceVersion at least as new), both in ``pkg/util/expectations``; a reconcile is
skipped while they are unsatisfied, until ``timeout`` (kruise-manager's
``--expectation-timeout``, default 5 minutes) passes.

Instances are owned by one controller (never module globals). Checks are made
against the cache itself (``present(name)``), so a missed watch event cannot
leave an expectation stuck.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any


class ScaleAction(StrEnum):
    CREATE = "create"
    DELETE = "delete"


@dataclass
class _Pending:
    since: float
    names: dict[ScaleAction, set[str]] = field(
        default_factory=lambda: {ScaleAction.CREATE: set(), ScaleAction.DELETE: set()}
    )


@dataclass(frozen=True)
class Satisfaction:
    """``satisfied`` and, when not, for how long (seconds) and what is still missing."""

    satisfied: bool
    waited: float = 0.0
    creates: frozenset[str] = frozenset()
    deletes: frozenset[str] = frozenset()


class ScaleExpectations:
    """Names each owner (``namespace/name``) expects to appear or disappear."""

    def __init__(self, *, timeout: float = 300.0, clock: Callable[[], float] = time.monotonic) -> None:
        self.timeout = timeout
        self._clock = clock
        self._pending: dict[str, _Pending] = {}

    def expect(self, owner: str, action: ScaleAction, name: str) -> None:
        """Record before the API call that ``name`` will be created/deleted."""
        pending = self._pending.setdefault(owner, _Pending(since=self._clock()))
        pending.names[action].add(name)

    def forget(self, owner: str, action: ScaleAction, name: str) -> None:
        """Drop one expectation (the API call failed, so nothing will be observed)."""
        pending = self._pending.get(owner)
        if pending is not None:
            pending.names[action].discard(name)
            if not any(pending.names.values()):
                del self._pending[owner]

    def delete(self, owner: str) -> None:
        """Drop everything for ``owner`` (it was deleted)."""
        self._pending.pop(owner, None)

    def check(self, owner: str, present: Callable[[str], bool]) -> Satisfaction:
        """Drop what the cache now shows; report whether ``owner`` may be reconciled.

        ``present(name)`` tells whether the cache holds a live (not terminating)
        object of that name. A create is observed once present, a delete once absent.
        """
        pending = self._pending.get(owner)
        if pending is None:
            return Satisfaction(True)
        pending.names[ScaleAction.CREATE] = {n for n in pending.names[ScaleAction.CREATE] if not present(n)}
        pending.names[ScaleAction.DELETE] = {n for n in pending.names[ScaleAction.DELETE] if present(n)}
        if not any(pending.names.values()):
            del self._pending[owner]
            return Satisfaction(True)
        waited = self._clock() - pending.since
        return Satisfaction(
            False,
            waited=waited,
            creates=frozenset(pending.names[ScaleAction.CREATE]),
            deletes=frozenset(pending.names[ScaleAction.DELETE]),
        )

    def timed_out(self, satisfaction: Satisfaction) -> bool:
        return not satisfaction.satisfied and satisfaction.waited >= self.timeout


def resource_version_newer_or_equal(seen: str | None, wanted: str) -> bool:
    """Whether the cached ``seen`` resourceVersion is at least ``wanted``.

    resourceVersions are opaque, but kube-apiserver backed by etcd issues
    increasing integers; like OpenKruise we compare them as integers and fall
    back to string equality for anything else.
    """
    if seen is None:
        return False
    try:
        return int(seen) >= int(wanted)
    except ValueError:
        return seen == wanted


class ResourceVersionExpectations:
    """After writing object ``uid`` at ``resourceVersion``, wait until the cache shows it."""

    def __init__(self, *, timeout: float = 300.0, clock: Callable[[], float] = time.monotonic) -> None:
        self.timeout = timeout
        self._clock = clock
        self._wanted: dict[str, tuple[str, float]] = {}
        self._sweep_at = self.SWEEP_MIN

    SWEEP_MIN = 1024
    """Entries held before the timed-out ones are swept. An entry leaves on the ``check`` that sees
    the cache caught up, but an object deleted before that check (a pod patched in place, then
    deleted) is never checked again; its entry would stay for the life of the process."""

    def expect(self, uid: str, resource_version: str) -> None:
        now = self._clock()
        self._wanted[uid] = (resource_version, now)
        if len(self._wanted) > self._sweep_at:
            # a timed-out entry is satisfied anyway (``check``): dropping it changes no decision
            self._wanted = {k: w for k, w in self._wanted.items() if now - w[1] < self.timeout}
            self._sweep_at = max(self.SWEEP_MIN, 2 * len(self._wanted))

    def __len__(self) -> int:
        """Objects with an expectation still held."""
        return len(self._wanted)

    def check(self, uid: str, cached_resource_version: str | None) -> bool:
        """True when nothing is expected for ``uid``, or the cache caught up (or it timed out)."""
        wanted = self._wanted.get(uid)
        if wanted is None:
            return True
        if cached_resource_version is None or resource_version_newer_or_equal(
            cached_resource_version, wanted[0]
        ):
            del self._wanted[uid]
            return True
        if self._clock() - wanted[1] >= self.timeout:
            del self._wanted[uid]
            return True
        return False

    def expect_written(self, written: Mapping[str, Any]) -> None:
        """:meth:`expect` the object as the API server answered its write (its ``metadata.uid``
        and ``resourceVersion``; an answer without either expects nothing)."""
        meta = written.get("metadata") or {}
        if meta.get("uid") and meta.get("resourceVersion"):
            self.expect(str(meta["uid"]), str(meta["resourceVersion"]))

    def caught_up(self, cached: Mapping[str, Any]) -> bool:
        """:meth:`check` on a cached object: its ``metadata.uid`` and ``resourceVersion``."""
        meta = cached.get("metadata") or {}
        return self.check(str(meta.get("uid") or ""), meta.get("resourceVersion"))

    def delete(self, uid: str) -> None:
        self._wanted.pop(uid, None)
