"""When the Rollout controller looks at a Rollout again (``requeue_for``): upstream's reconcile
requeues only for a ``RecheckTime``; a Rollout waiting for its batch is woken by watch events."""

from __future__ import annotations

from typing import Any

from kruise.rollouts.api.common import RolloutPhase
from kruise.rollouts.release.constants import RECHECK_SECONDS
from kruise.rollouts.rollout.analysis_effects import AnalysisGateError
from kruise.rollouts.rollout.controller import BLOCKED_RECHECK_SECONDS, requeue_for


def progressing(*, routing: bool) -> dict[str, Any]:
    canary: dict[str, Any] = {"steps": [{"replicas": "50%"}, {"replicas": "100%"}]}
    if routing:
        canary["trafficRoutings"] = [{"service": "web", "gateway": {"httpRouteName": "web"}}]
    return {"spec": {"strategy": {"canary": canary}}, "status": {"phase": RolloutPhase.PROGRESSING}}


def test_a_progressing_rollout_without_traffic_waits_for_events_only() -> None:
    assert requeue_for(progressing(routing=False), None, None, None) is None


def test_a_progressing_rollout_with_traffic_rechecks_its_unwatched_objects() -> None:
    assert requeue_for(progressing(routing=True), None, None, None) == RECHECK_SECONDS
    healthy = {**progressing(routing=True), "status": {"phase": RolloutPhase.HEALTHY}}
    assert requeue_for(healthy, None, None, None) is None, "no timer once the release is over"


def test_the_decisions_time_a_blocked_gate_and_a_fights_wake_take_the_soonest() -> None:
    ro = progressing(routing=False)
    assert requeue_for(ro, 7.5, None, None) == 7.5  # a pause's remaining time
    assert requeue_for(ro, 30.0, AnalysisGateError("no template"), None) == BLOCKED_RECHECK_SECONDS
    assert requeue_for(ro, None, AnalysisGateError("no template"), None) == BLOCKED_RECHECK_SECONDS
    assert requeue_for(ro, 7.5, None, 0.2) == 0.2
    assert requeue_for(progressing(routing=True), None, None, 1.0) == 1.0
