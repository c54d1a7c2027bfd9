"""Which pod deletions, updates and evictions the API server sends to the budget check.

Upstream's ``vpod.kb.io`` (pods UPDATE, DELETE) and ``vpodeviction.kb.io`` (``pods/eviction``
CREATE) see every pod outside ``kube-system`` and ``control-plane: openkruise`` namespaces with
``failurePolicy: Fail``: while kruise-manager is down no pod can be deleted or evicted anywhere
(a node drain stalls), though almost no pod has a budget. Here, with the same failure policy
(a protected pod would rather wait than lose its budget):

- ``vpod.kb.io`` carries the static CEL condition :data:`PROTECTED_POD`: the pod as stored
  (``oldObject``) has the ``kruise.io/related-pub`` annotation the PUB controller writes on every
  pod it counts. Upstream's handler admits a pod without it at once, so nothing it would judge is
  left out.
- An eviction request's object is the ``Eviction``, not the pod, so CEL cannot see that
  annotation: ``vpodeviction.kb.io`` is scoped to the namespaces that hold a PUB (or another
  validating feature's object, e.g. a WorkloadSpread:
  :func:`~kruise.workloads.podwebhook.eviction_condition` of the joined
  :class:`~kruise.workloads.podwebhook.ValidatingScope`, rewritten by :class:`EvictionScope` when
  those objects come and go). With none anywhere the webhook is never called.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

from kruise.core.informer import Delta, EventType
from kruise.core.informer.store import JSON
from kruise.core.kube.client import KubeClient
from kruise.core.kube.resources import Resource
from kruise.core.runtime import ControllerSpec, Watch
from kruise.core.webhook.configuration import MatchCondition
from kruise.core.webhook.keeper import ConditionKeeper
from kruise.core.workqueue import Result
from kruise.workloads.api.podunavailablebudget import PUBS, RELATED_PUB_ANNOTATION
from kruise.workloads.podwebhook import ValidatingScope, eviction_condition

__all__ = [
    "EVICTION_WEBHOOK",
    "POD_WEBHOOK",
    "PROTECTED_POD",
    "EvictionScope",
]

POD_WEBHOOK = "vpod.kb.io"
EVICTION_WEBHOOK = "vpodeviction.kb.io"
KEY = "vpodeviction"

PROTECTED_POD = MatchCondition(
    "pub-protected-pod",
    f"has(oldObject.metadata.annotations) && '{RELATED_PUB_ANNOTATION}' in oldObject.metadata.annotations",
)
"""``vpod.kb.io``'s condition: only pods a PUB counts are sent."""


def _created_or_deleted(delta: Delta) -> bool:
    return delta.type is not EventType.MODIFIED


class EvictionScope:
    """Keeps ``vpodeviction.kb.io``'s condition equal to
    :func:`~kruise.workloads.podwebhook.eviction_condition` of ``scope()``'s namespaces (the
    validating features' scope over the cached objects): from its own one-key controller (an
    object of ``resources`` created or deleted, or the validating configuration changed, e.g. by
    someone else) and from the PUB controller before it writes a status (so a budget in force is
    already in the webhook's scope). It compares with ``configuration()``, the informer's copy of
    the validating configuration (``None``: the live one is read), so at rest it makes no request."""

    name = "pub-webhook-scope"

    def __init__(
        self,
        kube: KubeClient,
        scope: Callable[[], ValidatingScope | None],
        *,
        resources: Sequence[Resource] = (PUBS,),
        configuration: Callable[[], JSON | None] | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.kube = kube
        self.scope = scope
        self.resources = tuple(resources)
        self.keeper = ConditionKeeper(
            kube, EVICTION_WEBHOOK, KEY, mutating=False, cached=configuration, clock=clock
        )

    async def ensure(self, *, reread: bool = False) -> bool:
        """Bring the live condition in line; True when it was rewritten."""
        scope = self.scope()
        wanted = eviction_condition(() if scope is None else scope.eviction_namespaces or ())
        return await self.keeper.ensure((wanted,), reread=reread)

    def spec(self) -> ControllerSpec:
        watches = tuple(Watch(r, lambda _: (KEY,), accept=_created_or_deleted) for r in self.resources)
        return ControllerSpec(name=self.name, watches=(*watches, self.keeper.watch()), workers=1)

    async def reconcile(self, key: str) -> Result:
        await self.ensure(reread=True)
        return Result()
