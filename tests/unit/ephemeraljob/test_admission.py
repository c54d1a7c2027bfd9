"""The validating webhook's rules (``validateEphemeralContainers``, Appendix B
``pkg/webhook/ephemeraljob``) and its AdmissionReview answer, with upstream's messages."""

from __future__ import annotations

from typing import Any

import pytest

from kruise.core.webhook import AdmissionRequest
from kruise.workloads.admission.ephemeraljob import FORBIDDEN_DETAIL, validate_ephemeraljob
from kruise.workloads.admission.fielderrors import aggregate
from kruise.workloads.ephemeraljob.webhooks import (
    VALIDATE_PATH,
    EphemeralJobWebhooks,
    ephemeraljob_webhook_specs,
)
from tests.unit.ephemeraljob.builders import container, job

JSON = dict[str, Any]
DNS_LABEL = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start "
    "and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is "
    "'[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
)


def messages(*containers: JSON) -> list[str]:
    return [e.error() for e in validate_ephemeraljob(job(containers=list(containers)))]


@pytest.mark.parametrize(
    "containers",
    [
        pytest.param([], id="empty list"),
        pytest.param([container()], id="single"),
        pytest.param([container("debug1"), container("debug2")], id="two"),
        pytest.param(
            [
                container(
                    targetContainerName="nginx",
                    command=["bash"],
                    args=["-c", "true"],
                    workingDir="/",
                    env=[{"name": "TEST", "value": "TRUE"}],
                    envFrom=[{"configMapRef": {"name": "dummy", "optional": True}}],
                    volumeMounts=[{"name": "vol", "mountPath": "/vol"}],
                    volumeDevices=[{"name": "blk", "devicePath": "/dev/block"}],
                    terminationMessagePath="/dev/termination-log",
                    securityContext={"capabilities": {"add": ["SYS_ADMIN"]}},
                    stdin=True,
                    stdinOnce=True,
                    tty=True,
                    resources={},
                )
            ],
            id="all allowed fields",
        ),
    ],
)
def test_allowed(containers: list[JSON]) -> None:
    assert validate_ephemeraljob(job(containers=containers)) == []


@pytest.mark.parametrize(
    ("containers", "expected"),
    [
        pytest.param(
            [container("debug1"), container("debug1")],
            ['ephemeralContainers[1].name: Duplicate value: "debug1"'],
            id="name collision",
        ),
        pytest.param(
            [{}],
            [
                "ephemeralContainers[0].name: Required value",
                "ephemeralContainers[0].image: Required value",
                "ephemeralContainers[0].terminationMessagePolicy: Required value",
                "ephemeralContainers[0].imagePullPolicy: Required value",
            ],
            id="empty container",
        ),
        pytest.param(
            [container("Debug_1")],
            [f'ephemeralContainers[0].name: Invalid value: "Debug_1": {DNS_LABEL}'],
            id="name not a DNS label",
        ),
        pytest.param(
            [container(image=" image")],
            [
                'ephemeralContainers[0].image: Invalid value: " image": '
                "must not have leading or trailing whitespace"
            ],
            id="whitespace padded image",
        ),
        pytest.param(
            [container(imagePullPolicy="PullThreeTimes")],
            [
                'ephemeralContainers[0].imagePullPolicy: Unsupported value: "PullThreeTimes": '
                'supported values: "Always", "IfNotPresent", "Never"'
            ],
            id="image pull policy",
        ),
        pytest.param(
            [container(terminationMessagePolicy="Maybe")],
            [
                'ephemeralContainers[0].terminationMessagePolicy: Unsupported value: "Maybe": '
                'supported values: "File", "FallbackToLogsOnError"'
            ],
            id="termination message policy",
        ),
        pytest.param(
            [
                container(
                    lifecycle={"preStop": {"exec": {"command": ["ls"]}}},
                    livenessProbe={"tcpSocket": {"port": 80}},
                    ports=[{"containerPort": 80, "protocol": "TCP"}],
                    readinessProbe={"tcpSocket": {"port": 80}},
                    startupProbe={"tcpSocket": {"port": 80}},
                    resources={"limits": {"cpu": "1"}},
                    resizePolicy=[{"resourceName": "cpu", "restartPolicy": "NotRequired"}],
                    restartPolicy="Always",
                )
            ],
            [
                f"ephemeralContainers[0].{f}: Forbidden: cannot be set for an Ephemeral Container"
                for f in (
                    "ports",
                    "resources",
                    "resizePolicy",
                    "restartPolicy",
                    "livenessProbe",
                    "readinessProbe",
                    "startupProbe",
                    "lifecycle",
                )
            ],
            id="disallowed fields in the struct's order",
        ),
        pytest.param(
            [
                container(
                    volumeMounts=[{"name": "v", "mountPath": "/v", "subPath": "a", "subPathExpr": "$(X)"}]
                )
            ],
            [
                f"ephemeralContainers[0].volumeMounts[0].{key}: Forbidden: {FORBIDDEN_DETAIL}"
                for key in ("subPath", "subPathExpr")
            ],
            id="volume mount sub paths",
        ),
    ],
)
def test_refused_with_upstreams_messages(containers: list[JSON], expected: list[str]) -> None:
    assert messages(*containers) == expected


def _review(obj: JSON, operation: str = "CREATE") -> AdmissionRequest:
    return AdmissionRequest.from_review(
        {
            "request": {
                "uid": "u",
                "operation": operation,
                "namespace": "ns",
                "name": "ejob",
                "kind": {"group": "apps.kruise.io", "version": "v1alpha1", "kind": "EphemeralJob"},
                "object": obj,
            }
        }
    )


async def test_the_handler_denies_with_400_and_the_aggregate() -> None:
    bad = job(containers=[container(image=" x", ports=[{"containerPort": 80}])])
    answer = await EphemeralJobWebhooks().validate(_review(bad))
    assert not answer.allowed and answer.code == 400
    assert answer.message == aggregate(validate_ephemeraljob(bad))
    assert answer.message.startswith("[ephemeralContainers[0].image: Invalid value")
    assert (await EphemeralJobWebhooks().validate(_review(job()))).allowed


def test_one_validating_webhook_named_as_upstream() -> None:
    (spec,) = ephemeraljob_webhook_specs()
    assert (spec.name, spec.path, spec.mutating) == ("vephemeraljobs.kb.io", VALIDATE_PATH, False)
    assert [(r.group, r.version, r.resource, r.operations) for r in spec.rules] == [
        ("apps.kruise.io", "v1alpha1", "ephemeraljobs", ("CREATE", "UPDATE"))
    ]
    assert EphemeralJobWebhooks().handlers().keys() == {VALIDATE_PATH}
