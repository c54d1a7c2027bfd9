"""Advanced StatefulSet webhook rules: defaults, and every refusal with upstream's exact text."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import pytest

from kruise.workloads.admission.fielderrors import aggregate
from kruise.workloads.admission.statefulset import (
    SPEC_UPDATE_FORBIDDEN_MESSAGE,
    default_statefulset,
    in_place_only_violation,
    validate_statefulset_create,
    validate_statefulset_delete,
    validate_statefulset_update,
    validate_volume_claim_template_update,
)

Mutation = Callable[[dict[str, Any]], None]


def raw(**spec: Any) -> dict[str, Any]:
    """A StatefulSet as a user writes it (upstream's ``sample``, v1beta1)."""
    return {
        "apiVersion": "apps.kruise.io/v1beta1",
        "kind": "StatefulSet",
        "metadata": {"name": "sample", "namespace": "shop"},
        "spec": {
            "replicas": 10,
            "serviceName": "fake-service",
            "selector": {"matchLabels": {"app": "sample"}},
            "template": {
                "metadata": {"labels": {"app": "sample"}},
                "spec": {
                    "readinessGates": [{"conditionType": "InPlaceUpdateReady"}],
                    "containers": [{"name": "main", "image": "nginx:alpine"}],
                },
            },
            "podManagementPolicy": "Parallel",
            "updateStrategy": {
                "type": "RollingUpdate",
                "rollingUpdate": {"podUpdatePolicy": "InPlaceIfPossible", "maxUnavailable": 2},
            },
            **spec,
        },
    }


def defaulted(**spec: Any) -> dict[str, Any]:
    return default_statefulset(raw(**spec), old=None)


def rolling(obj: dict[str, Any]) -> dict[str, Any]:
    result: dict[str, Any] = obj["spec"]["updateStrategy"]["rollingUpdate"]
    return result


def test_defaults_mirror_set_defaults_statefulset() -> None:
    out = default_statefulset(
        {
            "metadata": {"name": "s"},
            "spec": {"template": {"spec": {"containers": [{"name": "c", "image": "c:1"}]}}},
        },
        old=None,
    )
    spec = out["spec"]
    assert spec["podManagementPolicy"] == "OrderedReady"
    assert spec["updateStrategy"] == {
        "type": "RollingUpdate",
        "rollingUpdate": {
            "partition": 0,
            "maxUnavailable": 1,
            "podUpdatePolicy": "ReCreate",
            "minReadySeconds": 0,
        },
    }
    assert (spec["replicas"], spec["revisionHistoryLimit"]) == (1, 10)
    assert spec["persistentVolumeClaimRetentionPolicy"] == {"whenDeleted": "Retain", "whenScaled": "Retain"}
    assert spec["volumeClaimUpdateStrategy"] == {}  # Go marshals the struct, no type without the gate
    container = spec["template"]["spec"]["containers"][0]
    # kruise's SetDefaultPodSpec: Always for every regular container, "for in-place update"
    assert (container["imagePullPolicy"], container["terminationMessagePolicy"]) == ("Always", "File")
    assert spec["template"]["metadata"]["creationTimestamp"] is None
    # no readiness gate is injected (upstream's mutating webhook does not add InPlaceUpdateReady)
    assert "readinessGates" not in spec["template"]["spec"]


def test_defaults_keep_user_values_and_on_delete_has_no_rolling_update() -> None:
    out = default_statefulset(
        raw(
            updateStrategy={"type": "OnDelete"}, persistentVolumeClaimRetentionPolicy={"whenScaled": "Delete"}
        ),
        old=None,
    )
    assert out["spec"]["updateStrategy"] == {"type": "OnDelete"}
    policy = out["spec"]["persistentVolumeClaimRetentionPolicy"]
    assert policy == {"whenScaled": "Delete", "whenDeleted": "Retain"}


def test_defaults_gates() -> None:
    out = default_statefulset(raw(), old=None, auto_delete_pvc=False, auto_resize_pvc=True)
    assert "persistentVolumeClaimRetentionPolicy" not in out["spec"]
    assert out["spec"]["volumeClaimUpdateStrategy"] == {"type": "OnDelete"}


def test_template_defaults_only_when_the_template_changes() -> None:
    first = defaulted()
    again = copy.deepcopy(first)
    again["spec"]["template"]["spec"]["containers"][0].pop("imagePullPolicy")
    untouched = default_statefulset(again, old=again)
    assert "imagePullPolicy" not in untouched["spec"]["template"]["spec"]["containers"][0]
    assert default_statefulset(first, old=None) == first  # idempotent


READINESS = (
    "spec.template.spec.readinessGates: Invalid value: []v1.PodReadinessGate(nil): "
    "must contains InPlaceUpdateReady when podUpdatePolicy is InPlaceIfPossible"
)
MAX_UNAVAILABLE = "spec.updateStrategy.rollingUpdate.maxUnavailable"
ORDINALS = (
    '[]intstr.IntOrString{intstr.IntOrString{Type:0, IntVal:1, StrVal:""}, '
    'intstr.IntOrString{Type:1, IntVal:0, StrVal:"3-x"}}'
)


def _set_rolling(**fields: Any) -> Mutation:
    return lambda obj: rolling(obj).update(fields)


def _set_spec(**fields: Any) -> Mutation:
    return lambda obj: obj["spec"].update(fields)


def _drop_gates(obj: dict[str, Any]) -> None:
    obj["spec"]["template"]["spec"].pop("readinessGates")


def _ordered_and_unordered(obj: dict[str, Any]) -> None:
    obj["spec"]["podManagementPolicy"] = "OrderedReady"
    rolling(obj).update(maxUnavailable=1, unorderedUpdate={})


CASES = [
    pytest.param(lambda o: None, "", id="upstream's sample is admitted"),
    pytest.param(
        lambda o: (o["spec"].update(podManagementPolicy="Burst"), rolling(o).update(maxUnavailable=1)),
        "spec.podManagementPolicy: Invalid value: \"Burst\": must be 'OrderedReady' or 'Parallel'",
        id="podManagementPolicy values",
    ),
    pytest.param(
        _set_spec(podManagementPolicy="OrderedReady"),
        f'{MAX_UNAVAILABLE}: Invalid value: intstr.IntOrString{{Type:0, IntVal:2, StrVal:""}}: '
        "can only work with Parallel PodManagementPolicyType",
        id="maxUnavailable above 1 needs Parallel",
    ),
    pytest.param(
        _set_rolling(maxUnavailable=0),
        f'{MAX_UNAVAILABLE}: Invalid value: intstr.IntOrString{{Type:0, IntVal:0, StrVal:""}}: '
        "should not be less than 1",
        id="maxUnavailable below 1",
    ),
    pytest.param(
        _set_rolling(maxUnavailable="50"),
        f'{MAX_UNAVAILABLE}: Invalid value: intstr.IntOrString{{Type:1, IntVal:0, StrVal:"50"}}: a valid '
        "percent string must be a numeric string followed by an ending '%' (e.g. '1%',  or '93%', regex "
        "used for validation is '[0-9]+%')",
        id="maxUnavailable string without percent",
    ),
    pytest.param(
        _set_rolling(minReadySeconds=301),
        "spec.updateStrategy.rollingUpdate.minReadySeconds: Invalid value: 301: "
        "must be no more than 300 seconds",
        id="minReadySeconds above 300",
    ),
    pytest.param(
        _set_rolling(partition=-1),
        "spec.updateStrategy.rollingUpdate.partition: Invalid value: -1: must be greater than or equal to 0",
        id="negative partition",
    ),
    pytest.param(
        _set_rolling(podUpdatePolicy="Rolling"),
        'spec.updateStrategy.rollingUpdate.podUpdatePolicy: Invalid value: "Rolling": '
        "must be 'ReCreate', InPlaceIfPossible or 'InPlaceOnly'",
        id="podUpdatePolicy values",
    ),
    pytest.param(_drop_gates, READINESS, id="in-place needs the InPlaceUpdateReady readiness gate"),
    pytest.param(
        _ordered_and_unordered,
        "spec.updateStrategy.rollingUpdate.unorderedUpdate: Required value: "
        "unorderedUpdate can only work with Parallel PodManagementPolicyType",
        id="unorderedUpdate needs Parallel",
    ),
    pytest.param(
        _set_rolling(
            unorderedUpdate={
                "priorityStrategy": {
                    "orderPriority": [{"orderedKey": "k"}],
                    "weightPriority": [{"weight": 5}],
                }
            }
        ),
        "spec.updateStrategy.rollingUpdate.unorderedUpdate.priorityStrategy: Required value: "
        "only one of weightPriority and orderPriority can be used",
        id="priority strategy fields",
    ),
    pytest.param(
        _set_spec(reserveOrdinals=[1, "3-x"]),
        f"[spec: Invalid value: {ORDINALS}: 1 th reserve ordinal is not a valid range: 3-x, "
        f"spec: Invalid value: {ORDINALS}: 1 th reserve ordinal is invalid: 3-x, "
        'err = strconv.Atoi: parsing "x": invalid syntax]',
        id="malformed reserve ordinal range",
    ),
    pytest.param(
        _set_spec(reserveOrdinals=["5-2"]),
        'spec: Invalid value: []intstr.IntOrString{intstr.IntOrString{Type:1, IntVal:0, StrVal:"5-2"}}: '
        "0 th reserve ordinal is invalid: 5-2, err = invalid range 5-2",
        id="reversed reserve ordinal range",
    ),
    pytest.param(
        _set_spec(reserveOrdinals=[-1]),
        'spec: Invalid value: []intstr.IntOrString{intstr.IntOrString{Type:0, IntVal:-1, StrVal:""}}: '
        "0 th reserve ordinal is negative: -1",
        id="negative reserve ordinal",
    ),
    pytest.param(
        _set_spec(selector={}),
        "spec.selector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string(nil), "
        "MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: empty selector is invalid for statefulset",
        id="empty selector",
    ),
    pytest.param(
        _set_spec(selector={"matchLabels": {"app": "other"}}),
        'spec.template.metadata.labels: Invalid value: map[string]string{"app":"sample"}: '
        "`selector` does not match template `labels`",
        id="selector must match the template labels",
    ),
    pytest.param(
        lambda o: o["spec"].pop("selector"),
        "[spec.selector: Required value, spec.template.metadata.labels: Invalid value: "
        'map[string]string{"app":"sample"}: `selector` does not match template `labels`]',
        id="selector required",
    ),
    pytest.param(
        lambda o: o["spec"]["template"]["spec"].update(activeDeadlineSeconds=5),
        "spec.template.spec.activeDeadlineSeconds: Forbidden: "
        "activeDeadlineSeconds in StatefulSet is not Supported",
        id="activeDeadlineSeconds",
    ),
    pytest.param(
        lambda o: o["spec"]["template"]["spec"].update(restartPolicy="Never"),
        'spec.template.spec.restartPolicy: Unsupported value: "Never": supported values: "Always"',
        id="restartPolicy must be Always",
    ),
    pytest.param(
        _set_spec(persistentVolumeClaimRetentionPolicy={"whenDeleted": "Keep", "whenScaled": "Retain"}),
        'spec.persistentVolumeClaimRetentionPolicy.whenDeleted: Unsupported value: "Keep": '
        'supported values: "Retain", "Delete"',
        id="retention policy values",
    ),
    pytest.param(
        _set_spec(replicas=-1),
        "spec.replicas: Invalid value: -1: must be greater than or equal to 0",
        id="negative replicas",
    ),
    pytest.param(
        lambda o: o["spec"]["updateStrategy"].update(type="OnDelete"),
        'spec.updateStrategy.rollingUpdate: Invalid value: {"maxUnavailable":2,"minReadySeconds":0,'
        '"partition":0,"podUpdatePolicy":"InPlaceIfPossible"}: '
        "only allowed for updateStrategy 'RollingUpdate'",
        id="OnDelete takes no rollingUpdate",
    ),
    pytest.param(
        _set_spec(scaleStrategy={"maxUnavailable": "0%"}),
        "spec.scaleStrategy.maxUnavailable: Invalid value: "
        'intstr.IntOrString{Type:1, IntVal:0, StrVal:"0%"}: should not be less than 1',
        id="scaleStrategy.maxUnavailable below 1",
    ),
]


@pytest.mark.parametrize(("mutate", "expected"), CASES)
def test_create_validation(mutate: Mutation, expected: str) -> None:
    obj = defaulted()
    mutate(obj)
    assert aggregate(validate_statefulset_create(obj)) == expected


def test_readiness_gate_message_names_the_gates_present() -> None:
    obj = defaulted()
    obj["spec"]["template"]["spec"]["readinessGates"] = [{"conditionType": "Other"}]
    rolling(obj)["podUpdatePolicy"] = "InPlaceOnly"
    assert aggregate(validate_statefulset_create(obj)) == (
        "spec.template.spec.readinessGates: Invalid value: []v1.PodReadinessGate{v1.PodReadinessGate{"
        'ConditionType:"Other"}}: must contains InPlaceUpdateReady when podUpdatePolicy is InPlaceOnly'
    )


def test_update_may_change_only_the_mutable_fields() -> None:
    old = defaulted()
    new = copy.deepcopy(old)
    new["spec"].update(replicas=3, reserveOrdinals=[1], ordinals={"start": 2}, revisionHistoryLimit=3)
    rolling(new)["partition"] = 5
    assert validate_statefulset_update(new, old) == []
    for key, value in (("serviceName", "other"), ("podManagementPolicy", "OrderedReady")):
        changed = copy.deepcopy(old)
        changed["spec"][key] = value
        errors = [str(e) for e in validate_statefulset_update(changed, old)]
        assert f"spec: Forbidden: {SPEC_UPDATE_FORBIDDEN_MESSAGE}" in errors, key


def test_in_place_only_allows_only_image_changes() -> None:
    old = defaulted()
    rolling(old)["podUpdatePolicy"] = "InPlaceOnly"
    image = copy.deepcopy(old)
    image["spec"]["template"]["spec"]["containers"][0]["image"] = "nginx:1.27"
    assert in_place_only_violation(old, image) is None
    env = copy.deepcopy(old)
    env["spec"]["template"]["spec"]["containers"][0]["env"] = [{"name": "A", "value": "1"}]
    assert in_place_only_violation(old, env) == (
        "invalid template modified with InPlaceOnly strategy: add /containers/0/env, "
        "currently only image update is allowed for InPlaceOnly"
    )
    relaxed = copy.deepcopy(old)  # upstream's pattern is not anchored: imagePullPolicy passes
    relaxed["spec"]["template"]["spec"]["containers"][0]["imagePullPolicy"] = "Always"
    assert in_place_only_violation(old, relaxed) is None


def test_volume_claim_templates_under_on_rolling_update() -> None:
    claim = {"metadata": {"name": "data"}, "spec": {"resources": {"requests": {"storage": "1Gi"}}}}
    old = defaulted(volumeClaimTemplates=[claim], volumeClaimUpdateStrategy={"type": "OnPodRollingUpdate"})
    renamed = copy.deepcopy(old)
    renamed["spec"]["volumeClaimTemplates"][0]["metadata"]["name"] = "logs"
    assert [str(e) for e in validate_volume_claim_template_update(renamed, old, lambda name: None)] == [
        "spec.volumeClaimTemplates[logs].name: Forbidden: volumeClaimTemplate name can not be modified"
    ]
    bigger = copy.deepcopy(old)
    bigger["spec"]["volumeClaimTemplates"][0]["spec"]["resources"]["requests"]["storage"] = "2Gi"
    fixed = {"metadata": {"name": "standard"}, "allowVolumeExpansion": False}
    assert [str(e) for e in validate_volume_claim_template_update(bigger, old, lambda name: fixed)] == [
        "spec.volumeClaimTemplates[data].spec.resources.requests.storage: Forbidden: "
        "storage class standard does not support volume expansion"
    ]
    assert validate_volume_claim_template_update(bigger, old, lambda name: None) == []  # no default class
    on_delete = copy.deepcopy(renamed)
    on_delete["spec"]["volumeClaimUpdateStrategy"] = {"type": "OnDelete"}
    assert validate_volume_claim_template_update(on_delete, old, lambda name: None) == []


def test_delete_protection() -> None:
    obj = defaulted()
    obj["metadata"]["labels"] = {"policy.kruise.io/delete-protection": "Cascading"}
    assert validate_statefulset_delete(obj, gate_enabled=False) is None
    assert validate_statefulset_delete(obj, gate_enabled=True) == (
        "forbidden by ResourcesProtectionDeletion for policy.kruise.io/delete-protection=Cascading "
        "and replicas 10>0"
    )
