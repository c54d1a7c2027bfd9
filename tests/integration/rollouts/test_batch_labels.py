"""Others > Patch batch id to pods: normal case; scaling case; rollback case; only rollout-id
changes; only change rollout-id after rolling the first step (``KR:test/e2e/rollout_v1beta1_test.go``).

The CloneSet (5 pods) carries ``rollouts.kruise.io/rollout-id``; the BatchRelease labels the pods
each step upgrades with that id and ``rollouts.kruise.io/rollout-batch-id`` (1-based), and a step
is not done before its pods carry them. A new rollout-id alone (same template) relabels the pods
from batch 1 up to the current step; rolling back in batches labels the pods of the rollback.
"""

from __future__ import annotations

from typing import Any

import pytest

from kruise.core.kube import KubeClient
from kruise.core.kube.resources import CLONESETS, PODS
from tests.integration.rollouts import helpers as h
from tests.support.cluster import TestCluster
from tests.support.wait import eventually

pytestmark = pytest.mark.usefixtures("manager")

ID, BATCH = "rollouts.kruise.io/rollout-id", "rollouts.kruise.io/rollout-batch-id"
IN_BATCH = "rollouts.kruise.io/rollback-in-batch"
FIVE_STEPS: list[dict[str, Any]] = [
    {"replicas": "20%", "pause": {}},
    {"replicas": "40%", "pause": {}},
    {"replicas": "60%", "pause": {}},
    {"replicas": "80%", "pause": {}},
    {"replicas": "100%", "pause": {"duration": 0}},
]


async def batches_of(kube: KubeClient, namespace: str, rollout_id: str) -> dict[str, int]:
    """Live pods carrying ``rollout_id``, counted by batch id."""
    out: dict[str, int] = {}
    for pod in (await kube.list(PODS, namespace, label_selector="app=web"))["items"]:
        labels = pod["metadata"].get("labels") or {}
        if not pod["metadata"].get("deletionTimestamp") and labels.get(ID) == rollout_id:
            out[labels.get(BATCH, "")] = out.get(labels.get(BATCH, ""), 0) + 1
    return out


async def wait_batches(kube: KubeClient, namespace: str, rollout_id: str, want: dict[str, int]) -> None:
    async def probe() -> bool:
        return await batches_of(kube, namespace, rollout_id) == want

    await eventually(probe, timeout=30, what=f"pods labelled {rollout_id}: {want}")


async def set_rollout_id(kube: KubeClient, namespace: str, rollout_id: str, image: str | None = None) -> None:
    patch: dict[str, Any] = {"metadata": {"labels": {ID: rollout_id}}}
    if image is not None:
        patch["spec"] = {"template": {"spec": {"containers": [{"name": "web", "image": image}]}}}
    await kube.patch(CLONESETS, "web", patch, namespace, patch_type="merge")


async def start_with_id(kube: KubeClient, namespace: str, ro: dict[str, Any], *network: str) -> None:
    """The CloneSet is created with rollout-id 1 (as upstream's e2e), then the Rollout."""
    await h.start(kube, namespace, ro, *network, replicas=5, labels={ID: "1"})


def in_batches(ro: dict[str, Any]) -> dict[str, Any]:
    ro["metadata"]["annotations"] = {IN_BATCH: "true"}
    return ro


async def step_through(kube: KubeClient, namespace: str, rollout_id: str, steps: range) -> None:
    """Approve from the current paused step on; at each step its batch has one labelled pod."""
    for step in steps:
        await h.approve(kube, namespace)
        await h.wait_paused_at(kube, namespace, step)
        assert (await batches_of(kube, namespace, rollout_id)).get(str(step)) == 1


async def test_patch_batch_id_to_pods_normal_case(
    kube: KubeClient, namespace: str, cluster: TestCluster
) -> None:
    await start_with_id(kube, namespace, h.rollout(namespace, FIVE_STEPS))
    await h.set_image(kube, namespace, h.V2)
    await h.wait_paused_at(kube, namespace, 1)
    assert await batches_of(kube, namespace, "1") == {"1": 1}
    await step_through(kube, namespace, "1", range(2, 5))
    shown = h.kruise("rollout", "status", "rollout/web", "-n", namespace, "--no-watch", cluster=cluster)
    assert "rollout-id 1: batch 1=1, 2=1, 3=1, 4=1" in shown.stdout, shown.stdout + shown.stderr
    await h.approve(kube, namespace)
    ro = await h.wait_completed(kube, namespace)
    assert h.condition(ro, "Succeeded")["status"] == "True"
    await wait_batches(kube, namespace, "1", {str(b): 1 for b in range(1, 6)})
    assert h.canary_status(ro)["observedRolloutID"] == "1"


async def test_patch_batch_id_to_pods_scaling_case(kube: KubeClient, namespace: str) -> None:
    steps = [
        {"replicas": "20%", "traffic": "20%", "pause": {"duration": 1}},
        {"replicas": "40%", "pause": {}},
        {"replicas": "60%", "pause": {"duration": 1}},
        {"replicas": "100%", "pause": {"duration": 1}},
    ]
    await start_with_id(kube, namespace, h.rollout(namespace, steps, h.ROUTING_GATEWAY), "httproute")
    await h.set_image(kube, namespace, h.V2)
    await h.wait_paused_at(kube, namespace, 2)
    assert await batches_of(kube, namespace, "1") == {"1": 1, "2": 1}

    await kube.patch(CLONESETS, "web", {"spec": {"replicas": 10}}, namespace, patch_type="merge")

    async def four_ready() -> bool:
        return h.canary_status(await h.get_rollout(kube, namespace)).get("canaryReadyReplicas") == 4

    await eventually(four_ready, timeout=60, what="4 canary pods ready after scaling to 10")
    await wait_batches(kube, namespace, "1", {"1": 2, "2": 2})

    await h.approve(kube, namespace)
    await h.wait_completed(kube, namespace)
    await h.wait_pods(kube, namespace, {h.V2: 10})
    await wait_batches(kube, namespace, "1", {"1": 2, "2": 2, "3": 2, "4": 4})


async def test_patch_batch_id_to_pods_rollback_case(kube: KubeClient, namespace: str) -> None:
    await start_with_id(kube, namespace, in_batches(h.rollout(namespace, FIVE_STEPS)))
    await h.set_image(kube, namespace, h.V2)
    await h.wait_paused_at(kube, namespace, 1)
    await step_through(kube, namespace, "1", range(2, 4))
    assert await batches_of(kube, namespace, "1") == {"1": 1, "2": 1, "3": 1}

    await set_rollout_id(kube, namespace, "2", image=h.V1)  # back to v1, with a new rollout-id
    ro = await h.wait_paused_at(kube, namespace, 1)
    stable_rev, canary_rev = await h.revisions(kube, namespace)
    assert h.canary_status(ro)["canaryRevision"] == canary_rev == stable_rev
    assert await batches_of(kube, namespace, "2") == {"1": 1}
    assert await h.pods_by_image(kube, namespace) == {h.V1: 3, h.V2: 2}  # one pod rolled back

    await step_through(kube, namespace, "2", range(2, 5))
    await h.approve(kube, namespace)
    await h.wait_completed(kube, namespace)
    await h.wait_pods(kube, namespace, {h.V1: 5})
    await wait_batches(kube, namespace, "2", {str(b): 1 for b in range(1, 6)})


async def test_patch_batch_id_to_pods_only_rollout_id_changes(kube: KubeClient, namespace: str) -> None:
    ro = in_batches(h.rollout(namespace, FIVE_STEPS))
    await h.start(kube, namespace, ro, replicas=5)
    await set_rollout_id(kube, namespace, "1")  # same template: a release of labels only
    await h.wait_paused_at(kube, namespace, 1)
    assert await batches_of(kube, namespace, "1") == {"1": 1}
    await step_through(kube, namespace, "1", range(2, 4))

    await set_rollout_id(kube, namespace, "2")
    await wait_batches(kube, namespace, "2", {"1": 1, "2": 1, "3": 1})
    await h.wait_paused_at(kube, namespace, 3)

    await step_through(kube, namespace, "2", range(4, 5))
    await h.approve(kube, namespace)
    await h.wait_completed(kube, namespace)
    await wait_batches(kube, namespace, "2", {str(b): 1 for b in range(1, 6)})
    assert await h.pods_by_image(kube, namespace) == {h.V1: 5}


async def test_patch_batch_id_to_pods_only_change_rollout_id_after_rolling_the_first_step(
    kube: KubeClient, namespace: str
) -> None:
    ro = in_batches(h.rollout(namespace, FIVE_STEPS))
    await h.start(kube, namespace, ro, replicas=5)
    await set_rollout_id(kube, namespace, "1")
    await h.wait_paused_at(kube, namespace, 1)
    assert await batches_of(kube, namespace, "1") == {"1": 1}

    await set_rollout_id(kube, namespace, "2")
    await wait_batches(kube, namespace, "2", {"1": 1})
    await h.wait_paused_at(kube, namespace, 1)

    await step_through(kube, namespace, "2", range(2, 5))
    await h.approve(kube, namespace)
    await h.wait_completed(kube, namespace)
    await wait_batches(kube, namespace, "2", {str(b): 1 for b in range(1, 6)})
