"""Controller runtime: shared informers, declarative controller specs, one way to run them."""

from kruise.core.runtime.cache import (
    CacheReader,
    Informers,
    NotRegisteredError,
    ScopedCache,
    UndeclaredReadError,
)
from kruise.core.runtime.controller import Controller, Runtime
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
    "CacheReader",
    "Controller",
    "ControllerSpec",
    "Informers",
    "NotRegisteredError",
    "Predicate",
    "Read",
    "Runtime",
    "ScopedCache",
    "UndeclaredReadError",
    "Watch",
    "controller_ref",
    "index_by_owner_uid",
    "owned",
    "owner_key",
    "primary",
]
