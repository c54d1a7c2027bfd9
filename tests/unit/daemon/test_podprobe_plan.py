"""PodProbeMarker -> NodePodProbe -> Pod planning (upstream v1.8.4 controllers)."""

from __future__ import annotations

from typing import Any

from kruise.daemon.podprobemarker.plan import candidate, merge_marker, pod_marking, prune_pods, remove_marker


def pod(name: str = "p", uid: str = "u1", ip: str = "10.0.0.1", **extra: Any) -> dict[str, Any]:
    return {
        "metadata": {"name": name, "namespace": "ns", "uid": uid, "labels": {}, **extra},
        "spec": {
            "nodeName": "n1",
            "containers": [{"name": "main", "ports": [{"name": "http", "containerPort": 8080}]}],
        },
        "status": {
            "phase": "Running",
            "podIP": ip,
            "conditions": [{"type": "Initialized", "status": "True"}],
        },
    }


HEALTHY = {
    "name": "healthy",
    "containerName": "main",
    "probe": {"exec": {"command": ["true"]}},
    "podConditionType": "game/healthy",
    "markerPolicy": [
        {"state": "Succeeded", "labels": {"ok": "yes"}},
        {"state": "Failed", "annotations": {"bad": "1"}},
    ],
}
PORT = {
    "name": "port",
    "containerName": "main",
    "probe": {"tcpSocket": {"port": "http"}},
    "podConditionType": "game/port",
}
PPM = {"metadata": {"name": "m", "namespace": "ns"}, "spec": {"probes": [HEALTHY, PORT]}}


def test_candidate() -> None:
    assert candidate(pod())
    p = pod()
    p["status"]["conditions"][0]["status"] = "False"
    assert not candidate(p)
    assert not candidate(pod(deletionTimestamp="x"))


def test_merge_new_and_existing_and_named_port() -> None:
    out = merge_marker([], PPM, [pod()])
    assert out == [
        {
            "name": "p",
            "namespace": "ns",
            "uid": "u1",
            "IP": "10.0.0.1",
            "probes": [
                {"name": "m#healthy", "containerName": "main", "probe": {"exec": {"command": ["true"]}}},
                {"name": "m#port", "containerName": "main", "probe": {"tcpSocket": {"port": 8080}}},
            ],
        }
    ]
    assert merge_marker(out, PPM, [pod()]) == out
    out[0]["IP"] = ""
    assert merge_marker(out, PPM, [pod()])[0]["IP"] == "10.0.0.1"


def test_remove_and_prune() -> None:
    out = merge_marker([], PPM, [pod()])
    assert remove_marker(out, "other", "m") == out
    assert remove_marker(out, "ns", "m") == []
    assert prune_pods(out, lambda ns, n: pod()) == out
    assert prune_pods(out, lambda ns, n: pod(uid="u2")) == []
    assert prune_pods(out, lambda ns, n: None) == []


def test_marking() -> None:
    ok = [{"name": "m#healthy", "state": "Succeeded", "lastProbeTime": "t1", "lastTransitionTime": "t0"}]
    marking = pod_marking(pod(), ok, lambda name: PPM if name == "m" else None)
    assert marking is not None
    assert marking.conditions == [
        {"type": "game/healthy", "status": "True", "lastProbeTime": "t1", "lastTransitionTime": "t0"}
    ]
    assert marking.labels == {"ok": "yes"}
    assert marking.annotations == {}  # "bad" is not on the pod: nothing to remove
    p = pod()
    p["metadata"]["labels"] = {"ok": "yes"}
    p["status"]["conditions"].append({"type": "game/healthy", "status": "True"})
    assert pod_marking(p, ok, lambda name: PPM) is None
    failed = [{"name": "m#healthy", "state": "Failed", "message": "exit 1"}]
    marking = pod_marking(p, failed, lambda name: PPM)
    assert marking is not None
    assert marking.conditions[0]["status"] == "False"
    assert marking.labels == {"ok": None}
    assert marking.annotations == {"bad": "1"}
    assert pod_marking(p, failed, lambda name: None) is None
