"""What each step of a Rollout asks for (pure): canary pods, traffic, matches, pause.

Used by the state machine and by ``kruise rollout plan``. Step indices are
1-based, as in ``status.canaryStatus.currentStepIndex``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from kruise.rollouts.release.batchplan import IntOrStr, percent_of, real_canary_goal


def strategy_of(rollout: Mapping[str, Any]) -> Mapping[str, Any]:
    """``spec.strategy.canary`` or ``spec.strategy.blueGreen`` (whichever is set)."""
    strategy = (rollout.get("spec") or {}).get("strategy") or {}
    return strategy.get("canary") or strategy.get("blueGreen") or {}


def is_blue_green(rollout: Mapping[str, Any]) -> bool:
    return bool(((rollout.get("spec") or {}).get("strategy") or {}).get("blueGreen"))


def steps_of(rollout: Mapping[str, Any]) -> Sequence[Mapping[str, Any]]:
    return list(strategy_of(rollout).get("steps") or [])


def traffic_routings_of(rollout: Mapping[str, Any]) -> Sequence[Mapping[str, Any]]:
    return list(strategy_of(rollout).get("trafficRoutings") or [])


def step_weight(step: Mapping[str, Any]) -> int | None:
    """Canary traffic percent of a step (``traffic: "20%"``); None when the step sets no traffic."""
    traffic = step.get("traffic")
    if traffic is None:
        return None
    pct = percent_of(str(traffic))
    if pct is None:
        raise ValueError(f"traffic must be a percentage like '20%', got {traffic!r}")
    return pct


def step_has_routing(step: Mapping[str, Any]) -> bool:
    """Whether the step shifts traffic (weight or matches)."""
    return step.get("traffic") is not None or bool(step.get("matches"))


@dataclass(frozen=True)
class StepPlan:
    """One step: canary/stable pod counts, weight (None: none), matches, pause seconds (None: approval)."""

    index: int
    replicas: IntOrStr
    canary: int
    stable: int
    weight: int | None
    matches: list[dict[str, Any]] = field(default_factory=list)
    pause_seconds: int | None = None
    approval: bool = False


def plan(rollout: Mapping[str, Any], workload_replicas: int) -> list[StepPlan]:
    """Every step's expected pods and traffic for ``workload_replicas`` (``kruise rollout plan``)."""
    out = []
    steps = steps_of(rollout)
    for i, step in enumerate(steps, start=1):
        replicas = step.get("replicas", "100%" if i == len(steps) else 0)
        canary = real_canary_goal(replicas, workload_replicas)
        pause = step.get("pause") or {}
        duration = pause.get("duration")
        last_full = i == len(steps) and replicas == "100%"
        out.append(
            StepPlan(
                index=i,
                replicas=replicas,
                canary=canary,
                stable=workload_replicas - canary,
                weight=step_weight(step),
                matches=list(step.get("matches") or []),
                pause_seconds=int(duration) if duration is not None else None,
                approval=duration is None and not last_full,
            )
        )
    return out
