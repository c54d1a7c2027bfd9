"""The web provider against a local HTTP server."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from kruise.analysis.api import AnalysisPhase, Measurement, Metric
from kruise.analysis.providers import WebProvider
from tests.integration.analysis.conftest import Endpoint

S, F, E = AnalysisPhase.SUCCESSFUL, AnalysisPhase.FAILED, AnalysisPhase.ERROR


async def measure(web: dict[str, Any], args: dict[str, str] | None = None, **conditions: Any) -> Measurement:
    metric = Metric.from_dict({"name": "webmetric", "provider": {"web": web}, **conditions})
    return await WebProvider().measure(metric, args or {}, datetime.now(UTC))


async def test_json_path_values(endpoint: Endpoint) -> None:
    ok = await measure(
        {"url": f"{endpoint.url}/json", "jsonPath": "{$.data.ok}"}, successCondition="result == true"
    )
    assert (ok.phase, ok.value) == (S, "true")
    rate = await measure(
        {"url": f"{endpoint.url}/json", "jsonPath": "{$.data.rate}"}, successCondition="result >= 0.995"
    )
    assert (rate.phase, rate.value) == (F, "0.99")
    whole = await measure({"url": f"{endpoint.url}/json"}, successCondition="result.data.errors < 5")
    assert whole.phase is S and whole.value == '{"data":{"errors":3,"ok":true,"rate":0.99}}'


async def test_plain_text_non_2xx_and_post(endpoint: Endpoint) -> None:
    text = await measure({"url": f"{endpoint.url}/text"}, successCondition="result == 'It worked!'")
    assert text.phase is S
    down = await measure({"url": f"{endpoint.url}/status/503"}, successCondition="true")
    assert (down.phase, down.message) == (E, "received non 2xx response code: 503")
    echo = await measure(
        {
            "url": f"{endpoint.url}/echo",
            "method": "POST",
            "body": '{"svc": "{{args.svc}}"}',
            "headers": [{"key": "Content-Type", "value": "application/json"}],
            "jsonPath": "{$.body.svc}",
        },
        {"svc": "guestbook"},
        successCondition="result == 'guestbook'",
    )
    assert echo.phase is S, echo.message


async def test_insecure_flag_and_headers(endpoint: Endpoint) -> None:
    denied = await measure({"url": f"{endpoint.url}/secure"}, successCondition="true")
    assert (denied.phase, denied.message) == (E, "received non 2xx response code: 403")
    allowed = await measure(
        {
            "url": f"{endpoint.url}/secure",
            "insecure": True,
            "headers": [{"key": "Authorization", "value": "Bearer {{args.token}}"}],
        },
        {"token": "s3cret"},
        successCondition="result.data.ok",
    )
    assert allowed.phase is S
