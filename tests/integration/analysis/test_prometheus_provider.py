"""The Prometheus provider against a real Prometheus: the outcomes Argo documents.

The exporter's revisions: ``good`` serves no errors, ``bad`` 50%, ``idle`` no traffic at all
(its error ratio is 0/0 = NaN), ``flip`` is changed by the test; an unknown revision matches no
series (an empty vector).
"""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from typing import Any

from kruise.analysis.api import AnalysisPhase, Measurement, Metric
from kruise.analysis.providers import PrometheusProvider
from tests.support.prometheus import PrometheusStack

S, F, E, INC = AnalysisPhase.SUCCESSFUL, AnalysisPhase.FAILED, AnalysisPhase.ERROR, AnalysisPhase.INCONCLUSIVE
ERROR_RATIO = (
    'sum(rate(http_requests_total{revision="{{args.revision}}",code=~"5.."}[5s])) / '
    'sum(rate(http_requests_total{revision="{{args.revision}}"}[5s]))'
)


async def measure(
    prometheus: PrometheusStack, revision: str, query: str = ERROR_RATIO, **conditions: Any
) -> Measurement:
    metric = Metric.from_dict(
        {
            "name": "error-rate",
            "provider": {"prometheus": {"address": prometheus.address, "query": query}},
            **conditions,
        }
    )
    return await PrometheusProvider().measure(metric, {"revision": revision}, datetime.now(UTC))


async def test_success_and_failure(prometheus: PrometheusStack) -> None:
    good = await measure(prometheus, "good", successCondition="result[0] <= 0.05")
    assert (good.phase, good.value) == (S, "[0]")
    bad = await measure(prometheus, "bad", successCondition="result[0] <= 0.05")
    assert (bad.phase, bad.value) == (F, "[0.5]")
    bounded = await measure(
        prometheus, "bad", successCondition="result[0] <= 0.05", failureCondition="result[0] > 0.9"
    )
    assert bounded.phase is INC


async def test_nan_never_passes(prometheus: PrometheusStack) -> None:
    idle = await measure(prometheus, "idle", successCondition="result[0] <= 0.05")
    assert (idle.phase, idle.value) == (F, "[NaN]")
    both = await measure(
        prometheus, "idle", successCondition="result[0] <= 0.05", failureCondition="result[0] > 0.05"
    )
    assert both.phase is INC
    accepted = await measure(prometheus, "idle", successCondition="isNaN(result[0]) || result[0] <= 0.05")
    assert accepted.phase is S


async def test_empty_result(prometheus: PrometheusStack) -> None:
    indexed = await measure(prometheus, "no-such-revision", successCondition="result[0] <= 0.05")
    assert indexed.phase is E and indexed.value == "[]"
    assert indexed.message == "index out of range: 0 (array length is 0)"
    assert (
        await measure(prometheus, "x", successCondition="len(result) == 0 || result[0] <= 0.05")
    ).phase is S
    assert (
        await measure(prometheus, "x", successCondition="len(result) > 0 && result[0] <= 0.05")
    ).phase is F


async def test_scalar_and_matrix_results(prometheus: PrometheusStack) -> None:
    scalar = await measure(
        prometheus,
        "bad",
        'scalar(app_error_ratio{revision="{{args.revision}}"})',
        successCondition="result == 0.5",
    )
    assert (scalar.phase, scalar.value) == (S, "0.5")
    matrix = await measure(
        prometheus,
        "good",
        'app_error_ratio{revision="{{args.revision}}"}[3s]',
        successCondition="all(result[0], # == 0)",
    )
    assert matrix.phase is S and matrix.value is not None and matrix.value.startswith("[[0")


async def test_invalid_promql_is_an_error_with_prometheus_message(prometheus: PrometheusStack) -> None:
    out = await measure(prometheus, "good", "sum(rate(", successCondition="true")
    assert out.phase is E and out.message is not None and out.message.startswith("bad_data:")


async def test_a_changed_error_rate_changes_the_outcome(prometheus: PrometheusStack) -> None:
    gauge = 'app_error_ratio{revision="{{args.revision}}"}'
    assert (await measure(prometheus, "flip", gauge, successCondition="result[0] < 0.1")).phase is S
    prometheus.set_error_rate("flip", 0.8)
    try:
        for _ in range(40):
            out = await measure(prometheus, "flip", gauge, successCondition="result[0] < 0.1")
            if out.phase is F:
                assert out.value == "[0.8]"
                return
            await asyncio.sleep(0.25)
        raise AssertionError("the new error rate never showed up in Prometheus")
    finally:
        prometheus.set_error_rate("flip", 0.0)
