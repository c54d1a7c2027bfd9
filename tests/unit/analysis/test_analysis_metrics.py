"""AnalysisRun gauges in Argo Rollouts' shape."""

from __future__ import annotations

from typing import Any

import pytest
from prometheus_client import CollectorRegistry

from kruise.analysis.metrics import PHASES, AnalysisRunCollector, dry_run_metrics, provider_type

JSON = dict[str, Any]

RUN: JSON = {
    "metadata": {"namespace": "shop", "name": "web-abc-step2"},
    "spec": {
        "metrics": [
            {"name": "success-rate", "provider": {"prometheus": {"query": "up"}}},
            {"name": "latency", "provider": {"web": {"url": "http://x"}}},
            {"name": "smoke", "provider": {"job": {"spec": {}}}},
        ],
        "dryRun": [{"metricName": "lat"}],
    },
    "status": {
        "phase": "Running",
        "metricResults": [
            {"name": "success-rate", "phase": "Successful"},
            {"name": "latency", "phase": "Running"},
        ],
    },
}


@pytest.mark.parametrize(
    ("provider", "kind"),
    [
        ({"prometheus": {}}, "Prometheus"),
        ({"web": {}}, "Web"),
        ({"newRelic": {}}, "NewRelic"),
        ({"skywalking": {}}, "skywalking"),
        ({"plugin": {}}, "RPCPlugin"),
        ({}, "Unknown Provider"),
    ],
)
def test_provider_type_is_argos_name(provider: JSON, kind: str) -> None:
    assert provider_type({"provider": provider}) == kind


def test_dry_run_rules_match_anywhere_in_the_name_and_bad_rules_match_nothing() -> None:
    assert dry_run_metrics(RUN["spec"]) == {"latency"}
    assert dry_run_metrics({"metrics": [{"name": "a"}], "dryRun": [{"metricName": "("}]}) == set()
    assert dry_run_metrics({"metrics": [{"name": "a"}, {"name": "b"}], "dryRun": [{"metricName": ".*"}]}) == {
        "a",
        "b",
    }


def scrape(*runs: JSON) -> CollectorRegistry:
    registry = CollectorRegistry()
    registry.register(AnalysisRunCollector(lambda: list(runs)))
    return registry


def test_run_and_metric_series() -> None:
    reg = scrape(RUN)
    key = {"namespace": "shop", "name": "web-abc-step2"}
    assert reg.get_sample_value("analysis_run_info", {**key, "phase": "Running"}) == 1
    phases = {p: reg.get_sample_value("analysis_run_phase", {**key, "phase": p}) for p in PHASES}
    assert phases == {p: float(p == "Running") for p in PHASES}
    for metric, kind in (("success-rate", "Prometheus"), ("latency", "Web"), ("smoke", "Job")):
        assert reg.get_sample_value("analysis_run_metric_type", {**key, "metric": metric, "type": kind}) == 1

    def metric_phases(metric: str, kind: str, dry_run: str) -> dict[str, float | None]:
        labels = {**key, "metric": metric, "type": kind, "dry_run": dry_run}
        return {p: reg.get_sample_value("analysis_run_metric_phase", {**labels, "phase": p}) for p in PHASES}

    assert metric_phases("success-rate", "Prometheus", "false") == {
        p: float(p == "Successful") for p in PHASES
    }
    assert metric_phases("latency", "Web", "true") == {p: float(p == "Running") for p in PHASES}
    assert metric_phases("smoke", "Job", "false") == {p: float(p == "Pending") for p in PHASES}, (
        "no result yet"
    )


def test_a_run_without_a_phase_is_pending() -> None:
    reg = scrape({"metadata": {"namespace": "shop", "name": "r"}, "spec": {"metrics": []}})
    key = {"namespace": "shop", "name": "r"}
    assert reg.get_sample_value("analysis_run_info", {**key, "phase": ""}) == 1
    assert reg.get_sample_value("analysis_run_phase", {**key, "phase": "Pending"}) == 1
