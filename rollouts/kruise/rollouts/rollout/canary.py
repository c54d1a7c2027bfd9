"""One canary step at a time (pure): Kruise Rollouts' ``runCanary``.

States of ``status.canaryStatus.currentStepState`` and what each does:

- ``BeforeStepUpgrade``: on a step without traffic (under a Rollout with traffic
  routing) tear the canary routing of earlier steps down first (``FinalisingTrafficRouting``:
  stable Service selector, routes, canary Service, one at a time with the grace period);
  before the first step that routes traffic, pin the stable Service to the stable revision
  before any pod moves (so A/B traffic never reaches new pods through the stable Service);
  in partition style on a step that releases every pod, restore the stable Service instead
  (ingress-nginx#9635) and skip this step's traffic routing;
- ``StepUpgrade``: ensure the BatchRelease with ``batchPartition = step - 1`` and wait
  until it reports the batch Ready for this plan;
- ``StepTrafficRouting``: canary Service, stable pin (unless
  ``disableGenerateCanaryService``), routes with the step's ``requestHeaderModifier``;
  advance once converged and ``gracePeriodSeconds`` passed (a jump can land here on a step
  without traffic: then it tears down as above);
- ``StepMetricsAnalysis``: pass-through until metric analysis lands;
- ``StepPaused``: timed (``pause.duration`` seconds from entering the state) or manual
  (``kubectl kruise rollout approve`` sets ``StepReady``); the last step at ``100%``
  continues by itself (not in blue-green, whose last step waits for approval too);
- ``StepReady``: next step, or ``Completed``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from kruise.rollouts.api.common import BatchReleaseBatchState, CanaryStepState, FinalisingStepType
from kruise.rollouts.release import constants as c
from kruise.rollouts.release.batchplan import planned_canary
from kruise.rollouts.release.constants import POD_TEMPLATE_HASH_LABEL
from kruise.rollouts.release.hashing import release_plan_hash
from kruise.rollouts.release.timefmt import fmt_time, seconds_since
from kruise.rollouts.release.views import CanaryStatusView, RolloutStatusView
from kruise.rollouts.rollout.analysis_gate import (
    FAILED_PHASES,
    INCONCLUSIVE,
    SUCCESSFUL,
    run_request,
    step_analysis,
)
from kruise.rollouts.rollout.model import JSON, Action, ActionKind, Decision, Event, Observed
from kruise.rollouts.rollout.rolloutid import batch_release_annotations
from kruise.rollouts.rollout.steps import is_blue_green, step_has_routing, step_weight, steps_of, strategy_of
from kruise.rollouts.workloads.info import WorkloadInfo

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


def _release_all(step: Mapping[str, Any], workload: WorkloadInfo) -> bool:
    """Partition style and this step releases every pod (a batch's real share reaches every pod
    exactly when its planned share does, whatever the kind's partition rounding)."""
    if workload.style != "Partition":
        return False
    return planned_canary(step.get("replicas", "100%"), workload.replicas) >= workload.replicas


def _services_managed(rollout: Mapping[str, Any]) -> bool:
    """Whether the Rollout pins the stable Service and keeps a canary one (not with
    ``disableGenerateCanaryService``, where the canary Service *is* the stable one)."""
    return not strategy_of(rollout).get("disableGenerateCanaryService")


TEARDOWN = (
    FinalisingStepType.RESTORE_STABLE_SERVICE,
    FinalisingStepType.ROUTE_TRAFFIC_TO_STABLE,
    FinalisingStepType.REMOVE_CANARY_SERVICE,
)
_TEARDOWN_ACTIONS = {
    FinalisingStepType.RESTORE_STABLE_SERVICE: ActionKind.RESTORE_STABLE_SERVICE,
    FinalisingStepType.ROUTE_TRAFFIC_TO_STABLE: ActionKind.RESTORE_ROUTES,
    FinalisingStepType.REMOVE_CANARY_SERVICE: ActionKind.DELETE_CANARY_SERVICE,
}


def needs_teardown(rollout: Mapping[str, Any], step: Mapping[str, Any]) -> bool:
    """A step without traffic under a Rollout with traffic routing."""
    return bool(strategy_of(rollout).get("trafficRoutings")) and not step_has_routing(step)


def _teardown(
    rollout: Mapping[str, Any],
    status: RolloutStatusView,
    obs: Observed,
    changed: Sequence[bool] | None,
    next_state: str,
    message: str,
) -> Decision | None:
    """``FinalisingTrafficRouting`` before a step without traffic: restore the stable Service,
    route everything back to it, remove the canary Service; after each that changed something
    wait ``gracePeriodSeconds``. The actions run sequentially (:attr:`Decision.sequential`) and
    the one that changed something is remembered in ``finalisingStep``, so the wait survives a
    restart. None once everything was already in place (the state moved to ``next_state``)."""
    cs: CanaryStatusView = status["canaryStatus"]
    cursor = cs.get("finalisingStep") if cs.get("finalisingStep") in TEARDOWN else ""
    start = TEARDOWN.index(cursor) if cursor else 0
    grace = grace_seconds(rollout)
    waited = seconds_since(cs.get("lastUpdateTime"), obs.now)
    if cursor and waited < grace and not changed:  # the last change still settles
        return Decision(status, requeue_after=grace - waited)
    if changed is None:
        intent = {"intent": traffic_intent(rollout, status, obs, None, [])}
        actions = tuple(Action(_TEARDOWN_ACTIONS[s], intent) for s in TEARDOWN[start:])
        return Decision(status, actions, requeue_after=0.5, sequential=True)
    for offset, did in enumerate(changed):
        if did:
            cs["finalisingStep"] = TEARDOWN[start + offset]
            cs["lastUpdateTime"] = fmt_time(obs.now)
            return Decision(status, requeue_after=float(grace) if grace else 0.5)
    cs["finalisingStep"] = ""
    cs["currentStepState"] = next_state
    cs["lastUpdateTime"] = fmt_time(obs.now)
    cs["message"] = message
    return None


def _advance_after_actions(
    status: RolloutStatusView,
    obs: Observed,
    changed: Sequence[bool],
    grace: int,
    next_state: str,
    message: str,
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
    rollout: Mapping[str, Any], status: RolloutStatusView, obs: Observed, changed: Sequence[bool] | None
) -> Decision:
    """Run the current step's state; see the module docstring."""
    workload = obs.workload
    assert workload is not None
    cs: CanaryStatusView = status["canaryStatus"]
    steps = steps_of(rollout)
    total = len(steps)
    index = max(1, min(int(cs.get("currentStepIndex") or 1), total))
    step = steps[index - 1]
    state = cs.get("currentStepState") or CanaryStepState.STEP_UPGRADE
    routings = strategy_of(rollout).get("trafficRoutings") or []
    grace = grace_seconds(rollout)
    where = f"step({index}/{total})"

    if state == CanaryStepState.BEFORE_STEP_UPGRADE:
        if needs_teardown(rollout, step):
            upgrade = f"Rollout is in {where}, and upgrade workload to new version"
            return _teardown(
                rollout, status, obs, changed, CanaryStepState.STEP_UPGRADE, upgrade
            ) or Decision(status, requeue_after=0.0)
        actions: list[Action] = []
        if routings and _release_all(step, workload):
            actions.append(
                Action(
                    ActionKind.RESTORE_STABLE_SERVICE,
                    {"intent": traffic_intent(rollout, status, obs, None, [])},
                )
            )
        elif routings and step_has_routing(step) and index == 1 and _services_managed(rollout):
            # before the first batch, so that A/B traffic never reaches new pods via the stable Service
            actions.append(
                Action(
                    ActionKind.PIN_STABLE_SERVICE, {"intent": traffic_intent(rollout, status, obs, None, [])}
                )
            )
        if changed is None:
            return Decision(status, tuple(actions), requeue_after=0.5)
        held = _advance_after_actions(
            status,
            obs,
            changed,
            grace if actions else 0,
            CanaryStepState.STEP_UPGRADE,
            f"Rollout is in {where}, and upgrade workload to new version",
        )
        return held or Decision(status, requeue_after=0.0)

    if state == CanaryStepState.STEP_UPGRADE:
        spec = batch_release_spec(rollout, workload, index - 1)
        annotations = batch_release_annotations(rollout, workload)
        actions = [Action(ActionKind.ENSURE_BATCH_RELEASE, {"spec": spec, "annotations": annotations})]
        if changed is None:
            return Decision(status, tuple(actions), requeue_after=BATCH_RECHECK)
        cs["canaryReplicas"] = obs.batch.updated_replicas
        cs["canaryReadyReplicas"] = obs.batch.updated_ready_replicas
        cs["message"] = f"Rollout is in {where}, and upgrade workload to new version"
        if any(changed) or not batch_ready_for(spec, obs, index):
            return Decision(status, requeue_after=BATCH_RECHECK)
        cs["podTemplateHash"] = workload.pod_template_hash
        cs["currentStepState"] = CanaryStepState.STEP_TRAFFIC_ROUTING
        cs["lastUpdateTime"] = fmt_time(obs.now)
        event = Event("Normal", "StepUpgrade", f"upgrade {where}: {cs['canaryReplicas']} canary pods ready")
        return Decision(status, requeue_after=0.0, events=(event,))

    if state == CanaryStepState.STEP_TRAFFIC_ROUTING:
        if needs_teardown(rollout, step):  # e.g. jumped here from a step with traffic
            analysis = f"Rollout is in {where}, and doing metrics analysis"
            return _teardown(
                rollout, status, obs, changed, CanaryStepState.STEP_METRICS_ANALYSIS, analysis
            ) or Decision(status, requeue_after=0.0)
        actions = []
        if routings and step_has_routing(step) and not _release_all(step, workload):
            intent = traffic_intent(
                rollout,
                status,
                obs,
                step_weight(step),
                step.get("matches") or [],
                step.get("requestHeaderModifier"),
            )
            actions = [Action(ActionKind.ENSURE_CANARY_SERVICE, {"intent": intent})]
            if _services_managed(rollout):
                actions.append(Action(ActionKind.PIN_STABLE_SERVICE, {"intent": intent}))
            actions.append(Action(ActionKind.ENSURE_ROUTES, {"intent": intent}))
        if changed is None:
            return Decision(status, tuple(actions), requeue_after=float(grace) if actions else 0.0)
        held = _advance_after_actions(
            status,
            obs,
            changed,
            grace if actions else 0,
            CanaryStepState.STEP_METRICS_ANALYSIS,
            f"Rollout is in {where}, and doing metrics analysis",
        )
        if held is not None:
            cs["message"] = f"Rollout is in {where}, and doing trafficRouting"
            return held
        return Decision(status, requeue_after=0.0)

    if state == CanaryStepState.STEP_METRICS_ANALYSIS:
        gate = step_analysis(rollout, index)
        if gate is not None:
            request = run_request(rollout, status, gate, f"step{index}")
            if changed is None:
                return Decision(status, (Action(ActionKind.ENSURE_ANALYSIS_RUN, request),), requeue_after=2.0)
            phase = obs.analysis.get(request["name"], "")
            if phase in FAILED_PHASES:
                return Decision(status, requeue_after=0.0)  # machine.py aborts the release on this run
            if phase not in (SUCCESSFUL, INCONCLUSIVE):
                run = f"{request['name']}: {phase or 'Pending'}"
                cs["message"] = f"Rollout is in {where}, and doing metrics analysis ({run})"
                return Decision(status, requeue_after=2.0)
        elif changed is None:
            return Decision(status)
        cs["currentStepState"] = CanaryStepState.STEP_PAUSED
        cs["lastUpdateTime"] = fmt_time(obs.now)
        return canary_step(rollout, status, obs, [])  # StepPaused has no actions: evaluate it now

    if state == CanaryStepState.STEP_PAUSED:
        if changed is None:
            return Decision(status)
        duration = (step.get("pause") or {}).get("duration")
        gate = step_analysis(rollout, index)
        inconclusive = gate is not None and (
            obs.analysis.get(run_request(rollout, status, gate, f"step{index}")["name"]) == INCONCLUSIVE
        )
        if inconclusive:
            cs["message"] = (
                f"Rollout is in {where}, analysis was inconclusive: approve to enter the next step"
            )
            return Decision(status)
        if index == total and step.get("replicas", "100%") == "100%" and not is_blue_green(rollout):
            cs["currentStepState"] = CanaryStepState.STEP_READY
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
        cs["currentStepState"] = CanaryStepState.STEP_READY
        cs["lastUpdateTime"] = fmt_time(obs.now)
        return Decision(status, requeue_after=0.0)

    if state == CanaryStepState.STEP_READY:
        if changed is None:
            return Decision(status)
        if index < total:
            nxt = index + 1
            cs["currentStepIndex"] = nxt
            cs["nextStepIndex"] = nxt + 1 if nxt < total else -1
            cs["currentStepState"] = CanaryStepState.BEFORE_STEP_UPGRADE
            cs["lastUpdateTime"] = fmt_time(obs.now)
            cs["message"] = f"Rollout is in step({nxt}/{total}), and upgrade workload to new version"
            return Decision(
                status,
                requeue_after=0.0,
                events=(Event("Normal", "StepReady", f"enter step({nxt}/{total})"),),
            )
        cs["currentStepState"] = CanaryStepState.COMPLETED
        cs["message"] = "Rollout progressing has been completed"
        cs["lastUpdateTime"] = fmt_time(obs.now)
        return Decision(status, requeue_after=0.0)

    return Decision(status)
