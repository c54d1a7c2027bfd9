"""ContainerRecreateRequest admission: upstream's refusals (text and code, in upstream's order)
and the defaults written on CREATE (``pkg/webhook/containerrecreaterequest/mutating``, v1.8.4)."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from kruise.daemon.api.containerrecreaterequest import (
    ACTIVE_LABEL,
    NODE_NAME_LABEL,
    POD_UID_LABEL,
    UNREADY_ACQUIRED_KEY,
)
from kruise.daemon.crr.admission import Refusal, default_crr, spec_refusal, update_refusal

JSON = dict[str, Any]


def crr(**spec: Any) -> JSON:
    body: JSON = {"podName": "web-0", "containers": [{"name": "app"}]}
    body.update(spec)
    return {"metadata": {"name": "r", "namespace": "ns"}, "spec": body}


def pod(**over: Any) -> JSON:
    out: JSON = {
        "metadata": {"name": "web-0", "namespace": "ns", "uid": "u-1"},
        "spec": {
            "nodeName": "node-1",
            "terminationGracePeriodSeconds": 20,
            "containers": [
                {
                    "name": "app",
                    "ports": [{"containerPort": 80}],
                    "lifecycle": {"preStop": {"httpGet": {"port": 80, "path": "/quit"}}},
                },
                {"name": "sidecar", "lifecycle": {"preStop": {"exec": {"command": ["sh", "-c", "x"]}}}},
            ],
        },
        "status": {
            "phase": "Running",
            "containerStatuses": [
                {"name": "app", "containerID": "containerd://a1", "restartCount": 2},
                {"name": "sidecar", "containerID": "containerd://s1", "restartCount": 0},
            ],
        },
    }
    for key, value in over.items():
        section, _, field = key.partition("__")
        out[section][field] = value
    return out


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        pytest.param({"podName": ""}, "podName can not be empty", id="no pod name"),
        pytest.param({"containers": []}, "containers list can not be null", id="no containers"),
        pytest.param(
            {"activeDeadlineSeconds": 2}, "activeDeadlineSeconds can not be less than 3s", id="deadline"
        ),
        pytest.param(
            {"strategy": {"terminationGracePeriodSeconds": -1}},
            "terminationGracePeriodSeconds must be non-negative integer",
            id="negative termination grace",
        ),
        pytest.param(
            {"strategy": {"unreadyGracePeriodSeconds": -1}},
            "unreadyGracePeriodSeconds must be non-negative integer",
            id="negative unready grace",
        ),
        pytest.param({"strategy": {"failurePolicy": "Retry"}}, "unknown failurePolicy Retry", id="policy"),
    ],
)
def test_spec_refusals_are_upstreams_400s(spec: JSON, message: str) -> None:
    assert spec_refusal(crr(**spec)) == Refusal(message, 400)


def test_a_deadline_of_exactly_three_seconds_is_accepted() -> None:
    assert spec_refusal(crr(activeDeadlineSeconds=3)) is None


@pytest.mark.parametrize(
    ("target", "over", "message"),
    [
        pytest.param(
            crr(),
            {"status__phase": "Succeeded"},
            "not allowed to recreate containers in an inactive Pod",
            id="ended pod",
        ),
        pytest.param(
            crr(),
            {"metadata__deletionTimestamp": "2026-01-01T00:00:00Z"},
            "not allowed to recreate containers in an inactive Pod",
            id="deleting pod",
        ),
        pytest.param(
            crr(),
            {"spec__nodeName": ""},
            "not allowed to recreate containers in a pending Pod",
            id="unscheduled",
        ),
        pytest.param(
            crr(containers=[{"name": "app"}, {"name": "app"}]),
            {},
            "can not recreate app multi times",
            id="twice",
        ),
        pytest.param(
            crr(containers=[{"name": "app", "statusContext": {"containerID": "x", "restartCount": 0}}]),
            {},
            "preStop, ports, statusContext in container are ready-only fields",
            id="user statusContext",
        ),
        pytest.param(
            crr(containers=[{"name": "app", "ports": []}]),
            {},
            "preStop, ports, statusContext in container are ready-only fields",
            id="user ports",
        ),
        pytest.param(
            crr(containers=[{"name": "db"}]), {}, "container db not found in Pod", id="unknown container"
        ),
        pytest.param(
            crr(),
            {"status__containerStatuses": []},
            "not found app containerStatus in Pod Status",
            id="no status",
        ),
        pytest.param(
            crr(),
            {"status__containerStatuses": [{"name": "app", "containerID": ""}]},
            "no containerID in app containerStatus, maybe the container has not been initialized",
            id="no id",
        ),
    ],
)
def test_pod_and_container_refusals(target: JSON, over: JSON, message: str) -> None:
    before = copy.deepcopy(target)
    assert default_crr(target, pod(**over), None) == Refusal(message, 400)
    assert target == before  # nothing is written on a refusal


def test_a_pod_the_sidecar_terminator_ended_still_takes_a_crr() -> None:
    ended = pod(
        status__phase="Succeeded", status__conditions=[{"type": "SidecarTerminated", "status": "True"}]
    )
    ended["status"]["containerStatuses"] = pod()["status"]["containerStatuses"]
    assert not isinstance(default_crr(crr(), ended, None), Refusal)


def test_a_missing_pod_is_refused_by_name() -> None:
    assert default_crr(crr(), None, None) == Refusal("no found Pod named web-0", 400)


def test_create_defaults_labels_strategy_prestop_ports_status_context_and_owner() -> None:
    out = default_crr(crr(containers=[{"name": "app"}, {"name": "sidecar"}]), pod(), None)
    assert not isinstance(out, Refusal)
    assert out["metadata"]["labels"] == {
        ACTIVE_LABEL: "true",
        POD_UID_LABEL: "u-1",
        NODE_NAME_LABEL: "node-1",
    }
    assert out["spec"]["strategy"] == {"failurePolicy": "Fail", "terminationGracePeriodSeconds": 20}
    app, sidecar = out["spec"]["containers"]
    assert app == {
        "name": "app",
        "preStop": {"httpGet": {"port": 80, "path": "/quit"}},
        "ports": [{"containerPort": 80}],  # copied only for an httpGet preStop
        "statusContext": {"containerID": "containerd://a1", "restartCount": 2},
    }
    assert sidecar == {
        "name": "sidecar",
        "preStop": {"exec": {"command": ["sh", "-c", "x"]}},
        "statusContext": {"containerID": "containerd://s1", "restartCount": 0},
    }
    assert out["metadata"]["ownerReferences"] == [
        {"apiVersion": "v1", "kind": "Pod", "name": "web-0", "uid": "u-1"}
    ]


def test_user_strategy_values_are_kept_and_a_virtual_kubelet_node_labels_the_crr() -> None:
    node = {"metadata": {"name": "node-1", "labels": {"type": "virtual-kubelet"}}}
    out = default_crr(
        crr(strategy={"failurePolicy": "Ignore", "terminationGracePeriodSeconds": 0}), pod(), node
    )
    assert not isinstance(out, Refusal)
    assert out["spec"]["strategy"] == {"failurePolicy": "Ignore", "terminationGracePeriodSeconds": 0}
    assert out["metadata"]["labels"]["type"] == "virtual-kubelet"


def _stored() -> JSON:
    out = default_crr(crr(), pod(), None)
    assert not isinstance(out, Refusal)
    return out


@pytest.mark.parametrize(
    ("change", "message"),
    [
        pytest.param(
            lambda o: o["spec"].update(activeDeadlineSeconds=60),
            "spec of ContainerRecreateRequest is immutable",
            id="spec",
        ),
        pytest.param(
            lambda o: o["metadata"]["labels"].update({POD_UID_LABEL: "u-2"}),
            f"not allowed to update immutable label {POD_UID_LABEL}",
            id="pod uid",
        ),
        pytest.param(
            lambda o: o["metadata"]["labels"].pop(NODE_NAME_LABEL),
            f"not allowed to update immutable label {NODE_NAME_LABEL}",
            id="node name removed",
        ),
        pytest.param(
            lambda o: o["metadata"]["annotations"].update({UNREADY_ACQUIRED_KEY: "2026-01-01T00:00:09Z"}),
            f"not allowed to update immutable annotation {UNREADY_ACQUIRED_KEY}",
            id="unready acquired",
        ),
    ],
)
def test_update_refusals_are_403s(change: Any, message: str) -> None:
    old = _stored()
    old["metadata"]["annotations"] = {UNREADY_ACQUIRED_KEY: "2026-01-01T00:00:00Z"}
    new = copy.deepcopy(old)
    change(new)
    assert update_refusal(new, old) == Refusal(message, 403)


def test_updates_may_set_unready_acquired_once_and_drop_the_active_label() -> None:
    old = _stored()
    new = copy.deepcopy(old)
    new["metadata"]["annotations"] = {UNREADY_ACQUIRED_KEY: "2026-01-01T00:00:00Z"}
    del new["metadata"]["labels"][ACTIVE_LABEL]
    assert update_refusal(new, old) is None
