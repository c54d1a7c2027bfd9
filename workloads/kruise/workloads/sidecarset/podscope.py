"""Keeping the pod webhook's match condition equal to what the SidecarSets call for (shell).

:class:`PodWebhookScope` compares ``mpod.kb.io``'s ``matchConditions`` in the live mutating
configuration with :func:`~kruise.workloads.sidecarset.scope.pod_match_condition` of the cached
SidecarSets (and the terms of other :class:`TermSource` kinds, e.g. PersistentPodStates) and
rewrites it when they differ. It runs on the leader:

- from the SidecarSet controller, before a SidecarSet's status is written, so a SidecarSet whose
  ``status.observedGeneration`` is current is already in the webhook's scope (a pod created from
  then on reaches the webhook; one created in between may not be injected, as upstream's pod
  created before the webhook's cache saw the SidecarSet);
- from its own controller (``pod-webhook-scope``, one key, woken by a SidecarSet created, deleted
  or with a new ``generation`` (not by status writes) and every :data:`RECHECK_SECONDS`), which
  also repairs a condition a starting replica wrote from a view a moment old.

The live configuration is read at most every :data:`FRESH_SECONDS` when nothing changed; the
expression is built again only when a SidecarSet's ``(uid, generation)`` moved.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from kruise.core.informer import Delta, EventType
from kruise.core.kube.client import KubeClient
from kruise.core.kube.resources import SIDECARSETS, Resource
from kruise.core.runtime import ControllerSpec, Watch
from kruise.core.webhook.configuration import MatchCondition, set_match_conditions
from kruise.core.workqueue import Result
from kruise.workloads.objects import KubeObject, metadata, uid
from kruise.workloads.podwebhook import MUTATING_NAME, POD_CONDITION
from kruise.workloads.sidecarset.scope import pod_match_condition

__all__ = [
    "FRESH_SECONDS",
    "RECHECK_SECONDS",
    "PodWebhookScope",
    "TermSource",
    "pod_conditions",
    "spec_changed",
]

RECHECK_SECONDS = 30.0
FRESH_SECONDS = 10.0
KEY = "mpod"


def pod_conditions(sidecarsets: Iterable[KubeObject], also: Iterable[str] = ()) -> tuple[MatchCondition, ...]:
    """The pod webhook's ``matchConditions`` for these SidecarSets and the fixed terms ``also``
    (none: every pod is sent)."""
    expression = pod_match_condition(sidecarsets, also)
    return () if expression is None else (MatchCondition(POD_CONDITION, expression),)


def spec_changed(delta: Delta) -> bool:
    """A SidecarSet created, deleted, or with a new ``generation`` (the scope reads only ``spec``)."""
    if delta.type is not EventType.MODIFIED or delta.old is None:
        return True
    return metadata(delta.old).get("generation") != metadata(delta.obj).get("generation")


def _version(sidecarset: KubeObject) -> tuple[str, object]:
    generation = metadata(sidecarset).get("generation")
    if uid(sidecarset) and generation is not None:
        return uid(sidecarset), generation
    return "", id(sidecarset)  # not from an API server: this object only


@dataclass(frozen=True)
class TermSource:
    """A kind whose objects add terms to the pod webhook's scope: ``objects`` reads them (the
    informer cache), ``terms`` makes their CEL terms."""

    resource: Resource
    objects: Callable[[], Sequence[KubeObject]]
    terms: Callable[[Sequence[KubeObject]], Sequence[str]]


class PodWebhookScope:
    """Writes ``mpod.kb.io``'s match condition (see the module docstring)."""

    name = "pod-webhook-scope"

    def __init__(
        self,
        kube: KubeClient,
        sidecarsets: Callable[[], Sequence[KubeObject]],
        *,
        also: Sequence[str] = (),
        sources: Sequence[TermSource] = (),
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        """``also``: fixed terms; ``sources``: other kinds whose objects add terms (e.g. a
        PersistentPodState's StatefulSet), watched like the SidecarSets."""
        self.kube = kube
        self.sidecarsets = sidecarsets
        self.also = tuple(also)
        self.sources = tuple(sources)
        self.clock = clock
        self._lock = asyncio.Lock()
        self._verified: tuple[tuple[MatchCondition, ...], float] | None = None
        self._built: (
            tuple[tuple[tuple[str, object], ...], Sequence[KubeObject], tuple[MatchCondition, ...]] | None
        ) = None

    def wanted(self) -> tuple[MatchCondition, ...]:
        """:func:`pod_conditions` of the cached SidecarSets and sources' objects, built again
        only when one moved."""
        sidecarsets = self.sidecarsets()
        others = [source.objects() for source in self.sources]
        objects = [*sidecarsets, *(o for group in others for o in group)]
        versions = tuple(sorted(_version(s) for s in objects))
        if self._built is None or versions != self._built[0]:
            also = [
                *self.also,
                *(t for source, group in zip(self.sources, others, strict=True) for t in source.terms(group)),
            ]
            # the objects are kept so that an id() in the versions stays theirs
            self._built = (versions, objects, pod_conditions(sidecarsets, also))
        return self._built[2]

    async def ensure(self, *, reread: bool = False) -> bool:
        """Bring the live condition in line; True when it was rewritten."""
        wanted = self.wanted()
        async with self._lock:
            verified = self._verified
            fresh = verified is not None and self.clock() - verified[1] < FRESH_SECONDS
            if not reread and fresh and verified is not None and verified[0] == wanted:
                return False
            written = await set_match_conditions(self.kube, MUTATING_NAME, wanted)
            self._verified = (wanted, self.clock())
            return bool(written)

    def spec(self) -> ControllerSpec:
        """One key, woken by SidecarSet and sources' spec events (bursts coalesce in the queue)."""
        watches = tuple(
            Watch(resource, lambda _: (KEY,), accept=spec_changed)
            for resource in (SIDECARSETS, *(source.resource for source in self.sources))
        )
        return ControllerSpec(name=self.name, watches=watches, workers=1)

    async def reconcile(self, key: str) -> Result:
        await self.ensure(reread=True)
        return Result(requeue_after=RECHECK_SECONDS)
