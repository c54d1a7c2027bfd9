"""Dry-run and measurement-retention rules: which metrics they match, and trimming history.

Mirrors Argo Rollouts' ``GetDryRunMetrics``/``GetMeasurementRetentionMetrics``: a rule's
``metricName`` is a regular expression searched in each metric name (Go ``regexp.MatchString``,
unanchored; a bare ``*`` means all metrics), and a rule matching no metric makes the run an
Error. Runs keep the latest ``DEFAULT_MEASUREMENT_HISTORY_LIMIT`` (10) measurements per metric,
or a retention rule's ``limit`` when it is positive.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from kruise.analysis.api import DryRun, MeasurementRetention, MetricResult

__all__ = ["DEFAULT_MEASUREMENT_HISTORY_LIMIT", "dry_run_metrics", "retention_limits", "trim_measurements"]

DEFAULT_MEASUREMENT_HISTORY_LIMIT = 10
"""Measurements kept per metric without a retention rule (Argo ``DefaultMeasurementHistoryLimit``)."""


def _matches(pattern: str, name: str) -> bool:
    if pattern == "*":
        return True
    try:
        return re.search(pattern, name) is not None
    except re.error:
        return False


def dry_run_metrics(rules: Sequence[DryRun] | None, names: Sequence[str]) -> frozenset[str]:
    """Names of the metrics that run in dry-run mode.

    Raises ``ValueError`` (``dryRun[0]: Rule didn't match any metric name(s)``) for a rule that
    matches nothing.
    """
    out: set[str] = set()
    for index, rule in enumerate(rules or []):
        hits = [name for name in names if _matches(rule.metric_name, name)]
        if not hits:
            raise ValueError(f"dryRun[{index}]: Rule didn't match any metric name(s)")
        out.update(hits)
    return frozenset(out)


def retention_limits(rules: Sequence[MeasurementRetention] | None, names: Sequence[str]) -> dict[str, int]:
    """Metric name -> measurements to keep, for the metrics a retention rule matches (later rules
    win). Raises ``ValueError`` (``measurementRetention[0]: Rule didn't match any metric name(s)``)."""
    out: dict[str, int] = {}
    for index, rule in enumerate(rules or []):
        hits = [name for name in names if _matches(rule.metric_name, name)]
        if not hits:
            raise ValueError(f"measurementRetention[{index}]: Rule didn't match any metric name(s)")
        for name in hits:
            out[name] = rule.limit
    return out


def trim_measurements(
    results: Sequence[MetricResult],
    limits: Mapping[str, int],
    default: int = DEFAULT_MEASUREMENT_HISTORY_LIMIT,
) -> list[MetricResult]:
    """Copies of ``results`` keeping each metric's latest measurements only.

    The limit is ``limits[name]`` when positive, else ``default``. Counters are untouched: they
    keep counting every measurement ever taken.
    """
    out: list[MetricResult] = []
    for result in results:
        keep = limits.get(result.name, 0)
        keep = keep if keep > 0 else default
        measurements = result.measurements or []
        if len(measurements) > keep:
            result = result.model_copy(update={"measurements": list(measurements[-keep:])})
        out.append(result)
    return out
