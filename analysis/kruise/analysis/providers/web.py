"""The web metric provider: one HTTP call per measurement, a value picked from its JSON answer.

Mirrors Argo Rollouts' ``metricproviders/webmetric``: ``method`` GET (default), POST or PUT;
``body`` or ``jsonBody`` only with POST/PUT and never both; ``headers``; ``timeoutSeconds``
(default 10, also when <= 0); ``insecure``; a non-2xx answer is an Error
(``received non 2xx response code: 503``). ``jsonPath`` is Kubernetes JSONPath template syntax
(``{$.data.ok}``, ``{.data.ok}``; default ``{$}``, the whole document), evaluated with
jsonpath-ng; the first match is ``result`` and the measurement value is that match as JSON.

One deliberate difference: Argo returns Successful, without looking at the conditions, when the
answer is not JSON. kruise judges the raw text instead (``result == 'It worked!'``), so a metric
with a condition is never Successful without it holding; with no condition it is Successful, as
in Argo.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import datetime
from functools import lru_cache
from typing import Any
from urllib.parse import urlsplit

import httpx
from jsonpath_ng.ext.parser import parse as parse_jsonpath

from kruise.analysis.api import Measurement, Metric, WebMetric
from kruise.analysis.args import ArgumentError, resolve_metric
from kruise.analysis.providers.base import Clock, error_measurement, judged_measurement, utc_now
from kruise.analysis.providers.http import HttpRequest, send
from kruise.core.errors import ProviderError

__all__ = ["DEFAULT_TIMEOUT_SECONDS", "WebProvider", "find_json_path"]

DEFAULT_TIMEOUT_SECONDS = 10
"""Request timeout when ``timeoutSeconds`` is unset or not positive (Argo's default)."""


@lru_cache(maxsize=256)
def _compiled(template: str) -> Any:
    text = template.strip() or "{$}"
    if text.startswith("{") and text.endswith("}"):
        text = text[1:-1].strip()
    if "{" in text or "}" in text:
        raise ProviderError(f"unsupported jsonPath template {template!r}: use a single {{...}} expression")
    if text in ("", "$"):
        text = "$"
    elif text.startswith((".", "[")):
        text = "$" + text
    try:
        return parse_jsonpath(text)
    except Exception as err:  # jsonpath-ng raises plain Exception for some syntax errors
        raise ProviderError(f"invalid jsonPath {template!r}: {err}") from err


def find_json_path(template: str, document: Any) -> Any:
    """The first value at Kubernetes JSONPath ``template`` (``{$.data.ok}``) in ``document``.

    Raises :class:`ProviderError` for an invalid path (``invalid jsonPath ...``) and when nothing
    matches (``result of web metric produced no value``).
    """
    matches = _compiled(template).find(document)
    if not matches:
        raise ProviderError("result of web metric produced no value")
    return matches[0].value


def _json_text(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), sort_keys=True, ensure_ascii=False)


class WebProvider:
    """Measures ``provider.web`` metrics. ``transport`` replaces httpx's network (tests)."""

    def __init__(self, *, clock: Clock = utc_now, transport: httpx.AsyncBaseTransport | None = None) -> None:
        self.clock = clock
        self.transport = transport

    async def measure(self, metric: Metric, args: Mapping[str, str], now: datetime) -> Measurement:
        """Call the metric's URL once at ``now`` and judge the value at its ``jsonPath``."""
        try:
            resolved = resolve_metric(metric, args)
            spec = resolved.provider.web
            if spec is None:
                raise ProviderError("metric has no web provider")
            answer = await send(self._request(spec), self.transport)
            if not 200 <= answer.status_code < 300:
                raise ProviderError(f"received non 2xx response code: {answer.status_code}")
            result, value = self._value(spec, answer)
        except (ArgumentError, ProviderError) as err:
            return error_measurement(now, str(err), self.clock())
        return judged_measurement(resolved, result, value, now, self.clock())

    @staticmethod
    def _request(spec: WebMetric) -> HttpRequest:
        method = (spec.method or "GET").upper()
        if spec.body and spec.json_body is not None:
            raise ProviderError("use either Body or JSONBody; both cannot exists for WebMetric payload")
        if (spec.body or spec.json_body is not None) and method not in ("POST", "PUT"):
            raise ProviderError("Body/JSONBody can only be used with POST or PUT WebMetric Method types")
        content: bytes | None = None
        content_type = None
        if spec.body:
            content = spec.body.encode()
        elif spec.json_body is not None:
            content, content_type = json.dumps(spec.json_body).encode(), "application/json"
        parts = urlsplit(spec.url)
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise ProviderError(f"invalid URL {spec.url!r}: an absolute http(s) URL is required")
        timeout = spec.timeout_seconds if spec.timeout_seconds and spec.timeout_seconds > 0 else None
        return HttpRequest(
            method=method,
            url=spec.url,
            timeout=float(timeout or DEFAULT_TIMEOUT_SECONDS),
            headers=tuple(spec.headers or ()),
            insecure=bool(spec.insecure),
            authentication=spec.authentication,
            content=content,
            content_type=content_type,
        )

    @staticmethod
    def _value(spec: WebMetric, answer: httpx.Response) -> tuple[Any, str]:
        try:
            document = answer.json()
        except (json.JSONDecodeError, UnicodeDecodeError):
            return answer.text, answer.text  # not JSON: the text itself is the result
        value = find_json_path(spec.json_path or "{$}", document)
        return value, _json_text(value)
