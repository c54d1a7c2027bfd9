"""What the Rollout engine asks of the network, and what a router answers (DESIGN §3).

The engine decides *what* traffic split a step wants (``TrafficIntent``); a router makes the
network objects say so and reports whether it had to change anything (``RouteReport``). The
convergence contract is the one of upstream's ``NetworkProvider.EnsureRoutes``
(``KR:pkg/trafficrouting/network/interface.go``): ``converged`` is true only when the call found
every object already in the wanted shape and wrote nothing, so the engine waits
``gracePeriodSeconds`` after every call that changed something and moves on only after a call
that changed nothing.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

JSON = dict[str, Any]


@dataclass(frozen=True)
class TrafficIntent:
    """One step's traffic wish, as Kruise's ``TrafficRoutingStrategy`` plus the names it needs.

    - ``weight``: canary share in percent (0..100), the step's ``traffic``; ``None`` when the step
      only sets ``matches`` (upstream passes ``-1`` to Lua scripts then).
    - ``matches``: Kruise ``HttpRouteMatch`` dicts (``path``, ``headers[{type,name,value}]``,
      ``queryParams[...]``), OR'ed; when non-empty they take precedence over ``weight`` for
      providers that cannot do both (Gateway API, Istio), as upstream documents.
    - ``request_header_modifier``: a Gateway API ``HTTPHeaderFilter`` (``set``/``add``/``remove``).
    - ``revision_key``/``stable_revision``/``canary_revision``: the pod label that tells versions
      apart (``pod-template-hash`` or ``controller-revision-hash``) and its two values; used by
      DestinationRule subsets and handed to every Lua script.
    """

    namespace: str
    stable_service: str
    canary_service: str
    weight: int | None = None
    matches: Sequence[JSON] = field(default_factory=tuple)
    request_header_modifier: JSON | None = None
    revision_key: str = ""
    stable_revision: str = ""
    canary_revision: str = ""

    def __post_init__(self) -> None:
        if self.weight is not None and not 0 <= self.weight <= 100:
            raise ValueError(f"weight must be a percentage in 0..100, got {self.weight}")

    @property
    def routes_traffic(self) -> bool:
        """Whether the intent asks for any canary routing at all (weight or matches)."""
        return self.weight is not None or bool(self.matches)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> TrafficIntent:
        """Build from the engine's camelCase dict (``stableService``, ``canaryService``, ``weight``,
        ``matches``, ``requestHeaderModifier``, ``revisionLabelKey``, ``stableRevision``,
        ``canaryRevision``, ``namespace``); unknown keys are ignored."""
        weight = data.get("weight")
        return cls(
            namespace=str(data.get("namespace") or ""),
            stable_service=str(data.get("stableService") or ""),
            canary_service=str(data.get("canaryService") or ""),
            weight=None if weight is None else int(weight),
            matches=tuple(dict(m) for m in data.get("matches") or ()),
            request_header_modifier=(
                dict(data["requestHeaderModifier"]) if data.get("requestHeaderModifier") else None
            ),
            revision_key=str(data.get("revisionLabelKey") or ""),
            stable_revision=str(data.get("stableRevision") or ""),
            canary_revision=str(data.get("canaryRevision") or ""),
        )


@dataclass(frozen=True)
class RouteReport:
    """A router's answer: ``converged`` only when nothing had to change; ``changed`` when it wrote."""

    converged: bool
    message: str
    changed: bool

    @classmethod
    def unchanged(cls, message: str) -> RouteReport:
        """Everything already as wanted: converged, nothing written."""
        return cls(converged=True, message=message, changed=False)

    @classmethod
    def applied(cls, message: str) -> RouteReport:
        """Something was written: not converged until a later call finds nothing to do."""
        return cls(converged=False, message=message, changed=True)

    @classmethod
    def waiting(cls, message: str) -> RouteReport:
        """Nothing written but not there yet either (e.g. an object is still being deleted)."""
        return cls(converged=False, message=message, changed=False)

    @classmethod
    def combine(cls, reports: Iterable[RouteReport]) -> RouteReport:
        """Several providers at once: converged only if all are, changed if any is."""
        items = list(reports)
        return cls(
            converged=all(r.converged for r in items),
            message="; ".join(r.message for r in items if r.message),
            changed=any(r.changed for r in items),
        )


@runtime_checkable
class TrafficRouter(Protocol):
    """A network provider (upstream ``NetworkProvider``) as a small async Protocol.

    - ``ensure(intent)`` makes the objects route ``intent`` (upstream ``EnsureRoutes``).
    - ``restore(intent)`` routes everything to the stable service again and removes what the
      rollout added: canary rules/backends, the canary Ingress, the Lua-edited spec
      (upstream ``Finalise``); converged when nothing was left to change.

    Errors: :class:`kruise.core.errors.ProviderError` for a broken provider configuration or
    script, the ``kruise.core.errors`` API errors (``NotFoundError``, ``ConflictError``, ...)
    for the API server's answers.
    """

    async def ensure(self, intent: TrafficIntent) -> RouteReport: ...

    async def restore(self, intent: TrafficIntent) -> RouteReport: ...
