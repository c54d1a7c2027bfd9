"""ContainerRecreateRequest admission through the real API server: upstream's defaults, and the
refusals of ``pkg/webhook/containerrecreaterequest`` with their messages, changing nothing."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from kruise.core.errors import ApiError
from kruise.core.kube import KubeClient
from kruise.core.kube.resources import CONTAINERRECREATEREQUESTS, PODS
from tests.integration.crr.helpers import crr_body, crrs, pod_body, running_pod

pytestmark = pytest.mark.usefixtures("manager")
JSON = dict[str, Any]


async def test_create_fills_labels_strategy_hooks_status_context_and_owner(
    kube: KubeClient, namespace: str
) -> None:
    pod = await running_pod(kube, namespace, "web-0")
    created = await kube.create(
        CONTAINERRECREATEREQUESTS, crr_body("r", "web-0", "app", "sidecar"), namespace
    )
    labels = created["metadata"]["labels"]
    assert labels["crr.apps.kruise.io/active"] == "true"
    assert labels["crr.apps.kruise.io/pod-uid"] == pod["metadata"]["uid"]
    assert labels["crr.apps.kruise.io/node-name"] == pod["spec"]["nodeName"]
    assert created["spec"]["strategy"] == {"failurePolicy": "Fail", "terminationGracePeriodSeconds": 20}
    app, sidecar = created["spec"]["containers"]
    assert app == {
        "name": "app",
        "preStop": {"httpGet": {"path": "/quit", "port": "http", "scheme": "HTTP"}},
        "ports": [{"name": "http", "containerPort": 8080, "protocol": "TCP"}],
        "statusContext": {"containerID": "containerd://web-0-app-1", "restartCount": 0},
    }
    assert sidecar == {
        "name": "sidecar",
        "preStop": {"exec": {"command": ["sh", "-c", "sleep 1"]}},
        "statusContext": {"containerID": "containerd://web-0-sidecar-1", "restartCount": 0},
    }
    (owner,) = created["metadata"]["ownerReferences"]
    assert (owner["kind"], owner["name"], owner["uid"]) == ("Pod", "web-0", pod["metadata"]["uid"])


REFUSED = [
    pytest.param(crr_body("r", "nobody"), "no found Pod named nobody", id="no such pod"),
    pytest.param(
        crr_body("r", "web-0", "app", "app"), "can not recreate app multi times", id="container twice"
    ),
    pytest.param(crr_body("r", "web-0", "db"), "container db not found in Pod", id="container not in pod"),
    pytest.param(
        {
            **crr_body("r", "web-0"),
            "spec": {"podName": "web-0", "containers": [{"name": "app", "ports": []}]},
        },
        "preStop, ports, statusContext in container are ready-only fields",
        id="read-only field set",
    ),
    pytest.param(
        crr_body("r", "web-0", activeDeadlineSeconds=2),
        "activeDeadlineSeconds can not be less than 3s",
        id="deadline",
    ),
    pytest.param(
        crr_body("r", "web-0", strategy={"failurePolicy": "Retry"}),
        "unknown failurePolicy Retry",
        id="failure policy",
    ),
    pytest.param(
        crr_body("r", "web-0", strategy={"unreadyGracePeriodSeconds": -1}),
        "unreadyGracePeriodSeconds must be non-negative integer",
        id="negative unready grace",
    ),
]


@pytest.mark.parametrize(("body", "message"), REFUSED)
async def test_invalid_requests_are_refused_with_upstreams_message(
    kube: KubeClient, namespace: str, body: JSON, message: str
) -> None:
    await running_pod(kube, namespace, "web-0")
    with pytest.raises(ApiError) as refused:
        await kube.create(CONTAINERRECREATEREQUESTS, body, namespace)
    assert message in str(refused.value)
    assert refused.value.status == 400
    assert await crrs(kube, namespace) == []


async def test_a_pending_pod_is_refused(kube: KubeClient, namespace: str) -> None:
    await kube.create(PODS, pod_body("web-0", node_selector={"kruise-test/none": "none"}), namespace)
    with pytest.raises(ApiError) as refused:
        await kube.create(CONTAINERRECREATEREQUESTS, crr_body("r", "web-0"), namespace)
    assert "not allowed to recreate containers in a pending Pod" in str(refused.value)
    assert await crrs(kube, namespace) == []


@pytest.mark.parametrize(
    ("change", "message"),
    [
        pytest.param(
            lambda o: o["spec"].update(activeDeadlineSeconds=60),
            "spec of ContainerRecreateRequest is immutable",
            id="spec",
        ),
        pytest.param(
            lambda o: o["metadata"]["labels"].update({"crr.apps.kruise.io/node-name": "elsewhere"}),
            "not allowed to update immutable label crr.apps.kruise.io/node-name",
            id="node-name label",
        ),
    ],
)
async def test_updates_of_immutable_fields_are_forbidden(
    kube: KubeClient, namespace: str, change: Any, message: str
) -> None:
    await running_pod(kube, namespace, "web-0")
    created = await kube.create(CONTAINERRECREATEREQUESTS, crr_body("r", "web-0"), namespace)
    changed = copy.deepcopy(created)
    change(changed)
    with pytest.raises(ApiError) as refused:
        await kube.replace(CONTAINERRECREATEREQUESTS, changed)
    assert message in str(refused.value)
    assert refused.value.status == 403
    stored = await kube.get(CONTAINERRECREATEREQUESTS, "r", namespace)
    assert stored["spec"] == created["spec"]
    assert stored["metadata"]["labels"] == created["metadata"]["labels"]
