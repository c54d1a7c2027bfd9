"""What the Rollout machine asks of the BatchRelease and the traffic routers (pure): the
BatchRelease spec of a step, the traffic intent of a step, the grace period, and whether the
BatchRelease reports a step's batch Ready.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from kruise.rollouts.api.common import BatchReleaseBatchState
from kruise.rollouts.release import constants as c
from kruise.rollouts.release.batchplan import planned_canary
from kruise.rollouts.release.constants import POD_TEMPLATE_HASH_LABEL
from kruise.rollouts.release.hashing import release_plan_hash
from kruise.rollouts.rollout.model import JSON, Observed
from kruise.rollouts.rollout.steps import steps_of, strategy_of
from kruise.rollouts.workloads.info import WorkloadInfo


def grace_seconds(rollout: Mapping[str, Any]) -> int:
    routings = strategy_of(rollout).get("trafficRoutings") or []
    if not routings:
        return 0
    value = routings[0].get("gracePeriodSeconds")
    return c.DEFAULT_GRACE_SECONDS if value is None else int(value)


def canary_service_name(rollout: Mapping[str, Any]) -> str:
    routings = strategy_of(rollout).get("trafficRoutings") or []
    if not routings:
        return ""
    stable = str(routings[0].get("service"))
    if strategy_of(rollout).get("disableGenerateCanaryService"):
        return stable
    return f"{stable}-canary"


def traffic_intent(
    rollout: Mapping[str, Any],
    status: Mapping[str, Any],
    obs: Observed,
    weight: int | None,
    matches: Sequence[Any],
    modifier: Mapping[str, Any] | None = None,
) -> JSON:
    """The data a traffic router needs for one step (dict; the shell maps it to the router's type);
    ``modifier`` is the step's ``requestHeaderModifier``. Services select on the label the
    workload's pods carry their revision under (``pod-template-hash`` when the workload is gone)."""
    routings = strategy_of(rollout).get("trafficRoutings") or []
    routing = dict(routings[0]) if routings else {}
    cs = status.get("canaryStatus") or {}
    return {
        "namespace": (rollout.get("metadata") or {}).get("namespace"),
        "routing": routing,
        "stableService": routing.get("service"),
        "canaryService": canary_service_name(rollout),
        "weight": weight,
        "matches": [dict(m) for m in matches],
        "requestHeaderModifier": dict(modifier) if modifier else None,
        "stableRevision": cs.get("stableRevision", ""),
        "canaryRevision": cs.get("podTemplateHash") or cs.get("canaryRevision", ""),
        "revisionLabelKey": obs.workload.revision_label_key if obs.workload else POD_TEMPLATE_HASH_LABEL,
    }


def batch_release_spec(
    rollout: Mapping[str, Any],
    workload: WorkloadInfo,
    batch_partition: int | None,
    *,
    finalizing: bool = False,
    wait_ready: bool = True,
) -> JSON:
    """The BatchRelease spec for ``batch_partition`` (0-based; None releases everything).

    Finalizing, ``finalizingPolicy`` is ``WaitResume`` only when ``wait_ready`` (a successful
    release waits for every pod; rollback, disable and delete do not, as upstream's
    ``finalizingBatchRelease``)."""
    strategy = strategy_of(rollout)
    plan: JSON = {
        "batches": [{"canaryReplicas": s.get("replicas", "100%")} for s in steps_of(rollout)],
        "rollingStyle": workload.style,
        "enableExtraWorkloadForCanary": workload.style == "Canary",
        "finalizingPolicy": "WaitResume" if finalizing and wait_ready else "Immediate",
    }
    if batch_partition is not None:
        plan["batchPartition"] = batch_partition
    if workload.observed_rollout_id:
        plan["rolloutID"] = workload.observed_rollout_id
    if strategy.get("failureThreshold") is not None:
        plan["failureThreshold"] = strategy["failureThreshold"]
    if strategy.get("patchPodTemplateMetadata"):
        plan["patchPodTemplateMetadata"] = strategy["patchPodTemplateMetadata"]
    return {
        "workloadRef": {"apiVersion": workload.api_version, "kind": workload.kind, "name": workload.name},
        "releasePlan": plan,
    }


def batch_ready_for(spec: Mapping[str, Any], obs: Observed, step_index: int) -> bool:
    b = obs.batch
    return (
        b.exists
        and not b.deleting
        and b.observed_plan_hash == release_plan_hash(spec["releasePlan"])
        and b.generation == b.observed_generation
        and b.batch_state == BatchReleaseBatchState.READY
        and b.current_batch + 1 >= step_index
    )


def release_all(step: Mapping[str, Any], workload: WorkloadInfo) -> bool:
    """Partition style and this step releases every pod (a batch's real share reaches every pod
    exactly when its planned share does, whatever the kind's partition rounding)."""
    if workload.style != "Partition":
        return False
    return planned_canary(step.get("replicas", "100%"), workload.replicas) >= workload.replicas
