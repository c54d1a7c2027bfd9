"""How a controller is described: what wakes it, what it reads, how many workers it runs.

A controller is a ``reconcile(key) -> Result`` function plus a :class:`ControllerSpec`. The
runtime (:mod:`kruise.core.runtime.controller`) turns the spec into informer handlers, indices,
a work queue, readiness (the workers start once every informer the spec names has synced) and
start/stop, the same way for every controller:

- :func:`primary` -- the controller's own kind: an event enqueues the object's key;
- :func:`owned` -- a kind the controller creates: objects are indexed by their controller
  owner's UID (:data:`OWNER_UID`) and an event enqueues that owner's ``namespace/name``;
- :class:`Watch` -- any other kind, with a function mapping an event's object (new and, on an
  update, old) to the keys to wake, or one that sees the whole event (``delta_keys``, to wake
  only on changes that matter, as a node update that changes which DaemonSets belong on it);
- :class:`Read` -- a kind the controller reads but is not woken by.

Indices are named and shared: every controller that asks for ``OWNER_UID`` on pods reads the
same index of the same pod informer.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from kruise.core.informer.store import JSON, Delta, Indexer, object_key
from kruise.core.kube.resources import Resource

OWNER_UID = "owner-uid"
"""Index of objects by the UID of their controller ownerReference (``controller: true``)."""


def controller_ref(obj: Mapping[str, Any], kinds: Iterable[str] | None = None) -> Mapping[str, Any] | None:
    """The ownerReference with ``controller: true`` (optionally of one of ``kinds``), or None."""
    wanted = None if kinds is None else set(kinds)
    for ref in (obj.get("metadata") or {}).get("ownerReferences") or ():
        if ref.get("controller") and (wanted is None or ref.get("kind") in wanted):
            return ref  # type: ignore[no-any-return]
    return None


def index_by_owner_uid(obj: JSON) -> tuple[str, ...]:
    """:data:`OWNER_UID`'s indexer: the controller owner's UID, if any."""
    ref = controller_ref(obj)
    return (str(ref["uid"]),) if ref is not None and ref.get("uid") else ()


def owner_key(obj: Mapping[str, Any], owner: Resource) -> str | None:
    """``namespace/name`` of ``obj``'s controller owner when it is of kind ``owner``."""
    ref = controller_ref(obj, (owner.kind,))
    if ref is None or str(ref.get("apiVersion", "")).rpartition("/")[0] != owner.group:
        return None
    namespace = (obj.get("metadata") or {}).get("namespace")
    return f"{namespace}/{ref.get('name')}" if namespace else str(ref.get("name"))


KeyMap = Callable[[JSON], Iterable[str]]
"""An event's object -> the keys of the controller to enqueue."""
DeltaKeyMap = Callable[[Delta], Iterable[str]]
"""A whole event (type, object, old object) -> the keys of the controller to enqueue."""
Observer = Callable[[Delta], None]
"""Called with every event of a watched kind before its keys are enqueued (e.g. to satisfy
create/delete expectations as upstream's pod event handler does). Must not block."""
Predicate = Callable[[Delta], bool]
"""controller-runtime's predicate: False leaves the event's keys out of the queue (``observe``
still sees it). Must be cheap: it runs for every event of the kind."""


@dataclass(frozen=True)
class Read:
    """A kind the controller reads from the cache, with the named indices it queries."""

    resource: Resource
    indexers: Mapping[str, Indexer] = field(default_factory=dict)


@dataclass(frozen=True)
class Watch:
    """Events of ``resource`` that pass ``accept(delta)`` (default: all) wake ``keys(obj)`` (on an
    update also ``keys(old)``), or, with ``delta_keys``, ``delta_keys(delta)`` instead; ``observe``
    sees each event first, before ``accept``."""

    resource: Resource
    keys: KeyMap
    indexers: Mapping[str, Indexer] = field(default_factory=dict)
    observe: Observer | None = None
    accept: Predicate | None = None
    delta_keys: DeltaKeyMap | None = None

    def read(self) -> Read:
        return Read(self.resource, self.indexers)


def primary(
    resource: Resource, *, indexers: Mapping[str, Indexer] | None = None, accept: Predicate | None = None
) -> Watch:
    r"""The controller's own kind: each event (``accept``\ ed) enqueues the object's key."""
    return Watch(resource, lambda obj: (object_key(obj),), dict(indexers or {}), accept=accept)


def owned(resource: Resource, owner: Resource, *, observe: Observer | None = None) -> Watch:
    """A kind whose objects ``owner`` controls: indexed by :data:`OWNER_UID`, an event
    enqueues the owner (when the controller ownerReference is of ``owner``'s kind and group)."""

    def keys(obj: JSON) -> tuple[str, ...]:
        key = owner_key(obj, owner)
        return (key,) if key is not None else ()

    return Watch(resource, keys, {OWNER_UID: index_by_owner_uid}, observe)


@dataclass(frozen=True)
class ControllerSpec:
    """One controller's wiring.

    ``workers`` reconcile different keys concurrently (one key is never reconciled twice at
    once); 0 or less means 1, as controller-runtime's ``MaxConcurrentReconciles`` (a
    ``--rollout-workers=0`` manager still reconciles). ``pace``/``max_pace`` are
    :class:`~kruise.core.workqueue.WorkQueue`'s pacing.
    """

    name: str
    watches: tuple[Watch, ...]
    reads: tuple[Read, ...] = ()
    workers: int = 1
    pace: float = 0.0
    max_pace: float = 1.0

    def __post_init__(self) -> None:
        if self.workers < 1:
            object.__setattr__(self, "workers", 1)

    def all_reads(self) -> tuple[Read, ...]:
        """Every kind the controller reads, watched or not."""
        return (*(w.read() for w in self.watches), *self.reads)
