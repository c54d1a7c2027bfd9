"""Advanced DaemonSet admission: ``SetDefaultsDaemonSet`` and ``pkg/webhook/daemonset`` messages."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from kruise.workloads.admission.daemonset import (
    SPEC_UPDATE_FORBIDDEN_MESSAGE,
    default_daemonset,
    is_well_typed,
    validate_daemonset_create,
    validate_daemonset_update,
)
from kruise.workloads.admission.fielderrors import aggregate

JSON = dict[str, Any]


def ds(**spec: Any) -> JSON:
    body: JSON = {
        "apiVersion": "apps.kruise.io/v1alpha1",
        "kind": "DaemonSet",
        "metadata": {"name": "guestbook-ds", "namespace": "ns"},
        "spec": {
            "selector": {"matchLabels": {"app": "guestbook-daemon"}},
            "template": {
                "metadata": {"labels": {"app": "guestbook-daemon"}},
                "spec": {"containers": [{"name": "daemon", "image": "openkruise/guestbook:v1"}]},
            },
            **spec,
        },
    }
    return body


def rolling(**fields: Any) -> JSON:
    return {"updateStrategy": {"type": "RollingUpdate", "rollingUpdate": fields}}


# ------------------------------------------------------------------------------- defaults
@pytest.mark.parametrize(
    ("given", "expected"),
    [
        pytest.param(
            {},
            {
                "type": "RollingUpdate",
                "rollingUpdate": {"rollingUpdateType": "Standard", "maxUnavailable": 1, "maxSurge": 0},
            },
            id="nothing set: RollingUpdate, Standard, one unavailable",
        ),
        pytest.param(
            {"type": "RollingUpdate", "rollingUpdate": {"rollingUpdateType": "Surging"}},
            {
                "type": "RollingUpdate",
                "rollingUpdate": {"rollingUpdateType": "Standard", "maxSurge": 1, "maxUnavailable": 0},
            },
            id="Surging becomes Standard with surge 1",
        ),
        pytest.param(
            {"rollingUpdate": {"rollingUpdateType": "Surging", "maxSurge": "30%"}},
            {
                "type": "RollingUpdate",
                "rollingUpdate": {"rollingUpdateType": "Standard", "maxSurge": "30%", "maxUnavailable": 0},
            },
            id="Surging keeps a set maxSurge",
        ),
        pytest.param(
            {"rollingUpdate": {"maxSurge": 2}},
            {"type": "RollingUpdate", "rollingUpdate": {"rollingUpdateType": "Standard", "maxSurge": 2}},
            id="one of the two set: the other stays unset",
        ),
        pytest.param(
            {"rollingUpdate": {"rollingUpdateType": "InPlaceIfPossible", "partition": 3}},
            {
                "type": "RollingUpdate",
                "rollingUpdate": {
                    "rollingUpdateType": "InPlaceIfPossible",
                    "partition": 3,
                    "maxUnavailable": 1,
                    "maxSurge": 0,
                },
            },
            id="in place keeps its type and partition",
        ),
        pytest.param({"type": "OnDelete"}, {"type": "OnDelete"}, id="OnDelete gets no rollingUpdate"),
    ],
)
def test_update_strategy_defaults(given: JSON, expected: JSON) -> None:
    out = default_daemonset(ds(updateStrategy=given))
    assert out["spec"]["updateStrategy"] == expected


def test_other_defaults_and_marshal_artifacts_but_no_template_defaults() -> None:
    out = default_daemonset(ds())
    assert out["spec"]["burstReplicas"] == 250 and out["spec"]["revisionHistoryLimit"] == 10
    template = out["spec"]["template"]
    assert template["metadata"]["creationTimestamp"] is None
    assert template["spec"]["containers"][0] == {
        "name": "daemon",
        "image": "openkruise/guestbook:v1",
        "resources": {},
    }
    assert "restartPolicy" not in template["spec"], "upstream does not default the DaemonSet's template"


def test_a_defaulted_object_is_returned_unchanged() -> None:
    once = default_daemonset(ds())
    assert default_daemonset(once) == once


def test_a_wrongly_typed_object_is_left_to_the_schema() -> None:
    bad = ds()
    bad["spec"]["template"]["spec"]["containers"] = "nginx"
    assert not is_well_typed(bad)
    assert is_well_typed(ds())


# ----------------------------------------------------------------------------- validation
def errors(obj: JSON) -> str:
    return aggregate(validate_daemonset_create(default_daemonset(obj)))


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        pytest.param(
            rolling(maxSurge=1, maxUnavailable=1),
            "spec.updateStrategy.rollingUpdate.maxSurge: Invalid value: "
            'intstr.IntOrString{Type:0, IntVal:1, StrVal:""}: may not be set when maxUnavailable is non-zero',
            id="maxSurge with a non-zero maxUnavailable",
        ),
        pytest.param(
            rolling(maxSurge=0, maxUnavailable="0%"),
            "spec.updateStrategy.rollingUpdate.maxUnavailable: Required value: "
            "cannot be 0 when maxSurge is 0",
            id="both zero",
        ),
        pytest.param(
            rolling(rollingUpdateType="InPlaceIfPossible", maxSurge=1, maxUnavailable=0),
            "spec.updateStrategy.rollingUpdate.maxSurge: Required value: "
            "must be 0 for InPlaceIfPossible type",
            id="surge with InPlaceIfPossible",
        ),
        pytest.param(
            rolling(maxUnavailable="120%"),
            "spec.updateStrategy.rollingUpdate.maxUnavailable: Invalid value: "
            'intstr.IntOrString{Type:1, IntVal:0, StrVal:"120%"}: must not be greater than 100%',
            id="more than 100%",
        ),
        pytest.param(
            rolling(maxUnavailable=-1),
            "spec.updateStrategy.rollingUpdate.maxUnavailable: Invalid value: -1: "
            "must be greater than or equal to 0",
            id="a negative maxUnavailable",
        ),
        pytest.param(
            rolling(maxUnavailable=1, rollingUpdateType="Rolling"),
            'spec.updateStrategy.rollingUpdate.rollingUpdate.type: Unsupported value: "Rolling": '
            'supported values: "Standard", "Surging", "InPlaceIfPossible"',
            id="an unknown rollingUpdateType (upstream's doubled path)",
        ),
        pytest.param(
            rolling(maxUnavailable=1, partition=-2),
            "spec.updateStrategy.rollingUpdate.rollingUpdate.partition: Invalid value: -2: "
            "must be greater than or equal to 0",
            id="a negative partition",
        ),
        pytest.param(
            rolling(maxUnavailable=1, partition="150%"),
            "spec.updateStrategy.rollingUpdate.rollingUpdate.partition: Invalid value: "
            'intstr.IntOrString{Type:1, IntVal:0, StrVal:"150%"}: must not be greater than 100%',
            id="a partition above 100%",
        ),
        pytest.param(
            {"updateStrategy": {"type": "Replace"}},
            'spec.updateStrategy: Unsupported value: v1alpha1.DaemonSetUpdateStrategy{Type:"Replace", '
            "RollingUpdate:(*v1alpha1.RollingUpdateDaemonSet)(nil)}: "
            'supported values: "RollingUpdate", "OnDelete"',
            id="an unknown strategy type",
        ),
        pytest.param(
            {"lifecycle": {"inPlaceUpdate": {"labelsHandler": {"a": "b"}}}},
            "spec.lifecycle.inPlaceUpdate: Forbidden: inPlaceUpdate hook has not supported yet",
            id="the inPlaceUpdate hook",
        ),
        pytest.param(
            {"minReadySeconds": -1},
            "spec.minReadySeconds: Invalid value: -1: must be greater than or equal to 0",
            id="negative minReadySeconds",
        ),
        pytest.param(
            {"revisionHistoryLimit": -1},
            "spec.revisionHistoryLimit: Invalid value: -1: must be greater than or equal to 0",
            id="negative revisionHistoryLimit",
        ),
    ],
)
def test_spec_rules(spec: JSON, message: str) -> None:
    assert errors(ds(**spec)) == message


def test_template_rules() -> None:
    obj = ds()
    obj["spec"]["template"]["spec"]["activeDeadlineSeconds"] = 30
    assert errors(obj) == (
        "spec.template.spec.activeDeadlineSeconds: Forbidden: "
        "activeDeadlineSeconds in DaemonSet is not Supported"
    )
    obj = ds()
    obj["spec"]["template"]["spec"]["restartPolicy"] = "Never"
    assert (
        errors(obj)
        == 'spec.template.spec.restartPolicy: Unsupported value: "Never": supported values: "Always"'
    )


def test_selector_rules() -> None:
    obj = ds()
    obj["spec"]["template"]["metadata"]["labels"] = {"app": "other"}
    assert errors(obj) == (
        'spec.template.metadata.labels: Invalid value: map[string]string{"app":"other"}: '
        "`selector` does not match template `labels`"
    )
    obj = ds(selector={})
    assert errors(obj) == (
        "spec.selector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string(nil), "
        "MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: empty selector is invalid for daemonset"
    )


def test_the_upstream_examples_are_valid() -> None:
    assert errors(ds()) == ""
    assert errors(ds(**rolling(maxUnavailable=1, partition=0, rollingUpdateType="Standard"))) == ""
    assert errors(ds(**rolling(maxSurge="100%", maxUnavailable=0))) == ""
    assert errors(ds(**rolling(rollingUpdateType="InPlaceIfPossible", partition="40%"))) == ""


def test_only_the_selector_is_immutable() -> None:
    old = default_daemonset(ds())
    new = copy.deepcopy(old)
    new["spec"].update(burstReplicas=5, minReadySeconds=3, revisionHistoryLimit=2)
    new["spec"]["updateStrategy"]["rollingUpdate"]["partition"] = 1
    new["spec"]["template"]["spec"]["containers"][0]["image"] = "openkruise/guestbook:v2"
    assert validate_daemonset_update(new, old) == []
    new["spec"]["selector"] = {"matchLabels": {"app": "guestbook-daemon", "tier": "x"}}
    new["spec"]["template"]["metadata"]["labels"]["tier"] = "x"
    assert (
        aggregate(validate_daemonset_update(new, old)) == f"spec: Forbidden: {SPEC_UPDATE_FORBIDDEN_MESSAGE}"
    )
