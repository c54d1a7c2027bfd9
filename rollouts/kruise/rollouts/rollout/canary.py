"""One canary step at a time (pure): Kruise Rollouts' ``runCanary``, one function per step state.

:data:`STEP_STATES` maps ``status.canaryStatus.currentStepState`` to its handler. On the first call
of a round a handler returns its state's actions; on the second it reads their outcomes (matched
by action, :class:`~kruise.rollouts.rollout.model.Outcomes`) and advances or waits:

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
- ``StepMetricsAnalysis``: the step's AnalysisRun gate (kruise; upstream passes through);
- ``StepPaused``: timed (``pause.duration`` seconds from entering the state) or manual
  (``kubectl kruise rollout approve`` sets ``StepReady``); the last step at ``100%``
  continues by itself (not in blue-green, whose last step waits for approval too);
- ``StepReady``: next step, or ``Completed``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from kruise.rollouts.api.common import CanaryStepState, FinalisingStepType
from kruise.rollouts.release.timefmt import fmt_time, seconds_since
from kruise.rollouts.rollout.analysis_gate import (
    FAILED_PHASES,
    INCONCLUSIVE,
    SUCCESSFUL,
    run_request,
    step_analysis,
)
from kruise.rollouts.rollout.model import Action, ActionKind, Decision, Event, Outcomes, Round
from kruise.rollouts.rollout.requests import (
    batch_ready_for,
    batch_release_spec,
    grace_seconds,
    release_all,
    traffic_intent,
)
from kruise.rollouts.rollout.rolloutid import batch_release_annotations
from kruise.rollouts.rollout.steps import is_blue_green, step_has_routing, step_weight, steps_of, strategy_of

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


@dataclass(frozen=True)
class Step:
    """The current step as its state handlers see it: 1-based ``index`` of ``total``, its
    ``spec``, ``where`` (``step(i/n)`` for messages), whether the Rollout routes traffic, and the
    grace period after a traffic change (seconds)."""

    index: int
    total: int
    spec: Mapping[str, Any]
    where: str
    routed: bool
    grace: int

    @property
    def upgrading(self) -> str:
        return f"Rollout is in {self.where}, and upgrade workload to new version"


def _services_managed(rollout: Mapping[str, Any]) -> bool:
    """Whether the Rollout pins the stable Service and keeps a canary one (not with
    ``disableGenerateCanaryService``, where the canary Service *is* the stable one)."""
    return not strategy_of(rollout).get("disableGenerateCanaryService")


def needs_teardown(rollout: Mapping[str, Any], step: Mapping[str, Any]) -> bool:
    """A step without traffic under a Rollout with traffic routing."""
    return bool(strategy_of(rollout).get("trafficRoutings")) and not step_has_routing(step)


def _teardown(rnd: Round, step: Step, next_state: str, message: str) -> Decision:
    """``FinalisingTrafficRouting`` before a step without traffic: restore the stable Service,
    route everything back to it, remove the canary Service; after each that changed something
    wait ``gracePeriodSeconds``. The actions run sequentially (:attr:`Decision.sequential`) and
    the one that changed something is remembered in ``finalisingStep``, so the wait survives a
    restart; once everything was already in place the state moves to ``next_state``."""
    cs = rnd.cs
    cursor = cs.get("finalisingStep", "")
    start = TEARDOWN.index(FinalisingStepType(cursor)) if cursor in TEARDOWN else 0
    waited = seconds_since(cs.get("lastUpdateTime"), rnd.now)
    intent = {"intent": traffic_intent(rnd.rollout, rnd.status, rnd.obs, None, [])}
    actions = [(s, Action(_TEARDOWN_ACTIONS[s], intent)) for s in TEARDOWN[start:]]
    if cursor in TEARDOWN and waited < step.grace:  # the last change still settles
        return Decision(rnd.status, requeue_after=step.grace - waited)
    if rnd.outcomes is None:
        return Decision(rnd.status, tuple(a for _, a in actions), requeue_after=0.5, sequential=True)
    for finalising_step, action in actions:
        if rnd.outcomes.changed(action):
            cs["finalisingStep"] = finalising_step
            cs["lastUpdateTime"] = fmt_time(rnd.now)
            return Decision(rnd.status, requeue_after=float(step.grace) if step.grace else 0.5)
    cs["finalisingStep"] = ""
    _enter(rnd, next_state, message)
    return Decision(rnd.status, requeue_after=0.0)


def _enter(rnd: Round, state: str, message: str | None = None) -> None:
    rnd.cs["currentStepState"] = state
    rnd.cs["lastUpdateTime"] = fmt_time(rnd.now)
    if message is not None:
        rnd.cs["message"] = message


def _converge(
    rnd: Round, actions: Sequence[Action], grace: int, next_state: str, message: str
) -> Decision | None:
    """The shared second-call rule: an action changed something -> restart the grace clock and
    wait; converged and the grace period passed -> enter ``next_state`` (None: go on)."""
    assert rnd.outcomes is not None
    if rnd.outcomes.any_changed(actions):
        rnd.cs["lastUpdateTime"] = fmt_time(rnd.now)
        return Decision(rnd.status, requeue_after=float(grace) if grace else 0.5)
    waited = seconds_since(rnd.cs.get("lastUpdateTime"), rnd.now)
    if waited < grace:
        return Decision(rnd.status, requeue_after=grace - waited)
    _enter(rnd, next_state, message)
    return None


def before_step_upgrade(rnd: Round, step: Step) -> Decision:
    workload = rnd.obs.workload
    assert workload is not None
    if needs_teardown(rnd.rollout, step.spec):
        return _teardown(rnd, step, CanaryStepState.STEP_UPGRADE, step.upgrading)
    intent = {"intent": traffic_intent(rnd.rollout, rnd.status, rnd.obs, None, [])}
    actions: list[Action] = []
    if step.routed and release_all(step.spec, workload):
        actions.append(Action(ActionKind.RESTORE_STABLE_SERVICE, intent))
    elif step.routed and step_has_routing(step.spec) and step.index == 1 and _services_managed(rnd.rollout):
        # before the first batch, so that A/B traffic never reaches new pods via the stable Service
        actions.append(Action(ActionKind.PIN_STABLE_SERVICE, intent))
    if rnd.outcomes is None:
        return Decision(rnd.status, tuple(actions), requeue_after=0.5)
    grace = step.grace if actions else 0
    held = _converge(rnd, actions, grace, CanaryStepState.STEP_UPGRADE, step.upgrading)
    return held or Decision(rnd.status, requeue_after=0.0)


def step_upgrade(rnd: Round, step: Step) -> Decision:
    workload, batch = rnd.obs.workload, rnd.obs.batch
    assert workload is not None
    spec = batch_release_spec(rnd.rollout, workload, step.index - 1)
    annotations = batch_release_annotations(rnd.rollout, workload)
    ensure = Action(ActionKind.ENSURE_BATCH_RELEASE, {"spec": spec, "annotations": annotations})
    # no timer while the batch is not ready (upstream's runBatchRelease sets no RecheckTime): the
    # BatchRelease's and the workload's watch events wake the Rollout when either changes
    if rnd.outcomes is None:
        return Decision(rnd.status, (ensure,), requeue_after=None)
    cs = rnd.cs
    cs["canaryReplicas"] = batch.updated_replicas
    cs["canaryReadyReplicas"] = batch.updated_ready_replicas
    cs["message"] = step.upgrading
    if rnd.outcomes.changed(ensure) or not batch_ready_for(spec, rnd.obs, step.index):
        return Decision(rnd.status, requeue_after=None)
    cs["podTemplateHash"] = workload.pod_template_hash
    _enter(rnd, CanaryStepState.STEP_TRAFFIC_ROUTING)
    event = Event("Normal", "StepUpgrade", f"upgrade {step.where}: {cs['canaryReplicas']} canary pods ready")
    return Decision(rnd.status, requeue_after=0.0, events=(event,))


def step_traffic_routing(rnd: Round, step: Step) -> Decision:
    workload = rnd.obs.workload
    assert workload is not None
    analysing = f"Rollout is in {step.where}, and doing metrics analysis"
    if needs_teardown(rnd.rollout, step.spec):  # e.g. jumped here from a step with traffic
        return _teardown(rnd, step, CanaryStepState.STEP_METRICS_ANALYSIS, analysing)
    actions: list[Action] = []
    if step.routed and step_has_routing(step.spec) and not release_all(step.spec, workload):
        intent = traffic_intent(
            rnd.rollout,
            rnd.status,
            rnd.obs,
            step_weight(step.spec),
            step.spec.get("matches") or [],
            step.spec.get("requestHeaderModifier"),
        )
        actions.append(Action(ActionKind.ENSURE_CANARY_SERVICE, {"intent": intent}))
        if _services_managed(rnd.rollout):
            actions.append(Action(ActionKind.PIN_STABLE_SERVICE, {"intent": intent}))
        actions.append(Action(ActionKind.ENSURE_ROUTES, {"intent": intent}))
    if rnd.outcomes is None:
        return Decision(rnd.status, tuple(actions), requeue_after=float(step.grace) if actions else 0.0)
    held = _converge(
        rnd, actions, step.grace if actions else 0, CanaryStepState.STEP_METRICS_ANALYSIS, analysing
    )
    if held is not None:
        rnd.cs["message"] = f"Rollout is in {step.where}, and doing trafficRouting"
        return held
    return Decision(rnd.status, requeue_after=0.0)


def step_metrics_analysis(rnd: Round, step: Step) -> Decision:
    gate = step_analysis(rnd.rollout, step.index)
    if gate is not None:
        request = run_request(rnd.rollout, rnd.status, gate, f"step{step.index}")
        if rnd.outcomes is None:
            return Decision(rnd.status, (Action(ActionKind.ENSURE_ANALYSIS_RUN, request),), requeue_after=2.0)
        phase = rnd.obs.analysis.get(request["name"], "")
        if phase in FAILED_PHASES:
            return Decision(rnd.status, requeue_after=0.0)  # the machine aborts the release on this run
        if phase not in (SUCCESSFUL, INCONCLUSIVE):
            run = f"{request['name']}: {phase or 'Pending'}"
            rnd.cs["message"] = f"Rollout is in {step.where}, and doing metrics analysis ({run})"
            return Decision(rnd.status, requeue_after=2.0)
    elif rnd.outcomes is None:
        return Decision(rnd.status)
    _enter(rnd, CanaryStepState.STEP_PAUSED)
    return step_paused(replace(rnd, outcomes=Outcomes()), step)  # no actions: evaluate it now


def step_paused(rnd: Round, step: Step) -> Decision:
    if rnd.outcomes is None:
        return Decision(rnd.status)
    cs, where = rnd.cs, step.where
    duration = (step.spec.get("pause") or {}).get("duration")
    gate = step_analysis(rnd.rollout, step.index)
    if gate is not None:
        run = run_request(rnd.rollout, rnd.status, gate, f"step{step.index}")["name"]
        if rnd.obs.analysis.get(run) == INCONCLUSIVE:
            cs["message"] = (
                f"Rollout is in {where}, analysis was inconclusive: approve to enter the next step"
            )
            return Decision(rnd.status)
    if (
        step.index == step.total
        and step.spec.get("replicas", "100%") == "100%"
        and not is_blue_green(rnd.rollout)
    ):
        cs["currentStepState"] = CanaryStepState.STEP_READY
        return Decision(rnd.status, requeue_after=0.0)
    if duration is None:
        cs["message"] = f"Rollout is in {where}, and you need manually confirm to enter the next step"
        return Decision(rnd.status)
    waited = seconds_since(cs.get("lastUpdateTime"), rnd.now)
    if waited < int(duration):
        cs["message"] = (
            f"Rollout is in {where}, and wait duration({int(duration)} seconds) to enter the next step"
        )
        return Decision(rnd.status, requeue_after=int(duration) - waited)
    _enter(rnd, CanaryStepState.STEP_READY)
    return Decision(rnd.status, requeue_after=0.0)


def step_ready(rnd: Round, step: Step) -> Decision:
    if rnd.outcomes is None:
        return Decision(rnd.status)
    cs = rnd.cs
    if step.index < step.total:
        nxt = step.index + 1
        cs["currentStepIndex"] = nxt
        cs["nextStepIndex"] = nxt + 1 if nxt < step.total else -1
        _enter(
            rnd,
            CanaryStepState.BEFORE_STEP_UPGRADE,
            f"Rollout is in step({nxt}/{step.total}), and upgrade workload to new version",
        )
        event = Event("Normal", "StepReady", f"enter step({nxt}/{step.total})")
        return Decision(rnd.status, requeue_after=0.0, events=(event,))
    _enter(rnd, CanaryStepState.COMPLETED, "Rollout progressing has been completed")
    return Decision(rnd.status, requeue_after=0.0)


STEP_STATES: Mapping[str, Callable[[Round, Step], Decision]] = {
    CanaryStepState.BEFORE_STEP_UPGRADE: before_step_upgrade,
    CanaryStepState.STEP_UPGRADE: step_upgrade,
    CanaryStepState.STEP_TRAFFIC_ROUTING: step_traffic_routing,
    CanaryStepState.STEP_METRICS_ANALYSIS: step_metrics_analysis,
    CanaryStepState.STEP_PAUSED: step_paused,
    CanaryStepState.STEP_READY: step_ready,
}
"""Step state -> its handler (an unknown state, such as ``Completed``, decides nothing)."""


def canary_step(rnd: Round) -> Decision:
    """Run the current step's state (see the module docstring); no state yet means StepUpgrade."""
    steps = steps_of(rnd.rollout)
    total = len(steps)
    index = max(1, min(int(rnd.cs.get("currentStepIndex") or 1), total))
    step = Step(
        index=index,
        total=total,
        spec=steps[index - 1],
        where=f"step({index}/{total})",
        routed=bool(strategy_of(rnd.rollout).get("trafficRoutings")),
        grace=grace_seconds(rnd.rollout),
    )
    handler = STEP_STATES.get(rnd.cs.get("currentStepState") or CanaryStepState.STEP_UPGRADE)
    return handler(rnd, step) if handler is not None else Decision(rnd.status)
