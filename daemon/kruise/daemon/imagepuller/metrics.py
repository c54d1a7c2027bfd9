"""The image puller's Prometheus metrics (on the daemon's ``--addr`` ``/metrics``)."""

from __future__ import annotations

from prometheus_client import Counter, Histogram

PULLS = Counter(
    "kruise_daemon_image_pulls_total",
    "Image pulls finished by the daemon's pull workers, by result",
    ["result"],
)
PULL_SECONDS = Histogram(
    "kruise_daemon_image_pull_duration_seconds",
    "Seconds from a pull worker's start to its tag's final phase",
    ["result"],
    buckets=(0.1, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600),
)


def observe_pull(result: str, seconds: float) -> None:
    """Count one finished pull (``result``: the tag's final phase) and its duration."""
    PULLS.labels(result).inc()
    PULL_SECONDS.labels(result).observe(seconds)
