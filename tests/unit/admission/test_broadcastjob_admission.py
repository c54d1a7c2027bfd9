"""BroadcastJob admission: ``SetDefaultsBroadcastJob`` and ``pkg/webhook/broadcastjob`` messages."""

from __future__ import annotations

from typing import Any

import pytest

from kruise.workloads.admission.broadcastjob import default_broadcastjob, validate_broadcastjob
from kruise.workloads.admission.fielderrors import aggregate

JSON = dict[str, Any]
ALWAYS_REFUSED = (
    'spec.template.spec.restartPolicy: Invalid value: "Always": '
    "pod restartPolicy can only be Never or OnFailure"
)


def bcj(
    name: str = "download-image", *, restart: str | None = "Never", labels: JSON | None = None, **spec: Any
) -> JSON:
    pod_spec: JSON = {"containers": [{"name": "c", "image": "busybox"}]}
    if restart is not None:
        pod_spec["restartPolicy"] = restart
    template: JSON = {"spec": pod_spec}
    if labels is not None:
        template["metadata"] = {"labels": labels}
    return {
        "apiVersion": "apps.kruise.io/v1alpha1",
        "kind": "BroadcastJob",
        "metadata": {"name": name, "namespace": "ns"},
        "spec": {"template": template, **spec},
    }


def verdict(obj: JSON) -> str:
    return aggregate(validate_broadcastjob(default_broadcastjob(obj, old=None)))


# ------------------------------------------------------------------------------- defaults
def test_defaults_fill_policies_and_parallelism() -> None:
    out = default_broadcastjob(bcj(paused=False), old=None)
    spec = out["spec"]
    assert spec["completionPolicy"] == {"type": "Always"}
    assert spec["failurePolicy"] == {"type": "FailFast"}
    assert spec["parallelism"] == 2147483647
    assert "paused" not in spec  # omitempty, as upstream's TestHandle expects
    assert spec["template"]["spec"]["restartPolicy"] == "Never"
    assert spec["template"]["spec"]["dnsPolicy"] == "ClusterFirst"  # template defaults on CREATE


def test_set_values_are_kept() -> None:
    given = bcj(
        parallelism="40%",
        completionPolicy={"type": "Never"},
        failurePolicy={"type": "Pause", "restartLimit": 2},
    )
    spec = default_broadcastjob(given, old=None)["spec"]
    assert spec["parallelism"] == "40%"
    assert spec["completionPolicy"] == {"type": "Never"}
    assert spec["failurePolicy"] == {"type": "Pause", "restartLimit": 2}


def test_empty_restart_policy_becomes_always_through_the_pod_defaults() -> None:
    """Upstream runs SetDefaultPodSpec first, so the OnFailure default is reached only with
    TemplateNoDefaults; the validating webhook then refuses Always."""
    assert (
        default_broadcastjob(bcj(restart=None), old=None)["spec"]["template"]["spec"]["restartPolicy"]
        == "Always"
    )
    no_defaults = default_broadcastjob(bcj(restart=None), old=None, template_no_defaults=True)
    assert no_defaults["spec"]["template"]["spec"]["restartPolicy"] == "OnFailure"


def test_update_without_template_change_leaves_the_template() -> None:
    stored = default_broadcastjob(bcj(), old=None)
    changed = {**stored, "spec": {**stored["spec"], "paused": True}}
    again = default_broadcastjob(changed, old=stored)
    assert again == changed


# ------------------------------------------------------------------------------- validation
@pytest.mark.parametrize(
    ("obj", "message"),
    [
        pytest.param(bcj(), "", id="valid"),
        pytest.param(bcj(restart="OnFailure"), "", id="OnFailure is valid"),
        pytest.param(
            bcj(completionPolicy={"type": "Never", "ttlSecondsAfterFinished": 10}),
            "spec.completionPolicy.ttlSecondsAfterFinished: Invalid value: 10: "
            "ttlSecondsAfterFinished can just work with Always CompletionPolicyType",
            id="Never with ttl",
        ),
        pytest.param(
            bcj(completionPolicy={"type": "Never", "activeDeadlineSeconds": 20}),
            "spec.completionPolicy.activeDeadlineSeconds: Invalid value: 20: "
            "activeDeadlineSeconds can just work with Always CompletionPolicyType",
            id="Never with deadline",
        ),
        pytest.param(
            bcj(restart="Always"),
            ALWAYS_REFUSED,
            id="Always restart policy",
        ),
        pytest.param(
            bcj(restart=None),
            ALWAYS_REFUSED,
            id="no restart policy: defaulted to Always, refused",
        ),
        pytest.param(
            bcj(labels={"broadcastjob-name": "x"}),
            'spec.template.metadata.labels: Invalid value: map[string]string{"broadcastjob-name":"x"}: '
            '"broadcastjob-name" and "broadcastjob-controller-uid" are not allowed to preset in pod labels',
            id="preset job label",
        ),
        pytest.param(
            bcj("bad.name"),
            'metadata.name: Invalid value: "bad.name": BroadcastJob name must consist of alphanumeric '
            "characters or '-' (e.g. 'example-com', regex used for validation is '^[a-zA-Z0-9\\-]+$')",
            id="dot in the name",
        ),
        pytest.param(
            bcj("a" * 64),
            f'metadata.name: Invalid value: "{"a" * 64}": must be no more than 63 characters',
            id="name too long",
        ),
        pytest.param(
            bcj(restart="Always", completionPolicy={"type": "Never", "ttlSecondsAfterFinished": 1}),
            "[spec.completionPolicy.ttlSecondsAfterFinished: Invalid value: 1: "
            f"ttlSecondsAfterFinished can just work with Always CompletionPolicyType, {ALWAYS_REFUSED}]",
            id="two errors aggregate in upstream's order",
        ),
    ],
)
def test_validation_messages(obj: JSON, message: str) -> None:
    assert verdict(obj) == message


@pytest.mark.parametrize(
    ("parallelism", "message"),
    [
        (
            "lots",
            'spec.parallelism: Invalid value: intstr.IntOrString{Type:1, IntVal:0, StrVal:"lots"}: '
            "a valid percent string must be a numeric string",
        ),
        (-2, "spec.parallelism: Invalid value: -2: must be greater than or equal to 0"),
    ],
)
def test_parallelism_must_be_a_non_negative_int_or_percent(parallelism: object, message: str) -> None:
    """Ours: upstream's webhook admits these, then its controller fails on them every round."""
    assert verdict(bcj(parallelism=parallelism)).startswith(message)


@pytest.mark.parametrize("parallelism", [0, 100, "50%", "150%"])
def test_valid_parallelism_is_admitted(parallelism: object) -> None:
    assert verdict(bcj(parallelism=parallelism)) == ""
