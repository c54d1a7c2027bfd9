"""The AnalysisRun controller's pure core: prepare, decide, errored."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kruise.analysis.api import AnalysisPhase, AnalysisRun, Measurement
from kruise.analysis.decide import Decision, SpecError, Taken, decide, errored, prepare, validate_metrics
from kruise.analysis.schedule import due_tasks

T0 = datetime(2025, 1, 1, 12, 0, 0, tzinfo=UTC)
S, F, E = AnalysisPhase.SUCCESSFUL, AnalysisPhase.FAILED, AnalysisPhase.ERROR
PROM = {"prometheus": {"address": "http://p:9090", "query": "up{job='{{args.job}}'}"}}


def run(*metrics: dict[str, Any], **spec: Any) -> AnalysisRun:
    body = {
        "metadata": {"name": "r", "namespace": "ns"},
        "spec": {
            "metrics": [{"provider": PROM, **m} for m in metrics],
            "args": [{"name": "job", "value": "api"}],
            **spec,
        },
    }
    return AnalysisRun.from_dict(body)


def advance(r: AnalysisRun, decision: Decision) -> AnalysisRun:
    return r.model_copy(update={"status": decision.status})


def m(phase: AnalysisPhase, message: str | None = None) -> Measurement:
    return Measurement(phase=phase, message=message, value="1")


def reasons(decision: Decision) -> list[str]:
    return [e.reason for e in decision.events]


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ({"args": [{"name": "job"}]}, 'Unable to resolve metric arguments: argument "job" was not supplied'),
        ({"args": []}, "Unable to resolve metric arguments: failed to resolve {{args.job}}"),
        (
            {"dryRun": [{"metricName": "nope"}]},
            "Analysis spec invalid: dryRun[0]: Rule didn't match any metric name(s)",
        ),
        (
            {"measurementRetention": [{"metricName": "x$", "limit": 2}]},
            "Analysis spec invalid: measurementRetention[0]: Rule didn't match any metric name(s)",
        ),
    ],
)
def test_prepare_rejects_with_argo_messages(spec: dict[str, Any], message: str) -> None:
    with pytest.raises(SpecError) as err:
        prepare(run({"name": "a"}, **spec))
    assert str(err.value) == message


@pytest.mark.parametrize(
    ("metrics", "message"),
    [
        ([], "no metrics specified"),
        ([{"name": "a"}, {"name": "a"}], "metrics[1]: duplicate name 'a'"),
        ([{"name": "a", "count": 3}], "metrics[0]: interval must be specified when count > 1"),
        ([{"name": "a", "count": 1, "failureLimit": 2}], "metrics[0]: count must be >= failureLimit"),
        ([{"name": "a", "interval": "5 min"}], "metrics[0]: invalid interval string"),
        ([{"name": "a", "initialDelay": "soon"}], "metrics[0]: invalid startDelay string"),
        ([{"name": "a", "failureLimit": -2}], "metrics[0]: failureLimit must be >= -1"),
        ([{"name": "a", "consecutiveErrorLimit": -1}], "metrics[0]: consecutiveErrorLimit must be >= 0"),
        ([{"name": "a", "provider": {}}], "metrics[0]: no provider specified"),
        (
            [{"name": "a", "provider": {**PROM, "web": {"url": "u"}}}],
            "metrics[0]: multiple providers specified",
        ),
    ],
)
def test_validate_metrics(metrics: list[dict[str, Any]], message: str) -> None:
    r = AnalysisRun.from_dict({"spec": {"metrics": [{"provider": PROM, **x} for x in metrics]}})
    with pytest.raises(ValueError) as err:
        validate_metrics(r.spec.metrics)
    assert message in str(err.value)


def test_prepare_resolves_arguments_and_counts() -> None:
    r = run(
        {"name": "a", "interval": "{{args.every}}", "count": "{{args.n}}"},
        args=[
            {"name": "every", "value": "30s"},
            {"name": "n", "value": "2"},
            {"name": "job", "value": "api"},
        ],
    )
    prepared = prepare(r)
    assert prepared.metrics[0].interval == "30s" and prepared.metrics[0].count == "2"
    assert prepared.metrics[0].provider.prometheus is not None
    assert prepared.metrics[0].provider.prometheus.query == "up{job='api'}"
    secret = run(
        {"name": "a"}, args=[{"name": "job", "valueFrom": {"secretKeyRef": {"name": "s", "key": "k"}}}]
    )
    assert prepare(secret).metrics[0].provider.prometheus.query == "up{job='temp-for-secret'}"  # type: ignore[union-attr]


def test_single_measurement_run_succeeds() -> None:
    r = run({"name": "a", "successCondition": "result[0] > 0"})
    prepared = prepare(r)
    first = decide(r, prepared, [Taken("a", m(S))], T0)
    status = first.status
    assert status.phase is S and status.started_at == T0 and status.completed_at == T0
    result = status.result("a")
    assert result is not None and result.phase is S and result.count == 1 and result.successful == 1
    assert result.measurements is not None and result.measurements[0].finished_at == T0
    assert reasons(first) == ["MetricSuccessful", "AnalysisRunSuccessful"]
    assert first.events[-1].message == "Analysis Completed. Result: Successful"
    assert first.requeue_after is None
    assert status.run_summary is not None and status.run_summary.successful == 1


def test_failed_measurement_fails_the_run_with_a_warning() -> None:
    r = run({"name": "a"})
    decision = decide(r, prepare(r), [Taken("a", m(F))], T0)
    assert decision.status.phase is F
    assert decision.status.message == 'Metric "a" assessed Failed due to failed (1) > failureLimit (0)'
    assert [(e.type, e.reason) for e in decision.events] == [
        ("Warning", "MetricFailed"),
        ("Warning", "AnalysisRunFailed"),
    ]


def test_interval_metric_runs_and_requeues_at_the_next_measurement() -> None:
    r = run({"name": "a", "interval": "30s", "count": 2})
    prepared = prepare(r)
    first = decide(r, prepared, [Taken("a", m(S))], T0)
    assert first.status.phase is AnalysisPhase.RUNNING
    assert reasons(first) == ["AnalysisRunRunning"]
    assert first.requeue_after == 30.0
    r1 = advance(r, first)
    assert due_tasks(r1, prepared.metrics, T0 + timedelta(seconds=29)) == []
    second = decide(r1, prepared, [Taken("a", m(S))], T0 + timedelta(seconds=30))
    assert second.status.phase is S


def test_errors_are_retried_until_the_consecutive_error_limit() -> None:
    r = run({"name": "a", "consecutiveErrorLimit": 1})
    prepared = prepare(r)
    first = decide(r, prepared, [Taken("a", m(E, "connection refused"))], T0)
    assert first.status.phase is AnalysisPhase.RUNNING and first.requeue_after == 10.0
    second = decide(
        advance(r, first), prepared, [Taken("a", m(E, "connection refused"))], T0 + timedelta(seconds=10)
    )
    assert second.status.phase is E
    assert second.status.message == (
        'Metric "a" assessed Error due to consecutiveErrors (2) > consecutiveErrorLimit (1): '
        '"Error Message: connection refused"'
    )


def test_dry_run_metric_fails_without_failing_the_run() -> None:
    r = run({"name": "a"}, {"name": "b"}, dryRun=[{"metricName": "b"}])
    decision = decide(r, prepare(r), [Taken("a", m(S)), Taken("b", m(F))], T0)
    assert decision.status.phase is S
    b = decision.status.result("b")
    assert b is not None and b.dry_run is True and b.phase is F
    assert decision.status.dry_run_summary is not None and decision.status.dry_run_summary.failed == 1


def test_a_failing_metric_terminates_the_run_on_the_next_round() -> None:
    r = run({"name": "slow", "interval": "1m"}, {"name": "fast"})
    prepared = prepare(r)
    first = decide(r, prepared, [Taken("slow", m(S)), Taken("fast", m(F))], T0)
    assert first.status.phase is AnalysisPhase.RUNNING and first.requeue_after == 0.0
    second = decide(advance(r, first), prepared, [], T0)
    assert second.status.phase is F


def test_terminate_completes_successfully() -> None:
    r = run({"name": "a", "interval": "1m"}, terminate=True)
    prepared = prepare(r)
    decision = decide(r, prepared, [], T0)
    assert decision.status.phase is S and decision.status.message == "Run Terminated"


def test_measurements_beyond_retention_are_dropped_but_still_counted() -> None:
    r = run({"name": "a", "interval": "1s"}, measurementRetention=[{"metricName": "a", "limit": 2}])
    prepared = prepare(r)
    current = r
    for i in range(5):
        current = advance(
            current,
            decide(
                current, prepared, [Taken("a", Measurement(phase=S, value=str(i)))], T0 + timedelta(seconds=i)
            ),
        )
    result = current.status.result("a")  # type: ignore[union-attr]
    assert result is not None and result.count == 5
    assert [x.value for x in result.measurements or []] == ["3", "4"]
    default = run({"name": "a", "interval": "1s"})
    prepared = prepare(default)
    current = default
    for i in range(12):
        current = advance(current, decide(current, prepared, [Taken("a", m(S))], T0 + timedelta(seconds=i)))
    assert len(current.status.result("a").measurements or []) == 10  # type: ignore[union-attr]


def test_errored_and_completed_runs() -> None:
    r = run({"name": "a"})
    decision = errored(r, "Analysis spec invalid: no metrics specified", T0)
    assert decision.status.phase is E and reasons(decision) == ["AnalysisRunError"]
    done = advance(r, decision)
    assert decide(done, prepare(r), [Taken("a", m(S))], T0).status == done.status
    assert errored(done, "again", T0).events == ()


@settings(max_examples=60)
@given(st.lists(st.sampled_from([S, F, E, AnalysisPhase.INCONCLUSIVE]), max_size=8), st.booleans())
def test_deciding_again_with_nothing_new_changes_nothing(phases: list[AnalysisPhase], dry: bool) -> None:
    r = run(
        {"name": "a", "interval": "1s", "count": 6, "failureLimit": 2, "inconclusiveLimit": 2},
        {"name": "b", "interval": "1s"},
        dryRun=[{"metricName": "b"}] if dry else None,
    )
    prepared = prepare(r)
    current = r
    for i, phase in enumerate(phases):
        current = advance(
            current,
            decide(
                current, prepared, [Taken("a", m(phase)), Taken("b", m(phase))], T0 + timedelta(seconds=i)
            ),
        )
    later = T0 + timedelta(seconds=len(phases))
    again = decide(current, prepared, [], later)
    twice = decide(advance(current, again), prepared, [], later)
    assert twice.status == again.status
    assert twice.events == ()
