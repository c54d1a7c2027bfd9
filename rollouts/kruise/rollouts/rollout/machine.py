"""The Rollout state machine (pure): ``decide(rollout, observed, changed) -> Decision``.

Mirrors Kruise Rollouts v1beta1 (``pkg/controller/rollout``): the phase machine of
``calculateRolloutStatus`` (Initial -> Healthy -> Progressing -> Healthy, Terminating,
Disabling/Disabled), the Progressing reasons (Initializing -> InRolling ->
Finalising -> Completed; Cancelling on rollback; Paused), the per-step states of
``runCanary`` (BeforeStepUpgrade -> StepUpgrade -> StepTrafficRouting ->
StepMetricsAnalysis -> StepPaused -> StepReady -> next step / Completed) and the
finalisation orders of ``nextCanaryTask``.

The controller calls ``decide`` twice per reconcile: once with ``changed=None`` to
learn the actions of the current state, and once with what each action reported
(``changed[i]`` True when it had to modify the world). A state advances only when
its actions changed nothing and, for traffic steps, ``gracePeriodSeconds`` passed
since the last change. Everything the machine remembers is in ``status``, so a
restarted manager decides the same from the objects alone.
"""

from __future__ import annotations

import copy
import datetime
from collections.abc import Mapping, Sequence
from typing import Any

from kruise.rollouts.rollout import constants as c
from kruise.rollouts.rollout.canary import canary_step
from kruise.rollouts.rollout.conditions import set_condition
from kruise.rollouts.rollout.finalise import finalise
from kruise.rollouts.rollout.hashing import rollout_hash
from kruise.rollouts.rollout.model import JSON, Decision, Event, Observed
from kruise.rollouts.rollout.steps import steps_of, strategy_of
from kruise.rollouts.rollout.timefmt import fmt_time, parse_time


def decide(rollout: Mapping[str, Any], obs: Observed, changed: Sequence[bool] | None = None) -> Decision:
    """Decide for ``rollout`` given ``obs`` (and, on the second call, the actions' outcomes)."""
    status: JSON = copy.deepcopy(dict(rollout.get("status") or {}))
    status["observedGeneration"] = int((rollout.get("metadata") or {}).get("generation") or 0)
    status.setdefault("currentStepIndex", 0)  # required by the CRD schema, as upstream
    status.setdefault("currentStepState", "")
    spec = rollout.get("spec") or {}
    phase = status.get("phase") or ""
    workload = obs.workload
    now = obs.now

    if obs.deleting:
        if phase != c.PHASE_TERMINATING:
            status["phase"] = c.PHASE_TERMINATING
            set_condition(
                status, c.COND_TERMINATING, "True", c.REASON_IN_TERMINATING, "Rollout is in terminating", now
            )
            return Decision(status, requeue_after=0.0)
        return _finalising(rollout, status, obs, changed, reason="RolloutDeleting", terminating=True)

    if workload is None:
        status["phase"] = c.PHASE_INITIAL
        status["message"] = "Workload Not Found"
        return Decision(status, requeue_after=None)
    if not workload.status_consistent:
        return Decision(dict(rollout.get("status") or {}), requeue_after=1.0)

    if spec.get("disabled"):
        if phase == c.PHASE_PROGRESSING or phase == c.PHASE_DISABLING:
            status["phase"] = c.PHASE_DISABLING
            return _finalising(rollout, status, obs, changed, reason="RolloutDisabled", disabling=True)
        if phase != c.PHASE_DISABLED:
            status["phase"] = c.PHASE_DISABLED
            status["message"] = "Rollout is disabled"
        return Decision(status)
    if phase == c.PHASE_DISABLED:
        phase = status["phase"] = c.PHASE_INITIAL

    if phase in ("", c.PHASE_INITIAL):
        status["phase"] = c.PHASE_HEALTHY
        status["message"] = "rollout is healthy"
        _synthesise_completed(rollout, status, workload, now)
        phase = c.PHASE_HEALTHY
        if not workload.in_progressing:
            return Decision(status)

    if phase == c.PHASE_HEALTHY:
        if not workload.in_progressing:
            return Decision(status)
        status["phase"] = c.PHASE_PROGRESSING
        status["message"] = "Rollout is in Progressing"
        set_condition(
            status, c.COND_PROGRESSING, "True", c.REASON_INITIALIZING, "Rollout is in Progressing", now
        )
        _drop_condition(status, c.COND_SUCCEEDED)
        return Decision(
            status, requeue_after=0.0, events=(Event("Normal", "Progressing", "upgrade workload"),)
        )

    if phase == c.PHASE_PROGRESSING:
        return _progressing(rollout, status, obs, changed)
    return Decision(status)


# ---------------------------------------------------------------------- progressing
def _progressing(
    rollout: Mapping[str, Any], status: JSON, obs: Observed, changed: Sequence[bool] | None
) -> Decision:
    assert obs.workload is not None
    workload = obs.workload
    now = obs.now
    reason = _condition_reason(status, c.COND_PROGRESSING)
    strategy = (rollout.get("spec") or {}).get("strategy") or {}
    steps = steps_of(rollout)

    if reason == c.REASON_INITIALIZING:
        status["canaryStatus"] = {
            "observedWorkloadGeneration": workload.generation,
            "rolloutHash": rollout_hash(rollout),
            "observedRolloutID": workload.rollout_id,
            "stableRevision": workload.stable_revision,
            "canaryRevision": workload.canary_revision,
            "podTemplateHash": "",
            "currentStepIndex": 1,
            "nextStepIndex": 2 if len(steps) > 1 else -1,
            "currentStepState": c.STEP_UPGRADE,
            "finalisingStep": "",
            "canaryReplicas": 0,
            "canaryReadyReplicas": 0,
            "message": f"Rollout is in step(1/{len(steps)}), and upgrade workload to new version",
            "lastUpdateTime": fmt_time(now),
        }
        if steps and _needs_before_upgrade(rollout, steps[0]):
            status["canaryStatus"]["currentStepState"] = c.BEFORE_STEP_UPGRADE
        set_condition(
            status, c.COND_PROGRESSING, "True", c.REASON_IN_ROLLING, "Rollout is in Progressing", now
        )
        _mirror(status)
        return Decision(status, requeue_after=0.0)

    canary_status: JSON = status.setdefault("canaryStatus", {})
    if reason in (c.REASON_IN_ROLLING, c.REASON_PAUSED):
        if workload.in_rollback:
            set_condition(
                status, c.COND_PROGRESSING, "True", c.REASON_CANCELLING, "Rollout is in cancelling", now
            )
            canary_status["finalisingStep"] = ""
            return Decision(
                status, requeue_after=0.0, events=(Event("Normal", "Cancelling", "workload rolled back"),)
            )
        if strategy.get("paused"):
            if reason != c.REASON_PAUSED:
                set_condition(
                    status, c.COND_PROGRESSING, "True", c.REASON_PAUSED, "Rollout has been paused", now
                )
                status["message"] = "Rollout has been paused, you can resume it by kube-cli"
            return Decision(status)
        if reason == c.REASON_PAUSED:
            set_condition(
                status, c.COND_PROGRESSING, "True", c.REASON_IN_ROLLING, "Rollout is in Progressing", now
            )
        if workload.canary_revision and canary_status.get("canaryRevision") not in (
            "",
            None,
            workload.canary_revision,
        ):
            return _continuous_release(rollout, status, obs, changed)
        current_hash = rollout_hash(rollout)
        if canary_status.get("rolloutHash") != current_hash:
            _plan_changed(rollout, status, obs)
        _maybe_jump(status, len(steps), now)
        decision = canary_step(rollout, status, obs, changed)
        if decision.status.get("canaryStatus", {}).get("currentStepState") == c.STEP_COMPLETED:
            set_condition(
                decision.status,
                c.COND_PROGRESSING,
                "True",
                c.REASON_FINALISING,
                "Rollout is in finalising",
                now,
            )
            decision.status["canaryStatus"]["finalisingStep"] = ""
            _mirror(decision.status)
            return Decision(decision.status, decision.actions, 0.0, decision.events)
        _mirror(decision.status)
        return decision
    if reason == c.REASON_FINALISING:
        return _finalising(rollout, status, obs, changed, reason="Success")
    if reason == c.REASON_CANCELLING:
        return _finalising(rollout, status, obs, changed, reason="Rollback")
    return Decision(status)


def _finalising(
    rollout: Mapping[str, Any],
    status: JSON,
    obs: Observed,
    changed: Sequence[bool] | None,
    *,
    reason: str,
    terminating: bool = False,
    disabling: bool = False,
) -> Decision:
    now = obs.now
    decision = finalise(rollout, status, obs, changed, rollback=reason == "Rollback")
    st = decision.status
    if st.get("canaryStatus", {}).get("finalisingStep") != c.FIN_DONE:
        _mirror(st)
        return decision
    if terminating:
        set_condition(st, c.COND_TERMINATING, "False", c.REASON_COMPLETED, "Rollout is terminated", now)
        return Decision(st, remove_finalizer=True)
    if disabling:
        st["phase"] = c.PHASE_DISABLED
        st["message"] = "Rollout is disabled"
        st.pop("canaryStatus", None)
        return Decision(st)
    succeeded = reason == "Success"
    set_condition(
        st, c.COND_PROGRESSING, "False", c.REASON_COMPLETED, "Rollout progressing has been completed", now
    )
    set_condition(
        st,
        c.COND_SUCCEEDED,
        "True" if succeeded else "False",
        c.REASON_COMPLETED,
        "Rollout has been completed" if succeeded else "Rollout has been cancelled",
        now,
    )
    st["phase"] = c.PHASE_HEALTHY
    st["message"] = "Rollout progressing has been completed" if succeeded else "Rollout has been rolled back"
    cs = st.setdefault("canaryStatus", {})
    cs["currentStepState"] = c.STEP_COMPLETED
    cs["message"] = st["message"]
    if not succeeded:
        workload = obs.workload
        if workload is not None:
            cs["canaryRevision"] = workload.canary_revision
    _mirror(st)
    event = Event("Normal", "Succeeded" if succeeded else "Cancelled", st["message"])
    return Decision(st, events=(event,))


def _continuous_release(
    rollout: Mapping[str, Any], status: JSON, obs: Observed, changed: Sequence[bool] | None
) -> Decision:
    """v1 -> v2 -> v3: tear down canary routing and the BatchRelease, then start over.

    The stable Service selector is kept pinned (upstream keeps it).
    """
    from kruise.rollouts.rollout.canary import traffic_intent
    from kruise.rollouts.rollout.model import Action, ActionKind

    routings = strategy_of(rollout).get("trafficRoutings") or []
    actions = []
    if routings:
        actions.append(
            Action(ActionKind.RESTORE_ROUTES, {"intent": traffic_intent(rollout, status, None, [])})
        )
    actions.append(Action(ActionKind.DELETE_BATCH_RELEASE))
    if routings:
        actions.append(
            Action(ActionKind.DELETE_CANARY_SERVICE, {"intent": traffic_intent(rollout, status, None, [])})
        )
    if changed is None:
        return Decision(status, tuple(actions), requeue_after=1.0)
    if any(changed) or obs.batch.exists:
        return Decision(status, (), requeue_after=1.0)
    status.pop("canaryStatus", None)
    set_condition(
        status, c.COND_PROGRESSING, "True", c.REASON_INITIALIZING, "Rollout is in Progressing", obs.now
    )
    status["message"] = "Rollout is in Progressing"
    return Decision(
        status, requeue_after=0.0, events=(Event("Normal", "ContinuousRelease", "restart release"),)
    )


def _plan_changed(rollout: Mapping[str, Any], status: JSON, obs: Observed) -> None:
    """Steps edited mid-rollout: adopt the new hash; the current step index is kept."""
    cs = status["canaryStatus"]
    cs["rolloutHash"] = rollout_hash(rollout)
    steps = steps_of(rollout)
    index = min(int(cs.get("currentStepIndex") or 1), max(len(steps), 1))
    cs["currentStepIndex"] = index
    cs["nextStepIndex"] = index + 1 if index < len(steps) else -1
    cs["currentStepState"] = c.STEP_UPGRADE
    cs["lastUpdateTime"] = fmt_time(obs.now)


def _maybe_jump(status: JSON, step_count: int, now: datetime.datetime) -> None:
    """A user patched ``nextStepIndex`` to another step: jump there (``doStepJump``)."""
    cs = status["canaryStatus"]
    current = int(cs.get("currentStepIndex") or 1)
    nxt = int(cs.get("nextStepIndex") or 0)
    expected = current + 1 if current < step_count else -1
    if nxt == expected or nxt == 0:
        return
    if nxt < 1 or nxt > step_count:
        cs["nextStepIndex"] = expected
        return
    if cs.get("currentStepState") not in (c.STEP_PAUSED, c.STEP_READY, c.STEP_COMPLETED):
        return
    cs["currentStepIndex"] = nxt
    cs["nextStepIndex"] = nxt + 1 if nxt < step_count else -1
    cs["currentStepState"] = c.STEP_UPGRADE
    cs["lastUpdateTime"] = fmt_time(now)


def _needs_before_upgrade(rollout: Mapping[str, Any], step: Mapping[str, Any]) -> bool:
    from kruise.rollouts.rollout.steps import step_has_routing

    return bool(strategy_of(rollout).get("trafficRoutings")) and step_has_routing(step)


def _synthesise_completed(
    rollout: Mapping[str, Any], status: JSON, workload: Any, now: datetime.datetime
) -> None:
    """A Rollout created against a settled workload reports Completed at the last step."""
    if workload.in_progressing or status.get("canaryStatus"):
        return
    steps = steps_of(rollout)
    status["canaryStatus"] = {
        "observedWorkloadGeneration": workload.generation,
        "rolloutHash": rollout_hash(rollout),
        "observedRolloutID": workload.rollout_id,
        "stableRevision": workload.stable_revision,
        "canaryRevision": workload.canary_revision,
        "podTemplateHash": workload.pod_template_hash,
        "currentStepIndex": len(steps),
        "nextStepIndex": -1,
        "currentStepState": c.STEP_COMPLETED,
        "finalisingStep": "",
        "canaryReplicas": 0,
        "canaryReadyReplicas": 0,
        "lastUpdateTime": fmt_time(now),
    }
    _mirror(status)


def _mirror(status: JSON) -> None:
    """Top-level ``currentStepIndex``/``currentStepState`` mirror the sub-status (printer columns)."""
    cs = status.get("canaryStatus") or {}
    if cs:
        status["currentStepIndex"] = cs.get("currentStepIndex", 0)
        status["currentStepState"] = cs.get("currentStepState", "")
        if cs.get("message"):
            status["message"] = cs["message"]


def _condition_reason(status: Mapping[str, Any], ctype: str) -> str:
    for cond in status.get("conditions") or []:
        if cond.get("type") == ctype:
            return str(cond.get("reason") or "")
    return ""


def _drop_condition(status: JSON, ctype: str) -> None:
    status["conditions"] = [x for x in status.get("conditions") or [] if x.get("type") != ctype]


__all__ = ["decide", "parse_time"]
