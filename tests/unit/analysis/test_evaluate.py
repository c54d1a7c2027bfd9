"""Argo's analysis outcome rules: one measurement, one metric, one run."""

from __future__ import annotations

import itertools
import math
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kruise.analysis.api import AnalysisPhase, Measurement, Metric, MetricResult
from kruise.analysis.evaluate import (
    assess_metric,
    assess_run,
    evaluate_result,
    failure_verdict,
    is_worse,
    limits,
    record,
)

S, F, E, INC, R, P = (
    AnalysisPhase.SUCCESSFUL,
    AnalysisPhase.FAILED,
    AnalysisPhase.ERROR,
    AnalysisPhase.INCONCLUSIVE,
    AnalysisPhase.RUNNING,
    AnalysisPhase.PENDING,
)


def metric(name: str = "m", **fields: Any) -> Metric:
    return Metric.from_dict({"name": name, "provider": {"prometheus": {"query": "q"}}, **fields})


OUTCOMES = [
    # Argo's evaluate_test.go
    pytest.param("true", "false", True, S, id="argo-success"),
    pytest.param("true", "true", True, F, id="argo-both-true-is-failure"),
    pytest.param("false", "false", True, INC, id="argo-neither-is-inconclusive"),
    pytest.param("", "false", True, S, id="argo-only-failure-condition-not-met"),
    pytest.param("false", "", True, F, id="argo-only-success-condition-not-met"),
    pytest.param("", "", True, S, id="argo-no-conditions-is-successful"),
    pytest.param("a == true", "true", True, E, id="argo-error-in-success-condition"),
    pytest.param("true", "a == true", True, E, id="argo-error-in-failure-condition"),
    # docs/features/analysis.md "Handling Metric Results"
    pytest.param("isNaN(result) || result >= 0.95", "", math.nan, S, id="docs-nan-successful"),
    pytest.param("result >= 0.95", "result < 0.95", math.nan, INC, id="docs-nan-inconclusive"),
    pytest.param("result >= 0.95", "", math.nan, F, id="docs-nan-failed"),
    pytest.param("result >= 0.95", "", math.inf, S, id="docs-inf-successful"),
    pytest.param("", "isInf(result)", math.inf, F, id="docs-inf-failed"),
    pytest.param("len(result) == 0 || result[0] >= 0.95", "", [], S, id="docs-empty-successful"),
    pytest.param("len(result) > 0 && result[0] >= 0.95", "", [], F, id="docs-empty-failed"),
    pytest.param("result[0] >= 0.95", "", [], E, id="empty-vector-indexed-is-error"),
    pytest.param("result[0] >= 0.95", "", [0.99], S, id="vector-success"),
    pytest.param("", "result[0] >= 10", [12.0], F, id="failure-condition-met"),
]


@pytest.mark.parametrize(("success", "failure", "result", "phase"), OUTCOMES)
def test_evaluate_result(success: str, failure: str, result: Any, phase: AnalysisPhase) -> None:
    got, message = evaluate_result(metric(successCondition=success, failureCondition=failure), result)
    assert got is phase
    assert (message is not None) is (phase is E)


def test_defaults_follow_argo() -> None:
    assert limits(metric()).count == 1
    assert limits(metric(interval="5m")).count is None
    assert limits(metric(interval="5m", count=3)).count == 3
    lim = limits(metric())
    assert (lim.failure, lim.inconclusive, lim.consecutive_error, lim.consecutive_success) == (0, 0, 4, 0)
    assert limits(metric(count="5", interval="1s")).count == 5
    with pytest.raises(ValueError, match="not an integer"):
        limits(metric(failureLimit="{{args.x}}"))


def result_of(*phases: AnalysisPhase, name: str = "m") -> MetricResult:
    out = MetricResult(name=name, phase=R)
    for phase in phases:
        out = record(out, Measurement(phase=phase))
    return out


def test_record_counts_like_argo() -> None:
    out = result_of(S, F, INC, E, E)
    assert (out.count, out.successful, out.failed, out.inconclusive, out.error) == (3, 1, 1, 1, 2)
    assert out.consecutive_error == 2
    assert record(out, Measurement(phase=S)).consecutive_error == 0
    assert result_of(S, S, F, S).consecutive_success == 1
    assert len(out.measurements or []) == 5


def test_record_replaces_an_in_flight_measurement() -> None:
    out = record(MetricResult(name="m"), Measurement(phase=R))
    done = record(out, Measurement(phase=S), replaces_last=True)
    assert [m.phase for m in done.measurements or []] == [S]
    assert done.count == 1


METRIC_PHASES = [
    pytest.param({}, (), False, P, id="no-measurement-pending"),
    pytest.param({}, (), True, S, id="no-measurement-terminated-successful"),
    pytest.param({}, (S,), False, S, id="single-measurement-success"),
    pytest.param({}, (F,), False, F, id="failure-limit-0-first-failure-fails"),
    pytest.param(
        {"failureLimit": 1, "interval": "1s", "count": 3}, (F,), False, R, id="within-failure-limit"
    ),
    pytest.param(
        {"failureLimit": 1, "interval": "1s", "count": 3}, (F, F), False, F, id="over-failure-limit"
    ),
    pytest.param({"failureLimit": 1, "interval": "1s", "count": 3}, (F, S, S), False, S, id="count-reached"),
    pytest.param(
        {"failureLimit": -1, "interval": "1s", "count": 3}, (F, F), False, R, id="failure-limit-disabled"
    ),
    pytest.param(
        {"failureLimit": -1, "interval": "1s", "count": 2}, (F, F), False, S, id="disabled-count-reached"
    ),
    pytest.param({}, (INC,), False, INC, id="inconclusive-limit-0"),
    pytest.param(
        {"inconclusiveLimit": 1, "interval": "1s", "count": 2}, (INC,), False, R, id="within-inconclusive"
    ),
    pytest.param({"interval": "1s"}, (E, E, E, E), False, R, id="four-errors-tolerated"),
    pytest.param({"interval": "1s"}, (E, E, E, E, E), False, E, id="fifth-consecutive-error"),
    pytest.param({"interval": "1s"}, (E, E, S, E, E, E), False, R, id="errors-reset-by-success"),
    pytest.param({"interval": "1s", "consecutiveErrorLimit": 0}, (E,), False, E, id="error-limit-zero"),
    pytest.param({"interval": "1s"}, (S, S, S), False, R, id="indefinite-keeps-running"),
    pytest.param({"interval": "1s"}, (S, S, S), True, S, id="indefinite-terminated"),
    pytest.param({"interval": "1s", "count": 5}, (S,), True, S, id="count-not-reached-terminated"),
    pytest.param({}, (R,), False, R, id="in-flight"),
    pytest.param(
        {"interval": "1s", "consecutiveSuccessLimit": 2}, (S, F, S, S), False, F, id="fail-before-streak"
    ),
    pytest.param(
        {"interval": "1s", "failureLimit": 3, "consecutiveSuccessLimit": 2},
        (S, F, S, S),
        False,
        S,
        id="streak",
    ),
    pytest.param(
        {"interval": "1s", "count": 3, "failureLimit": 3, "consecutiveSuccessLimit": 3},
        (S, F, S),
        False,
        INC,
        id="both-limits-unmet-at-count",
    ),
    pytest.param(
        {"interval": "1s", "count": 3, "failureLimit": -1, "consecutiveSuccessLimit": 3},
        (S, F, S),
        False,
        F,
        id="streak-unmet-at-count",
    ),
]


@pytest.mark.parametrize(("fields", "phases", "terminating", "expected"), METRIC_PHASES)
def test_assess_metric(
    fields: dict[str, Any], phases: tuple[AnalysisPhase, ...], terminating: bool, expected: AnalysisPhase
) -> None:
    assert assess_metric(metric(**fields), result_of(*phases), terminating) is expected


def test_failure_verdict_messages_match_argo() -> None:
    assert failure_verdict(metric(), result_of(F)) == (F, "failed (1) > failureLimit (0)")
    assert failure_verdict(metric(), result_of(INC)) == (INC, "inconclusive (1) > inconclusiveLimit (0)")
    assert failure_verdict(metric(), result_of(*[E] * 5)) == (
        E,
        "consecutiveErrors (5) > consecutiveErrorLimit (4)",
    )
    assert failure_verdict(metric(), result_of(S)) == (None, "")


def test_worse_order() -> None:
    order = [S, R, P, INC, E, F]
    for a, b in itertools.pairwise(order):
        assert is_worse(a, b) and not is_worse(b, a)


def test_run_is_worst_completed_metric_with_argo_message() -> None:
    metrics = [metric("a"), metric("b")]
    results = [result_of(S, name="a"), result_of(F, name="b")]
    results[1].measurements[-1].message = "boom"  # type: ignore[index]
    out = assess_run(metrics, results, frozenset(), terminate=False)
    assert out.phase is F
    assert (
        out.message
        == 'Metric "b" assessed Failed due to failed (1) > failureLimit (0): "Error Message: boom"'
    )
    assert (out.run_summary.count, out.run_summary.successful, out.run_summary.failed) == (2, 1, 1)
    assert [t.name for t in out.transitions] == ["a", "b"]


def test_run_waits_for_every_metric() -> None:
    metrics = [metric("a"), metric("b", interval="1s")]
    out = assess_run(metrics, [result_of(S, name="a"), result_of(S, name="b")], frozenset(), terminate=False)
    assert out.phase is R and out.message == ""
    not_started = assess_run(metrics, [result_of(S, name="a")], frozenset(), terminate=False)
    assert not_started.phase is R


def test_dry_run_metrics_never_fail_the_run() -> None:
    metrics = [metric("a"), metric("b")]
    out = assess_run(
        metrics, [result_of(S, name="a"), result_of(F, name="b")], frozenset({"b"}), terminate=False
    )
    assert out.phase is S
    assert out.dry_run_summary.failed == 1 and out.run_summary.failed == 0
    assert out.results[1].message == "Metric assessed Failed due to failed (1) > failureLimit (0)"
    only_dry = assess_run([metric("b")], [result_of(F, name="b")], frozenset({"b"}), terminate=False)
    assert only_dry.phase is S


def test_a_failed_metric_terminates_the_others() -> None:
    metrics = [metric("a", interval="1s"), metric("b")]
    first = assess_run(
        metrics, [result_of(S, name="a"), result_of(F, name="b")], frozenset(), terminate=False
    )
    assert first.phase is R  # Argo finishes on the next round
    second = assess_run(metrics, first.results, frozenset(), terminate=False)
    assert second.phase is F


def test_terminate_request_completes_successfully() -> None:
    out = assess_run([metric("a", interval="1s")], [result_of(S, name="a")], frozenset(), terminate=True)
    assert (out.phase, out.message) == (S, "Run Terminated")


phases = st.sampled_from([S, F, INC, E])


@given(st.lists(phases, max_size=30))
def test_counters_add_up(sequence: list[AnalysisPhase]) -> None:
    out = result_of(*sequence)
    assert (out.count or 0) == (out.successful or 0) + (out.failed or 0) + (out.inconclusive or 0)
    assert (out.count or 0) + (out.error or 0) == len(sequence)
    streak = 0
    for phase in reversed(sequence):
        if phase is not E:
            break
        streak += 1
    assert (out.consecutive_error or 0) == streak


@given(st.lists(st.sampled_from([S, F]), max_size=20), st.integers(min_value=-1, max_value=5))
def test_failed_exactly_when_failures_exceed_the_limit(
    sequence: list[AnalysisPhase], failure_limit: int
) -> None:
    m = metric(interval="1s", failureLimit=failure_limit)
    phase = assess_metric(m, result_of(*sequence), False)
    failures = sequence.count(F)
    if not sequence:
        assert phase is P
    elif failure_limit >= 0 and failures > failure_limit:
        assert phase is F
    else:
        assert phase is R
