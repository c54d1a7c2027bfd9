"""kstatus' ``Compute`` for custom resources, written from its documented rules (test side).

``sigs.k8s.io/cli-utils/pkg/kstatus/status``: Flux's health checks run exactly this on our
CloneSets and Rollouts (no type-specific rules exist for them). Kept apart from the product's
:mod:`kruise.core.kstatus`, which writes the conditions, so the tests check one against the other.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

IN_PROGRESS, CURRENT, FAILED, TERMINATING = "InProgress", "Current", "Failed", "Terminating"


def compute(obj: Mapping[str, Any]) -> str:
    """InProgress, Current, Failed or Terminating, as kstatus computes it for a custom resource."""
    meta = obj.get("metadata") or {}
    status = obj.get("status") or {}
    if meta.get("deletionTimestamp"):
        return TERMINATING
    generation = meta.get("generation")
    observed = status.get("observedGeneration")
    if generation is not None and observed is not None and observed != generation:
        return IN_PROGRESS
    conditions = status.get("conditions") or []
    for cond in conditions:
        if cond.get("type") == "Reconciling" and cond.get("status") == "True":
            return IN_PROGRESS
        if cond.get("type") == "Stalled" and cond.get("status") == "True":
            return FAILED
    for cond in conditions:
        if cond.get("type") == "Ready":
            if cond.get("status") == "True":
                return CURRENT
            if cond.get("status") in ("False", "Unknown"):
                return IN_PROGRESS
    return CURRENT
