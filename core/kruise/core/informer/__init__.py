"""Shared list+watch caches for the busy kinds (pods first): see :mod:`.informer`, :mod:`.store`."""

from kruise.core.backoff import Backoff
from kruise.core.informer.informer import Handler, Informer, InformerStats, strip_managed_fields
from kruise.core.informer.store import Delta, EventType, Indexer, Store, object_key

__all__ = [
    "Backoff",
    "Delta",
    "EventType",
    "Handler",
    "Indexer",
    "Informer",
    "InformerStats",
    "Store",
    "object_key",
    "strip_managed_fields",
]
