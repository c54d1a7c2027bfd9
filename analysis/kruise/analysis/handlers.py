"""kopf glue for the AnalysisRun controller: an index as the cache, events enqueue the run.

kopf lists and watches AnalysisRuns into the ``analysisrun_by_key`` index and invokes no handler
before it is fully listed. The event handler only enqueues ``namespace/name``; the controller's
worker pool does the rest and requeues itself for timed measurements. No change-detecting
handlers are used, so kopf writes no annotations or finalizers onto runs.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Mapping
from typing import Any

import kopf

from kruise.analysis.api import GROUP, V1ALPHA1
from kruise.analysis.controller import AnalysisRunController
from kruise.core.cache import CacheReady, IndexView

__all__ = ["KopfAnalysisRunCache", "register"]

JSON = dict[str, Any]
INDEX = "analysisrun_by_key"


class KopfAnalysisRunCache:
    """A :class:`~kruise.analysis.controller.RunSource` over the kopf index of AnalysisRuns."""

    def __init__(self) -> None:
        self.runs = IndexView(INDEX)
        self.ready = CacheReady()

    def bind(self, indices: Mapping[str, Any]) -> None:
        """Bind the index (called from every handler); the cache is ready once bound."""
        if not self.runs.bound and INDEX in indices:
            self.runs.bind(indices[INDEX])
        if self.runs.bound:
            self.ready.set()

    async def get(self, key: str) -> JSON | None:
        """The cached run ``namespace/name`` (do not mutate), or None."""
        return self.runs.one(key)


def _key(kwargs: Mapping[str, Any]) -> str:
    return f"{kwargs['namespace']}/{kwargs['name']}"


def register(
    registry: kopf.OperatorRegistry, controller: AnalysisRunController, cache: KopfAnalysisRunCache
) -> None:
    """Register the AnalysisRun index, event handler and worker pool into ``registry``."""

    @kopf.index(GROUP, V1ALPHA1, "analysisruns", registry=registry, id=INDEX)
    async def analysisrun_by_key(**kwargs: Any) -> dict[str, JSON]:
        return {_key(kwargs): dict(kwargs["body"])}

    @kopf.on.event(GROUP, V1ALPHA1, "analysisruns", registry=registry, id="analysisrun_event")
    async def on_run(**kwargs: Any) -> None:
        cache.bind(kwargs)
        if kwargs.get("type") != "DELETED":
            controller.enqueue(_key(kwargs))

    tasks: list[asyncio.Task[None]] = []

    @kopf.on.startup(registry=registry, id="analysisrun_workers")
    async def start(**_: Any) -> None:
        tasks.append(asyncio.create_task(controller.run(cache.ready), name="analysisrun-controller"))

    @kopf.on.cleanup(registry=registry, id="analysisrun_workers_stop")
    async def stop(**_: Any) -> None:
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task
