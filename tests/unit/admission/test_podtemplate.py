"""The dry-run Pod built from a template, and the API server's answer read back at template paths.

The answers below are the Status objects kube-apiserver returns (shape of ``StatusError`` from a
``field.ErrorList``: reason ``Invalid``, ``details.kind: Pod``, one cause per field error); the
integration tests run the same through the real API server.
"""

from __future__ import annotations

from typing import Any

import pytest

from kruise.workloads.admission import aggregate
from kruise.workloads.admission.podtemplate import DRY_RUN_GENERATE_NAME, dry_run_pod, template_errors

TEMPLATE: dict[str, Any] = {
    "metadata": {"name": "ignored", "labels": {"app": "web"}, "annotations": {"a": "b"}},
    "spec": {
        "containers": [{"name": "web", "image": "nginx"}],
        "volumes": [{"name": "cache", "emptyDir": {}}],
        "ephemeralContainers": [{"name": "debug", "image": "busybox"}],
    },
}


def test_the_pod_carries_the_template_with_claims_mocked_in_as_volumes() -> None:
    pod = dry_run_pod(TEMPLATE, [{"metadata": {"name": "data"}}], "shop")
    assert pod["metadata"] == {
        "generateName": DRY_RUN_GENERATE_NAME,
        "namespace": "shop",
        "labels": {"app": "web"},
        "annotations": {"a": "b"},
    }
    assert pod["spec"]["volumes"] == [
        {"name": "cache", "emptyDir": {}},
        {"name": "data", "persistentVolumeClaim": {"claimName": "data"}},
    ]
    assert "ephemeralContainers" not in pod["spec"], "a pod may not be created with them"
    assert TEMPLATE["spec"]["volumes"] == [{"name": "cache", "emptyDir": {}}], "input untouched"


def invalid(*causes: tuple[str, str, str]) -> dict[str, Any]:
    return {
        "kind": "Status",
        "status": "Failure",
        "reason": "Invalid",
        "code": 422,
        "details": {
            "kind": "Pod",
            "causes": [{"reason": r, "message": m, "field": f} for r, f, m in causes],
        },
    }


CASES = [
    pytest.param(
        invalid(("FieldValueRequired", "spec.containers[0].image", "Required value")),
        "spec.template.spec.containers[0].image: Required value",
        id="spec paths move under spec.template",
    ),
    pytest.param(
        invalid(
            ("FieldValueInvalid", "metadata.labels", 'Invalid value: "bad key!": name part must ...'),
            ("FieldValueInvalid", "metadata.annotations", "Invalid value: ...: must have at most ..."),
        ),
        '[spec.template.labels: Invalid value: "bad key!": name part must ..., '
        "spec.template.annotations: Invalid value: ...: must have at most ...]",
        id="labels and annotations where ValidatePodTemplateSpec reports them",
    ),
    pytest.param(
        invalid(("FieldValueInvalid", "metadata.generateName", "Invalid value: ...")),
        "spec.template.metadata.generateName: Invalid value: ...",
        id="other metadata under spec.template.metadata",
    ),
    pytest.param(
        {
            "reason": "BadRequest",
            "code": 400,
            "message": 'Pod in version "v1" cannot be handled as a Pod: json: cannot unmarshal '
            "number into Go struct field Container.spec.containers.image of type string",
        },
        "spec.template.spec.containers.image: json: cannot unmarshal number into Go struct field "
        "Container.spec.containers.image of type string",
        id="a decoding failure at the Go field it names",
    ),
    pytest.param(
        {
            "reason": "BadRequest",
            "code": 400,
            "message": 'Pod in version "v1" cannot be handled as a Pod: quantities must match the regular '
            "expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'",
        },
        "spec.template: quantities must match the regular expression "
        "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'",
        id="a decoding failure without a field at the template",
    ),
]


@pytest.mark.parametrize(("body", "text"), CASES)
def test_the_answer_is_reported_at_template_paths(body: dict[str, Any], text: str) -> None:
    errors = template_errors(int(body["code"]), body, "spec.template")
    assert errors is not None
    assert aggregate(errors) == text


@pytest.mark.parametrize(
    ("code", "body"),
    [
        pytest.param(
            403, {"reason": "Forbidden", "message": 'pods "x" is forbidden: exceeded quota'}, id="quota"
        ),
        pytest.param(
            400,
            {"reason": "BadRequest", "message": 'admission webhook "x" does not support dry run'},
            id="a webhook without dry-run support",
        ),
        pytest.param(
            422,
            {
                "reason": "Invalid",
                "message": "denied",
                "details": {"kind": "Pod", "causes": [{"message": "x"}]},
            },
            id="a denial without field",
        ),
        pytest.param(500, {"reason": "InternalError", "message": "failed calling webhook"}, id="an outage"),
    ],
)
def test_no_verdict_when_the_answer_is_not_about_the_pod(code: int, body: dict[str, Any]) -> None:
    assert template_errors(code, body, "spec.template") is None
