"""Metric providers behind the :class:`~kruise.analysis.providers.base.MetricProvider` port.

``default_registry()`` is what the AnalysisRun controller uses: Prometheus and web are measured;
every other provider Argo knows is accepted in the spec and measured as an Error that names it.
"""

from __future__ import annotations

import httpx

from kruise.analysis.providers.base import (
    Clock,
    MetricProvider,
    ProviderRegistry,
    UnsupportedProvider,
    error_measurement,
    format_float,
    judged_measurement,
    utc_now,
)
from kruise.analysis.providers.prometheus import PrometheusProvider
from kruise.analysis.providers.web import WebProvider

__all__ = [
    "Clock",
    "MetricProvider",
    "PrometheusProvider",
    "ProviderRegistry",
    "UnsupportedProvider",
    "WebProvider",
    "default_registry",
    "error_measurement",
    "format_float",
    "judged_measurement",
    "utc_now",
]


def default_registry(
    *, clock: Clock = utc_now, transport: httpx.AsyncBaseTransport | None = None
) -> ProviderRegistry:
    """The providers kruise implements, keyed by their field name in ``metric.provider``."""
    return ProviderRegistry(
        {
            "prometheus": PrometheusProvider(clock=clock, transport=transport),
            "web": WebProvider(clock=clock, transport=transport),
        }
    )
