"""The daemon's probe bookkeeping: timing floors, thresholds, results and status rebuilding."""

from __future__ import annotations

from kruise.daemon.podprobe.results import (
    MAX_SYNC_SECONDS,
    ProbeKey,
    Result,
    Results,
    Thresholds,
    next_status,
    probe_keys,
    timing,
)

NPP = {
    "metadata": {"name": "n1"},
    "spec": {
        "podProbes": [
            {
                "name": "p",
                "namespace": "ns",
                "uid": "u1",
                "IP": "10.0.0.1",
                "probes": [
                    {"name": "m#healthy", "containerName": "main", "probe": {"exec": {"command": ["true"]}}}
                ],
            }
        ]
    },
}
KEY = ProbeKey("ns", "p", "u1", "10.0.0.1", "main", "m#healthy")


def test_timing_floors_at_one() -> None:
    t = timing({"periodSeconds": 0, "timeoutSeconds": 5, "failureThreshold": 3})
    assert (t.period, t.timeout, t.initial_delay, t.success_threshold, t.failure_threshold) == (1, 5, 1, 1, 3)


def test_probe_keys() -> None:
    assert probe_keys(NPP) == {KEY: {"exec": {"command": ["true"]}}}


def test_thresholds() -> None:
    t = timing({"failureThreshold": 2, "successThreshold": 1})
    th = Thresholds()
    assert th.observe("Succeeded", t)
    assert not th.observe("Failed", t)
    assert th.observe("Failed", t)
    assert th.observe("Succeeded", t)


def test_results_change_only() -> None:
    results = Results()
    assert results.set("c1", Result(KEY, "Succeeded", "", 0.0, "t0"))
    assert not results.set("c1", Result(KEY, "Succeeded", "", 10.0, "t1"))
    assert results.set("c1", Result(KEY, "Succeeded", "", MAX_SYNC_SECONDS, "t2"))
    assert results.set("c1", Result(KEY, "Failed", "exit 1", MAX_SYNC_SECONDS + 1, "t3"))


def test_next_status_transitions_and_pruning() -> None:
    status = next_status(NPP, [Result(KEY, "Succeeded", "ok", 0.0, "t1")], "now1")
    assert status == {
        "podProbeStatuses": [
            {
                "name": "p",
                "namespace": "ns",
                "uid": "u1",
                "probeStates": [
                    {
                        "name": "m#healthy",
                        "state": "Succeeded",
                        "lastProbeTime": "t1",
                        "lastTransitionTime": "now1",
                        "message": "ok",
                    }
                ],
            }
        ]
    }
    stored = {**NPP, "status": status}
    same = next_status(stored, [Result(KEY, "Succeeded", "ok", 0.0, "t1")], "now2")
    assert same == status  # nothing changed: no write
    failed = next_status(stored, [Result(KEY, "Failed", "", 1.0, "t2")], "now3")
    state = failed["podProbeStatuses"][0]["probeStates"][0]
    assert (state["state"], state["lastTransitionTime"], "message" in state) == ("Failed", "now3", False)
    assert next_status({"spec": {}, "status": status}, [], "now4") == {}
