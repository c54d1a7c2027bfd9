"""The defaults Kruise Rollouts' CRDs declare, applied as a pure function.

Upstream has no mutating webhook for Rollout or TrafficRouting: its CRDs carry
``+kubebuilder:default`` values and the API server applies them. Our generated CRDs carry no
``default`` keywords (see :mod:`kruise.core.crdgen`), so a mutating webhook (or a reader) applies
them with :func:`default_rollout`/:func:`default_trafficrouting`. Defaults, as structural
defaulting does, only fill fields that are absent (or ``null``) inside objects that exist:

- ``spec.disabled: false`` (Rollout, both versions);
- ``trafficRoutings[].gracePeriodSeconds: 3`` (TrafficRouting: ``objectRef[]``);
- gateway-api matches: ``headers[].type`` and ``queryParams[].type``: ``Exact``;
  ``path.type: PathPrefix`` and ``path.value: /``.

``ingress.classType`` is *not* defaulted: upstream documents ``nginx`` as the default but applies
it in the Ingress router, so the stored object keeps it empty.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from kruise.rollouts.api.traffic import DEFAULT_GRACE_PERIOD_SECONDS

__all__ = ["default_rollout", "default_trafficrouting"]

JSON = dict[str, Any]


def _items(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _set_default(node: Any, key: str, value: Any) -> None:
    if isinstance(node, dict) and node.get(key) is None:
        node[key] = value


def _default_routings(routings: Any) -> None:
    for ref in _items(routings):
        _set_default(ref, "gracePeriodSeconds", DEFAULT_GRACE_PERIOD_SECONDS)


def _default_matches(matches: Any) -> None:
    for match in _items(matches):
        if not isinstance(match, dict):
            continue
        for header in _items(match.get("headers")):
            _set_default(header, "type", "Exact")
        for param in _items(match.get("queryParams")):
            _set_default(param, "type", "Exact")
        path = match.get("path")
        _set_default(path, "type", "PathPrefix")
        _set_default(path, "value", "/")


def _default_strategy(strategy: Any) -> None:
    if not isinstance(strategy, dict):
        return
    for name in ("canary", "blueGreen"):
        sub = strategy.get(name)
        if not isinstance(sub, dict):
            continue
        _default_routings(sub.get("trafficRoutings"))
        for step in _items(sub.get("steps")):
            if isinstance(step, dict):
                _default_matches(step.get("matches"))


def default_rollout(obj: Mapping[str, Any]) -> JSON:
    """Return a copy of a Rollout (v1alpha1 or v1beta1 wire dict) with the CRD defaults applied.

    Idempotent: defaulting a defaulted object changes nothing.
    """
    out: JSON = copy.deepcopy(dict(obj))
    spec = out.get("spec")
    if isinstance(spec, dict):
        _set_default(spec, "disabled", False)
        _default_strategy(spec.get("strategy"))
    return out


def default_trafficrouting(obj: Mapping[str, Any]) -> JSON:
    """Return a copy of a TrafficRouting wire dict with the CRD defaults applied (idempotent)."""
    out: JSON = copy.deepcopy(dict(obj))
    spec = out.get("spec")
    if isinstance(spec, dict):
        _default_routings(spec.get("objectRef"))
        strategy = spec.get("strategy")
        if isinstance(strategy, dict):
            _default_matches(strategy.get("matches"))
    return out
