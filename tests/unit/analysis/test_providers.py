"""Prometheus and web providers against scripted HTTP answers (httpx.MockTransport)."""

from __future__ import annotations

import json
import math
from datetime import UTC, datetime
from typing import Any

import httpx
import pytest

from kruise.analysis.api import AnalysisPhase, Metric
from kruise.analysis.providers import (
    PrometheusProvider,
    ProviderRegistry,
    WebProvider,
    default_registry,
    format_float,
)
from kruise.analysis.providers.prometheus import parse_query_answer
from kruise.analysis.providers.web import find_json_path
from kruise.core.errors import ProviderError

NOW = datetime(2025, 1, 1, tzinfo=UTC)
S, F, E = AnalysisPhase.SUCCESSFUL, AnalysisPhase.FAILED, AnalysisPhase.ERROR


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (0.95, "0.95"),
        (1.0, "1"),
        (1e-07, "0.0000001"),
        (1e21, "1000000000000000000000"),
        (math.nan, "NaN"),
        (math.inf, "+Inf"),
        (-math.inf, "-Inf"),
        (-0.5, "-0.5"),
    ],
)
def test_format_float_like_go(value: float, text: str) -> None:
    assert format_float(value) == text


def answer(kind: str, result: Any, **extra: Any) -> dict[str, Any]:
    return {"status": "success", "data": {"resultType": kind, "result": result}, **extra}


def test_parse_query_answer_shapes() -> None:
    assert parse_query_answer(answer("scalar", [1.0, "0.5"])) == (0.5, "0.5", {})
    vector = answer("vector", [{"metric": {}, "value": [1, "0.99"]}, {"metric": {}, "value": [1, "NaN"]}])
    result, text, _ = parse_query_answer(vector)
    assert result[0] == 0.99 and math.isnan(result[1]) and text == "[0.99,NaN]"
    assert parse_query_answer(answer("vector", []))[:2] == ([], "[]")
    matrix = answer("matrix", [{"metric": {}, "values": [[1, "1"], [2, "2"]]}])
    assert parse_query_answer(matrix)[:2] == ([[1.0, 2.0]], "[[1,2]]")
    assert parse_query_answer(answer("scalar", [1, "1"], warnings=["w1"]))[2] == {"warnings": '"w1"'}
    with pytest.raises(ProviderError, match="Prometheus metric type not supported"):
        parse_query_answer(answer("string", [1, "x"]))
    with pytest.raises(ProviderError, match="bad_data: parse error"):
        parse_query_answer({"status": "error", "errorType": "bad_data", "error": "parse error"})


@pytest.mark.parametrize(
    ("path", "document", "value"),
    [
        ("{$.data.ok}", {"data": {"ok": True}}, True),
        ("{.data.ok}", {"data": {"ok": True}}, True),
        ("$.data.ok", {"data": {"ok": True}}, True),
        ("{$}", {"a": 1}, {"a": 1}),
        ("", [1, 2], [1, 2]),
        ("{$.results[0].rate}", {"results": [{"rate": 0.5}]}, 0.5),
        ("{$.500}", {"500": 3}, 3),
        ("{$.items[?(@.name=='b')].v}", {"items": [{"name": "a", "v": 1}, {"name": "b", "v": 2}]}, 2),
    ],
)
def test_find_json_path(path: str, document: Any, value: Any) -> None:
    assert find_json_path(path, document) == value


def test_find_json_path_errors() -> None:
    with pytest.raises(ProviderError, match="produced no value"):
        find_json_path("{$.missing}", {"a": 1})
    with pytest.raises(ProviderError, match="unsupported jsonPath template"):
        find_json_path("x={$.a} y={$.b}", {"a": 1})


def metric(provider: dict[str, Any], **fields: Any) -> Metric:
    return Metric.from_dict({"name": "m", "provider": provider, **fields})


class Recorder:
    """A MockTransport handler that records requests and answers from a script."""

    def __init__(self, respond: Any) -> None:
        self.requests: list[httpx.Request] = []
        self.respond = respond

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        return self.respond(request)  # type: ignore[no-any-return]


async def test_prometheus_sends_the_resolved_query_with_headers() -> None:
    rec = Recorder(
        lambda r: httpx.Response(200, json=answer("vector", [{"metric": {}, "value": [1, "0.99"]}]))
    )
    provider = PrometheusProvider(transport=httpx.MockTransport(rec))
    m = metric(
        {
            "prometheus": {
                "address": "http://prom:9090/",
                "query": 'rate(x{svc="{{args.svc}}"}[1m])',
                "headers": [{"key": "X-Scope-OrgID", "value": "tenant_a"}],
                "authentication": {"basicAuth": {"username": "u", "password": "p"}},
            }
        },
        successCondition="result[0] >= 0.95",
    )
    out = await provider.measure(m, {"svc": "web"}, NOW)
    assert (out.phase, out.value, out.started_at) == (S, "[0.99]", NOW)
    (request,) = rec.requests
    assert request.url == "http://prom:9090/api/v1/query" and request.method == "POST"
    form = dict(x.split("=", 1) for x in request.content.decode().split("&"))
    assert httpx.QueryParams(request.content.decode())["query"] == 'rate(x{svc="web"}[1m])'
    assert float(form["time"]) == NOW.timestamp()
    assert request.headers["X-Scope-OrgID"] == "tenant_a"
    assert request.headers["Authorization"].startswith("Basic ")


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ({"query": "up"}, "prometheus address is not configured"),
        ({"address": "prom:9090", "query": "up"}, "is not a URL"),
        ({"address": "http://p", "query": "up", "timeout": -1}, "prometheus timeout should not be negative"),
        (
            {"address": "http://p", "query": "up", "rangeQuery": {"start": "now()"}},
            "rangeQuery is not supported",
        ),
        (
            {"address": "http://p", "query": "up", "authentication": {"sigv4": {"region": "x"}}},
            "sigv4 authentication is not supported",
        ),
        ({"address": "http://p", "query": "{{args.nope}}"}, "failed to resolve {{args.nope}}"),
    ],
)
async def test_prometheus_configuration_errors_are_error_measurements(
    spec: dict[str, Any], message: str
) -> None:
    provider = PrometheusProvider(
        transport=httpx.MockTransport(lambda r: httpx.Response(200, json=answer("scalar", [1, "1"])))
    )
    out = await provider.measure(metric({"prometheus": spec}), {}, NOW)
    assert out.phase is E and message in (out.message or "")


async def test_prometheus_http_errors_are_error_measurements() -> None:
    provider = PrometheusProvider(
        transport=httpx.MockTransport(lambda r: httpx.Response(502, text="bad gateway"))
    )
    out = await provider.measure(metric({"prometheus": {"address": "http://p", "query": "up"}}), {}, NOW)
    assert out.phase is E and out.message == "prometheus answered 502: bad gateway"
    failing = PrometheusProvider(
        transport=httpx.MockTransport(
            lambda r: httpx.Response(
                400, json={"status": "error", "errorType": "bad_data", "error": "parse error at char 3"}
            )
        )
    )
    out = await failing.measure(metric({"prometheus": {"address": "http://p", "query": "up("}}), {}, NOW)
    assert out.phase is E and out.message == "bad_data: parse error at char 3"


async def test_oauth2_fetches_a_bearer_token_first() -> None:
    def respond(request: httpx.Request) -> httpx.Response:
        if request.url.path == "/token":
            assert (
                b"grant_type=client_credentials" in request.content and b"scope=read+write" in request.content
            )
            return httpx.Response(200, json={"access_token": "tok"})
        assert request.headers["Authorization"] == "Bearer tok"
        return httpx.Response(200, json={"ok": True})

    provider = WebProvider(transport=httpx.MockTransport(respond))
    spec = {
        "url": "http://svc/m",
        "jsonPath": "{$.ok}",
        "authentication": {
            "oauth2": {
                "tokenUrl": "http://auth/token",
                "clientId": "c",
                "clientSecret": "s",
                "scopes": ["read", "write"],
            }
        },
    }
    out = await provider.measure(metric({"web": spec}, successCondition="result == true"), {}, NOW)
    assert out.phase is S, out.message


async def test_web_post_body_and_headers() -> None:
    rec = Recorder(lambda r: httpx.Response(200, json={"data": {"rate": 0.2}}))
    provider = WebProvider(transport=httpx.MockTransport(rec))
    spec = {
        "url": "http://svc/{{args.path}}",
        "method": "POST",
        "jsonBody": {"svc": "web"},
        "headers": [{"key": "Authorization", "value": "Bearer {{args.token}}"}],
        "jsonPath": "{$.data.rate}",
    }
    out = await provider.measure(
        metric({"web": spec}, failureCondition="result > 0.1"), {"path": "q", "token": "t"}, NOW
    )
    assert (out.phase, out.value) == (F, "0.2")
    (request,) = rec.requests
    assert request.method == "POST" and request.url == "http://svc/q"
    assert (
        json.loads(request.content) == {"svc": "web"}
        and request.headers["Content-Type"] == "application/json"
    )
    assert request.headers["Authorization"] == "Bearer t"


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ({"url": "http://svc", "body": "x"}, "Body/JSONBody can only be used with POST or PUT"),
        (
            {"url": "http://svc", "method": "POST", "body": "x", "jsonBody": {"a": 1}},
            "use either Body or JSONBody",
        ),
        ({"url": "http://svc", "jsonPath": "{$.nope}"}, "result of web metric produced no value"),
        ({"url": "http://svc", "jsonPath": "{$.[}"}, "invalid jsonPath"),
        ({"url": "not a url"}, "invalid URL"),
    ],
)
async def test_web_errors(spec: dict[str, Any], message: str) -> None:
    provider = WebProvider(transport=httpx.MockTransport(lambda r: httpx.Response(200, json={"a": 1})))
    out = await provider.measure(metric({"web": spec}, successCondition="true"), {}, NOW)
    assert out.phase is E and message in (out.message or ""), out.message


async def test_web_non_2xx_and_plain_text() -> None:
    provider = WebProvider(transport=httpx.MockTransport(lambda r: httpx.Response(503, text="down")))
    out = await provider.measure(metric({"web": {"url": "http://svc"}}), {}, NOW)
    assert out.phase is E and out.message == "received non 2xx response code: 503"
    text = WebProvider(transport=httpx.MockTransport(lambda r: httpx.Response(200, text="It worked!")))
    ok = await text.measure(
        metric({"web": {"url": "http://svc"}}, successCondition="result == 'It worked!'"), {}, NOW
    )
    assert (ok.phase, ok.value) == (S, "It worked!")
    bad = await text.measure(
        metric({"web": {"url": "http://svc"}}, successCondition="result == 'nope'"), {}, NOW
    )
    assert bad.phase is F, "a plain-text answer is judged, never passed unconditionally"


async def test_registry_picks_by_provider_field() -> None:
    registry = default_registry()
    assert isinstance(registry.for_metric(metric({"prometheus": {"query": "q"}})), PrometheusProvider)
    assert isinstance(registry.for_metric(metric({"web": {"url": "u"}})), WebProvider)
    datadog = registry.for_metric(metric({"datadog": {"query": "q"}}))
    out = await datadog.measure(metric({"datadog": {"query": "q"}}), {}, NOW)
    assert out.phase is E and out.message == "metric provider 'datadog' is not supported by kruise"
    empty = await ProviderRegistry({}).for_metric(metric({})).measure(metric({}), {}, NOW)
    assert empty.message == "no provider specified"
