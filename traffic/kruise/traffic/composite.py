"""Several providers behind one router (upstream ``network.CompositeController``).

One ``trafficRoutings`` entry may name an Ingress, an HTTPRoute and custom objects at once
(e2e "multiple network providers": Istio + Ingress). Every provider is asked on every call, in
order, and the step has converged only when all of them report converged.
"""

from __future__ import annotations

from collections.abc import Sequence

from kruise.traffic.intent import RouteReport, TrafficIntent, TrafficRouter


class CompositeRouter:
    """:class:`~kruise.traffic.intent.TrafficRouter` made of others; errors stop at the failing one."""

    def __init__(self, routers: Sequence[TrafficRouter]) -> None:
        self.routers = list(routers)

    async def ensure(self, intent: TrafficIntent) -> RouteReport:
        return RouteReport.combine([await router.ensure(intent) for router in self.routers])

    async def restore(self, intent: TrafficIntent) -> RouteReport:
        return RouteReport.combine([await router.restore(intent) for router in self.routers])
