"""PodProbeMarker validation: upstream's (v1.8.4) rules and messages."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from kruise.daemon.podprobemarker.admission import validate_ppm


def ppm(**probe: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "name": "healthy",
        "containerName": "main",
        "probe": {"exec": {"command": ["/bin/true"]}},
        "podConditionType": "game.kruise.io/healthy",
    }
    base.update(probe)
    return {"metadata": {"name": "m"}, "spec": {"selector": {"matchLabels": {"app": "g"}}, "probes": [base]}}


def test_valid_exec_and_tcp() -> None:
    assert validate_ppm(ppm()) is None
    assert validate_ppm(ppm(probe={"tcpSocket": {"port": 8080}, "periodSeconds": 2})) is None
    assert (
        validate_ppm(ppm(podConditionType=None, markerPolicy=[{"state": "Succeeded", "labels": {"a": "b"}}]))
        is None
    )


@pytest.mark.parametrize(
    ("probe", "message"),
    [
        ({"name": "a#b"}, "spec.probes: Invalid value: \"a#b\": probe name can't contains '#'."),
        ({"name": ""}, 'spec.probes: Invalid value: "": probe name can\'t be empty in PodProbeMarker.'),
        (
            {"containerName": ""},
            'spec.probes: Invalid value: "": probe containerName can\'t be empty in PodProbeMarker.',
        ),
        ({"name": "Ready"}, 'spec.probes: Invalid value: "Ready": probe name can\'t be Ready'),
        ({"probe": {}}, "spec.probe: Required value: must specify a handler type"),
        (
            {"probe": {"httpGet": {"port": 80, "path": "/"}}},
            "spec.probe.probe: Forbidden: current no support http probe",
        ),
        (
            {"probe": {"exec": {"command": ["x"]}, "tcpSocket": {"port": 1}}},
            "spec.probe.tcpSocket: Forbidden: may not specify more than 1 handler type",
        ),
        (
            {"probe": {"tcpSocket": {"port": 80, "host": "1.2.3.4"}}},
            'spec.probe.tcpSocket.host: Invalid value: "1.2.3.4": host field in probes is not allowed',
        ),
        (
            {"markerPolicy": [{"state": "Unknown", "labels": {"a": "b"}}]},
            "spec.markerPolicy.state: Required value: marker policy state must be 'True' or 'False'",
        ),
        (
            {"markerPolicy": [{"state": "Failed"}]},
            "spec.markerPolicy: Required value: marker policy annotations or labels can't be both empty",
        ),
        (
            {
                "markerPolicy": [
                    {"state": "Failed", "labels": {"a": "b"}},
                    {"state": "Failed", "labels": {"a": "c"}},
                ]
            },
            'spec.markerPolicy: Invalid value: "Failed": marker policy state must be unique.',
        ),
    ],
)
def test_refusals(probe: dict[str, Any], message: str) -> None:
    assert validate_ppm(ppm(**probe)) == message


def test_selector_probes_and_uniqueness() -> None:
    obj = ppm()
    del obj["spec"]["selector"]
    assert (
        validate_ppm(obj)
        == 'spec.selector: Invalid value: "null": empty Selector is not valid for PodProbeMarker.'
    )
    obj = ppm()
    obj["spec"]["selector"] = {}
    assert (
        validate_ppm(obj)
        == "spec.selector: Invalid value: {}: empty selector is not valid for podProbeMarker."
    )
    obj = ppm()
    obj["spec"]["probes"] = []
    assert (
        validate_ppm(obj)
        == 'spec.probes: Invalid value: "null": empty probes is not valid for PodProbeMarker.'
    )
    obj = ppm()
    obj["spec"]["probes"].append(copy.deepcopy(obj["spec"]["probes"][0]))
    assert (
        validate_ppm(obj)
        == 'spec.probes: Invalid value: "healthy": probe name must be unique in PodProbeMarker.'
    )
    obj["spec"]["probes"][1]["name"] = "other"
    assert validate_ppm(obj) == (
        'spec.probes: Invalid value: "game.kruise.io/healthy": '
        "podConditionType game.kruise.io/healthy must be unique in podProbeMarker"
    )
    obj = ppm(podConditionType=None)
    assert (validate_ppm(obj) or "").endswith(
        "podConditionType and markerPolicy cannot be empty at the same time"
    )


def test_selector_immutable_and_several_errors() -> None:
    old, new = ppm(), ppm(probe={"exec": {"command": ["x"]}, "periodSeconds": -1})
    new["spec"]["selector"] = {"matchLabels": {"app": "h"}}
    assert validate_ppm(new, old) == (
        "[spec.probe.periodSeconds: Invalid value: -1: must be greater than or equal to 0, "
        'selector: Invalid value: {"matchLabels":{"app":"h"}}: selector must be immutable]'
    )
