"""What every workload hold shares (pure): the Rollout that steers a workload, and its routing.

The hold itself is per kind (:class:`~kruise.rollouts.workloads.port.WorkloadHold`): partition
kinds share :func:`~kruise.rollouts.workloads.partition.partition_hold`, a Deployment has its own
(:mod:`kruise.rollouts.workloads.deployment.hold`); one admission adapter serves them all
(:mod:`kruise.rollouts.workloads.holdwebhook`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any


def _group(api_version: object) -> str | None:
    text = str(api_version or "")
    if not text:
        return None
    return text.rpartition("/")[0] if "/" in text else ""


def rollout_for(
    workload: Mapping[str, Any], rollouts: Sequence[Mapping[str, Any]]
) -> Mapping[str, Any] | None:
    """The enabled, live Rollout whose ``workloadRef`` names ``workload`` (``fetchMatchedRollout``:
    kind and name, and the API group when both sides state it), or None."""
    name = (workload.get("metadata") or {}).get("name")
    kind = workload.get("kind")
    group = _group(workload.get("apiVersion"))
    for ro in rollouts:
        ref = (ro.get("spec") or {}).get("workloadRef") or {}
        ref_group = _group(ref.get("apiVersion"))
        if ref.get("kind") != kind or ref.get("name") != name:
            continue
        if group is not None and ref_group is not None and group != ref_group:
            continue
        if (ro.get("spec") or {}).get("disabled") or (ro.get("metadata") or {}).get("deletionTimestamp"):
            return None
        return ro
    return None


def traffic_routed(rollout: Mapping[str, Any]) -> bool:
    """Whether the Rollout's strategy (canary or blue-green) routes traffic."""
    strategy = (rollout.get("spec") or {}).get("strategy") or {}
    return bool((strategy.get("canary") or strategy.get("blueGreen") or {}).get("trafficRoutings"))
