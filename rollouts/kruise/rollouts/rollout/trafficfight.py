"""GitOps fight detection on the network objects a Rollout writes (pure): kruise's addition.

The workload side (:mod:`kruise.rollouts.workloads.fight`) watches ``partition``/``paused``; this
module does the same for what the traffic routing writes, reusing its backoff (:func:`step`), its
``Conflict`` condition and its messages:

- **Targets** (:class:`Target`): per Rollout action, the objects and the subtree of each that our
  write decides: the HTTPRoute's ``spec.rules`` (backendRef weights, canary match rules), the
  canary Ingress's ``metadata.annotations`` (``nginx.ingress.kubernetes.io/canary-*``), a custom
  (Lua-managed) object's ``spec`` (Istio VirtualService/DestinationRule), and a Service's
  ``spec.selector[<revision label>]`` (the stable pin and the canary Service's selector).
- **What we wrote** (:func:`written_after`): after one of our writes, the leaves under the subtree
  that the write changed, plus the earlier ones still present, with the values the API server
  stored (its defaults included, so a read-back compares equal).
- **Reverted** (:func:`judge`): a kept leaf whose live value differs; the writer is the field
  manager other than ours owning it in ``managedFields`` (:mod:`kruise.core.ownership`: the
  nearest owned ancestor, as ``spec.rules`` is an atomic list owned whole by the last applier).
  A leaf only we own was moved by ourselves (a later step, a restore): not a fight.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from kruise.core.kube.resources import Resource, object_key
from kruise.core.ownership import Path, dotted, leaves, value_at, writer
from kruise.rollouts.rollout.requests import canary_service_name
from kruise.rollouts.rollout.steps import strategy_of
from kruise.rollouts.workloads.fight import Revert
from kruise.traffic.resources import (
    DESTINATIONRULES,
    HTTPROUTES,
    INGRESSES,
    SERVICES,
    VIRTUALSERVICES,
    known_resource,
)

EVENT_REASON = "TrafficFieldReverted"
"""Warning event on the Rollout when another writer sets back what the traffic routing wrote."""
Written = dict[Path, Any]
TARGET_RESOURCES = (HTTPROUTES, INGRESSES, SERVICES, VIRTUALSERVICES, DESTINATIONRULES)
"""Every kind a :class:`Target` can be (what the fight guard reads, for the RBAC audit)."""


@dataclass(frozen=True)
class Target:
    """One object a traffic action writes, and the subtree (``root``) whose values it decides."""

    resource: Resource
    namespace: str
    name: str
    root: Path

    @property
    def key(self) -> str:
        """``<Kind>/<namespace>/<name>``: one memory per object, whichever action wrote it."""
        return object_key(self.resource.kind, self.namespace, self.name)


def route_targets(routing: Mapping[str, Any], namespace: str) -> list[Target]:
    """What one ``trafficRoutings[]`` entry's routers write (custom objects of the kinds
    :func:`kruise.traffic.resources.known_resource` knows: a kind found by API discovery is not
    watched; the canary Ingress ``<ingress>-canary``; the HTTPRoute), in the routers' order."""
    out: list[Target] = []
    for ref in routing.get("customNetworkRefs") or []:
        resource = known_resource(str(ref.get("apiVersion") or ""), str(ref.get("kind") or ""))
        if resource is not None and ref.get("name"):
            out.append(Target(resource, namespace, str(ref["name"]), ("spec",)))
    ingress = routing.get("ingress") or {}
    if ingress.get("name"):
        out.append(Target(INGRESSES, namespace, f"{ingress['name']}-canary", ("metadata", "annotations")))
    gateway = routing.get("gateway") or {}
    if gateway.get("httpRouteName"):
        out.append(Target(HTTPROUTES, namespace, str(gateway["httpRouteName"]), ("spec", "rules")))
    return out


def selector_target(namespace: str, service: str, revision_key: str) -> Target:
    """A Service's ``spec.selector[revision_key]`` (the pin of the stable one, the canary's own)."""
    return Target(SERVICES, namespace, service, ("spec", "selector", revision_key))


def rollout_target_keys(rollout: Mapping[str, Any]) -> set[str]:
    """The :attr:`Target.key` of every object the Rollout's traffic routing may write."""
    routings = strategy_of(rollout).get("trafficRoutings") or []
    if not routings:
        return set()
    namespace = str((rollout.get("metadata") or {}).get("namespace") or "")
    routing = routings[0]
    keys = {t.key for t in route_targets(routing, namespace)}
    for service in (routing.get("service"), canary_service_name(rollout)):
        if service:
            keys.add(f"{SERVICES.kind}/{namespace}/{service}")
    return keys


def written_after(
    target: Target, before: Mapping[str, Any] | None, after: Mapping[str, Any], kept: Written
) -> Written:
    """What we wrote, after a write of ours turned ``before`` (None: created) into ``after``: the
    leaves under ``target.root`` that changed, and the ``kept`` ones still present, with their
    values on ``after``."""
    now = leaves(value_at(after, target.root), target.root)
    then = {} if before is None else leaves(value_at(before, target.root), target.root)
    return {path: value for path, value in now.items() if path in kept or then.get(path, _MISSING) != value}


_MISSING = object()


def differs(written: Written, live: Mapping[str, Any]) -> list[Path]:
    """The kept leaves whose live value is another (sorted by their dotted name)."""
    return sorted((p for p, v in written.items() if value_at(live, p) != v), key=dotted)


def judge(written: Written, live: Mapping[str, Any], ours: str) -> Revert | None:
    """The revert of ``written`` on ``live`` (with its ``managedFields``): the first differing
    leaf's owner other than ``ours`` names the writer; None when nothing differs or only we own
    what does."""
    reverted = differs(written, live)
    managed = (live.get("metadata") or {}).get("managedFields") or []
    for path in reverted:
        found = writer(managed, live, path, ours)
        if found is not None:
            return Revert(found, tuple(dict.fromkeys(dotted(_gone(live, p)) for p in reverted)))
    return None


def _gone(live: Mapping[str, Any], path: Path) -> Path:
    """The shortest prefix of ``path`` missing from ``live`` (a removed backendRef is named
    once, not by each of its fields); ``path`` itself when every step is there."""
    for end in range(1, len(path)):
        if value_at(live, path[:end]) is None:
            return path[:end]
    return path
