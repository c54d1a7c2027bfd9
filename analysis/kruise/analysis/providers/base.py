"""The metric provider port (DESIGN §3) and the helpers every provider shares.

Contract of :class:`MetricProvider` (``tests/integration/analysis/test_provider_contract.py``
holds every implementation to it):

- ``measure(metric, args, now)`` resolves ``{{args.<name>}}`` in the metric itself, queries its
  system once, and returns a *completed* :class:`~kruise.analysis.api.Measurement`:
  ``startedAt = now``, ``finishedAt`` when the answer was judged, ``value`` the result as text.
- The phase comes from the metric's conditions
  (:func:`~kruise.analysis.evaluate.evaluate_result`) applied to the parsed result.
- Anything that goes wrong (unreachable server, timeout, non-2xx answer, unparseable or
  unsupported result, unresolved argument, bad condition) is an ``Error`` measurement whose
  ``message`` says what happened. ``measure`` never raises for such failures and never returns
  ``Successful`` without a judged result.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any, Protocol, runtime_checkable

from kruise.analysis.api import AnalysisPhase, Measurement, Metric
from kruise.analysis.evaluate import evaluate_result

__all__ = [
    "Clock",
    "MetricProvider",
    "ProviderRegistry",
    "UnsupportedProvider",
    "error_measurement",
    "format_float",
    "judged_measurement",
    "utc_now",
]

Clock = Callable[[], datetime]
"""A source of timezone-aware UTC datetimes."""


def utc_now() -> datetime:
    """The current time in UTC (the default :data:`Clock`)."""
    return datetime.now(UTC)


@runtime_checkable
class MetricProvider(Protocol):
    """Takes one measurement of a metric (see the module docstring for the contract)."""

    async def measure(self, metric: Metric, args: Mapping[str, str], now: datetime) -> Measurement:
        """Measure ``metric`` with argument values ``args`` (name -> value) started at ``now``."""
        ...


def format_float(value: float) -> str:
    """A float as Go's ``strconv.FormatFloat(v, 'f', -1, 64)`` (Prometheus ``SampleValue.String``).

    ``0.95`` -> ``"0.95"``, ``1.0`` -> ``"1"``, ``1e-07`` -> ``"0.0000001"``, NaN -> ``"NaN"``,
    infinities -> ``"+Inf"``/``"-Inf"``.
    """
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "+Inf" if value > 0 else "-Inf"
    return format(Decimal(repr(value)).normalize(), "f")


def error_measurement(now: datetime, message: str, finished: datetime | None = None) -> Measurement:
    """A completed Error measurement started at ``now`` explaining ``message``."""
    return Measurement(
        phase=AnalysisPhase.ERROR, message=message, started_at=now, finished_at=finished or now
    )


def judged_measurement(
    metric: Metric,
    result: Any,
    value: str,
    now: datetime,
    finished: datetime,
    metadata: Mapping[str, str] | None = None,
) -> Measurement:
    """A completed measurement of ``result`` (shown as ``value``) judged by the metric's conditions.

    A condition error gives an Error measurement carrying the error and the value.
    """
    phase, error = evaluate_result(metric, result)
    return Measurement(
        phase=phase,
        message=error,
        value=value,
        started_at=now,
        finished_at=finished,
        metadata=dict(metadata) if metadata else None,
    )


class UnsupportedProvider:
    """Stands in for a provider kruise cannot measure: every measurement is an Error."""

    def __init__(self, message: str) -> None:
        self.message = message

    async def measure(self, metric: Metric, args: Mapping[str, str], now: datetime) -> Measurement:
        """An Error measurement with this provider's message."""
        return error_measurement(now, self.message)


class ProviderRegistry:
    """Picks the provider for a metric by the provider field it sets (``prometheus``, ``web``...)."""

    def __init__(self, providers: Mapping[str, MetricProvider]) -> None:
        self.providers = dict(providers)

    def for_metric(self, metric: Metric) -> MetricProvider:
        """The provider named by ``metric.provider``; an :class:`UnsupportedProvider` when it names
        none, several, or one kruise does not implement (e.g. ``datadog``)."""
        kinds = metric.provider.kinds()
        if not kinds:
            return UnsupportedProvider("no provider specified")
        if len(kinds) > 1:
            return UnsupportedProvider("multiple providers specified")
        provider = self.providers.get(kinds[0])
        if provider is None:
            return UnsupportedProvider(f"metric provider '{kinds[0]}' is not supported by kruise")
        return provider
