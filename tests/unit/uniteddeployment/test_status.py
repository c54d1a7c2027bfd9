"""The UnitedDeployment status after a round (upstream ``calculateStatus``)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from kruise.workloads.uniteddeployment.allocation import Allocation
from kruise.workloads.uniteddeployment.status import RoundOutcome, status_patch
from kruise.workloads.uniteddeployment.subsets import REVISION_LABEL

NOW = datetime(2026, 1, 1, tzinfo=UTC)


def ud(status: dict[str, Any] | None = None) -> dict[str, Any]:
    return {
        "metadata": {"name": "web", "namespace": "ns", "generation": 4},
        "spec": {"selector": {"matchLabels": {"app": "web"}}},
        "status": status or {},
    }


def pod(revision: str, ready: bool) -> dict[str, Any]:
    conditions = [{"type": "Ready", "status": "True" if ready else "False"}]
    return {
        "metadata": {"labels": {REVISION_LABEL: revision}},
        "status": {"phase": "Running", "conditions": conditions},
    }


def workload(replicas: int, ready: int) -> dict[str, Any]:
    return {"spec": {"replicas": replicas}, "status": {"replicas": replicas, "readyReplicas": ready}}


def test_sums_counts_updated_pods_and_promotes_the_revision_when_all_ready() -> None:
    allocation = Allocation(replicas={"a": 2, "b": 1})
    workloads = {"a": workload(2, 2), "b": workload(1, 1)}
    pods = {"a": [pod("r2", True), pod("r1", True)], "b": [pod("r2", True)]}
    first = status_patch(
        ud({"currentRevision": "r1"}),
        workloads,
        pods,
        allocation,
        {"a": 1, "b": 0},
        "r2",
        0,
        RoundOutcome(),
        NOW,
    )
    assert first is not None
    assert (
        first["replicas"],
        first["readyReplicas"],
        first["updatedReplicas"],
        first["updatedReadyReplicas"],
    ) == (3, 3, 2, 2)
    assert first["currentRevision"] == "r1", "one pod is still at r1"
    assert first["updateStatus"] == {"updatedRevision": "r2", "currentPartitions": {"a": 1, "b": 0}}
    assert first["subsetStatuses"] == [
        {"name": "a", "replicas": 2, "readyReplicas": 2, "partition": 1},
        {"name": "b", "replicas": 1, "readyReplicas": 1},
    ]
    assert first["labelSelector"] == "app=web" and first["observedGeneration"] == 4
    assert [(c["type"], c["status"]) for c in first["conditions"]] == [
        ("SubsetProvisioned", "True"),
        ("SubsetUpdated", "True"),
        ("UnitedDeploymentUpdated", "False"),
    ]
    assert first["conditions"][2]["reason"] == "UnitedDeploymentRevisionUpdating"
    assert first["conditions"][2]["message"] == "updating to revision r2"

    pods["a"][1] = pod("r2", True)
    done = status_patch(
        ud({"currentRevision": "r1"}),
        workloads,
        pods,
        allocation,
        {"a": 0, "b": 0},
        "r2",
        0,
        RoundOutcome(),
        NOW,
    )
    assert done is not None and done["currentRevision"] == "r2"
    assert done["conditions"][2]["status"] == "True"
    assert done["conditions"][2]["message"] == "updated to revision r2"
    assert (
        status_patch(ud(done), workloads, pods, allocation, {"a": 0, "b": 0}, "r2", 0, RoundOutcome(), NOW)
        is None
    )


def test_failures_are_conditions_and_keep_their_transition_time() -> None:
    allocation = Allocation(replicas={"a": 1})
    stale = {"conditions": [{"type": "SubsetFailure", "status": "True", "reason": "Error", "message": "old"}]}
    failed = status_patch(
        ud(stale), {}, {}, allocation, {}, "r1", 0, RoundOutcome(provision_error="boom"), NOW
    )
    assert failed is not None
    assert "SubsetFailure" not in [c["type"] for c in failed["conditions"]], "upstream always removes it"
    provisioned = failed["conditions"][0]
    assert provisioned == {
        "type": "SubsetProvisioned",
        "status": "False",
        "reason": "Error",
        "message": "boom",
        "lastTransitionTime": "2026-01-01T00:00:00Z",
    }
    later = datetime(2026, 1, 2, tzinfo=UTC)
    again = status_patch(
        ud(failed), {}, {}, allocation, {}, "r1", 0, RoundOutcome(provision_error="boom"), later
    )
    assert again is None, "nothing changed, nothing written"
