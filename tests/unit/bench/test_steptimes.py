"""bench/steptimes.py and the pure parts of bench/rollouts_scale.py: step lateness from status
timelines, the status classifiers of both sides, percentiles, and API requests at rest."""

from __future__ import annotations

import math

import pytest
from rollouts_scale import per_minute, request_totals
from steptimes import Mark, Timeline, argo_mark, kruise_mark, percentile


def test_percentile_is_nearest_rank() -> None:
    values = [float(v) for v in range(100, 0, -1)]  # unsorted on purpose
    assert percentile(values, 50) == 50.0
    assert percentile(values, 99) == 99.0
    assert percentile(values, 100) == 100.0
    assert percentile([3.0, 1.0, 2.0], 50) == 2.0
    assert percentile([7.0], 99) == 7.0
    assert math.isnan(percentile([], 50))


def kruise_status(index: int, state: str, *, phase: str = "Progressing", done: bool = False) -> dict:
    status: dict = {"phase": phase, "canaryStatus": {"currentStepIndex": index, "currentStepState": state}}
    if done:
        status["conditions"] = [{"type": "Progressing", "status": "False", "reason": "Completed"}]
    return status


def test_kruise_mark_reads_step_pause_and_completion() -> None:
    assert kruise_mark({"phase": "Healthy"}) is None
    assert kruise_mark(kruise_status(1, "StepUpgrade")) == Mark(1)
    assert kruise_mark(kruise_status(2, "StepPaused")) == Mark(2, paused=True)
    assert kruise_mark(kruise_status(3, "Completed", phase="Healthy", done=True)) == Mark(3, done=True)
    # Completed step state while still finalising (Progressing not yet False/Completed): not done
    assert kruise_mark(kruise_status(3, "Completed")) == Mark(3)


def argo_status(index: int, *, paused: bool = False, phase: str = "Progressing") -> dict:
    status: dict = {"currentStepIndex": index, "phase": phase}
    if paused:
        status["pauseConditions"] = [{"reason": "CanaryPauseStep", "startTime": "2026-12-04T14:00:00Z"}]
    return status


def test_argo_mark_maps_setweight_and_pause_entries_to_logical_steps() -> None:
    assert argo_mark({"phase": "Healthy"}) is None
    assert argo_mark(argo_status(0)) == Mark(1)
    assert argo_mark(argo_status(1)) == Mark(1)  # weight reached, pause not begun
    assert argo_mark(argo_status(1, paused=True)) == Mark(1, paused=True)
    assert argo_mark(argo_status(2)) == Mark(2)
    assert argo_mark(argo_status(3, paused=True)) == Mark(2, paused=True)
    assert argo_mark(argo_status(4)) == Mark(3)
    assert argo_mark(argo_status(5, phase="Healthy")) == Mark(3, done=True)
    assert argo_mark(argo_status(5)) == Mark(3)  # past the last step but not yet Healthy


def test_lateness_from_a_kruise_timeline_ignores_the_previous_release() -> None:
    line = Timeline()
    line.observe(99.0, Mark(1, paused=True))  # before the release: ignored
    line.start(100.0)
    line.observe(100.1, Mark(3))  # a status write still carrying the last release's step
    line.observe(100.2, Mark(1))
    line.observe(104.4, Mark(1, paused=True))
    line.observe(104.5, Mark(1, paused=True))  # a later sighting does not move the pause
    line.observe(113.7, Mark(1))  # StepReady: still step 1
    line.observe(114.9, Mark(2))
    line.observe(116.0, Mark(2, paused=True))
    line.observe(126.5, Mark(3))
    assert not line.complete(2)
    line.observe(129.6, Mark(3, done=True))
    line.observe(131.0, Mark(1))  # nothing after done counts
    assert line.complete(2)
    assert line.done_at == 129.6
    assert line.lateness(10.0) == pytest.approx([0.5, 0.5])
    assert line.step_at == {1: 100.2, 2: 114.9, 3: 126.5}


def test_early_steps_give_negative_lateness_and_a_last_pause_may_end_in_done() -> None:
    line = Timeline()
    line.start(0.0)
    for at, status in (
        (1.1, argo_status(0)),
        (2.4, argo_status(1, paused=True)),
        (11.6, argo_status(2)),  # 0.8 s before the pause allows
        (12.5, argo_status(3, paused=True)),
        (23.0, argo_status(5, phase="Healthy")),  # the next step and the end in one status
    ):
        line.observe(at, argo_mark(status))
    assert line.lateness(10.0) == pytest.approx([-0.8, 0.5])
    assert line.complete(2)


def test_a_done_mark_before_step_one_does_not_complete_a_release() -> None:
    line = Timeline()
    line.start(0.0)
    line.observe(0.3, Mark(3, done=True))  # the previous release's final status, re-sent
    assert line.done_at is None
    assert not line.complete(0)
    assert line.lateness(10.0) == []


def sample(
    value: float, verb: str, resource: str, group: str = "", subresource: str = "", code: str = "200"
) -> str:
    labels = f'code="{code}",group="{group}",resource="{resource}",subresource="{subresource}",verb="{verb}"'
    return f"apiserver_request_total{{{labels}}} {value}"


METRICS_BEFORE = "\n".join(
    [
        "# HELP apiserver_request_total Counter of apiserver requests",
        "# TYPE apiserver_request_total counter",
        sample(10, "GET", "clonesets", "apps.kruise.io"),
        sample(2, "GET", "clonesets", "apps.kruise.io", code="404"),
        sample(5, "PATCH", "nodes", subresource="status"),
        sample(50, "PUT", "leases", "coordination.k8s.io"),
        sample(3, "WATCH", "pods"),
        sample(7, "GET", ""),  # /metrics, /healthz
        "",
    ]
)


def test_request_totals_merge_codes_and_leave_out_watches_leases_and_non_resource_urls() -> None:
    assert request_totals(METRICS_BEFORE) == {
        ("GET", "apps.kruise.io/clonesets"): 12.0,
        ("PATCH", "nodes/status"): 5.0,
    }


def test_per_minute_scales_deltas_and_drops_series_that_did_not_move() -> None:
    before = {("GET", "apps.kruise.io/clonesets"): 12.0, ("PATCH", "nodes/status"): 5.0}
    after = {("GET", "apps.kruise.io/clonesets"): 42.0, ("PATCH", "nodes/status"): 5.0, ("LIST", "pods"): 1.0}
    assert per_minute(before, after, 30.0) == {
        ("GET", "apps.kruise.io/clonesets"): 60.0,
        ("LIST", "pods"): 2.0,
    }
