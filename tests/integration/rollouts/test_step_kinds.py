"""CloneSet canary rollout with Ingress > CloneSet V1->V2: Percentage, 20%,40%,60%,80%,100%, no
traffic, Succeeded; with the step kinds mixed: absolute and percentage ``replicas``, timed
pauses (``pause.duration``) and manual approval.

Without traffic routing a BatchRelease only moves the CloneSet's partition: an integer batch
is written as ``replicas - n``, a percentage batch as the stable share (``"60%"``); a timed
step continues by itself once its duration passed, an approval step waits for
``kruise rollout approve``.
"""

from __future__ import annotations

import time

import pytest

from kruise.core.kube import KubeClient
from kruise.core.kube.resources import CLONESETS
from kruise.rollouts.resources import BATCH_RELEASES
from tests.integration.rollouts import helpers as h
from tests.support.cluster import TestCluster

pytestmark = pytest.mark.usefixtures("manager")

STEPS = [
    {"replicas": 1, "pause": {"duration": 3}},
    {"replicas": "40%", "pause": {}},
    {"replicas": 8, "pause": {"duration": 5}},  # long enough to be seen by polling on a busy machine
    {"replicas": "100%"},
]


async def partition(kube: KubeClient, namespace: str) -> object:
    return (await kube.get(CLONESETS, "web", namespace))["spec"]["updateStrategy"].get("partition")


async def test_absolute_and_percent_steps_timed_pause_and_approval(
    kube: KubeClient, namespace: str, cluster: TestCluster
) -> None:
    await h.start(kube, namespace, h.rollout(namespace, STEPS))
    plan = h.kruise("rollout", "plan", "rollout/web", "-n", namespace, "-o", "json", cluster=cluster)
    assert plan.returncode == 0, plan.stderr
    await h.set_image(kube, namespace, h.V2)

    # step 1: one pod (integer partition), a 3 s timed pause that ends by itself
    ro = await h.wait_paused_at(kube, namespace, 1)
    paused_at = time.monotonic()
    assert await h.pods_by_image(kube, namespace) == {h.V1: 9, h.V2: 1}
    assert await partition(kube, namespace) == 9
    assert "wait duration(3 seconds)" in ro["status"]["message"]
    assert (await kube.get(BATCH_RELEASES, "web", namespace))["spec"]["releasePlan"]["batches"] == [
        {"canaryReplicas": 1},
        {"canaryReplicas": "40%"},
        {"canaryReplicas": 8},
        {"canaryReplicas": "100%"},
    ]

    # step 2: 40% (a percentage partition of the stable share), waits for approval
    ro = await h.wait_paused_at(kube, namespace, 2)
    assert time.monotonic() - paused_at >= 2.5
    assert await h.pods_by_image(kube, namespace) == {h.V1: 6, h.V2: 4}
    assert await partition(kube, namespace) == "60%"
    assert "manually confirm" in ro["status"]["message"]
    await _still_paused_at(kube, namespace, 2, seconds=3)
    approved = h.kruise("rollout", "approve", "rollout/web", "-n", namespace, cluster=cluster)
    assert approved.returncode == 0, approved.stdout + approved.stderr

    # step 3: 8 pods, 5 s, then the last 100% step continues by itself and the release ends
    await h.wait_paused_at(kube, namespace, 3)
    assert await h.pods_by_image(kube, namespace) == {h.V1: 2, h.V2: 8}
    assert await partition(kube, namespace) == 2
    ro = await h.wait_completed(kube, namespace)
    assert h.condition(ro, "Succeeded")["status"] == "True"
    assert await h.pods_by_image(kube, namespace) == {h.V2: 10}
    assert await partition(kube, namespace) in (None, 0)


async def _still_paused_at(kube: KubeClient, namespace: str, step: int, seconds: float) -> None:
    import asyncio

    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        cs = h.canary_status(await h.get_rollout(kube, namespace))
        assert (cs["currentStepIndex"], cs["currentStepState"]) == (step, "StepPaused")
        await asyncio.sleep(0.5)
