"""The canary Service copy and the stable selector patches (upstream manager.go)."""

from __future__ import annotations

import pytest

from kruise.traffic.services import (
    canary_service,
    canary_service_name,
    selector_patch,
    selector_restore_patch,
)
from tests.unit.traffic.builders import JSON

KEY = "pod-template-hash"


def stable_service(**spec: object) -> JSON:
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {
            "name": "echo",
            "namespace": "ns",
            "uid": "u1",
            "resourceVersion": "42",
            "labels": {"app": "echo"},
            "annotations": {"team": "a"},
            "creationTimestamp": "2024-01-01T00:00:00Z",
        },
        "spec": {
            "type": "NodePort",
            "selector": {"app": "echo"},
            "clusterIP": "10.0.0.5",
            "clusterIPs": ["10.0.0.5"],
            "externalIPs": ["1.2.3.4"],
            "ipFamilies": ["IPv4"],
            "ipFamilyPolicy": "SingleStack",
            "loadBalancerIP": "5.6.7.8",
            "ports": [{"name": "http", "port": 80, "targetPort": 8080, "nodePort": 30080, "protocol": "TCP"}],
            **spec,
        },
        "status": {"loadBalancer": {}},
    }


def test_canary_service_is_a_clean_copy_selecting_the_canary_revision() -> None:
    owner = {"apiVersion": "rollouts.kruise.io/v1beta1", "kind": "Rollout", "name": "r", "uid": "ru"}
    out = canary_service(stable_service(), "v2", KEY, owner)
    assert out == {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {
            "name": "echo-canary",
            "namespace": "ns",
            "labels": {"app": "echo"},
            "annotations": {"team": "a"},
            "ownerReferences": [owner],
        },
        "spec": {
            "type": "NodePort",
            "selector": {"app": "echo", KEY: "v2"},
            "ports": [{"name": "http", "port": 80, "targetPort": 8080, "protocol": "TCP"}],
        },
    }


def test_canary_service_does_not_touch_the_stable_object() -> None:
    svc = stable_service()
    canary_service(svc, "v2", KEY)
    assert svc["spec"]["selector"] == {"app": "echo"}
    assert svc["spec"]["ports"][0]["nodePort"] == 30080


def test_canary_service_name() -> None:
    assert canary_service_name("echo") == "echo-canary"


@pytest.mark.parametrize(
    ("selector", "expected"),
    [
        pytest.param(
            {"app": "echo"},
            {"spec": {"selector": {KEY: "v1"}}, "metadata": {"resourceVersion": "42"}},
            id="pin",
        ),
        pytest.param(
            {"app": "echo", KEY: "v0"},
            {"spec": {"selector": {KEY: "v1"}}, "metadata": {"resourceVersion": "42"}},
            id="re-pin",
        ),
        pytest.param({"app": "echo", KEY: "v1"}, None, id="already pinned"),
    ],
)
def test_selector_patch(selector: dict[str, str], expected: JSON | None) -> None:
    assert selector_patch(stable_service(selector=selector), KEY, "v1") == expected


@pytest.mark.parametrize(
    ("selector", "expected"),
    [
        pytest.param(
            {"app": "echo", KEY: "v1"},
            {"spec": {"selector": {KEY: None}}, "metadata": {"resourceVersion": "42"}},
            id="unpin",
        ),
        pytest.param({"app": "echo"}, None, id="nothing to unpin"),
    ],
)
def test_selector_restore_patch(selector: dict[str, str], expected: JSON | None) -> None:
    assert selector_restore_patch(stable_service(selector=selector), KEY) == expected
