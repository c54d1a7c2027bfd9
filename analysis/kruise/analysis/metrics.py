"""AnalysisRun gauges in Argo Rollouts' shape, read from a cache at scrape time.

Argo Rollouts' controller exports these families (``controller/metrics/analysis.go``,
``prommetrics.go``); the names, help texts, labels and values here are the same, so its
dashboards work against ``kruise manager``:

- ``analysis_run_info{namespace,name,phase}`` = 1, ``phase`` as in ``status.phase`` (may be empty);
- ``analysis_run_phase{namespace,name,phase}`` (deprecated upstream, still exported): one
  series per phase (Pending, Error, Failed, Successful, Running, Inconclusive), 1 for the run's;
  no phase yet counts as Pending;
- ``analysis_run_metric_type{namespace,name,metric,type}`` = 1 per metric of the spec;
- ``analysis_run_metric_phase{namespace,name,metric,type,dry_run,phase}``: one series per phase
  per metric, 1 for the phase of the metric's result (Pending without a result); ``dry_run`` is
  ``true`` when a ``spec.dryRun[].metricName`` regular expression matches the metric's name
  anywhere (Go's ``regexp.MatchString``), else ``false``.

``type`` is Argo's provider type name (``Prometheus``, ``Web``, ``Job``, ``Kayenta``, ...,
``Unknown Provider``). Argo's ``analysis_template_info`` families are not exported (no template
cache here).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from prometheus_client.core import GaugeMetricFamily
from prometheus_client.metrics_core import Metric

from kruise.core.metrics import StateCollector, object_key

PHASES = ("Pending", "Error", "Failed", "Successful", "Running", "Inconclusive")
"""The order Argo exports the per-phase series in."""

PROVIDER_TYPES: tuple[tuple[str, str], ...] = (
    ("prometheus", "Prometheus"),
    ("job", "Job"),
    ("kayenta", "Kayenta"),
    ("web", "Web"),
    ("datadog", "Datadog"),
    ("wavefront", "Wavefront"),
    ("newRelic", "NewRelic"),
    ("cloudWatch", "CloudWatch"),
    ("graphite", "Graphite"),
    ("influxdb", "Influxdb"),
    ("skywalking", "skywalking"),
    ("plugin", "RPCPlugin"),
)
"""(provider field, Argo's ``ProviderType``) in the order Argo's ``metricproviders.Type`` checks."""
UNKNOWN_PROVIDER = "Unknown Provider"


def provider_type(metric: Mapping[str, Any]) -> str:
    """Argo's provider type name of an AnalysisRun metric (the first provider set)."""
    provider = metric.get("provider") or {}
    for field, name in PROVIDER_TYPES:
        if provider.get(field) is not None:
            return name
    return UNKNOWN_PROVIDER


def dry_run_metrics(run_spec: Mapping[str, Any]) -> set[str]:
    """Names of the metrics a ``spec.dryRun`` rule matches (unanchored regular expressions,
    as Go's ``regexp.MatchString``; an invalid expression matches nothing)."""
    names = [str(m.get("name") or "") for m in run_spec.get("metrics") or []]
    matched: set[str] = set()
    for rule in run_spec.get("dryRun") or []:
        try:
            pattern = re.compile(str(rule.get("metricName") or ""))
        except re.error:
            continue
        matched.update(name for name in names if pattern.search(name))
    return matched


def _results(status: Mapping[str, Any]) -> dict[str, str]:
    results: Sequence[Mapping[str, Any]] = status.get("metricResults") or []
    return {str(r.get("name")): str(r.get("phase") or "") for r in results}


class AnalysisRunCollector(StateCollector):
    """Argo Rollouts' AnalysisRun families over ``runs()`` (read at every scrape)."""

    kind = "AnalysisRuns"

    def families(self, runs: list[Mapping[str, Any]]) -> list[Metric]:
        labels = ("namespace", "name")
        info = GaugeMetricFamily(
            "analysis_run_info", "Information about analysis run.", labels=(*labels, "phase")
        )
        phase = GaugeMetricFamily(
            "analysis_run_phase",
            "Information on the state of the Analysis Run (DEPRECATED - use analysis_run_info)",
            labels=(*labels, "phase"),
        )
        metric_type = GaugeMetricFamily(
            "analysis_run_metric_type",
            "Information on the type of a specific metric in the Analysis Runs",
            labels=(*labels, "metric", "type"),
        )
        metric_phase = GaugeMetricFamily(
            "analysis_run_metric_phase",
            "Information on the duration of a specific metric in the Analysis Run",
            labels=(*labels, "metric", "type", "dry_run", "phase"),
        )
        for run in runs:
            key = list(object_key(run))
            spec, status = run.get("spec") or {}, run.get("status") or {}
            current = str(status.get("phase") or "")
            info.add_metric([*key, current], 1.0)
            for candidate in PHASES:
                phase.add_metric([*key, candidate], float((current or "Pending") == candidate))
            dry = dry_run_metrics(spec)
            results = _results(status)
            for metric in spec.get("metrics") or []:
                name = str(metric.get("name") or "")
                kind = provider_type(metric)
                metric_type.add_metric([*key, name, kind], 1.0)
                result = results.get(name) or "Pending"
                dry_run = "true" if name in dry else "false"
                for candidate in PHASES:
                    metric_phase.add_metric(
                        [*key, name, kind, dry_run, candidate], float(result == candidate)
                    )
        return [info, phase, metric_type, metric_phase]
