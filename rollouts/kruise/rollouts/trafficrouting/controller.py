"""The TrafficRouting controller shell (``rollouts.kruise.io/v1alpha1``): observe, decide, act,
persist once.

Per reconcile: read the TrafficRouting and the Rollouts naming it from the cache; keep its
finalizers equal to :func:`~kruise.rollouts.trafficrouting.links.wanted_finalizers` (its own
``rollouts.kruise.io/trafficrouting`` plus ``progressing.rollouts.kruise.io/<rollout>`` per Rollout
whose release holds it); plan the round (:func:`~kruise.rollouts.trafficrouting.phases.plan`), do
its work on the routes (:class:`~kruise.rollouts.trafficrouting.routes.TrafficRoutingRoutes`), post
the phase transition's Event before the status write (resourceVersion precondition), and drop its
own finalizer once a deleted TrafficRouting's routes are restored.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Mapping
from typing import Any

from kruise.core.errors import ConflictError, NotFoundError
from kruise.core.events import EventRecorder
from kruise.core.kube.client import KubeClient
from kruise.core.runtime import CacheReader, ControllerSpec, Watch, primary
from kruise.core.workqueue import Result
from kruise.rollouts.resources import ROLLOUTS, TRAFFIC_ROUTINGS
from kruise.rollouts.trafficrouting.links import (
    TRAFFIC_ROUTING_FINALIZER,
    Strategy,
    handed_strategy,
    holders,
    own_strategy,
    traffic_routing_ref,
    wanted_finalizers,
)
from kruise.rollouts.trafficrouting.phases import Outcome, Plan, Work, plan, settle
from kruise.rollouts.trafficrouting.routes import TrafficRoutingRoutes

log = logging.getLogger(__name__)
JSON = dict[str, Any]
ROLLOUTS_OF_TRAFFIC_ROUTING = "rollouts-of-trafficrouting"
"""Index of Rollouts by ``namespace/<TrafficRouting>`` they name."""
EVENT_RETRY_SECONDS = 5.0


def index_traffic_routing(rollout: JSON) -> tuple[str, ...]:
    """:data:`ROLLOUTS_OF_TRAFFIC_ROUTING`'s indexer."""
    name = traffic_routing_ref(rollout)
    return (f"{rollout['metadata'].get('namespace')}/{name}",) if name else ()


class TrafficRoutingController:
    name = "trafficrouting-controller"

    def __init__(
        self,
        kube: KubeClient,
        recorder: EventRecorder,
        cache: CacheReader,
        routes: TrafficRoutingRoutes,
        *,
        workers: int = 3,
    ) -> None:
        self.kube = kube
        self.recorder = recorder
        self.cache = cache
        self.routes = routes
        self.workers = workers

    def spec(self) -> ControllerSpec:
        """Woken by its TrafficRoutings and by the Rollouts naming them (old and new name)."""
        index = {ROLLOUTS_OF_TRAFFIC_ROUTING: index_traffic_routing}
        return ControllerSpec(
            name=self.name,
            watches=(primary(TRAFFIC_ROUTINGS), Watch(ROLLOUTS, index_traffic_routing, index)),
            workers=self.workers,
        )

    async def reconcile(self, key: str) -> Result:
        tr = self.cache.get(TRAFFIC_ROUTINGS, key)
        if tr is None:
            return Result()
        meta = tr["metadata"]
        rollouts = self.cache.by_index(ROLLOUTS, ROLLOUTS_OF_TRAFFIC_ROUTING, key)
        holding = holders(tr, rollouts)
        finalizers = wanted_finalizers(tr, holding)
        if finalizers != list(meta.get("finalizers") or ()):
            await self._set_finalizers(tr, finalizers)
            return Result(requeue_after=0.1)
        status = tr.get("status") or {}
        round_ = plan(status, bool(meta.get("deletionTimestamp")), holding)
        strategy = None
        if round_.work == Work.ENSURE:
            holder = [r for r in rollouts if r["metadata"]["name"] in holding] if len(holding) == 1 else []
            strategy = handed_strategy(own_strategy(tr), holder[0] if holder else None)
        outcome = await self._work(tr, round_, strategy)
        settled = settle(round_, outcome, strategy)
        new_status: JSON = {"phase": settled.phase.value, "message": settled.message}
        if outcome.done:
            new_status["observedGeneration"] = meta.get("generation")
        if settled.phase.value != status.get("phase") and not await self.recorder.transition(
            tr, "Normal", settled.phase.value, settled.message, leaving=status
        ):
            return Result(requeue_after=EVENT_RETRY_SECONDS)
        changed = any(status.get(k) != v for k, v in new_status.items())
        if changed and not await self._write_status(tr, new_status):
            return Result(requeue_after=0.1)
        if settled.release_finalizer and TRAFFIC_ROUTING_FINALIZER in finalizers:
            await self._set_finalizers(tr, [f for f in finalizers if f != TRAFFIC_ROUTING_FINALIZER])
            return Result()
        return Result(requeue_after=settled.requeue_after)

    async def _work(self, tr: Mapping[str, Any], round_: Plan, strategy: Strategy | None) -> Outcome:
        if round_.work == Work.CHECK:
            return await self.routes.check(tr)
        if round_.work == Work.ENSURE:
            return await self.routes.ensure(tr, strategy or Strategy())
        if round_.work == Work.RESTORE:
            return await self.routes.restore(tr)
        return Outcome(done=True)

    async def _write_status(self, tr: Mapping[str, Any], status: JSON) -> bool:
        """Merge-patch the status under the read resourceVersion; False on a conflict."""
        meta = tr["metadata"]
        ns, name = meta["namespace"], meta["name"]
        body = {"metadata": {"resourceVersion": meta["resourceVersion"]}, "status": status}
        try:
            await self.kube.patch(TRAFFIC_ROUTINGS, name, body, ns, patch_type="merge", subresource="status")
        except ConflictError:
            return False
        except NotFoundError:
            return True
        return True

    async def _set_finalizers(self, tr: Mapping[str, Any], finalizers: list[str]) -> None:
        meta = tr["metadata"]
        ns, name = meta["namespace"], meta["name"]
        patch = {"metadata": {"resourceVersion": meta["resourceVersion"], "finalizers": finalizers or None}}
        with contextlib.suppress(ConflictError, NotFoundError):
            await self.kube.patch(TRAFFIC_ROUTINGS, name, patch, ns, patch_type="merge")
        log.info("TrafficRouting %s/%s finalizers: %s", meta["namespace"], meta["name"], finalizers)
