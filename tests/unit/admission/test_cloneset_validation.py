"""Every CREATE rejection of the CloneSet validating webhook, with upstream's exact text."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from kruise.workloads.admission import aggregate, validate_cloneset_create

from .builders import cloneset, pod, raw_cloneset

Mutation = Callable[[dict[str, Any]], None]

LABEL_MSG = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must "
    "start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for "
    "validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
)
SUBDOMAIN_MSG = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', "
    "and must start and end with an alphanumeric character (e.g. 'example.com', regex used for "
    "validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
)
NO_MATCH = "`selector` does not match template `labels`"
NIL_SELECTOR = "MatchLabels:map[string]string(nil), MatchExpressions:[]v1.LabelSelectorRequirement(nil)"


def spec(obj: dict[str, Any]) -> dict[str, Any]:
    result: dict[str, Any] = obj["spec"]
    return result


def pod_spec(obj: dict[str, Any]) -> dict[str, Any]:
    result: dict[str, Any] = obj["spec"]["template"]["spec"]
    return result


def strategy(**fields: Any) -> Mutation:
    return lambda obj: spec(obj)["updateStrategy"].update(fields)


CASES = [
    pytest.param(lambda o: None, "", id="a defaulted CloneSet is admitted"),
    pytest.param(
        lambda o: o["metadata"].update(name="Web"),
        f'metadata.name: Invalid value: "Web": {SUBDOMAIN_MSG}',
        id="the name must be a DNS subdomain",
    ),
    pytest.param(
        lambda o: spec(o).update(replicas=-1),
        "spec.replicas: Invalid value: -1: must be greater than or equal to 0",
        id="replicas may not be negative",
    ),
    pytest.param(
        lambda o: spec(o).pop("selector"),
        "[spec.selector: Required value, spec.template.metadata.labels: "
        f'Invalid value: map[string]string{{"app":"web"}}: {NO_MATCH}]',
        id="a missing selector is required and matches nothing",
    ),
    pytest.param(
        lambda o: spec(o).update(selector={}),
        f"spec.selector: Invalid value: v1.LabelSelector{{{NIL_SELECTOR}}}: "
        "empty selector is invalid for cloneset",
        id="an empty selector is invalid",
    ),
    pytest.param(
        lambda o: spec(o).update(selector={"matchLabels": {}}),
        "spec.selector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string{}, "
        "MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: empty selector is invalid for cloneset",
        id="an empty matchLabels map is still empty",
    ),
    pytest.param(
        lambda o: spec(o).update(selector={"matchLabels": {"app": "api"}}),
        f'spec.template.metadata.labels: Invalid value: map[string]string{{"app":"web"}}: {NO_MATCH}',
        id="the selector must match the template labels",
    ),
    pytest.param(
        lambda o: spec(o).update(
            selector={"matchExpressions": [{"key": "app", "operator": "Equals", "values": ["web"]}]}
        ),
        "[spec.selector.matchExpressions[0].operator: Invalid "
        'value: "Equals": not a valid selector operator, '
        "spec.selector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string(nil), MatchExpressions:"
        '[]v1.LabelSelectorRequirement{v1.LabelSelectorRequirement{Key:"app", '
        'Operator:"Equals", Values:[]string{"web"}}}}]',
        id="an unconvertible selector is reported twice and skips the template",
    ),
    pytest.param(
        lambda o: pod_spec(o).update(restartPolicy="Never"),
        'spec.template.spec.restartPolicy: Unsupported value: "Never": supported values: "Always"',
        id="restartPolicy must be Always",
    ),
    pytest.param(
        lambda o: pod_spec(o).update(restartPolicy="Sometimes"),
        'spec.template.spec.restartPolicy: Unsupported value: "Sometimes": supported values: "Always"',
        id="an unknown restartPolicy is not Always either (the pod rules are the API server's)",
    ),
    pytest.param(
        lambda o: pod_spec(o).update(activeDeadlineSeconds=30),
        "spec.template.spec.activeDeadlineSeconds: Forbidden: "
        "activeDeadlineSeconds in cloneset is not Supported",
        id="activeDeadlineSeconds is forbidden",
    ),
    pytest.param(
        lambda o: pod_spec(o).update(activeDeadlineSeconds=0),
        "spec.template.spec.activeDeadlineSeconds: Forbidden: activeDeadlineSeconds in cloneset "
        "is not Supported",
        id="a zero activeDeadlineSeconds is forbidden as well",
    ),
    pytest.param(
        lambda o: spec(o).update(scaleStrategy={"podsToDelete": ["web-a", "web-b", "web-a"]}),
        "spec.scaleStrategy.podsToDelete: Invalid value: "
        '[]string{"web-a", "web-b", "web-a"}: duplicated items [web-a]',
        id="podsToDelete may not repeat a name",
    ),
    pytest.param(
        strategy(type="OnDelete"),
        'spec.updateStrategy.type: Invalid value: "OnDelete": '
        "must be 'ReCreate', InPlaceIfPossible or 'InPlaceOnly'",
        id="the update type is one of three",
    ),
    pytest.param(
        strategy(partition="abc"),
        'spec.updateStrategy.partition: Invalid value: "abc": failed getValueFromIntOrPercent for partition: '
        "invalid type: string is not a percentage",
        id="a partition string must be a percentage",
    ),
    pytest.param(
        strategy(partition="x%"),
        'spec.updateStrategy.partition: Invalid value: "x%": failed getValueFromIntOrPercent for partition: '
        'strconv.ParseFloat: parsing "x": invalid syntax',
        id="a partition percentage must be a number",
    ),
    pytest.param(
        strategy(partition="5%%"),
        'spec.updateStrategy.partition: Invalid value: "5%%": failed getValueFromIntOrPercent for partition: '
        'strconv.ParseFloat: parsing "5%": invalid syntax',
        id="only one percent sign is stripped from a partition",
    ),
    pytest.param(
        strategy(partition="1e400%"),
        'spec.updateStrategy.partition: Invalid value: "1e400%": failed getValueFromIntOrPercent for '
        'partition: strconv.ParseFloat: parsing "1e400": value out of range',
        id="a partition percentage beyond float64 is out of range",
    ),
    pytest.param(
        strategy(partition="NaN%"),
        "spec.updateStrategy.partition: Invalid value: -9223372036854775808: "
        "must be greater than or equal to 0",
        id="a NaN percentage scales to Go's MinInt64 and is refused as negative",
    ),
    pytest.param(
        strategy(partition=-1),
        "spec.updateStrategy.partition: Invalid value: -1: must be greater than or equal to 0",
        id="the partition may not be negative",
    ),
    pytest.param(strategy(partition="50%"), "", id="a percentage partition is fine"),
    pytest.param(strategy(partition="33.5%"), "", id="a fractional percentage partition is fine"),
    pytest.param(strategy(partition="2.5e1%"), "", id="a partition percentage may use an exponent"),
    pytest.param(
        strategy(maxUnavailable="abc"),
        '[spec.updateStrategy.maxUnavailable: Invalid value: "abc": failed getValueFromIntOrPercent for '
        "maxUnavailable: invalid type: string is not a percentage, spec.updateStrategy.maxUnavailable: "
        'Invalid value: intstr.IntOrString{Type:1, IntVal:0, StrVal:"abc"}: '
        "maxUnavailable and maxSurge should not both be less than 1]",
        id="an unparsable maxUnavailable counts as zero",
    ),
    pytest.param(
        strategy(maxUnavailable="5%%", maxSurge=1),
        'spec.updateStrategy.maxUnavailable: Invalid value: "5%%": failed getValueFromIntOrPercent for '
        'maxUnavailable: strconv.Atoi: parsing "5%": invalid syntax',
        id="a doubled percent sign is refused",
    ),
    pytest.param(
        strategy(maxUnavailable="5", maxSurge=1),
        'spec.updateStrategy.maxUnavailable: Invalid value: "5": failed getValueFromIntOrPercent for '
        "maxUnavailable: invalid type: string is not a percentage",
        id="a bare number string is not a percentage (upstream v1.9)",
    ),
    pytest.param(
        strategy(maxSurge="12.5%"),
        'spec.updateStrategy.maxSurge: Invalid value: "12.5%": failed getValueFromIntOrPercent for '
        'maxSurge: strconv.Atoi: parsing "12.5": invalid syntax',
        id="maxSurge is read as an integer percentage by the controller, so no fraction",
    ),
    pytest.param(
        lambda o: spec(o).update(scaleStrategy={"maxUnavailable": "x%"}),
        'spec.scaleStrategy.maxUnavailable: Invalid value: "x%": failed getValueFromIntOrPercent for '
        'maxUnavailable: strconv.Atoi: parsing "x": invalid syntax',
        id="the scale strategy's maxUnavailable is checked too",
    ),
    pytest.param(
        lambda o: spec(o).update(scaleStrategy={"maxUnavailable": "50%"}), "", id="a scale percentage is fine"
    ),
    pytest.param(
        strategy(type="InPlaceOnly", maxSurge="50%"),
        'spec.updateStrategy.maxSurge: Invalid value: "50%": '
        "can not use maxSurge with strategy type InPlaceOnly",
        id="no surge with InPlaceOnly",
    ),
    pytest.param(
        strategy(type="InPlaceOnly", maxSurge=1),
        'spec.updateStrategy.maxSurge: Invalid value: "1": '
        "can not use maxSurge with strategy type InPlaceOnly",
        id="an integer surge prints as its string form",
    ),
    pytest.param(
        strategy(maxUnavailable=0, maxSurge=0),
        'spec.updateStrategy.maxUnavailable: Invalid value: intstr.IntOrString{Type:0, IntVal:0, StrVal:""}: '
        "maxUnavailable and maxSurge should not both be less than 1",
        id="maxUnavailable and maxSurge may not both be zero",
    ),
    pytest.param(
        strategy(maxUnavailable="0%"),
        "spec.updateStrategy.maxUnavailable: Invalid value: "
        'intstr.IntOrString{Type:1, IntVal:0, StrVal:"0%"}: '
        "maxUnavailable and maxSurge should not both be less than 1",
        id="a zero percentage counts too",
    ),
    pytest.param(strategy(maxUnavailable=0, maxSurge=1), "", id="surge alone is enough"),
    pytest.param(strategy(maxUnavailable="1%"), "", id="a percentage rounds up to one pod"),
]


@pytest.mark.parametrize(("mutate", "text"), CASES)
def test_create_rules(mutate: Mutation, text: str) -> None:
    obj = cloneset()
    mutate(obj)
    assert aggregate(validate_cloneset_create(obj)) == text


def test_zero_replicas_allow_zero_unavailability() -> None:
    obj = cloneset(replicas=0, updateStrategy={"maxUnavailable": 0})
    assert validate_cloneset_create(obj) == []


def test_the_template_is_validated_with_defaults_even_when_none_were_injected() -> None:
    undefaulted = raw_cloneset(updateStrategy={"type": "ReCreate", "partition": 0, "maxUnavailable": 1})
    assert validate_cloneset_create(undefaulted) == []


def test_an_undefaulted_partition_is_a_nil_int_or_string() -> None:
    undefaulted = raw_cloneset(updateStrategy={"type": "ReCreate", "maxUnavailable": 1})
    assert aggregate(validate_cloneset_create(undefaulted)) == (
        'spec.updateStrategy.partition: Invalid value: "<nil>": '
        "failed getValueFromIntOrPercent for partition: "
        "nil value for IntOrString"
    )


PRIORITY_CASES = [
    pytest.param(
        {
            "weightPriority": [{"weight": 50, "matchSelector": {"matchLabels": {"a": "b"}}}],
            "orderPriority": [{"orderedKey": "k"}],
        },
        "only one of weightPriority and orderPriority can be used",
        id="weight and order are exclusive",
    ),
    pytest.param(
        {"weightPriority": [{"weight": 101, "matchSelector": {"matchLabels": {"a": "b"}}}]},
        "weight must be valid number in the range 1-100",
        id="weights stop at 100",
    ),
    pytest.param(
        {"weightPriority": [{"weight": 50, "matchSelector": {}}]},
        "selector can not be empty",
        id="weight selectors may not be empty",
    ),
    pytest.param(
        {
            "weightPriority": [
                {"weight": 50, "matchSelector": {"matchExpressions": [{"key": "a", "operator": "Foo"}]}}
            ]
        },
        'invalid selector "Foo" is not a valid label selector operator',
        id="weight selectors must convert",
    ),
    pytest.param(
        {"orderPriority": [{"orderedKey": ""}]}, "order key can not be empty", id="order keys are required"
    ),
]


@pytest.mark.parametrize(("priority", "detail"), PRIORITY_CASES)
def test_priority_strategy(priority: dict[str, Any], detail: str) -> None:
    obj = cloneset(updateStrategy={"priorityStrategy": priority})
    assert (
        aggregate(validate_cloneset_create(obj))
        == f"spec.updateStrategy.priorityStrategy: Required value: {detail}"
    )


def test_a_zero_weight_is_accepted_despite_the_message() -> None:
    priority = {"weightPriority": [{"weight": 0, "matchSelector": {"matchLabels": {"a": "b"}}}]}
    assert validate_cloneset_create(cloneset(updateStrategy={"priorityStrategy": priority})) == []


@pytest.mark.parametrize(
    ("scatter", "detail"),
    [
        pytest.param([{"key": "", "value": "a"}], "key should not be empty", id="keys are required"),
        pytest.param(
            [{"key": "zone", "value": "a"}, {"key": "zone", "value": "a"}],
            "duplicated key=zone value=a",
            id="pairs are unique",
        ),
    ],
)
def test_scatter_strategy(scatter: list[dict[str, str]], detail: str) -> None:
    obj = cloneset(updateStrategy={"scatterStrategy": scatter})
    assert (
        aggregate(validate_cloneset_create(obj))
        == f"spec.updateStrategy.scatterStrategy: Required value: {detail}"
    )


def test_pods_to_delete_on_create_are_looked_up() -> None:
    pods = {
        "web-a": pod("web-a"),
        "web-b": pod("web-b", terminating=True),
        "web-c": pod("web-c", owner_uid="other"),
    }
    obj = cloneset(scaleStrategy={"podsToDelete": ["web-x", "web-c", "web-b", "web-a"]})
    assert aggregate(validate_cloneset_create(obj, pod_lookup=pods.get)) == (
        '[spec.scaleStrategy.podsToDelete: Invalid value: "web-b": find pod web-b already terminating, '
        'spec.scaleStrategy.podsToDelete: Invalid value: "web-c": find pod web-c owner is not this CloneSet, '
        "spec.scaleStrategy.podsToDelete: Invalid value: "
        '"web-x": find pod web-x failed: pods "web-x" not found]'
    )


def test_a_failing_lookup_is_reported_with_its_error() -> None:
    def broken(name: str) -> dict[str, Any] | None:
        raise RuntimeError("connection refused")

    obj = cloneset(scaleStrategy={"podsToDelete": ["web-a"]})
    assert aggregate(validate_cloneset_create(obj, pod_lookup=broken)) == (
        'spec.scaleStrategy.podsToDelete: Invalid value: "web-a": find pod web-a failed: connection refused'
    )
