"""v1alpha1 Rollout validation (``validate_v1alphal_rollout.go``): rules and messages."""

from __future__ import annotations

from typing import Any

import pytest

from kruise.rollouts.admission import aggregate, validate_rollout
from tests.unit.rollouts.helpers import v1alpha1_rollout

STYLE = "rollouts.kruise.io/rolling-style"


def check(doc: dict[str, Any], **kwargs: Any) -> list[tuple[str, str]]:
    return [(e.field, e.detail) for e in validate_rollout(doc, workload_lookup=[], **kwargs)]


def steps(
    *items: dict[str, Any], annotation: str | None = None, kind: str = "Deployment", **extra: Any
) -> dict[str, Any]:
    doc = v1alpha1_rollout(canary={"steps": list(items), **extra})
    doc["spec"]["objectRef"]["workloadRef"]["kind"] = kind
    if kind == "CloneSet":
        doc["spec"]["objectRef"]["workloadRef"]["apiVersion"] = "apps.kruise.io/v1alpha1"
    if annotation is not None:
        doc["metadata"]["annotations"] = {STYLE: annotation}
    return doc


def test_a_valid_v1alpha1_rollout_has_no_errors() -> None:
    assert check(v1alpha1_rollout()) == []


def test_workload_ref_is_required_and_supported() -> None:
    # without a workload the style is partition (upstream dereferences nil here), so keep weights low
    doc = steps({"weight": 10}, {"weight": 30})
    doc["spec"]["objectRef"] = {}
    assert aggregate(validate_rollout(doc, workload_lookup=[])) == (
        'Spec.ObjectRef.WorkloadRef: Invalid value: "null": WorkloadRef is required'
    )
    doc["spec"]["objectRef"] = {"workloadRef": {"apiVersion": "batch/v1", "kind": "Job", "name": "x"}}
    assert aggregate(validate_rollout(doc, workload_lookup=[])) == (
        'Spec.ObjectRef.WorkloadRef: Invalid value: v1alpha1.WorkloadRef{APIVersion:"batch/v1", Kind:"Job", '
        'Name:"x"}: WorkloadRef kind is not supported'
    )


@pytest.mark.parametrize(
    ("annotation", "ok"), [("", True), ("Canary", True), ("PARTITION", True), ("bluegreen", False)]
)
def test_rolling_style_annotation(annotation: str, ok: bool) -> None:
    errors = validate_rollout(steps({"weight": 10}, annotation=annotation), workload_lookup=[])
    if ok:
        assert errors == []
    else:
        assert aggregate(errors) == (
            "RollingStyle: Invalid value: \"bluegreen\": Rolling style must be 'Canary', 'Partition' or empty"
        )


def test_canary_is_required() -> None:
    doc = v1alpha1_rollout(paused=True)
    assert aggregate(validate_rollout(doc, workload_lookup=[])) == (
        'Spec.Strategy.Canary: Invalid value: "null": Canary cannot be empty'
    )


def test_steps_cannot_be_empty_and_need_weight_or_replicas() -> None:
    assert aggregate(validate_rollout(steps(), workload_lookup=[])) == (
        "Spec.Strategy.Canary.Steps: Invalid value: []v1alpha1.CanaryStep{}: "
        "The number of Canary.Steps cannot be empty"
    )
    assert aggregate(validate_rollout(steps({"pause": {"duration": 5}}), workload_lookup=[])) == (
        "Spec.Strategy.Canary.Steps[0].steps: Invalid value: []v1alpha1.CanaryStep{v1alpha1.CanaryStep{"
        "TrafficRoutingStrategy:v1alpha1.TrafficRoutingStrategy{Weight:(*int32)(nil), "
        "RequestHeaderModifier:(*v1beta1.HTTPHeaderFilter)(nil), Matches:[]v1alpha1.HttpRouteMatch(nil)}, "
        "Replicas:(*intstr.IntOrString)(nil), "
        "Pause:v1alpha1.RolloutPause{Duration:(*int32)(0xc000000000)}}}: "
        "weight and replicas cannot be empty at the same time"
    )


@pytest.mark.parametrize("replicas", [0, "0%", "120%", "7"])
def test_replicas_rule(replicas: int | str) -> None:
    assert check(steps({"replicas": replicas})) == [
        (
            "Spec.Strategy.Canary.Steps[0].Replicas",
            'replicas must be positive number, or a percentage with "0%" < canaryReplicas <= "100%"',
        )
    ]


REPLICAS_LIMIT = (
    "For patition style rollout: step[x].replicas must not greater than replicasLimitWithTraffic "
    "if traffic or matches specified"
)
WEIGHT_LIMIT = (
    "For patition style rollout: step[x].weight must not greater than replicasLimitWithTraffic "
    "if replicas is not specified"
)
WEIGHT_RANGE = (
    "weight must be positive number, and less than or equal to replicasLimitWithTraffic (defaults to 30)"
)


@pytest.mark.parametrize(
    ("doc", "errors"),
    [
        pytest.param(steps({"weight": 10, "replicas": "60%"}), [], id="deployment is canary style"),
        pytest.param(
            steps({"weight": 10, "replicas": "60%"}, annotation="partition"),
            [("Spec.Strategy.Canary.Steps[0].steps", REPLICAS_LIMIT)],
            id="partition annotation: replicas over the limit with weight",
        ),
        pytest.param(
            steps({"replicas": "60%", "matches": []}, kind="CloneSet"),
            [("Spec.Strategy.Canary.Steps[0].steps", REPLICAS_LIMIT)],
            id="cloneset is partition style; non-nil matches count",
        ),
        pytest.param(steps({"replicas": "60%"}, kind="CloneSet"), [], id="no traffic, no limit"),
        pytest.param(
            steps({"weight": 60}, kind="CloneSet"),
            [("Spec.Strategy.Canary.Steps[0].steps", WEIGHT_LIMIT)],
            id="weight stands for replicas in partition style",
        ),
        pytest.param(steps({"weight": 50}, kind="CloneSet"), [], id="weight at the limit"),
        pytest.param(
            steps({"weight": 0}), [("Spec.Strategy.Canary.Steps[0].Weight", WEIGHT_RANGE)], id="weight 0"
        ),
        pytest.param(
            steps({"weight": 101}), [("Spec.Strategy.Canary.Steps[0].Weight", WEIGHT_RANGE)], id="weight 101"
        ),
    ],
)
def test_weight_and_partition_rules(doc: dict[str, Any], errors: list[tuple[str, str]]) -> None:
    assert check(doc) == errors


def test_partition_limit_parameter_applies_to_v1alpha1() -> None:
    assert check(steps({"weight": 60}, kind="CloneSet"), partition_percent_limit=60) == []


def test_weight_value_is_printed_bare() -> None:
    assert aggregate(validate_rollout(steps({"weight": 0}), workload_lookup=[])) == (
        f"Spec.Strategy.Canary.Steps[0].Weight: Invalid value: 0: {WEIGHT_RANGE}"
    )


ROUTING = [{"service": "svc", "ingress": {"name": "ing"}}]


@pytest.mark.parametrize(
    ("items", "routings", "errors"),
    [
        pytest.param(
            [{"weight": 40}, {"weight": 20, "replicas": "50%"}],
            ROUTING,
            [("Spec.Strategy.Canary.Steps.Weight", "Steps.Weight must be a non decreasing sequence")],
            id="weights decrease with traffic routing",
        ),
        pytest.param(
            [{"weight": 40}, {"weight": 20}],
            None,
            [
                (
                    "Spec.Strategy.Canary.Steps.CanaryReplicas",
                    "Steps.CanaryReplicas must be a non decreasing sequence",
                )
            ],
            id="without routing, weights stand for replicas",
        ),
        pytest.param(
            [{"weight": 40}, {"weight": 20, "replicas": "50%"}], None, [], id="replicas win over weight"
        ),
        pytest.param([{"replicas": 3}, {"weight": 20}], None, [], id="int and percent are not compared"),
        pytest.param(
            [{"replicas": "30%"}, {"weight": 20}],
            None,
            [
                (
                    "Spec.Strategy.Canary.Steps.CanaryReplicas",
                    "Steps.CanaryReplicas must be a non decreasing sequence",
                )
            ],
            id="percent replicas against a weight",
        ),
    ],
)
def test_v1alpha1_ordering(
    items: list[dict[str, Any]], routings: list[dict[str, Any]] | None, errors: list[tuple[str, str]]
) -> None:
    extra: dict[str, Any] = {} if routings is None else {"trafficRoutings": routings}
    assert check(steps(*items, **extra)) == errors


def test_v1alpha1_traffic_routing_rules_use_v1alpha1_types() -> None:
    doc = steps({"weight": 10}, trafficRoutings=[{"service": "s", "ingress": {"name": ""}}, {"service": "t"}])
    assert [e.error() for e in validate_rollout(doc, workload_lookup=[])] == [
        "Spec.Strategy.Canary: Invalid value: []v1alpha1.TrafficRoutingRef{v1alpha1.TrafficRoutingRef{"
        'Service:"s", GracePeriodSeconds:0, Ingress:(*v1alpha1.IngressTrafficRouting)(0xc000000000), '
        "Gateway:(*v1alpha1.GatewayTrafficRouting)(nil), "
        "CustomNetworkRefs:[]v1alpha1.CustomNetworkRef(nil)}, "
        'v1alpha1.TrafficRoutingRef{Service:"t", GracePeriodSeconds:0, '
        "Ingress:(*v1alpha1.IngressTrafficRouting)(nil), "
        "Gateway:(*v1alpha1.GatewayTrafficRouting)(nil), "
        "CustomNetworkRefs:[]v1alpha1.CustomNetworkRef(nil)}}: "
        "Rollout currently only support single TrafficRouting.",
        "Spec.Strategy.Canary.TrafficRouting.Ingress: Invalid value: "
        'v1alpha1.IngressTrafficRouting{ClassType:"", Name:""}: '
        "TrafficRouting.Ingress.Ingress cannot be empty",
        "Spec.Strategy.Canary.TrafficRouting.TrafficRoutings: Invalid value: "
        '"null": TrafficRoutings are not set',
    ]
