"""Which Rollouts hold a TrafficRouting, and which step's traffic they hand it (pure).

**Link** (upstream ``handleTrafficRouting``/``finalizeTrafficRouting``): a Rollout names a
TrafficRouting by ``spec.strategy.canary.trafficRoutingRef`` (``blueGreen`` alike; v1alpha1: the
annotation ``rollouts.kruise.io/trafficrouting``). While its release runs, the TrafficRouting carries
the finalizer ``progressing.rollouts.kruise.io/<rollout>``; that finalizer is what turns the
TrafficRouting ``Progressing`` and what keeps it from being deleted under the release. Upstream's
Rollout adds it while ``Initializing`` and removes it when finalising starts; here the same rule
is level-triggered and read off the Rollout's status (:func:`holds`), and the TrafficRouting
controller keeps its finalizers equal to it, so the Rollout engine writes nothing for the link.

**Hand-off of a step's traffic** (kruise's, additive): upstream applies only the
TrafficRouting's own ``spec.strategy`` during the whole release (an end-to-end chain a -> b -> c
routed by header). Here, while exactly one Rollout holds it, the traffic fields of that Rollout's
step in force (``traffic`` -> ``weight``, ``matches``, ``requestHeaderModifier``) override the
TrafficRouting's own, field by field (:func:`handed_strategy`), so a Rollout with
``trafficRoutingRef`` and ``traffic: 20%``/``50%`` steps shifts the referenced routes step by step.
A step that sets none of them leaves the TrafficRouting's strategy as it is, which is upstream's
behaviour for Rollouts whose steps carry no traffic.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from kruise.rollouts.api.common import TRAFFIC_ROUTING_ANNOTATION
from kruise.rollouts.api.trafficrouting import PROGRESSING_ROLLOUT_FINALIZER_PREFIX
from kruise.workloads.admission.intstr import IntOrStringError, get_scaled_value

JSON = dict[str, Any]
TRAFFIC_ROUTING_FINALIZER = "rollouts.kruise.io/trafficrouting"
"""The TrafficRouting's own finalizer (``util.TrafficRoutingFinalizer``): routes are restored first."""

_RELEASING_REASONS = ("Initializing", "InRolling", "Paused")
"""Progressing reasons of a release that has not begun finalising (the Rollout holds its routes)."""
_UPGRADING = ("BeforeStepUpgrade", "StepUpgrade")
"""Step states in which the step's pods are not upgraded yet: the previous step's traffic holds."""


def progressing_finalizer(rollout_name: str) -> str:
    """``progressing.rollouts.kruise.io/<rollout>`` (``util.ProgressingRolloutFinalizer``)."""
    return f"{PROGRESSING_ROLLOUT_FINALIZER_PREFIX}/{rollout_name}"


def rollout_of_finalizer(finalizer: str) -> str | None:
    """The Rollout name in a progressing finalizer, None for any other finalizer."""
    prefix = f"{PROGRESSING_ROLLOUT_FINALIZER_PREFIX}/"
    return finalizer[len(prefix) :] if finalizer.startswith(prefix) else None


def traffic_routing_ref(rollout: Mapping[str, Any]) -> str:
    """The TrafficRouting a Rollout names: ``canary|blueGreen.trafficRoutingRef``, else the
    v1alpha1 annotation ``rollouts.kruise.io/trafficrouting``; "" when none."""
    strategy = (rollout.get("spec") or {}).get("strategy") or {}
    for style in ("canary", "blueGreen"):
        ref = (strategy.get(style) or {}).get("trafficRoutingRef")
        if ref:
            return str(ref)
    annotations = (rollout.get("metadata") or {}).get("annotations") or {}
    return str(annotations.get(TRAFFIC_ROUTING_ANNOTATION) or "")


def _progressing_reason(status: Mapping[str, Any]) -> str:
    for cond in status.get("conditions") or ():
        if cond.get("type") == "Progressing":
            return str(cond.get("reason") or "")
    return ""


def holds(rollout: Mapping[str, Any]) -> bool:
    """Whether the Rollout's release holds its TrafficRouting now: phase ``Progressing`` with a
    Progressing reason before finalising (Initializing, InRolling, Paused), not being deleted."""
    if (rollout.get("metadata") or {}).get("deletionTimestamp") or not traffic_routing_ref(rollout):
        return False
    status = rollout.get("status") or {}
    return status.get("phase") == "Progressing" and _progressing_reason(status) in _RELEASING_REASONS


def holders(traffic_routing: Mapping[str, Any], rollouts: Iterable[Mapping[str, Any]]) -> list[str]:
    """Names (sorted) of the Rollouts of the TrafficRouting's namespace that hold it now."""
    meta = traffic_routing.get("metadata") or {}
    return sorted(
        str(r["metadata"]["name"])
        for r in rollouts
        if r["metadata"].get("namespace") == meta.get("namespace")
        and traffic_routing_ref(r) == meta.get("name")
        and holds(r)
    )


def wanted_finalizers(traffic_routing: Mapping[str, Any], holding: Iterable[str]) -> list[str]:
    """The TrafficRouting's finalizers as they should be: its own (until it is deleted and its
    routes restored, which the controller removes itself) and one progressing finalizer per
    holding Rollout; stale progressing finalizers go. A TrafficRouting being deleted gains none
    (the API server refuses new finalizers then)."""
    meta = traffic_routing.get("metadata") or {}
    have = [str(f) for f in meta.get("finalizers") or ()]
    keep = set(holding)
    out = [f for f in have if rollout_of_finalizer(f) is None or rollout_of_finalizer(f) in keep]
    if meta.get("deletionTimestamp"):
        return out
    if TRAFFIC_ROUTING_FINALIZER not in out:
        out.append(TRAFFIC_ROUTING_FINALIZER)
    out += [progressing_finalizer(name) for name in sorted(keep) if progressing_finalizer(name) not in out]
    return out


@dataclass(frozen=True)
class Strategy:
    """A ``TrafficRoutingStrategy`` in force: ``weight`` percent (None: no weight), matches
    (Kruise ``HttpRouteMatch`` dicts) and the ``requestHeaderModifier``; ``source`` says where it
    came from (``TrafficRouting`` or ``Rollout <name> step <n>``) for status messages."""

    weight: int | None = None
    matches: tuple[JSON, ...] = field(default_factory=tuple)
    request_header_modifier: JSON | None = None
    source: str = "TrafficRouting"

    @property
    def routes_traffic(self) -> bool:
        """Upstream ``DoTrafficRouting`` does nothing for a strategy without weight and matches."""
        return self.weight is not None or bool(self.matches)

    def describe(self) -> str:
        parts = [] if self.weight is None else [f"weight {self.weight}%"]
        if self.matches:
            parts.append(f"{len(self.matches)} match(es)")
        if self.request_header_modifier:
            parts.append("request headers modified")
        return f"{', '.join(parts) or 'no traffic'} ({self.source})"


def own_strategy(traffic_routing: Mapping[str, Any]) -> Strategy:
    """The TrafficRouting's ``spec.strategy`` (v1alpha1: integer ``weight``)."""
    spec = (traffic_routing.get("spec") or {}).get("strategy") or {}
    weight, modifier = spec.get("weight"), spec.get("requestHeaderModifier")
    return Strategy(
        weight=None if weight is None else max(0, min(100, int(weight))),
        matches=tuple(dict(m) for m in spec.get("matches") or ()),
        request_header_modifier=dict(modifier) if modifier else None,
    )


def step_in_force(rollout: Mapping[str, Any]) -> int:
    """1-based index of the step whose traffic applies now: the current step once its pods are
    upgraded (from ``StepTrafficRouting`` on), the previous one before; 0 for none yet."""
    status = rollout.get("status") or {}
    sub = status.get("canaryStatus") or status.get("blueGreenStatus") or {}
    index = int(sub.get("currentStepIndex") or 0)
    return index - 1 if sub.get("currentStepState") in _UPGRADING else index


def _steps(rollout: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    strategy = (rollout.get("spec") or {}).get("strategy") or {}
    return list((strategy.get("canary") or strategy.get("blueGreen") or {}).get("steps") or ())


def _percent(traffic: Any) -> int | None:
    try:
        return max(0, min(100, get_scaled_value(str(traffic), 100, True)))
    except IntOrStringError:
        return None


def handed_strategy(own: Strategy, rollout: Mapping[str, Any] | None) -> Strategy:
    """``own`` with the traffic fields the holding Rollout's step in force sets (see the module
    docstring); ``own`` unchanged without a single holder or a step in force."""
    if rollout is None:
        return own
    index = step_in_force(rollout)
    steps = _steps(rollout)
    if not 1 <= index <= len(steps):
        return own
    step = steps[index - 1]
    traffic, matches, modifier = step.get("traffic"), step.get("matches"), step.get("requestHeaderModifier")
    if traffic is None and not matches and not modifier:
        return own
    return Strategy(
        weight=_percent(traffic) if traffic is not None else own.weight,
        matches=tuple(dict(m) for m in matches) if matches else own.matches,
        request_header_modifier=dict(modifier) if modifier else own.request_header_modifier,
        source=f"Rollout {rollout['metadata']['name']} step {index}",
    )


def intent(namespace: str, ref: Mapping[str, Any], strategy: Strategy) -> JSON:
    """The router intent (``TrafficIntent.from_dict`` shape) for one ``objectRef`` entry. As
    upstream's ``OnlyTrafficRouting``, the canary service is the stable service itself: no canary
    Service is made, and revisions are unknown (the routed services may belong to other apps)."""
    service = str(ref.get("service") or "")
    return {
        "namespace": namespace,
        "stableService": service,
        "canaryService": service,
        "weight": strategy.weight,
        "matches": [dict(m) for m in strategy.matches],
        "requestHeaderModifier": strategy.request_header_modifier,
    }
