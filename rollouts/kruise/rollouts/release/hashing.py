"""Hashes that detect changed plans.

``rollout_hash`` covers the strategy without pauses and failureThreshold, so that
editing a pause does not count as a plan change (``rollouts.kruise.io/hash``
upstream). ``release_plan_hash`` is what a BatchRelease reports as
``status.observedReleasePlanHash`` once it has acted on a plan.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any


def _digest(value: Any) -> str:
    return hashlib.sha256(json.dumps(value, sort_keys=True, separators=(",", ":")).encode()).hexdigest()[:16]


def rollout_hash(rollout: Mapping[str, Any]) -> str:
    strategy = dict((rollout.get("spec") or {}).get("strategy") or {})
    strategy.pop("paused", None)
    for key in ("canary", "blueGreen"):
        sub = strategy.get(key)
        if isinstance(sub, Mapping):
            sub = {k: v for k, v in sub.items() if k != "failureThreshold"}
            sub["steps"] = [{k: v for k, v in s.items() if k != "pause"} for s in sub.get("steps") or []]
            strategy[key] = sub
    return _digest(strategy)


def release_plan_hash(release_plan: Mapping[str, Any]) -> str:
    return _digest(dict(release_plan))
