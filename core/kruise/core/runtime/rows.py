"""Registration rows: how a process declares its controllers as data.

A process (the manager, the node daemon) lists one :class:`ControllerRow` per controller; the row
names the controller, says when it runs (usually a feature gate) and how it is built from the
process's context and its scoped cache view. :func:`wire` does the rest the same way for every row:
a cache view named after the controller, the controller built over it, ``runtime.add``, then the
optional extras a controller may expose (a ``bind(enqueue)`` hook for work that wakes it from
outside the informers, a first key to enqueue). Adding a kind is one row, not a copy of the wiring.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Generic, Protocol, TypeVar, runtime_checkable

from kruise.core.runtime.cache import ScopedCache
from kruise.core.runtime.controller import Runtime
from kruise.core.runtime.spec import ControllerSpec
from kruise.core.workqueue import Result

__all__ = ["Binds", "ControllerRow", "Reconciler", "wire"]

Ctx = TypeVar("Ctx")


class Reconciler(Protocol):
    """What :func:`wire` needs of a controller: its spec and its reconcile."""

    def spec(self) -> ControllerSpec: ...

    async def reconcile(self, key: str) -> Result | None: ...


@runtime_checkable
class Binds(Protocol):
    """A controller woken from outside its informers (workers, timers) takes its queue's enqueue."""

    def bind(self, enqueue: Callable[[str], None]) -> None: ...


def _always(_: object) -> bool:
    return True


@dataclass(frozen=True)
class ControllerRow(Generic[Ctx]):
    """One controller of a process.

    ``name`` is the controller's (its cache view, queue and metrics label); ``build(ctx, view)``
    makes it; ``enabled(ctx)`` decides whether it runs (default: always); ``kick``, when set, is a
    key enqueued once at wiring so the controller runs at start even if no object changes.
    """

    name: str
    build: Callable[[Ctx, ScopedCache], Reconciler]
    enabled: Callable[[Ctx], bool] = _always
    kick: str | None = None


def wire(
    runtime: Runtime,
    rows: Iterable[ControllerRow[Ctx]],
    ctx: Ctx,
    built: dict[str, Reconciler] | None = None,
) -> dict[str, Reconciler]:
    """Add every enabled row's controller to ``runtime`` (no I/O), in order; returns them by row
    name. ``built``, when given, is filled as rows are wired: hand the same dict to the context
    and a later row's ``build`` can use an earlier row's controller.

    Raises ``ValueError`` (from :meth:`Runtime.add`) if two rows share a name.
    """
    built = {} if built is None else built
    for row in rows:
        if not row.enabled(ctx):
            continue
        view = runtime.cache(row.name)
        controller = row.build(ctx, view)
        handle = runtime.add(controller.spec(), controller.reconcile, view)
        if isinstance(controller, Binds):
            controller.bind(handle.enqueue)
        if row.kick is not None:
            handle.enqueue(row.kick)
        built[row.name] = controller
    return built
