"""The Prometheus metric provider: one instant PromQL query per measurement.

Mirrors Argo Rollouts' ``metricproviders/prometheus``: the query (arguments resolved) is sent to
``<address>/api/v1/query`` at the measurement time, with the metric's headers, authentication and
``insecure`` flag, bounded by ``timeout`` seconds (default 30; negative is an error). The result
the conditions see:

- scalar -> a number (``result >= 0.95``);
- vector -> a list of numbers, one per series (``result[0] >= 0.95``; an empty list when no
  series matched, so ``result[0]`` is then an Error and ``len(result) == 0`` is how to accept it);
- matrix -> a list of lists of numbers, one per series (Argo rejects matrices; kruise accepts
  them, e.g. ``all(result[0], # < 1000)``);
- string results are an Error (``Prometheus metric type not supported``).

The measurement ``value`` prints numbers as Prometheus does (``0.95``, ``NaN``, ``+Inf``) and
vectors as ``[0.95,1]``; query warnings go to ``metadata.warnings``. ``rangeQuery`` and sigv4
authentication are accepted in the spec but measured as Errors.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import datetime
from typing import Any
from urllib.parse import urlsplit

import httpx

from kruise.analysis.api import Measurement, Metric, PrometheusMetric
from kruise.analysis.args import ArgumentError, resolve_metric
from kruise.analysis.providers.base import Clock, error_measurement, format_float, judged_measurement, utc_now
from kruise.analysis.providers.http import HttpRequest, send
from kruise.core.errors import ProviderError

__all__ = ["DEFAULT_TIMEOUT_SECONDS", "PrometheusProvider", "parse_query_answer"]

DEFAULT_TIMEOUT_SECONDS = 30
"""Query timeout when ``timeout`` is unset (Argo's default)."""


def _number(sample: Any) -> float:
    return float(sample[1])


def parse_query_answer(body: Mapping[str, Any]) -> tuple[Any, str, dict[str, str]]:
    """``(result, value text, metadata)`` from a ``/api/v1/query`` JSON answer.

    Raises :class:`ProviderError` for an error answer (``bad_data: parse error ...``) or an
    unsupported result type.
    """
    if body.get("status") != "success":
        raise ProviderError(f"{body.get('errorType') or 'error'}: {body.get('error') or 'query failed'}")
    data = body.get("data") or {}
    kind, raw = data.get("resultType"), data.get("result")
    warnings = body.get("warnings") or []
    metadata = {"warnings": ", ".join(f'"{w}"' for w in warnings)} if warnings else {}
    try:
        if kind == "scalar":
            value = _number(raw)
            return value, format_float(value), metadata
        if kind == "vector":
            values = [_number(series["value"]) for series in raw or []]
            return values, "[" + ",".join(format_float(v) for v in values) + "]", metadata
        if kind == "matrix":
            rows = [[_number(s) for s in series["values"]] for series in raw or []]
            text = "[" + ",".join("[" + ",".join(format_float(v) for v in row) + "]" for row in rows) + "]"
            return rows, text, metadata
    except (KeyError, TypeError, ValueError, IndexError) as err:
        raise ProviderError(f"malformed Prometheus {kind} result: {err}") from err
    raise ProviderError("Prometheus metric type not supported")


class PrometheusProvider:
    """Measures ``provider.prometheus`` metrics. ``transport`` replaces httpx's network (tests)."""

    def __init__(self, *, clock: Clock = utc_now, transport: httpx.AsyncBaseTransport | None = None) -> None:
        self.clock = clock
        self.transport = transport

    async def measure(self, metric: Metric, args: Mapping[str, str], now: datetime) -> Measurement:
        """Run the metric's query once at ``now``; see the module docstring for the result shape."""
        try:
            resolved = resolve_metric(metric, args)
            spec = resolved.provider.prometheus
            if spec is None:
                raise ProviderError("metric has no prometheus provider")
            request = self._request(spec, now)
            answer = await send(request, self.transport)
            result, value, metadata = parse_query_answer(self._json(answer))
        except (ArgumentError, ProviderError) as err:
            return error_measurement(now, str(err), self.clock())
        return judged_measurement(resolved, result, value, now, self.clock(), metadata)

    def _request(self, spec: PrometheusMetric, now: datetime) -> HttpRequest:
        if not spec.address:
            raise ProviderError("prometheus address is not configured")
        parts = urlsplit(spec.address)
        if not parts.scheme or not parts.netloc:
            raise ProviderError(f"prometheus address {spec.address!r} is not a URL")
        if spec.range_query is not None:
            raise ProviderError("prometheus rangeQuery is not supported by kruise")
        if not spec.query:
            raise ProviderError("prometheus query is empty")
        if spec.timeout is not None and spec.timeout < 0:
            raise ProviderError("prometheus timeout should not be negative")
        timeout = spec.timeout or DEFAULT_TIMEOUT_SECONDS
        return HttpRequest(
            method="POST",
            url=spec.address.rstrip("/") + "/api/v1/query",
            timeout=float(timeout),
            headers=tuple(spec.headers or ()),
            insecure=bool(spec.insecure),
            authentication=spec.authentication,
            form={"query": spec.query, "time": f"{now.timestamp():.3f}"},
        )

    @staticmethod
    def _json(answer: httpx.Response) -> Mapping[str, Any]:
        try:
            body = answer.json()
        except (json.JSONDecodeError, UnicodeDecodeError):
            body = None
        if not isinstance(body, dict) or ("status" not in body):
            snippet = answer.text[:200].strip()
            raise ProviderError(f"prometheus answered {answer.status_code}: {snippet or 'no body'}")
        return body
