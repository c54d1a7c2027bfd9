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
  or with a new ``generation`` (not by status writes), and by any change of the mutating
  configuration), which also repairs a condition someone else wrote (a starting replica from a
  view a moment old, a ``helm upgrade``).

The comparison is with the informer's copy of the configuration
(:class:`~kruise.core.webhook.keeper.ConditionKeeper`): at rest nothing is read or written. The
expression is built again only when a SidecarSet's ``(uid, generation)`` moved.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from kruise.core.informer import Delta, EventType
from kruise.core.informer.store import JSON
from kruise.core.kube.client import KubeClient
from kruise.core.kube.resources import SIDECARSETS, Resource
from kruise.core.runtime import ControllerSpec, Watch
from kruise.core.webhook.configuration import MatchCondition
from kruise.core.webhook.keeper import ConditionKeeper
from kruise.core.workqueue import Result
from kruise.workloads.objects import KubeObject, metadata, uid
from kruise.workloads.podwebhook import MUTATING_NAME, POD_CONDITION
from kruise.workloads.sidecarset.scope import pod_match_condition

__all__ = [
    "PodWebhookScope",
    "TermSource",
    "pod_conditions",
    "spec_changed",
]

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
        configuration: Callable[[], JSON | None] | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        """``also``: fixed terms; ``sources``: other kinds whose objects add terms (e.g. a
        PersistentPodState's StatefulSet), watched like the SidecarSets; ``configuration``: the
        informer's copy of the mutating configuration (``None``: the live one is read)."""
        self.kube = kube
        self.sidecarsets = sidecarsets
        self.also = tuple(also)
        self.sources = tuple(sources)
        self.keeper = ConditionKeeper(
            kube, MUTATING_NAME, KEY, mutating=True, cached=configuration, clock=clock
        )
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
        return await self.keeper.ensure(self.wanted(), reread=reread)

    def spec(self) -> ControllerSpec:
        """One key, woken by SidecarSet and sources' spec events and by the mutating configuration's
        (bursts coalesce in the queue)."""
        watches = tuple(
            Watch(resource, lambda _: (KEY,), accept=spec_changed)
            for resource in (SIDECARSETS, *(source.resource for source in self.sources))
        )
        return ControllerSpec(name=self.name, watches=(*watches, self.keeper.watch()), workers=1)

    async def reconcile(self, key: str) -> Result:
        await self.ensure(reread=True)
        return Result()
