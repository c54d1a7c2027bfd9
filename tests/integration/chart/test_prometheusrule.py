"""The chart's optional PrometheusRule: rendered by helm, checked and unit-tested by promtool.

The rules are taken from ``helm template`` output (``prometheusRule.enabled``) and written as a
Prometheus rule file. ``promtool check rules`` validates them; ``promtool test rules`` replays
synthetic series (one per case, on a 1-minute grid from t=0) and asserts which alerts fire,
with their labels and rendered annotations: each alert has series that must fire and series
that must not. The last test applies the rendered object to an API server that has the
Prometheus Operator's PrometheusRule CRD (vendored under ``tests/data/prometheus-operator``).
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.integration.chart.support import CHART, JSON, NS, find, helm_run, render, values_file
from tests.support.cluster import TestCluster

PROMTOOL = shutil.which("promtool") or "/usr/bin/promtool"
PROMETHEUSRULE_CRD = (
    Path(__file__).resolve().parents[2]
    / "data"
    / "prometheus-operator"
    / "monitoring.coreos.com_prometheusrules.yaml"
)
STALLED = (
    "CloneSet {ns}/{name} has {value} updated and ready pods, fewer than its partition expects, "
    "and none updated or became ready for 15 minutes."
)


def promtool(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    if not Path(PROMTOOL).exists():
        pytest.skip("promtool not installed (Debian package prometheus)")
    return subprocess.run([PROMTOOL, *args], capture_output=True, text=True, cwd=cwd, timeout=120)


@pytest.fixture
def rule_object(helm: str, tmp_path: Path) -> JSON:
    docs = render(helm, values=values_file(tmp_path, {"prometheusRule": {"enabled": True}}))
    return find(docs, "PrometheusRule", "kruise-manager")


@pytest.fixture
def rules_file(rule_object: JSON, tmp_path: Path) -> Path:
    path = tmp_path / "kruise-rules.yaml"
    path.write_text(yaml.safe_dump({"groups": rule_object["spec"]["groups"]}))
    return path


def series(name: str, labels: dict[str, str], values: list[float] | str) -> JSON:
    text = values if isinstance(values, str) else " ".join(str(v) for v in values)
    selector = ",".join(f'{k}="{v}"' for k, v in labels.items())
    return {"series": f"{name}{{{selector}}}", "values": text}


def cloneset(
    name: str, *, expected: int, updated_ready: list[int] | str, updated: list[int] | str, paused: int = 0
) -> list[JSON]:
    labels = {"namespace": "shop", "cloneset": name}
    return [
        series("kruise_cloneset_status_expected_updated_replicas", labels, f"{expected}x60"),
        series("kruise_cloneset_status_replicas_updated_ready", labels, updated_ready),
        series("kruise_cloneset_status_replicas_updated", labels, updated),
        series("kruise_cloneset_spec_strategy_paused", labels, f"{paused}x60"),
    ]


def fired(summary: str, description: str, **labels: str) -> JSON:
    """One expected alert: its labels (severity included) and rendered annotations."""
    return {
        "exp_labels": {"severity": "warning", **labels},
        "exp_annotations": {"summary": summary, "description": description},
    }


def at(alertname: str, eval_time: str, *alerts: JSON) -> JSON:
    """Exactly ``alerts`` (none: nothing) of ``alertname`` fire at ``eval_time``."""
    return {"eval_time": eval_time, "alertname": alertname, "exp_alerts": list(alerts)}


def stalled(name: str, value: int) -> JSON:
    description = STALLED.format(ns="shop", name=name, value=value)
    return fired("CloneSet update stalled", description, namespace="shop", cloneset=name)


def cloneset_case() -> JSON:
    slow = [minute // 10 for minute in range(61)]  # one more pod ready every 10 minutes
    resumed = [1] * 20 + [2] * 41  # stuck 20 minutes, then one more pod
    alert = "KruiseCloneSetUpdateStalled"
    return {
        "interval": "1m",
        "input_series": [
            *cloneset("stuck", expected=4, updated_ready="2x60", updated="3x60"),
            *cloneset("slow-but-moving", expected=10, updated_ready=slow, updated=slow),
            *cloneset("paused", expected=4, updated_ready="2x60", updated="2x60", paused=1),
            *cloneset("done", expected=4, updated_ready="4x60", updated="4x60"),
            *cloneset("resumed", expected=4, updated_ready=resumed, updated=resumed),
        ],
        "alert_rule_test": [
            at(alert, "14m"),  # the `for` window: nothing has been stuck 15 minutes yet
            at(alert, "16m", stalled("stuck", 2), stalled("resumed", 1)),
            at(alert, "25m", stalled("stuck", 2)),  # "resumed" moved 5 minutes ago
            at(alert, "50m", stalled("stuck", 2), stalled("resumed", 2)),
        ],
    }


def rollout_case() -> JSON:
    def entered(name: str, step: str, state: str, at_seconds: int) -> JSON:
        labels = {"namespace": "shop", "name": name, "step": step, "step_state": state}
        return series("kruise_rollout_step_state_timestamp_seconds", labels, f"{at_seconds}x60")

    web = "Rollout shop/web has been in step 2 (StepPaused) for 31m 0s, more than 30 minutes."
    labels = {"namespace": "shop", "name": "web", "step": "2", "step_state": "StepPaused"}
    return {
        "interval": "1m",
        "input_series": [
            entered("web", "2", "StepPaused", 0),  # paused since t=0
            entered("api", "1", "StepUpgrade", 600),  # upgrading since t=10m
        ],
        "alert_rule_test": [
            at("KruiseRolloutStepStuck", "29m"),
            at("KruiseRolloutStepStuck", "31m", fired("Rollout stuck in one step", web, **labels)),
        ],
    }


def reconcile_case() -> JSON:
    def errors(controller: str, values: str) -> JSON:
        labels = {"controller": controller, "pod": "m-1"}
        return series("controller_runtime_reconcile_errors_total", labels, values)

    failing = "The cloneset-controller has been failing reconciles for 15 minutes (0.10 errors per second)."
    summary = "kruise controller reconcile errors"
    return {
        "interval": "1m",
        "input_series": [
            errors("cloneset-controller", "0+6x60"),  # an error every 10 s, continuously
            errors("rollout-controller", "0 0 0 0 0 3x55"),  # three errors once, at 5m
        ],
        "alert_rule_test": [
            at("KruiseReconcileErrors", "12m"),
            at("KruiseReconcileErrors", "25m", fired(summary, failing, controller="cloneset-controller")),
        ],
    }


def workqueue_case() -> JSON:
    def depth(queue: str, values: str, instance: str = "leader:8080") -> JSON:
        labels = {"name": queue, "controller": queue, "job": "kruise", "instance": instance}
        return series("workqueue_depth", labels, values)

    def leader(instance: str, value: int) -> JSON:
        labels = {"name": "kruise-manager", "job": "kruise", "instance": instance}
        return series("leader_election_master_status", labels, f"{value}x60")

    growing = (
        "The work queue of cloneset-controller holds 35 keys and has been growing for 15 minutes: "
        "the controller falls behind its events."
    )
    queue = {"name": "cloneset-controller", "controller": "cloneset-controller", "job": "kruise"}
    return {
        "interval": "1m",
        "input_series": [
            depth("cloneset-controller", "0+1x60"),  # grows by one key a minute
            depth("rollout-controller", "50x60"),  # deep but steady
            depth("batchrelease-controller", "0+0.1x60"),  # growing, but below minDepth
            leader("leader:8080", 1),
            # the standby's queue fills with keys for a takeover: not an alert
            depth("cloneset-controller", "0+1x60", instance="standby:8080"),
            leader("standby:8080", 0),
            # a manager without leader election exports no leader gauge: still watched
            depth("rollout-controller", "0+2x60", instance="single:8080"),
        ],
        "alert_rule_test": [
            at("KruiseWorkQueueGrowing", "20m"),
            at(
                "KruiseWorkQueueGrowing",
                "35m",
                fired("kruise work queue growing", growing, **queue, instance="leader:8080"),
                fired(
                    "kruise work queue growing",
                    growing.replace("cloneset-controller holds 35", "rollout-controller holds 70"),
                    name="rollout-controller",
                    controller="rollout-controller",
                    job="kruise",
                    instance="single:8080",
                ),
            ),
        ],
    }


def test_rules_pass_promtool_check(rules_file: Path) -> None:
    out = promtool("check", "rules", rules_file.name, cwd=rules_file.parent)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "SUCCESS: 4 rules found" in out.stdout


@pytest.mark.parametrize(
    "case", [cloneset_case, rollout_case, reconcile_case, workqueue_case], ids=lambda c: c.__name__
)
def test_alerts_fire_exactly_on_their_series(rules_file: Path, case: Any) -> None:
    tests = {"rule_files": [rules_file.name], "evaluation_interval": "1m", "tests": [case()]}
    test_file = rules_file.parent / "kruise-rules-test.yaml"
    test_file.write_text(yaml.safe_dump(tests))
    out = promtool("test", "rules", test_file.name, cwd=rules_file.parent)
    assert out.returncode == 0, out.stdout + out.stderr


def test_chart_lints_with_the_rule_on(helm: str, tmp_path: Path) -> None:
    values = values_file(tmp_path, {"prometheusRule": {"enabled": True}})
    out = helm_run(helm, "lint", "--strict", str(CHART), "-f", str(values))
    assert out.returncode == 0, out.stdout + out.stderr


def test_rule_is_off_by_default_and_thresholds_come_from_values(helm: str, tmp_path: Path) -> None:
    assert not [d for d in render(helm) if d["kind"] == "PrometheusRule"]
    values = {
        "prometheusRule": {
            "enabled": True,
            "labels": {"release": "prom"},
            "rolloutStepStuck": {"minutes": 90, "severity": "critical"},
        }
    }
    rule = find(render(helm, values=values_file(tmp_path, values)), "PrometheusRule", "kruise-manager")
    assert rule["metadata"]["labels"]["release"] == "prom"
    assert rule["metadata"]["namespace"] == NS
    by_name = {r["alert"]: r for r in rule["spec"]["groups"][0]["rules"]}
    assert "> 5400" in by_name["KruiseRolloutStepStuck"]["expr"]
    assert by_name["KruiseRolloutStepStuck"]["labels"] == {"severity": "critical"}
    assert by_name["KruiseReconcileErrors"]["for"] == "15m", "the other alerts keep their defaults"


def test_a_window_below_one_minute_fails_at_render_time(helm: str, tmp_path: Path) -> None:
    values = {"prometheusRule": {"enabled": True, "workQueueGrowing": {"minutes": 0}}}
    out = helm_run(helm, "template", "kruise", str(CHART), "-f", str(values_file(tmp_path, values)))
    assert out.returncode != 0
    assert "prometheusRule.workQueueGrowing.minutes must be a number of minutes >= 1" in out.stderr


def test_rendered_rule_is_accepted_by_the_prometheusrule_crd(
    rule_object: JSON, chart_cluster: TestCluster, tmp_path: Path
) -> None:
    """The Prometheus Operator's CRD schema (server-side dry run) accepts the rendered object."""
    chart_cluster.kubectl("apply", "--server-side", "-f", str(PROMETHEUSRULE_CRD))
    chart_cluster.kubectl(
        "wait", "--for=condition=Established", "crd/prometheusrules.monitoring.coreos.com", "--timeout=60s"
    )
    chart_cluster.kubectl("create", "namespace", NS, check=False)
    manifest = tmp_path / "rule.yaml"
    manifest.write_text(yaml.safe_dump(rule_object))
    done = chart_cluster.kubectl("apply", "--server-side", "--dry-run=server", "-f", str(manifest))
    assert (
        "prometheusrule.monitoring.coreos.com/kruise-manager serverside-applied (server dry run)"
        in done.stdout
    )
    broken = yaml.safe_load(yaml.safe_dump(rule_object))
    broken["spec"]["groups"][0]["rules"][0]["for"] = "fifteen minutes"
    manifest.write_text(yaml.safe_dump(broken))
    rejected = chart_cluster.kubectl(
        "apply", "--server-side", "--dry-run=server", "-f", str(manifest), check=False
    )
    assert rejected.returncode != 0 and "spec.groups[0].rules[0].for" in rejected.stderr, (
        "the schema must bite"
    )
