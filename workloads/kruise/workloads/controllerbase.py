"""What every workload controller shell holds: its client, event recorder, cache and options, and
its own expectations (one instance per manager; nothing shared between controllers).

- ``expectations``: creates and deletes this controller made that the cache does not show yet
  (:class:`~kruise.core.expectations.ScaleExpectations`, keyed by the object's key);
- ``rv_expectations``: objects this controller wrote, by uid, until the cache shows that
  resourceVersion (:class:`~kruise.core.expectations.ResourceVersionExpectations`).

Both stop holding a round back after ``options.expectation_timeout`` seconds (upstream's
``ExpectationTimeout``, 5 minutes by default).
"""

from __future__ import annotations

from typing import Any, Generic, Protocol, TypeVar

from kruise.core.errors import NotFoundError
from kruise.core.events import EventRecorder
from kruise.core.expectations import ResourceVersionExpectations, ScaleExpectations
from kruise.core.kube.client import KubeClient
from kruise.core.kube.resources import CLONESETS, DAEMONSETS, STATEFULSETS, UNITEDDEPLOYMENTS, Resource
from kruise.core.runtime import CacheReader
from kruise.workloads.objects import KubeObject, name, namespace

__all__ = ["STATUS_WRITERS", "CacheController", "ControllerOptions", "WorkloadController", "merge_status"]

STATUS_WRITERS = (CLONESETS, STATEFULSETS, DAEMONSETS, UNITEDDEPLOYMENTS)
"""The kinds whose controllers write their status through :func:`merge_status` (the chart's RBAC
audit resolves its call site by this list)."""


async def merge_status(
    kube: KubeClient, resource: Resource, obj: KubeObject, status: dict[str, Any]
) -> dict[str, Any] | None:
    """Merge-patch ``status`` into ``obj``'s status subresource (no resourceVersion: the status is
    the controller's alone); the object as written, or None when it is gone meanwhile."""
    try:
        return await kube.patch(
            resource, name(obj), {"status": status}, namespace(obj), patch_type="merge", subresource="status"
        )
    except NotFoundError:
        return None


class ControllerOptions(Protocol):
    """The settings every controller has (kruise-manager flags)."""

    @property
    def workers(self) -> int: ...

    @property
    def expectation_timeout(self) -> float: ...


OptionsT = TypeVar("OptionsT", bound=ControllerOptions)


class WorkloadController(Generic[OptionsT]):
    """The shell's state; a kind's controller adds its ``name``, ``spec()`` and ``reconcile``."""

    def __init__(
        self, kube: KubeClient, recorder: EventRecorder, cache: CacheReader, options: OptionsT
    ) -> None:
        self.kube = kube
        self.recorder = recorder
        self.cache = cache
        self.options = options
        self.expectations = ScaleExpectations(timeout=options.expectation_timeout)
        self.rv_expectations = ResourceVersionExpectations(timeout=options.expectation_timeout)


class CacheController:
    """The shell's state for a controller that needs only its client and the cache (no events,
    no expectations: it derives everything from what the cache shows); ``workers`` as the
    ``--<name>-workers`` flags, 3 by default."""

    def __init__(self, kube: KubeClient, cache: CacheReader, *, workers: int = 3) -> None:
        self.kube = kube
        self.cache = cache
        self.workers = workers
