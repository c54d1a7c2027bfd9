"""The MetricProvider contract (DESIGN §3), for every provider, against real servers.

Each provider is driven against what it talks to in production (a real Prometheus scraping
the test exporter; an HTTP endpoint for the web provider) and must:

- judge a reachable result by the metric's conditions: Successful / Failed, with ``value`` set,
  ``startedAt`` = the ``now`` it was given and ``finishedAt`` not before it;
- resolve ``{{args.<name>}}`` in its own fields;
- be Successful with no condition at all (Argo's rule);
- turn every failure into an ``Error`` measurement with a message, never raise, never pass:
  an unreachable server, an answer slower than the timeout, an unresolved argument, a condition
  that cannot be evaluated.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import pytest

from kruise.analysis.api import AnalysisPhase, Measurement, Metric
from kruise.analysis.providers import MetricProvider, PrometheusProvider, WebProvider
from tests.integration.analysis.conftest import Endpoint
from tests.support.prometheus import PrometheusStack, free_port

ERROR_RATIO = (
    'sum(rate(http_requests_total{{revision="{rev}",code=~"5.."}}[5s])) / '
    'sum(rate(http_requests_total{{revision="{rev}"}}[5s]))'
)


@dataclass(frozen=True)
class World:
    prometheus: PrometheusStack
    endpoint: Endpoint


@dataclass(frozen=True)
class Case:
    """How to point one provider at a passing result, an unreachable server and a slow one.

    ``query(world, arg)`` builds the provider block: its value is below 0.5 when ``arg`` (the
    templated part) is ``"good"``; ``{"unreachable": url}``/``{"slow": url}`` give the others.
    """

    id: str
    provider: Callable[[], MetricProvider]
    block: Callable[[World, str], dict[str, Any]]
    unreachable: Callable[[str], dict[str, Any]]
    slow: Callable[[World], dict[str, Any]]
    condition: str


CASES = [
    Case(
        id="prometheus",
        provider=PrometheusProvider,
        block=lambda w, rev: {
            "prometheus": {"address": w.prometheus.address, "query": ERROR_RATIO.format(rev=rev)}
        },
        unreachable=lambda url: {"prometheus": {"address": url, "query": "up"}},
        slow=lambda w: {
            "prometheus": {"address": f"{w.endpoint.url}/slow-prometheus", "query": "up", "timeout": 1}
        },
        condition="result[0] < 0.05",
    ),
    Case(
        id="web",
        provider=WebProvider,
        block=lambda w, path: {"web": {"url": f"{w.endpoint.url}/{path}", "jsonPath": "{$.data.rate}"}},
        unreachable=lambda url: {"web": {"url": url}},
        slow=lambda w: {"web": {"url": f"{w.endpoint.url}/slow?seconds=3", "timeoutSeconds": 1}},
        condition="result > 0.95",
    ),
]
PASSING_ARG = {"prometheus": "good", "web": "json"}
FAILING_ARG = {"prometheus": "bad", "web": "slow?seconds=0"}
cases = pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])


@pytest.fixture
def world(prometheus: PrometheusStack, endpoint: Endpoint) -> World:
    return World(prometheus, endpoint)


def metric(provider: dict[str, Any], **fields: Any) -> Metric:
    return Metric.from_dict({"name": "contract", "provider": provider, **fields})


async def measure(case: Case, m: Metric, args: dict[str, str] | None = None) -> tuple[Measurement, datetime]:
    now = datetime.now(UTC)
    out = await case.provider().measure(m, args or {}, now)
    assert out.started_at == now
    assert out.finished_at is not None and out.finished_at >= now
    assert out.completed, "providers return completed measurements"
    return out, now


def assert_error(out: Measurement) -> None:
    assert out.phase is AnalysisPhase.ERROR
    assert out.message, "an Error measurement says what went wrong"


@cases
async def test_a_reachable_result_is_judged_by_the_conditions(case: Case, world: World) -> None:
    templated = case.block(world, "{{ args.target }}")
    passing, _ = await measure(
        case, metric(templated, successCondition=case.condition), {"target": PASSING_ARG[case.id]}
    )
    assert passing.phase is AnalysisPhase.SUCCESSFUL, passing.message
    assert passing.value
    failing, _ = await measure(
        case, metric(case.block(world, PASSING_ARG[case.id]), failureCondition=case.condition)
    )
    assert failing.phase is AnalysisPhase.FAILED
    other, _ = await measure(
        case, metric(case.block(world, FAILING_ARG[case.id]), successCondition="result == 'x'")
    )
    assert other.phase in (AnalysisPhase.FAILED, AnalysisPhase.ERROR)


@cases
async def test_no_condition_is_successful(case: Case, world: World) -> None:
    out, _ = await measure(case, metric(case.block(world, PASSING_ARG[case.id])))
    assert out.phase is AnalysisPhase.SUCCESSFUL


@cases
async def test_a_condition_that_cannot_be_evaluated_is_an_error(case: Case, world: World) -> None:
    for condition in ("result[99] > 0", "nosuch > 1", "result >"):
        out, _ = await measure(
            case, metric(case.block(world, PASSING_ARG[case.id]), successCondition=condition)
        )
        assert_error(out)


@cases
async def test_an_unreachable_server_is_an_error(case: Case) -> None:
    out, _ = await measure(
        case, metric(case.unreachable(f"http://127.0.0.1:{free_port()}"), successCondition="true")
    )
    assert_error(out)
    assert "connection failed" in (out.message or "")


@cases
async def test_an_answer_slower_than_the_timeout_is_an_error(case: Case, world: World) -> None:
    started = time.monotonic()
    out, _ = await measure(case, metric(case.slow(world), successCondition="true"))
    assert_error(out)
    assert "timed out after 1s" in (out.message or "")
    assert time.monotonic() - started < 2.5


@cases
async def test_an_unresolved_argument_is_an_error(case: Case, world: World) -> None:
    out, _ = await measure(case, metric(case.block(world, "{{args.missing}}"), successCondition="true"))
    assert_error(out)
    assert "failed to resolve {{args.missing}}" in (out.message or "")
