"""The TrafficRouting phase machine (pure), after upstream's ``TrafficRoutingReconciler``.

| phase | work this round | once done (nothing changed) |
|---|---|---|
| ``""`` / ``Initial`` | check the Service and every routed object exist | ``Healthy`` |
| ``Healthy`` | none; a holding Rollout -> ``Progressing`` | stays |
| ``Progressing`` | route the strategy in force on every entry; no holder -> ``Finalizing`` | stays |
| ``Finalizing`` | restore every route (canary Ingress deleted, Lua specs back) | ``Healthy`` |
| ``Terminating`` (deleted) | restore every route | own finalizer removed |

A round whose work changed something is looked at again after the entries' grace period.

Upstream routes only ``objectRef[0]``; every entry is routed here (a chain lists several). The
messages are upstream's ``TrafficRouting is <Phase>``, followed while work is pending by what the
routers reported, and in ``Progressing`` by the strategy in force.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from kruise.rollouts.api.trafficrouting import TrafficRoutingPhase
from kruise.rollouts.trafficrouting.links import Strategy

DEFAULT_GRACE_SECONDS = 3
"""``defaultGracePeriodSeconds``: the wait after a change when an entry sets none."""


class Work(StrEnum):
    """What the shell does with the routes this round."""

    NONE = "None"
    CHECK = "Check"  # Initial: the objects exist
    ENSURE = "Ensure"  # Progressing: route the strategy in force
    RESTORE = "Restore"  # Finalizing / Terminating: everything back to stable


@dataclass(frozen=True)
class Plan:
    """This round: ``phase`` now, the ``work``, the phase once the work is done, and whether
    the TrafficRouting's own finalizer may go then (Terminating)."""

    phase: TrafficRoutingPhase
    work: Work
    done_phase: TrafficRoutingPhase
    release_finalizer: bool = False


def message(phase: TrafficRoutingPhase) -> str:
    """Upstream's status message of a phase."""
    if phase == TrafficRoutingPhase.INITIAL:
        return "TrafficRouting is Initializing"
    return f"TrafficRouting is {phase.value}"


def plan(status: Mapping[str, Any], deleting: bool, holding: Sequence[str]) -> Plan:
    """The round for a TrafficRouting in ``status`` (its ``phase``), being deleted or not, held by
    the Rollouts named in ``holding``."""
    if deleting:
        return Plan(TrafficRoutingPhase.TERMINATING, Work.RESTORE, TrafficRoutingPhase.TERMINATING, True)
    try:
        phase = TrafficRoutingPhase(str(status.get("phase") or "Initial"))
    except ValueError:
        phase = TrafficRoutingPhase.INITIAL
    if phase == TrafficRoutingPhase.INITIAL:
        return Plan(phase, Work.CHECK, TrafficRoutingPhase.HEALTHY)
    if phase == TrafficRoutingPhase.HEALTHY:
        nxt = TrafficRoutingPhase.PROGRESSING if holding else TrafficRoutingPhase.HEALTHY
        return Plan(nxt, Work.NONE, nxt)
    if phase == TrafficRoutingPhase.PROGRESSING:
        if not holding:
            return Plan(TrafficRoutingPhase.FINALIZING, Work.NONE, TrafficRoutingPhase.FINALIZING)
        return Plan(phase, Work.ENSURE, phase)
    if phase == TrafficRoutingPhase.FINALIZING:
        return Plan(phase, Work.RESTORE, TrafficRoutingPhase.HEALTHY)
    # Terminating without a deletionTimestamp cannot happen; start over
    return Plan(TrafficRoutingPhase.INITIAL, Work.CHECK, TrafficRoutingPhase.HEALTHY)


@dataclass(frozen=True)
class Outcome:
    """What the work found: ``done`` only when nothing had to change; ``note`` from the routers
    (or the missing object); ``grace`` seconds to wait before looking again."""

    done: bool
    note: str = ""
    grace: float = DEFAULT_GRACE_SECONDS


@dataclass(frozen=True)
class Settled:
    """The status to write and when to look again."""

    phase: TrafficRoutingPhase
    message: str
    requeue_after: float | None
    release_finalizer: bool


def settle(round_: Plan, outcome: Outcome, strategy: Strategy | None) -> Settled:
    """The round's result: the done phase once the work is done, else the round's phase with
    the routers' note, looked at again after the grace period."""
    phase = round_.done_phase if outcome.done else round_.phase
    text = message(phase)
    if phase == TrafficRoutingPhase.PROGRESSING and strategy is not None:
        text += f": {strategy.describe()}"
    if not outcome.done and outcome.note:
        text += f" ({outcome.note})"
    return Settled(
        phase=phase,
        message=text,
        requeue_after=None if outcome.done else outcome.grace,
        release_finalizer=round_.release_finalizer and outcome.done,
    )


def grace_seconds(refs: Sequence[Mapping[str, Any]]) -> int:
    """The longest ``gracePeriodSeconds`` of the entries, each 3 when unset or negative
    (``GetGraceSeconds``); 3 without entries."""

    def one(ref: Mapping[str, Any]) -> int:
        value = ref.get("gracePeriodSeconds")
        return DEFAULT_GRACE_SECONDS if value is None or int(value) < 0 else int(value)

    return max((one(r) for r in refs), default=DEFAULT_GRACE_SECONDS)
