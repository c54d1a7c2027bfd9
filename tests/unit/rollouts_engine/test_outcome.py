"""Where a release stands (one reading for the CLI's exit code and the kstatus conditions).

Each case is a Rollout status as the controller writes it in that phase; kstatus (its
documented algorithm, ``tests.support.kstatus``) and Argo CD's own Rollout health script are
run on it after :func:`with_rollout_kstatus`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from kruise.rollouts.rollout.outcome import CANCELED_MESSAGE, Outcome, release_outcome
from kruise.rollouts.rollout.readiness import with_rollout_kstatus
from kruise.traffic.lua import run_lua
from tests.support.argocd import argocd_health
from tests.support.kstatus import CURRENT, FAILED, IN_PROGRESS, compute

NOW = "2026-01-01T00:00:00Z"
STEPS = [{"replicas": 1, "pause": {}}, {"replicas": "50%", "pause": {"duration": 30}}, {"replicas": "100%"}]


def cond(ctype: str, status: str, reason: str, message: str = "") -> dict[str, str]:
    return {"type": ctype, "status": status, "reason": reason, "message": message}


def rollout(
    phase: str,
    *conditions: dict[str, str],
    step: int = 0,
    state: str = "",
    paused: bool = False,
    observed: int = 3,
) -> dict[str, Any]:
    status: dict[str, Any] = {"observedGeneration": observed, "phase": phase, "conditions": list(conditions)}
    if step or state:
        status["canaryStatus"] = {"currentStepIndex": step, "currentStepState": state}
    return {
        "apiVersion": "rollouts.kruise.io/v1beta1",
        "kind": "Rollout",
        "metadata": {"name": "web", "generation": 3},
        "spec": {"strategy": {"canary": {"steps": STEPS}, "paused": paused}},
        "status": status,
    }


IN_ROLLING = cond("Progressing", "True", "InRolling")


def held(reason: str, step: str = "Held") -> dict[str, Any]:
    """A held abort (rollout/deadline.py): phase Progressing, Cancelling, the template held."""
    obj = rollout(
        "Progressing",
        cond("Progressing", "True", "Cancelling"),
        cond("Aborted", "True", reason),
        step=2,
        state="StepUpgrade",
    )
    obj["status"]["canaryStatus"]["finalisingStep"] = step
    return obj


COMPLETED = cond("Progressing", "False", "Completed", "Rollout progressing has been completed")

CASES = [
    (rollout("Initial"), Outcome.PENDING, IN_PROGRESS, "Unknown"),  # no canaryStatus yet: the script fails
    (rollout("Healthy", observed=2), Outcome.PENDING, IN_PROGRESS, "Progressing"),
    (rollout("Healthy"), Outcome.IDLE, CURRENT, "Unknown"),  # the script reads canaryStatus unguarded
    (
        rollout("Progressing", IN_ROLLING, step=1, state="StepUpgrade"),
        Outcome.PROGRESSING,
        IN_PROGRESS,
        "Progressing",
    ),
    (
        rollout("Progressing", IN_ROLLING, step=1, state="StepPaused"),
        Outcome.AWAITING_APPROVAL,
        IN_PROGRESS,
        "Suspended",
    ),
    (
        rollout("Progressing", IN_ROLLING, step=2, state="StepPaused"),
        Outcome.PROGRESSING,
        IN_PROGRESS,
        "Suspended",
    ),
    (
        rollout(
            "Progressing", cond("Progressing", "True", "Paused"), step=2, state="StepUpgrade", paused=True
        ),
        Outcome.PAUSED,
        IN_PROGRESS,
        "Progressing",
    ),
    (
        rollout("Progressing", cond("Progressing", "True", "Cancelling"), step=2, state="StepUpgrade"),
        Outcome.ROLLING_BACK,
        IN_PROGRESS,
        "Progressing",
    ),
    (
        rollout("Healthy", COMPLETED, cond("Succeeded", "True", "Completed"), step=3, state="Completed"),
        Outcome.SUCCEEDED,
        CURRENT,
        "Healthy",
    ),
    (
        rollout(
            "Healthy",
            COMPLETED,
            cond("Succeeded", "False", "Completed"),
            cond("Aborted", "True", "AnalysisFailed"),
            step=1,
            state="Completed",
        ),
        Outcome.FAILED,
        FAILED,
        "Healthy",
    ),
    (
        rollout("Healthy", COMPLETED, cond("Succeeded", "False", "Completed"), step=1, state="Completed"),
        Outcome.CANCELLED,
        CURRENT,
        "Healthy",
    ),
    (
        rollout(
            "Healthy", cond("Progressing", "False", "Completed", CANCELED_MESSAGE), step=1, state="Completed"
        ),
        Outcome.CANCELLED,
        CURRENT,
        "Healthy",
    ),
    (
        rollout(
            "Progressing",
            IN_ROLLING,
            cond("ProgressDeadline", "True", "ProgressDeadlineExceeded"),
            step=2,
            state="StepUpgrade",
        ),
        Outcome.STALLED,
        FAILED,
        "Progressing",
    ),
    (
        held("ProgressDeadlineExceeded", "RouteTrafficToStable"),
        Outcome.ROLLING_BACK,
        IN_PROGRESS,
        "Progressing",
    ),
    (held("ProgressDeadlineExceeded"), Outcome.FAILED, FAILED, "Progressing"),
    (held("AbortedByUser"), Outcome.FAILED, FAILED, "Progressing"),
    (rollout("Disabled"), Outcome.DISABLED, CURRENT, "Unknown"),
    (rollout("Terminating"), Outcome.TERMINATING, IN_PROGRESS, "Unknown"),
]


@pytest.mark.parametrize(
    ("obj", "outcome", "kstatus", "argocd"), CASES, ids=[str(c[1]) + f"-{i}" for i, c in enumerate(CASES)]
)
def test_outcome_kstatus_and_argocd(obj: dict[str, Any], outcome: Outcome, kstatus: str, argocd: str) -> None:
    assert release_outcome(obj) is outcome
    written = {**obj, "status": with_rollout_kstatus(obj, obj["status"], NOW)}
    assert compute(written) == kstatus
    assert argocd_health(written)[0] == argocd
    assert release_outcome(written) is outcome, "the kstatus conditions do not change the reading"
    deadline = "ProgressDeadlineExceeded" in str(obj["status"]["conditions"])
    if deadline and outcome in (Outcome.STALLED, Outcome.FAILED):
        stalled = next(c for c in written["status"]["conditions"] if c["type"] == "Stalled")
        assert (stalled["status"], stalled["reason"]) == ("True", "ProgressDeadlineExceeded")


def test_exit_codes_for_pipelines() -> None:
    assert {o for o in Outcome if o.done and o.exit_code == 0} == {
        Outcome.SUCCEEDED,
        Outcome.IDLE,
        Outcome.DISABLED,
    }
    assert {o for o in Outcome if o.exit_code == 1} == {
        Outcome.FAILED,
        Outcome.STALLED,
        Outcome.CANCELLED,
        Outcome.TERMINATING,
    }
    assert not any(
        o.done for o in (Outcome.PROGRESSING, Outcome.AWAITING_APPROVAL, Outcome.PAUSED, Outcome.PENDING)
    )


def test_writing_the_conditions_twice_changes_nothing() -> None:
    obj = rollout("Progressing", IN_ROLLING, step=1, state="StepUpgrade")
    once = with_rollout_kstatus(obj, obj["status"], NOW)
    twice = with_rollout_kstatus({**obj, "status": once}, once, "2026-01-01T00:10:00Z")
    assert once == twice


DOC_SCRIPT = Path(__file__).resolve().parents[3] / "docs" / "argocd" / "kstatus-health.lua"
DOC_HEALTH = {
    Outcome.PENDING: "Progressing",
    Outcome.PROGRESSING: "Progressing",
    Outcome.ROLLING_BACK: "Progressing",
    Outcome.TERMINATING: "Progressing",
    Outcome.AWAITING_APPROVAL: "Suspended",
    Outcome.PAUSED: "Suspended",
    Outcome.FAILED: "Degraded",
    Outcome.STALLED: "Degraded",
    Outcome.SUCCEEDED: "Healthy",
    Outcome.IDLE: "Healthy",
    Outcome.CANCELLED: "Healthy",
    Outcome.DISABLED: "Healthy",
}


@pytest.mark.parametrize(
    ("obj", "outcome", "kstatus", "argocd"), CASES, ids=[f"{c[1]}-{i}" for i, c in enumerate(CASES)]
)
def test_the_documented_argocd_health_check(
    obj: dict[str, Any], outcome: Outcome, kstatus: str, argocd: str
) -> None:
    """docs/argocd/kstatus-health.lua (docs/gitops.md) on every phase, where the built-in one fails."""
    written = {**obj, "status": with_rollout_kstatus(obj, obj["status"], NOW)}
    result = run_lua(DOC_SCRIPT.read_text(), written)
    assert result["status"] == DOC_HEALTH[outcome]
