"""One canary step at a time (pure): Kruise Rollouts' ``runCanary``.

States of ``status.canaryStatus.currentStepState`` and what each does:

- ``BeforeStepUpgrade``: with traffic routing on a step that routes traffic, pin the
  stable Service to the stable revision before any pod moves (so A/B traffic never
  reaches new pods through the stable Service); in partition style on a step that
  releases every pod, restore the stable Service instead (ingress-nginx#9635) and
  skip this step's traffic routing;
- ``StepUpgrade``: ensure the BatchRelease with ``batchPartition = step - 1`` and wait
  until it reports the batch Ready for this plan;
- ``StepTrafficRouting``: canary Service, stable pin, routes; advance once converged
  and ``gracePeriodSeconds`` passed; a step without traffic after a traffic step
  first routes everything back to stable;
- ``StepMetricsAnalysis``: pass-through until metric analysis lands;
- ``StepPaused``: timed (``pause.duration`` seconds from entering the state) or manual
  (``kubectl kruise rollout approve`` sets ``StepReady``); the last step at ``100%``
  continues by itself;
- ``StepReady``: next step, or ``Completed``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from kruise.rollouts.rollout import constants as c
from kruise.rollouts.rollout.batchplan import real_canary_goal
from kruise.rollouts.rollout.hashing import release_plan_hash
from kruise.rollouts.rollout.model import JSON, Action, ActionKind, Decision, Event, Observed, WorkloadInfo
from kruise.rollouts.rollout.steps import step_has_routing, step_weight, steps_of, strategy_of
from kruise.rollouts.rollout.timefmt import fmt_time, seconds_since

BATCH_RECHECK = 2.0


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
    rollout: Mapping[str, Any], status: Mapping[str, Any], weight: int | None, matches: Sequence[Any]
) -> JSON:
    """The data a traffic router needs for one step (dict; the shell maps it to the router's type)."""
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
        "requestHeaderModifier": None,
        "stableRevision": cs.get("stableRevision", ""),
        "canaryRevision": cs.get("podTemplateHash") or cs.get("canaryRevision", ""),
        "revisionLabelKey": "pod-template-hash",
    }


def rolling_style(rollout: Mapping[str, Any], workload: WorkloadInfo) -> str:
    """``Canary`` (extra Deployment), ``Partition`` or ``BlueGreen`` (``GetRollingStyle``)."""
    strategy = (rollout.get("spec") or {}).get("strategy") or {}
    if strategy.get("blueGreen"):
        return "BlueGreen"
    canary = strategy.get("canary") or {}
    if canary.get("enableExtraWorkloadForCanary") and workload.kind == "Deployment":
        return "Canary"
    return "Partition"


def batch_release_spec(
    rollout: Mapping[str, Any],
    workload: WorkloadInfo,
    batch_partition: int | None,
    *,
    finalizing: bool = False,
) -> JSON:
    """The BatchRelease spec for ``batch_partition`` (0-based; None releases everything)."""
    strategy = strategy_of(rollout)
    plan: JSON = {
        "batches": [{"canaryReplicas": s.get("replicas", "100%")} for s in steps_of(rollout)],
        "rollingStyle": rolling_style(rollout, workload),
        "enableExtraWorkloadForCanary": rolling_style(rollout, workload) == "Canary",
        "finalizingPolicy": "WaitResume" if finalizing else "Immediate",
    }
    if batch_partition is not None:
        plan["batchPartition"] = batch_partition
    if workload.rollout_id:
        plan["rolloutID"] = workload.rollout_id
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
        and b.batch_state == "Ready"
        and b.current_batch + 1 >= step_index
    )


def _release_all(rollout: Mapping[str, Any], step: Mapping[str, Any], workload: WorkloadInfo) -> bool:
    """Partition style and this step releases every pod."""
    if rolling_style(rollout, workload) != "Partition":
        return False
    return real_canary_goal(step.get("replicas", "100%"), workload.replicas) >= workload.replicas


def _had_routing_before(steps: Sequence[Mapping[str, Any]], index: int) -> bool:
    return any(step_has_routing(s) for s in steps[: index - 1])


def _advance_after_actions(
    status: JSON, obs: Observed, changed: Sequence[bool], grace: int, next_state: str, message: str
) -> Decision | None:
    """Shared rule: changed -> restart the grace clock; converged and grace passed -> next state."""
    cs = status["canaryStatus"]
    if any(changed):
        cs["lastUpdateTime"] = fmt_time(obs.now)
        return Decision(status, requeue_after=float(grace) if grace else 0.5)
    waited = seconds_since(cs.get("lastUpdateTime"), obs.now)
    if waited < grace:
        return Decision(status, requeue_after=grace - waited)
    cs["currentStepState"] = next_state
    cs["lastUpdateTime"] = fmt_time(obs.now)
    cs["message"] = message
    return None


def canary_step(
    rollout: Mapping[str, Any], status: JSON, obs: Observed, changed: Sequence[bool] | None
) -> Decision:
    """Run the current step's state; see the module docstring."""
    workload = obs.workload
    assert workload is not None
    cs: JSON = status["canaryStatus"]
    steps = steps_of(rollout)
    total = len(steps)
    index = max(1, min(int(cs.get("currentStepIndex") or 1), total))
    step = steps[index - 1]
    state = cs.get("currentStepState") or c.STEP_UPGRADE
    routings = strategy_of(rollout).get("trafficRoutings") or []
    grace = grace_seconds(rollout)
    where = f"step({index}/{total})"

    if state == c.BEFORE_STEP_UPGRADE:
        actions: list[Action] = []
        if routings and _release_all(rollout, step, workload):
            actions.append(
                Action(
                    ActionKind.RESTORE_STABLE_SERVICE, {"intent": traffic_intent(rollout, status, None, [])}
                )
            )
        elif routings and step_has_routing(step):
            actions.append(
                Action(ActionKind.PIN_STABLE_SERVICE, {"intent": traffic_intent(rollout, status, None, [])})
            )
        if changed is None:
            return Decision(status, tuple(actions), requeue_after=0.5)
        held = _advance_after_actions(
            status,
            obs,
            changed,
            grace if actions else 0,
            c.STEP_UPGRADE,
            f"Rollout is in {where}, and upgrade workload to new version",
        )
        return held or Decision(status, requeue_after=0.0)

    if state == c.STEP_UPGRADE:
        spec = batch_release_spec(rollout, workload, index - 1)
        actions = [Action(ActionKind.ENSURE_BATCH_RELEASE, {"spec": spec})]
        if changed is None:
            return Decision(status, tuple(actions), requeue_after=BATCH_RECHECK)
        cs["canaryReplicas"] = obs.batch.updated_replicas
        cs["canaryReadyReplicas"] = obs.batch.updated_ready_replicas
        cs["message"] = f"Rollout is in {where}, and upgrade workload to new version"
        if any(changed) or not batch_ready_for(spec, obs, index):
            return Decision(status, requeue_after=BATCH_RECHECK)
        cs["podTemplateHash"] = workload.pod_template_hash
        cs["currentStepState"] = c.STEP_TRAFFIC_ROUTING
        cs["lastUpdateTime"] = fmt_time(obs.now)
        event = Event("Normal", "StepUpgrade", f"upgrade {where}: {cs['canaryReplicas']} canary pods ready")
        return Decision(status, requeue_after=0.0, events=(event,))

    if state == c.STEP_TRAFFIC_ROUTING:
        actions = []
        if routings and step_has_routing(step) and not _release_all(rollout, step, workload):
            intent = traffic_intent(rollout, status, step_weight(step), step.get("matches") or [])
            actions = [
                Action(ActionKind.ENSURE_CANARY_SERVICE, {"intent": intent}),
                Action(ActionKind.PIN_STABLE_SERVICE, {"intent": intent}),
                Action(ActionKind.ENSURE_ROUTES, {"intent": intent}),
            ]
        elif routings and not step_has_routing(step) and _had_routing_before(steps, index):
            actions = [
                Action(ActionKind.RESTORE_ROUTES, {"intent": traffic_intent(rollout, status, None, [])})
            ]
        if changed is None:
            return Decision(status, tuple(actions), requeue_after=float(grace) if actions else 0.0)
        held = _advance_after_actions(
            status,
            obs,
            changed,
            grace if actions else 0,
            c.STEP_METRICS_ANALYSIS,
            f"Rollout is in {where}, and doing metrics analysis",
        )
        if held is not None:
            cs["message"] = f"Rollout is in {where}, and doing trafficRouting"
            return held
        return Decision(status, requeue_after=0.0)

    if state == c.STEP_METRICS_ANALYSIS:
        if changed is None:
            return Decision(status)
        cs["currentStepState"] = c.STEP_PAUSED
        cs["lastUpdateTime"] = fmt_time(obs.now)
        return canary_step(rollout, status, obs, [])  # StepPaused has no actions: evaluate it now

    if state == c.STEP_PAUSED:
        if changed is None:
            return Decision(status)
        duration = (step.get("pause") or {}).get("duration")
        if index == total and step.get("replicas", "100%") == "100%":
            cs["currentStepState"] = c.STEP_READY
            return Decision(status, requeue_after=0.0)
        if duration is None:
            cs["message"] = f"Rollout is in {where}, and you need manually confirm to enter the next step"
            return Decision(status)
        waited = seconds_since(cs.get("lastUpdateTime"), obs.now)
        if waited < int(duration):
            cs["message"] = (
                f"Rollout is in {where}, and wait duration({int(duration)} seconds) to enter the next step"
            )
            return Decision(status, requeue_after=int(duration) - waited)
        cs["currentStepState"] = c.STEP_READY
        cs["lastUpdateTime"] = fmt_time(obs.now)
        return Decision(status, requeue_after=0.0)

    if state == c.STEP_READY:
        if changed is None:
            return Decision(status)
        if index < total:
            nxt = index + 1
            cs["currentStepIndex"] = nxt
            cs["nextStepIndex"] = nxt + 1 if nxt < total else -1
            before = bool(routings) and (
                step_has_routing(steps[nxt - 1]) or _release_all(rollout, steps[nxt - 1], workload)
            )
            cs["currentStepState"] = c.BEFORE_STEP_UPGRADE if before else c.STEP_UPGRADE
            cs["lastUpdateTime"] = fmt_time(obs.now)
            cs["message"] = f"Rollout is in step({nxt}/{total}), and upgrade workload to new version"
            return Decision(
                status,
                requeue_after=0.0,
                events=(Event("Normal", "StepReady", f"enter step({nxt}/{total})"),),
            )
        cs["currentStepState"] = c.STEP_COMPLETED
        cs["message"] = "Rollout progressing has been completed"
        cs["lastUpdateTime"] = fmt_time(obs.now)
        return Decision(status, requeue_after=0.0)

    return Decision(status)
