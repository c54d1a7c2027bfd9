"""Controller runtime: shared informers, declarative controller specs, one way to run them."""

from kruise.core.runtime.cache import (
    CacheReader,
    Informers,
    NotRegisteredError,
    ScopedCache,
    UndeclaredReadError,
)
from kruise.core.runtime.controller import Controller, Runtime
from kruise.core.runtime.rows import Binds, ControllerRow, Reconciler, wire
from kruise.core.runtime.spec import (
    OWNER_UID,
    ControllerSpec,
    Predicate,
    Read,
    Watch,
    controller_ref,
    index_by_owner_uid,
    owned,
    owner_key,
    primary,
)

__all__ = [
    "OWNER_UID",
    "Binds",
    "CacheReader",
    "Controller",
    "ControllerRow",
    "ControllerSpec",
    "Informers",
    "NotRegisteredError",
    "Predicate",
    "Read",
    "Reconciler",
    "Runtime",
    "ScopedCache",
    "UndeclaredReadError",
    "Watch",
    "controller_ref",
    "index_by_owner_uid",
    "owned",
    "owner_key",
    "primary",
    "wire",
]
