"""Ours: a Rollout annotated ``rollouts.kruise.io/prepull-next-batch`` pre-pulls the next step's
images on the nodes of the pods that step will update (KWOK nodes; the ImagePullJob is asserted,
the pulling itself is kruise-daemon's and tested elsewhere)."""

from __future__ import annotations

from typing import Any

import pytest

from kruise.core.kube import KubeClient
from kruise.core.kube.resources import IMAGEPULLJOBS, PODS
from kruise.rollouts.rollout.prepull import CONDITION_TYPE, PREPULL_ANNOTATION
from tests.integration.rollouts import helpers as h
from tests.support.wait import eventually

pytestmark = pytest.mark.usefixtures("manager")
STEPS: list[dict[str, Any]] = [
    {"replicas": 1, "pause": {}},
    {"replicas": 3, "pause": {}},
    {"replicas": 4},
]


async def _jobs(kube: KubeClient, namespace: str) -> list[dict[str, Any]]:
    return list((await kube.list(IMAGEPULLJOBS, namespace))["items"])


async def _no_jobs(kube: KubeClient, namespace: str) -> bool:
    return not await _jobs(kube, namespace)


async def _updated_nodes(kube: KubeClient, namespace: str) -> dict[str, str]:
    """Pod name -> node of the pods on the CloneSet's update revision."""
    cs = await kube.get(h.CLONESETS, "web", namespace)
    revision = cs["status"]["updateRevision"]
    pods = (await kube.list(PODS, namespace, label_selector="app=web"))["items"]
    return {
        p["metadata"]["name"]: p["spec"].get("nodeName", "")
        for p in pods
        if p["metadata"]["labels"].get("controller-revision-hash") == revision
        and not p["metadata"].get("deletionTimestamp")
    }


async def test_prepull_next_batch_names_the_next_steps_nodes(kube: KubeClient, namespace: str) -> None:
    ro = h.rollout(namespace, STEPS)
    ro["metadata"]["annotations"] = {PREPULL_ANNOTATION: "true"}
    await h.start(kube, namespace, ro, replicas=4)
    await h.set_image(kube, namespace, h.V2)
    paused = await h.wait_paused_at(kube, namespace, 1)

    async def job() -> dict[str, Any] | None:
        found = await _jobs(kube, namespace)
        return found[0] if len(found) == 1 else None

    pull = await eventually(job, timeout=30, what="the pre-pull ImagePullJob")
    assert pull["spec"]["image"] == h.V2
    assert pull["metadata"]["ownerReferences"][0]["uid"] == paused["metadata"]["uid"]
    names = sorted(pull["spec"]["selector"]["names"])
    first = await _updated_nodes(kube, namespace)
    assert len(first) == 1

    async def shown() -> dict[str, Any] | None:
        return h.condition(await h.get_rollout(kube, namespace), CONDITION_TYPE) or None

    cond = await eventually(shown, what="the PrePullNextBatch condition")
    assert cond["message"] == f"pre-pull on: {', '.join(names)}"

    # step 2 updates exactly the pods on those nodes
    await h.approve(kube, namespace)
    await h.wait_paused_at(kube, namespace, 2)
    second = await _updated_nodes(kube, namespace)
    step2_nodes = sorted({node for pod, node in second.items() if pod not in first})
    assert len(second) == 3
    assert step2_nodes == names

    # the last step has no next one: the job goes; the release then completes
    await h.approve(kube, namespace)
    await h.wait_paused_at(kube, namespace, 3)
    await eventually(lambda: _no_jobs(kube, namespace), timeout=30, what="no job at the last step")
    await h.approve(kube, namespace)
    await h.wait_completed(kube, namespace, timeout=90)

    await eventually(lambda: _no_jobs(kube, namespace), timeout=30, what="the pre-pull ImagePullJob deleted")
    assert not h.condition(await h.get_rollout(kube, namespace), CONDITION_TYPE)
