"""CloneSet canary rollout with Ingress > V1->V2: Percentage 20%,40%, and scale down replicas
from(10) -> to(5); V1->V2: Percentage 20%,40% and scale up replicas from(5) -> to(10).

Scaling the CloneSet while a step is paused keeps the Rollout on that step: the BatchRelease
recomputes the step's partition for the new replica count (a percentage step keeps its share,
rounded up as upstream's ``GetScaledValueFromIntOrPercent``; the partition only ever moves
down), ``canaryReplicas`` follows the workload, and the release then completes on the new size.
"""

from __future__ import annotations

from typing import Any

import pytest

from kruise.core.kube import KubeClient
from kruise.core.kube.resources import CLONESETS
from kruise.traffic.resources import HTTPROUTES
from tests.integration.rollouts import helpers as h
from tests.support.wait import eventually

pytestmark = pytest.mark.usefixtures("manager")


async def scale(kube: KubeClient, namespace: str, replicas: int) -> None:
    await kube.patch(CLONESETS, "web", {"spec": {"replicas": replicas}}, namespace, patch_type="merge")


async def wait_canary_replicas(kube: KubeClient, namespace: str, want: int) -> dict[str, Any]:
    async def probe() -> dict[str, Any] | None:
        ro = await h.get_rollout(kube, namespace)
        cs = h.canary_status(ro)
        ok = cs.get("canaryReplicas") == want and cs.get("canaryReadyReplicas") == want
        return ro if ok else None

    return await eventually(probe, timeout=30, interval=0.3, what=f"canaryReplicas {want}")


async def test_scale_down_then_up_during_a_paused_step(kube: KubeClient, namespace: str) -> None:
    ro = h.rollout(namespace, h.REFERENCE_STEPS, h.ROUTING_GATEWAY)
    await h.start(kube, namespace, ro, "httproute")
    await h.set_image(kube, namespace, h.V2)
    await h.wait_paused_at(kube, namespace, 1)
    await h.approve(kube, namespace)
    await h.wait_paused_at(kube, namespace, 2)
    assert await h.pods_by_image(kube, namespace) == {h.V1: 5, h.V2: 5}

    # 10 -> 5: step 2 asks for 50% of 5, rounded up: 3 canary pods, 2 stable
    await scale(kube, namespace, 5)
    await h.wait_pods(kube, namespace, {h.V1: 2, h.V2: 3})
    ro = await wait_canary_replicas(kube, namespace, 3)
    cs = h.canary_status(ro)
    assert (cs["currentStepIndex"], cs["currentStepState"]) == (2, "StepPaused")
    assert (await kube.get(CLONESETS, "web", namespace))["spec"]["updateStrategy"]["partition"] == "40%"
    assert h.route_weights(await kube.get(HTTPROUTES, "web", namespace)) == {"web": 50, "web-canary": 50}

    # 5 -> 10: at least 50% of 10 on v2 (the partition never moves back up), still at step 2
    await scale(kube, namespace, 10)
    cs_obj = await h.wait_settled_replicas(kube, namespace, 10)
    updated = cs_obj["status"]["updatedReplicas"]
    assert updated >= 5
    ro = await wait_canary_replicas(kube, namespace, updated)
    cs = h.canary_status(ro)
    assert (cs["currentStepIndex"], cs["currentStepState"]) == (2, "StepPaused")

    await h.approve(kube, namespace)
    ro = await h.wait_completed(kube, namespace)
    assert h.condition(ro, "Succeeded")["status"] == "True"
    await h.wait_pods(kube, namespace, {h.V2: 10})
