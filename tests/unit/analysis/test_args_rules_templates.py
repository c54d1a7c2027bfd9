"""Arguments ({{args.x}}), dry-run/retention rules and building runs from templates."""

from __future__ import annotations

from typing import Any

import pytest

from kruise.analysis.api import (
    AnalysisPhase,
    AnalysisTemplateSpec,
    Argument,
    DryRun,
    MeasurementRetention,
    Metric,
    MetricResult,
)
from kruise.analysis.args import (
    ArgumentError,
    field_path_value,
    placeholder_values,
    redact,
    resolve_metric,
    resolve_text,
)
from kruise.analysis.rules import dry_run_metrics, retention_limits, trim_measurements
from kruise.analysis.templates import (
    TERMINATE_PATCH,
    build_run,
    flatten_templates,
    referenced_templates,
    run_phase,
)

VALUES = {"service-name": "web.svc", "restarts.max": "4", "quote": 'say "hi"'}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("{{args.service-name}}", "web.svc"),
        ("{{ args.service-name }}", "web.svc"),
        ("a{{args.restarts.max}}b{{ args.service-name}}", "a4bweb.svc"),
        ("default(result, 0) > {{ args.restarts.max }}", "default(result, 0) > 4"),
        ('x="{{args.quote}}"', 'x="say "hi""'),
        ("no placeholders {here}", "no placeholders {here}"),
    ],
)
def test_resolve_text(text: str, expected: str) -> None:
    assert resolve_text(text, VALUES) == expected


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("{{args.nope}}", "failed to resolve {{args.nope}}"),
        ("{{ other }}", "failed to resolve {{ other }}"),
        ("{{args.service-name", "cannot find end tag"),
    ],
)
def test_resolve_text_errors(text: str, message: str) -> None:
    with pytest.raises(ArgumentError, match=message.replace("{", r"\{").replace("}", r"\}")):
        resolve_text(text, VALUES)


def test_resolve_metric_resolves_every_string() -> None:
    metric = Metric.from_dict(
        {
            "name": "m",
            "initialDelay": "{{ args.delay }}",
            "failureCondition": "result > {{args.max}}",
            "provider": {
                "web": {
                    "url": "http://x/{{args.svc}}",
                    "headers": [{"key": "A", "value": "Bearer {{args.token}}"}],
                }
            },
        }
    )
    out = resolve_metric(metric, {"delay": "60s", "max": "4", "svc": "s", "token": "t0k"})
    assert out.initial_delay == "60s" and out.failure_condition == "result > 4"
    assert out.provider.web is not None and out.provider.web.url == "http://x/s"
    assert out.provider.web.headers is not None and out.provider.web.headers[0].value == "Bearer t0k"
    assert metric.initial_delay == "{{ args.delay }}"


def test_placeholder_values() -> None:
    args = [
        Argument(name="a", value="1"),
        Argument.from_dict({"name": "s", "valueFrom": {"secretKeyRef": {"name": "x", "key": "k"}}}),
    ]
    assert placeholder_values(args) == {"a": "1", "s": "temp-for-secret"}
    with pytest.raises(ArgumentError, match='argument "b" was not supplied'):
        placeholder_values([Argument(name="b")])


OBJ: dict[str, Any] = {
    "metadata": {"name": "r", "labels": {"env": "dev"}, "annotations": {"a/b": "c"}},
    "status": {"stableRS": "abc", "list": [{"x": 1}], "ok": True},
}


@pytest.mark.parametrize(
    ("path", "value"),
    [
        ("metadata.name", "r"),
        ("metadata.labels['env']", "dev"),
        ('metadata.annotations["a/b"]', "c"),
        ("metadata.labels['missing']", ""),
        ("status.stableRS", "abc"),
        ("status.list[0].x", "1"),
        ("status.ok", "true"),
    ],
)
def test_field_path_value(path: str, value: str) -> None:
    assert field_path_value(OBJ, path) == value


@pytest.mark.parametrize(("path", "message"), [("status.nope", "invalid path"), ("status.list", "primitive")])
def test_field_path_errors(path: str, message: str) -> None:
    with pytest.raises(ArgumentError, match=message):
        field_path_value(OBJ, path)


def test_redact() -> None:
    assert redact("token s3cret rejected by s3cret", ["s3cret", ""]) == "token ***** rejected by *****"
    assert redact(None, ["x"]) is None


def test_rules_match_like_go_regexp_search() -> None:
    names = ["total-5xx-errors", "total-4xx-errors", "latency"]
    assert dry_run_metrics([DryRun(metric_name="total-5xx-errors")], names) == {"total-5xx-errors"}
    assert dry_run_metrics([DryRun(metric_name=".*")], names) == set(names)
    assert dry_run_metrics([DryRun(metric_name="*")], names) == set(names)
    assert dry_run_metrics([DryRun(metric_name="errors")], names) == {"total-5xx-errors", "total-4xx-errors"}
    assert dry_run_metrics(None, names) == frozenset()
    with pytest.raises(ValueError, match=r"dryRun\[1\]: Rule didn't match any metric name\(s\)"):
        dry_run_metrics([DryRun(metric_name="lat"), DryRun(metric_name="^nope$")], names)
    assert retention_limits(
        [MeasurementRetention(metric_name=".*", limit=20), MeasurementRetention(metric_name="lat", limit=3)],
        names,
    ) == {
        "total-5xx-errors": 20,
        "total-4xx-errors": 20,
        "latency": 3,
    }


def test_trim_keeps_the_latest() -> None:
    result = MetricResult.from_dict(
        {
            "name": "a",
            "phase": "Running",
            "count": 12,
            "measurements": [{"phase": "Successful", "value": str(i)} for i in range(12)],
        }
    )
    assert [m.value for m in trim_measurements([result], {})[0].measurements or []] == [
        str(i) for i in range(2, 12)
    ]
    assert [m.value for m in trim_measurements([result], {"a": 2})[0].measurements or []] == ["10", "11"]
    assert len(trim_measurements([result], {"a": 0})[0].measurements or []) == 10
    assert trim_measurements([result], {"a": 2})[0].count == 12


def template(metrics: list[str], args: list[dict[str, Any]], **extra: Any) -> AnalysisTemplateSpec:
    return AnalysisTemplateSpec.from_dict(
        {
            "metrics": [{"name": n, "provider": {"prometheus": {"query": "q"}}} for n in metrics],
            "args": args,
            **extra,
        }
    )


def test_build_run_merges_templates_like_argo() -> None:
    success = template(["success-rate"], [{"name": "service-name"}, {"name": "port", "value": "9090"}])
    error = template(["error-rate"], [{"name": "service-name"}], dryRun=[{"metricName": "error-rate"}])
    run = build_run(
        name="guestbook-abc-2",
        namespace="default",
        templates=[success, error],
        args=[Argument(name="service-name", value="guestbook-svc"), Argument(name="unused", value="x")],
        labels={"rollout-type": "Step"},
    )
    assert [m.name for m in run.spec.metrics] == ["success-rate", "error-rate"]
    assert {a.name: a.value for a in run.spec.args or []} == {"service-name": "guestbook-svc", "port": "9090"}
    assert [d.metric_name for d in run.spec.dry_run or []] == ["error-rate"]
    assert run.to_dict()["apiVersion"] == "rollouts.kruise.io/v1alpha1"
    assert run.metadata.labels == {"rollout-type": "Step"}


def test_build_run_errors() -> None:
    with pytest.raises(ArgumentError, match=r"args\.service-name was not resolved"):
        build_run(name="r", namespace="n", templates=[template(["a"], [{"name": "service-name"}])])
    with pytest.raises(ValueError, match="two metrics have the same name 'a'"):
        flatten_templates([template(["a"], []), template(["a"], [])])
    with pytest.raises(ArgumentError, match="specified multiple times with different values"):
        flatten_templates(
            [template(["a"], [{"name": "x", "value": "1"}]), template(["b"], [{"name": "x", "value": "2"}])]
        )


def test_referenced_templates_and_outcome() -> None:
    spec = AnalysisTemplateSpec.from_dict(
        {
            "templates": [
                {"templateName": "success-rate", "clusterScope": False},
                {"templateName": "x", "clusterScope": True},
            ]
        }
    )
    assert referenced_templates(spec) == [("success-rate", False), ("x", True)]
    assert run_phase({"status": {"phase": "Inconclusive"}}) is AnalysisPhase.INCONCLUSIVE
    assert run_phase({}) is AnalysisPhase.PENDING
    assert TERMINATE_PATCH == {"spec": {"terminate": True}}
