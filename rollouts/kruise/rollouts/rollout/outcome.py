"""Where a Rollout's release stands, read from the object alone (pure).

One reading serves ``kruise rollout status`` (its exit code) and the Rollout's kstatus
conditions (what Flux and ``kubectl wait --for=condition=Ready`` see), so the two never
disagree. The rules, in order:

- ``metadata.deletionTimestamp`` or phase ``Terminating``: TERMINATING;
- phase ``Disabled``: DISABLED; ``Disabling``: PROGRESSING (it is being finalised);
- phase ``Initial``/empty, or ``status.observedGeneration`` behind ``metadata.generation``:
  PENDING (the controller has not looked at this generation yet);
- phase ``Progressing``: PAUSED when ``spec.strategy.paused`` or the Progressing reason is
  ``Paused``; FAILED once a held abort is done (:mod:`.deadline`: the deadline passed with
  ``progressDeadlineAbort``, or ``kruise rollout abort``); STALLED when the ``ProgressDeadline``
  condition is True (the deadline passed, no abort); ROLLING_BACK while the reason is
  ``Cancelling``; AWAITING_APPROVAL when the current step is ``StepPaused`` with no
  ``pause.duration`` (kubectl-kruise ``approve`` moves it on); otherwise PROGRESSING;
- phase ``Healthy`` after a release: FAILED when the ``Aborted`` condition is True (an analysis
  failed and the release was rolled back); CANCELLED when ``Succeeded`` is False or the
  Progressing condition is ``Completed`` with upstream's message "Rollout progressing has been
  canceled" (the workload was rolled back or the release cancelled); SUCCEEDED when
  ``Succeeded`` is True; IDLE when no release ever ran.
"""

from __future__ import annotations

from collections.abc import Mapping
from enum import StrEnum
from typing import Any

from kruise.rollouts.api.common import CanaryStepState, ProgressingReason, RolloutConditionType, RolloutPhase
from kruise.rollouts.rollout import deadline
from kruise.rollouts.rollout.analysis_gate import ABORTED_CONDITION
from kruise.rollouts.rollout.finalise import CANCELED_MESSAGE  # Progressing's message once cancelled
from kruise.rollouts.rollout.steps import steps_of


class Outcome(StrEnum):
    """Where the release stands."""

    PENDING = "Pending"
    PROGRESSING = "Progressing"
    ROLLING_BACK = "RollingBack"
    AWAITING_APPROVAL = "AwaitingApproval"
    PAUSED = "Paused"
    SUCCEEDED = "Succeeded"
    IDLE = "Idle"
    FAILED = "Failed"
    STALLED = "Stalled"
    CANCELLED = "Cancelled"
    DISABLED = "Disabled"
    TERMINATING = "Terminating"

    @property
    def done(self) -> bool:
        """The release is over (a watcher stops here)."""
        return self in _DONE

    @property
    def exit_code(self) -> int:
        """``kruise rollout status``: 0 succeeded (or nothing to release), 1 failed/cancelled."""
        return 1 if self in (Outcome.FAILED, Outcome.STALLED, Outcome.CANCELLED, Outcome.TERMINATING) else 0


_DONE = frozenset(
    {
        Outcome.SUCCEEDED,
        Outcome.IDLE,
        Outcome.FAILED,
        Outcome.STALLED,
        Outcome.CANCELLED,
        Outcome.DISABLED,
        Outcome.TERMINATING,
    }
)


def sub_status(rollout: Mapping[str, Any]) -> Mapping[str, Any]:
    """``status.blueGreenStatus`` when set, else ``status.canaryStatus`` (``{}`` when neither)."""
    status = rollout.get("status") or {}
    return status.get("blueGreenStatus") or status.get("canaryStatus") or {}


def condition(rollout: Mapping[str, Any], ctype: str) -> Mapping[str, Any]:
    for cond in (rollout.get("status") or {}).get("conditions") or []:
        if cond.get("type") == ctype:
            return dict(cond)
    return {}


def _awaiting_approval(rollout: Mapping[str, Any]) -> bool:
    sub = sub_status(rollout)
    if sub.get("currentStepState") != CanaryStepState.STEP_PAUSED:
        return False
    steps = steps_of(rollout)
    index = int(sub.get("currentStepIndex") or 0)
    if not 1 <= index <= len(steps):
        return True
    return (steps[index - 1].get("pause") or {}).get("duration") is None


def release_outcome(rollout: Mapping[str, Any]) -> Outcome:
    """The :class:`Outcome` of ``rollout`` (a Rollout as JSON, v1beta1)."""
    meta = rollout.get("metadata") or {}
    status = rollout.get("status") or {}
    phase = status.get("phase") or ""
    if meta.get("deletionTimestamp") or phase == RolloutPhase.TERMINATING:
        return Outcome.TERMINATING
    if phase == RolloutPhase.DISABLED:
        return Outcome.DISABLED
    if phase == RolloutPhase.DISABLING:
        return Outcome.PROGRESSING
    observed = status.get("observedGeneration")
    if phase in ("", RolloutPhase.INITIAL) or (observed is not None and observed != meta.get("generation")):
        return Outcome.PENDING
    progressing = condition(rollout, RolloutConditionType.PROGRESSING)
    if phase == RolloutPhase.PROGRESSING:
        paused = bool(((rollout.get("spec") or {}).get("strategy") or {}).get("paused"))
        if paused or progressing.get("reason") == ProgressingReason.PAUSED:
            return Outcome.PAUSED
        if deadline.is_held(status):
            return Outcome.FAILED
        if deadline.deadline_exceeded(status):
            return Outcome.STALLED
        if progressing.get("reason") == ProgressingReason.CANCELLING:
            return Outcome.ROLLING_BACK
        if _awaiting_approval(rollout):
            return Outcome.AWAITING_APPROVAL
        return Outcome.PROGRESSING
    if condition(rollout, ABORTED_CONDITION).get("status") == "True":
        return Outcome.FAILED
    succeeded = condition(rollout, RolloutConditionType.SUCCEEDED).get("status")
    cancelled = (
        progressing.get("reason") == ProgressingReason.COMPLETED
        and progressing.get("message") == CANCELED_MESSAGE
    )
    if succeeded == "False" or cancelled:
        return Outcome.CANCELLED
    if succeeded == "True":
        return Outcome.SUCCEEDED
    return Outcome.IDLE
