"""When measurements are due: Go durations, initialDelay, interval, count, error retries."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kruise.analysis.api import AnalysisPhase, AnalysisRun
from kruise.analysis.schedule import (
    DEFAULT_ERROR_RETRY_INTERVAL,
    Task,
    due_tasks,
    next_reconcile,
    parse_duration,
)

T0 = datetime(2025, 1, 1, 12, 0, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        ("30s", 30),
        ("5m", 300),
        ("1h", 3600),
        ("1h30m", 5400),
        ("1.5h", 5400),
        ("300ms", 0.3),
        ("2h45m10s", 9910),
        ("-5m", -300),
        ("0", 0),
        ("1m0.5s", 60.5),
        ("100us", 0.0001),
    ],
)
def test_parse_duration(text: str, seconds: float) -> None:
    assert parse_duration(text).total_seconds() == pytest.approx(seconds)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("5", "missing unit"),
        ("5 minutes", 'unknown unit " minutes"'),
        ("", "invalid duration"),
        ("1d", 'unknown unit "d"'),
        ("m", "invalid duration"),
    ],
)
def test_parse_duration_errors(text: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        parse_duration(text)


def run(
    metrics: list[dict[str, Any]], results: list[dict[str, Any]] | None = None, **status: Any
) -> AnalysisRun:
    body: dict[str, Any] = {
        "metadata": {"name": "r", "namespace": "ns"},
        "spec": {"metrics": [{"provider": {"prometheus": {"query": "q"}}, **m} for m in metrics]},
    }
    if results is not None or status:
        body["status"] = {"phase": "Running", "metricResults": results or [], **status}
    return AnalysisRun.from_dict(body)


def measured(
    name: str, *finished: tuple[str, int], phase: str = "Running", **counters: int
) -> dict[str, Any]:
    """A metric result whose measurements finished ``seconds`` after T0 with the given phase."""
    ms = [
        {
            "phase": p,
            "startedAt": (T0 + timedelta(seconds=s)).isoformat(),
            "finishedAt": (T0 + timedelta(seconds=s)).isoformat(),
        }
        for p, s in finished
    ]
    count = sum(1 for p, _ in finished if p != "Error")
    return {"name": name, "phase": phase, "measurements": ms, "count": count, **counters}


def names(tasks: list[Task]) -> list[str]:
    return [t.name for t in tasks]


def test_first_measurement_is_due_immediately() -> None:
    r = run([{"name": "a"}, {"name": "b", "interval": "1m"}])
    assert names(due_tasks(r, r.spec.metrics, T0)) == ["a", "b"]


def test_initial_delay_counts_from_started_at() -> None:
    r = run([{"name": "a", "initialDelay": "30s"}], [], startedAt=T0.isoformat())
    assert due_tasks(r, r.spec.metrics, T0 + timedelta(seconds=29)) == []
    assert names(due_tasks(r, r.spec.metrics, T0 + timedelta(seconds=30))) == ["a"]
    assert next_reconcile(r, r.spec.metrics, T0) == T0 + timedelta(seconds=30)
    not_started = run([{"name": "a", "initialDelay": "30s"}])
    assert due_tasks(not_started, not_started.spec.metrics, T0 + timedelta(hours=1)) == []


def test_interval_counts_from_the_previous_finish() -> None:
    r = run([{"name": "a", "interval": "1m", "count": 3}], [measured("a", ("Successful", 0))])
    assert due_tasks(r, r.spec.metrics, T0 + timedelta(seconds=59)) == []
    assert names(due_tasks(r, r.spec.metrics, T0 + timedelta(seconds=60))) == ["a"]
    assert next_reconcile(r, r.spec.metrics, T0) == T0 + timedelta(minutes=1)


def test_count_reached_means_nothing_more() -> None:
    r = run([{"name": "a", "interval": "1s", "count": 2}], [measured("a", ("Successful", 0), ("Failed", 1))])
    assert due_tasks(r, r.spec.metrics, T0 + timedelta(hours=1)) == []
    assert next_reconcile(r, r.spec.metrics, T0) is None


def test_errors_do_not_count_and_retry_after_ten_seconds() -> None:
    r = run(
        [{"name": "a", "interval": "5m", "count": 1}],
        [measured("a", ("Error", 0), error=1, consecutiveError=1)],
    )
    assert due_tasks(r, r.spec.metrics, T0 + timedelta(seconds=9)) == []
    assert names(due_tasks(r, r.spec.metrics, T0 + DEFAULT_ERROR_RETRY_INTERVAL)) == ["a"]
    assert next_reconcile(r, r.spec.metrics, T0) == T0 + DEFAULT_ERROR_RETRY_INTERVAL
    single = run([{"name": "a"}], [measured("a", ("Error", 0), error=1)])
    assert names(due_tasks(single, single.spec.metrics, T0 + timedelta(seconds=10))) == ["a"]


def test_completed_metrics_and_terminating_runs_take_nothing_new() -> None:
    r = run([{"name": "a", "interval": "1s"}], [measured("a", ("Successful", 0), phase="Successful")])
    assert due_tasks(r, r.spec.metrics, T0 + timedelta(hours=1)) == []
    body = run(
        [{"name": "a", "interval": "1s"}, {"name": "b"}], [measured("a", ("Failed", 0), phase="Failed")]
    )
    assert due_tasks(body, body.spec.metrics, T0 + timedelta(hours=1)) == []  # a failed: terminating
    stopped = run([{"name": "a"}]).model_copy(
        update={"spec": run([{"name": "a"}]).spec.model_copy(update={"terminate": True})}
    )
    assert due_tasks(stopped, stopped.spec.metrics, T0) == []


def test_in_flight_measurements_resume_at_resume_at() -> None:
    result = {
        "name": "a",
        "phase": "Running",
        "measurements": [
            {
                "phase": "Running",
                "startedAt": T0.isoformat(),
                "resumeAt": (T0 + timedelta(seconds=5)).isoformat(),
            }
        ],
    }
    r = run([{"name": "a"}], [result])
    assert due_tasks(r, r.spec.metrics, T0) == []
    assert due_tasks(r, r.spec.metrics, T0 + timedelta(seconds=5)) == [Task("a", resume=True)]
    assert next_reconcile(r, r.spec.metrics, T0) == T0 + timedelta(seconds=5)


@given(
    st.integers(min_value=1, max_value=600),
    st.lists(st.sampled_from(["Successful", "Failed", "Error"]), min_size=1, max_size=6),
    st.integers(min_value=1, max_value=10),
)
def test_a_metric_is_due_exactly_from_its_next_reconcile_time(
    interval: int, phases: list[str], count: int
) -> None:
    finished = [(p, i * 1000) for i, p in enumerate(phases)]
    r = run(
        [
            {
                "name": "a",
                "interval": f"{interval}s",
                "count": count,
                "failureLimit": 99,
                "consecutiveErrorLimit": 99,
            }
        ],
        [measured("a", *finished)],
    )
    due_at = next_reconcile(r, r.spec.metrics, T0)
    if due_at is None:
        assert due_tasks(r, r.spec.metrics, T0 + timedelta(days=1)) == []
        assert sum(p != "Error" for p in phases) >= count
        return
    assert due_tasks(r, r.spec.metrics, due_at - timedelta(milliseconds=1)) == []
    assert names(due_tasks(r, r.spec.metrics, due_at)) == ["a"]
    assert AnalysisPhase.RUNNING.value == "Running"
