"""v1beta1 Rollout validation: every rule of the webhook with upstream's path and message."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from kruise.rollouts.admission import aggregate, validate_rollout
from tests.unit.rollouts.helpers import v1beta1_rollout

REPLICAS_MESSAGE = 'replicas must be positive number, or a percentage with "0%" < canaryReplicas <= "100%"'
STEP_WITHOUT_REPLICAS = (
    "v1beta1.CanaryStep{TrafficRoutingStrategy:v1beta1.TrafficRoutingStrategy{Traffic:(*string)(nil), "
    "RequestHeaderModifier:(*v1beta1.HTTPHeaderFilter)(nil), Matches:[]v1beta1.HttpRouteMatch(nil)}, "
    "Replicas:(*intstr.IntOrString)(nil), Pause:v1beta1.RolloutPause{Duration:(*int32)(nil)}}"
)


def check(doc: dict[str, Any], **kwargs: Any) -> list[tuple[str, str]]:
    """(field, detail) of every error."""
    return [(e.field, e.detail) for e in validate_rollout(doc, workload_lookup=[], **kwargs)]


def message(doc: dict[str, Any], **kwargs: Any) -> str:
    return aggregate(validate_rollout(doc, workload_lookup=[], **kwargs))


def with_ref(api_version: str, kind: str, **strategy: Any) -> dict[str, Any]:
    doc = v1beta1_rollout(**strategy)
    doc["spec"]["workloadRef"] = {"apiVersion": api_version, "kind": kind, "name": "x"}
    return doc


def canary(*steps: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return v1beta1_rollout(canary={"steps": list(steps), **extra})


def blue_green(*steps: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return v1beta1_rollout(blueGreen={"steps": list(steps), **extra})


INGRESS = {"service": "svc", "ingress": {"name": "ing"}}


# --- workload reference ---------------------------------------------------------------------


def test_a_valid_rollout_has_no_errors() -> None:
    assert check(v1beta1_rollout()) == []


@pytest.mark.parametrize(
    ("api_version", "kind"),
    [
        ("apps/v1", "Deployment"),
        ("apps/v1", "StatefulSet"),
        ("apps/v1", "DaemonSet"),
        ("apps/v1", "ReplicaSet"),
        ("apps.kruise.io/v1alpha1", "CloneSet"),
        ("apps.kruise.io/v1beta1", "StatefulSet"),
        ("apps.kruise.io/v1alpha1", "StatefulSet"),
        ("apps.kruise.io/v1alpha1", "DaemonSet"),
        ("apps/v2", "Deployment"),  # upstream compares group and kind only
    ],
)
def test_supported_workloads(api_version: str, kind: str) -> None:
    assert check(with_ref(api_version, kind)) == []


def test_unsupported_workload_kind() -> None:
    assert message(with_ref("batch/v1", "Job")) == (
        'Spec.ObjectRef.WorkloadRef: Invalid value: v1beta1.ObjectRef{APIVersion:"batch/v1", Kind:"Job", '
        'Name:"x"}: WorkloadRef kind is not supported'
    )
    assert check(with_ref("apps/v1/x", "Deployment"))[0][1] == "WorkloadRef kind is not supported"
    assert check(with_ref("batch/v1", "Job"), filter_workload_type=False) == []


def test_blue_green_only_for_deployment_and_cloneset() -> None:
    steps = {"blueGreen": {"steps": [{"replicas": "100%"}]}}
    assert check(with_ref("apps.kruise.io/v1alpha1", "CloneSet", **steps)) == []
    assert message(with_ref("apps/v1", "StatefulSet", **steps)) == (
        'Spec.ObjectRef.WorkloadRef: Invalid value: v1beta1.ObjectRef{APIVersion:"apps/v1", '
        'Kind:"StatefulSet", Name:"x"}: WorkloadRef kind is not supported for bluegreen style'
    )


# --- strategy ---------------------------------------------------------------------------------


def test_strategy_must_be_exactly_one_of_canary_and_blue_green() -> None:
    assert message(v1beta1_rollout(paused=True)) == (
        'Spec.Strategy: Invalid value: "null": Canary and BlueGreen cannot both be empty'
    )
    both = v1beta1_rollout(canary={"steps": [{"replicas": 1}]}, blueGreen={"steps": [{"replicas": 1}]})
    assert message(both) == 'Spec.Strategy: Invalid value: "null": Canary and BlueGreen cannot both be set'


def test_steps_cannot_be_empty() -> None:
    assert message(v1beta1_rollout(canary={})) == (
        "Spec.Strategy.Canary.Steps: Invalid value: []v1beta1.CanaryStep(nil): "
        "The number of Canary.Steps cannot be empty"
    )
    assert message(blue_green()) == (
        "Spec.Strategy.BlueGreen.Steps: Invalid value: []v1beta1.CanaryStep{}: "
        "The number of Canary.Steps cannot be empty"
    )


def test_every_step_needs_replicas() -> None:
    assert message(canary({})) == (
        "Spec.Strategy.Canary.Steps[0].steps: Invalid value: "
        f"[]v1beta1.CanaryStep{{{STEP_WITHOUT_REPLICAS}}}: replicas cannot be empty"
    )


@pytest.mark.parametrize("replicas", [0, -1, "0%", "101%", "5", "abc%", "-5%"])
def test_replicas_must_be_positive_and_at_most_100_percent(replicas: int | str) -> None:
    assert check(canary({"replicas": 1}, {"replicas": replicas})) == [
        ("Spec.Strategy.Canary.Steps[1].Replicas", REPLICAS_MESSAGE)
    ]


def test_replicas_value_is_printed_as_an_int_or_string() -> None:
    assert message(canary({"replicas": "0%"})) == (
        "Spec.Strategy.Canary.Steps[0].Replicas: Invalid value: "
        'intstr.IntOrString{Type:1, IntVal:0, StrVal:"0%"}: ' + REPLICAS_MESSAGE
    )
    assert message(canary({"replicas": 0})).startswith(
        "Spec.Strategy.Canary.Steps[0].Replicas: Invalid value: "
        'intstr.IntOrString{Type:0, IntVal:0, StrVal:""}: '
    )


@pytest.mark.parametrize("replicas", [1, 200, "1%", "100%", "+5%"])
def test_accepted_replicas(replicas: int | str) -> None:
    assert check(canary({"replicas": replicas})) == []


# --- partition style with traffic --------------------------------------------------------------

PARTITION_MESSAGE = (
    "For partition style rollout: step[x].replicas must not greater than "
    "partition-percent-limit if traffic specified"
)


@pytest.mark.parametrize(
    ("doc", "errors"),
    [
        pytest.param(
            canary({"replicas": "60%", "traffic": "10%"}, trafficRoutings=[INGRESS]),
            [("Spec.Strategy.Canary.Steps[0].steps", PARTITION_MESSAGE)],
            id="deployment partition, 60% with traffic",
        ),
        pytest.param(
            canary({"replicas": "60%", "matches": [{"headers": [{"name": "a", "value": "b"}]}]}),
            [("Spec.Strategy.Canary.Steps[0].steps", PARTITION_MESSAGE)],
            id="matches count as traffic",
        ),
        pytest.param(canary({"replicas": "50%", "traffic": "10%"}), [], id="50% is the limit"),
        pytest.param(canary({"replicas": 8, "traffic": "10%"}), [], id="a number is not limited"),
        pytest.param(canary({"replicas": "60%"}), [], id="no traffic, no limit"),
        pytest.param(
            canary({"replicas": "60%", "traffic": "10%"}, enableExtraWorkloadForCanary=True),
            [],
            id="canary style on a Deployment",
        ),
        pytest.param(
            with_ref(
                "apps.kruise.io/v1alpha1",
                "CloneSet",
                canary={
                    "steps": [{"replicas": "60%", "traffic": "10%"}],
                    "enableExtraWorkloadForCanary": True,
                },
            ),
            [("Spec.Strategy.Canary.Steps[0].steps", PARTITION_MESSAGE)],
            id="extra workload is ignored for a CloneSet",
        ),
    ],
)
def test_partition_percent_limit(doc: dict[str, Any], errors: list[tuple[str, str]]) -> None:
    assert check(doc) == errors


def test_partition_percent_limit_is_a_parameter() -> None:
    doc = canary({"replicas": "60%", "traffic": "10%"})
    assert check(doc, partition_percent_limit=60) == []
    assert check(doc, partition_percent_limit=59) == [
        ("Spec.Strategy.Canary.Steps[0].steps", PARTITION_MESSAGE)
    ]


# --- traffic ---------------------------------------------------------------------------------

CANARY_TRAFFIC = 'traffic must be percentage with "0%" < traffic <= "100%" in canary strategy'
BLUE_GREEN_TRAFFIC = 'traffic must be percentage with "0%" <= traffic <= "100%" in blueGreen strategy'


@pytest.mark.parametrize("traffic", ["0%", "101%", "5", "x%", "-1%"])
def test_canary_traffic_range(traffic: str) -> None:
    doc = canary({"replicas": 1, "traffic": traffic}, enableExtraWorkloadForCanary=True)
    assert check(doc) == [("Spec.Strategy.Canary.Steps[0].steps", CANARY_TRAFFIC)]


@pytest.mark.parametrize(("traffic", "ok"), [("0%", True), ("100%", True), ("101%", False), ("ten", False)])
def test_blue_green_traffic_range(traffic: str, ok: bool) -> None:
    errors = check(blue_green({"replicas": "50%", "traffic": traffic}))
    assert errors == ([] if ok else [("Spec.Strategy.BlueGreen.Steps[0].steps", BLUE_GREEN_TRAFFIC)])


def test_only_the_first_bad_step_is_reported() -> None:
    doc = canary({"replicas": 0}, {})
    assert check(doc) == [("Spec.Strategy.Canary.Steps[0].Replicas", REPLICAS_MESSAGE)]


# --- ordering ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("replicas", "ok"),
    [
        (["20%", "50%", "50%", "100%"], True),
        ([1, 2, 2, 5], True),
        (["50%", "20%"], False),
        ([3, 1], False),
        ([5, "10%", 3], True),  # only neighbours of the same type are compared
        ([1, 5, "10%", "5%"], False),
    ],
)
def test_replicas_are_non_decreasing(replicas: list[int | str], ok: bool) -> None:
    errors = check(canary(*({"replicas": r} for r in replicas)))
    expected = [
        (
            "Spec.Strategy.Canary.Steps.CanaryReplicas",
            "Steps.CanaryReplicas must be a non decreasing sequence",
        )
    ]
    assert errors == ([] if ok else expected)


# --- traffic routings ---------------------------------------------------------------------------


def test_at_most_one_traffic_routing() -> None:
    doc = canary(
        {"replicas": 1}, trafficRoutings=[INGRESS, {"service": "b", "gateway": {"httpRouteName": "r"}}]
    )
    assert message(doc) == (
        "Spec.Strategy.Canary: Invalid value: []v1beta1.TrafficRoutingRef{v1beta1.TrafficRoutingRef{"
        'Service:"svc", GracePeriodSeconds:0, Ingress:(*v1beta1.IngressTrafficRouting)(0xc000000000), '
        "Gateway:(*v1beta1.GatewayTrafficRouting)(nil), CustomNetworkRefs:[]v1beta1.ObjectRef(nil), "
        "AdditionalParams:map[string]string(nil)}, "
        'v1beta1.TrafficRoutingRef{Service:"b", GracePeriodSeconds:0, '
        "Ingress:(*v1beta1.IngressTrafficRouting)(nil), "
        "Gateway:(*v1beta1.GatewayTrafficRouting)(0xc000000000), "
        "CustomNetworkRefs:[]v1beta1.ObjectRef(nil), AdditionalParams:map[string]string(nil)}}: "
        "Rollout currently only support single TrafficRouting."
    )


PATH = "Spec.Strategy.Canary.TrafficRouting"
GRACE = 'Invalid value: "svc": TrafficRouting.GracePeriodSeconds cannot be negative'
GATEWAY = "TrafficRouting.Gateway must set the name of HTTPRoute or HTTPsRoute"


@pytest.mark.parametrize(
    ("ref", "expected"),
    [
        pytest.param(
            {"service": "svc", "gracePeriodSeconds": -1, "ingress": {"name": "i"}},
            [f"{PATH}.GracePeriodSeconds: {GRACE}"],
            id="negative grace period",
        ),
        pytest.param(
            {"service": "", "ingress": {"name": "i"}},
            [f'{PATH}.Service: Invalid value: "": TrafficRouting.Service cannot be empty'],
            id="empty service",
        ),
        pytest.param(
            {"service": "svc"},
            [f'{PATH}.TrafficRoutings: Invalid value: "null": TrafficRoutings are not set'],
            id="no provider",
        ),
        pytest.param(
            {"service": "svc", "customNetworkRefs": []}, [], id="an empty custom list counts as set"
        ),
        pytest.param(
            {"service": "svc", "ingress": {"classType": "nginx", "name": ""}},
            [
                f"{PATH}.Ingress: Invalid value: "
                'v1beta1.IngressTrafficRouting{ClassType:"nginx", Name:""}: '
                "TrafficRouting.Ingress.Ingress cannot be empty"
            ],
            id="ingress without name",
        ),
        pytest.param(
            {"service": "svc", "gateway": {}},
            [
                f"{PATH}.Gateway: Invalid value: "
                f"v1beta1.GatewayTrafficRouting{{HTTPRouteName:(*string)(nil)}}: {GATEWAY}"
            ],
            id="gateway without route",
        ),
        pytest.param(
            {"service": "svc", "gateway": {"httpRouteName": ""}},
            [
                f"{PATH}.Gateway: Invalid value: "
                f"v1beta1.GatewayTrafficRouting{{HTTPRouteName:(*string)(0xc000000000)}}: {GATEWAY}"
            ],
            id="gateway with empty route",
        ),
        pytest.param(
            {"service": "", "gracePeriodSeconds": -3},
            [
                f"{PATH}.GracePeriodSeconds: {GRACE.replace('svc', '')}",
                f'{PATH}.Service: Invalid value: "": TrafficRouting.Service cannot be empty',
                f'{PATH}.TrafficRoutings: Invalid value: "null": TrafficRoutings are not set',
            ],
            id="all rules of one routing are reported",
        ),
    ],
)
def test_traffic_routing_rules(ref: dict[str, Any], expected: list[str]) -> None:
    errors = validate_rollout(canary({"replicas": 1}, trafficRoutings=[ref]), workload_lookup=[])
    assert [e.error() for e in errors] == expected


def test_step_and_routing_errors_are_aggregated_in_order() -> None:
    doc = blue_green({"replicas": 0}, trafficRoutings=[{"service": ""}])
    assert [e.field for e in validate_rollout(doc, workload_lookup=[])] == [
        "Spec.Strategy.BlueGreen.Steps[0].Replicas",
        "Spec.Strategy.BlueGreen.TrafficRouting.Service",
        "Spec.Strategy.BlueGreen.TrafficRouting.TrafficRoutings",
    ]
    assert message(doc).startswith("[Spec.Strategy.BlueGreen.Steps[0].Replicas: Invalid value: ")


def test_models_and_dicts_are_validated_alike() -> None:
    from kruise.rollouts.api import Rollout

    doc = canary({"replicas": "0%"})
    assert validate_rollout(Rollout.from_dict(copy.deepcopy(doc)), workload_lookup=[]) == validate_rollout(
        doc, workload_lookup=[]
    )


@pytest.mark.parametrize(
    ("threshold", "detail"),
    [
        ("banana", "a valid percent string must be a numeric string followed by an ending '%'"),
        (-1, "must be greater than or equal to 0"),
        ("120%", "must not be greater than 100%"),
    ],
)
def test_failure_threshold_must_be_a_percent_or_count(threshold: object, detail: str) -> None:
    """Ours (upstream's webhook does not look): a malformed threshold is refused naming the field,
    rather than stopping the release at its first batch with nothing on the objects."""
    steps = [{"replicas": "20%"}]
    for doc, path in (
        (canary(*steps, failureThreshold=threshold), "Spec.Strategy.Canary.FailureThreshold"),
        (
            blue_green({"replicas": "50%"}, failureThreshold=threshold),
            "Spec.Strategy.BlueGreen.FailureThreshold",
        ),
    ):
        errors = check(doc)
        assert [f for f, _ in errors] == [path]
        assert errors[0][1].startswith(detail)


def test_a_valid_failure_threshold_is_admitted() -> None:
    assert check(canary({"replicas": "20%"}, failureThreshold="20%")) == []
    assert check(canary({"replicas": "20%"}, failureThreshold=2)) == []
