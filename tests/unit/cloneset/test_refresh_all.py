"""PodWriter.refresh_all: decided without I/O, written only for the pods that need it."""

from __future__ import annotations

import copy
from datetime import UTC, datetime
from typing import Any

from kruise.core.expectations import ResourceVersionExpectations
from kruise.workloads.cloneset.sync_update import UpdateOutcome
from kruise.workloads.inplace.writer import PodWriter, plan_refresh

NOW = datetime(2024, 5, 1, 12, 0, tzinfo=UTC)
CLONESET: dict[str, Any] = {
    "apiVersion": "apps.kruise.io/v1alpha1",
    "kind": "CloneSet",
    "metadata": {"name": "web", "namespace": "ns", "uid": "cs-uid"},
    "spec": {"replicas": 3},
}


def settled(index: int) -> dict[str, Any]:
    """A running pod at the update revision with every refresh already done."""
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": f"web-{index}",
            "namespace": "ns",
            "uid": f"uid-{index}",
            "resourceVersion": "1",
            "labels": {"controller-revision-hash": "web-v1", "lifecycle.apps.kruise.io/state": "Normal"},
        },
        "spec": {
            "nodeName": "node-1",
            "containers": [{"name": "main", "image": "nginx:1"}],
            "readinessGates": [{"conditionType": "KruisePodReady"}],
        },
        "status": {
            "phase": "Running",
            "conditions": [
                {"type": "Ready", "status": "True"},
                {"type": "ContainersReady", "status": "True"},
                {"type": "KruisePodReady", "status": "True"},
            ],
        },
    }


class RecordingKube:
    """Records the patches a PodWriter sends; answers each with a new resourceVersion."""

    def __init__(self) -> None:
        self.patches: list[tuple[str, str | None]] = []

    async def patch(self, _resource: Any, name: str, _patch: Any, _ns: str, **kw: Any) -> dict[str, Any]:
        self.patches.append((name, kw.get("subresource")))
        return {"metadata": {"resourceVersion": str(len(self.patches) + 1)}}


def test_a_settled_pod_plans_no_write_and_a_new_one_its_kruise_pod_ready() -> None:
    assert not plan_refresh(CLONESET, settled(0), "web-v1", NOW).writes
    fresh = copy.deepcopy(settled(1))
    fresh["status"]["conditions"] = fresh["status"]["conditions"][:2]
    plan = plan_refresh(CLONESET, fresh, "web-v1", NOW)
    assert plan.writes and plan.kruise_ready is not None
    assert plan.kruise_ready["type"] == "KruisePodReady" and plan.kruise_ready["status"] == "True"


async def test_refresh_all_writes_only_the_pods_that_need_it_and_keeps_their_order() -> None:
    kube = RecordingKube()
    writer = PodWriter(kube, ResourceVersionExpectations())  # type: ignore[arg-type]
    pods = [settled(i) for i in range(5)]
    pods[3]["status"]["conditions"] = pods[3]["status"]["conditions"][:2]  # no KruisePodReady yet
    results = await writer.refresh_all(CLONESET, pods, "web-v1", NOW)
    assert [p["metadata"]["name"] for p, _ in results] == [f"web-{i}" for i in range(5)]
    assert [r.modified for _, r in results] == [False, False, False, True, False]
    assert kube.patches == [("web-3", "status")]


async def test_the_answer_to_a_pods_last_write_is_what_the_rounds_status_counts() -> None:
    """A pod refreshed this round (its first KruisePodReady) comes back as the API server answered
    it, and the Updater's outcome puts that answer in place of the cache's copy (the round's
    status counts it ready and available without waiting a round for the cache)."""
    kube = RecordingKube()
    writer = PodWriter(kube, ResourceVersionExpectations())  # type: ignore[arg-type]
    pods = [settled(i) for i in range(3)]
    pods[1]["status"]["conditions"] = pods[1]["status"]["conditions"][:2]
    results = await writer.refresh_all(CLONESET, pods, "web-v1", NOW)
    assert [r.pod for _, r in results] == [None, {"metadata": {"resourceVersion": "2"}}, None]

    outcome = UpdateOutcome(written={"web-1": {"metadata": {"name": "web-1", "resourceVersion": "2"}}})
    counted = outcome.as_written(pods)
    assert counted[0] is pods[0] and counted[2] is pods[2]
    assert counted[1] == {"metadata": {"name": "web-1", "resourceVersion": "2"}}
