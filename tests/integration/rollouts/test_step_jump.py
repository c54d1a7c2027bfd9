"""Step Jump > V1->V2: CloneSet, Partition, patch nextStepIndex to jump (with its "Change traffic
of step 3" plan edit; also CloneSet canary rollout with Ingress > V1->V2: Percentage,
20%,40%,60%,80%,100%, steps changed v1).

Upstream's path: step 1 -> 2 -> 3 -> 3 again after step 3 is edited -> 4 -> 3 -> 2 -> 1 -> 5.
Steps without traffic tear the canary routing down (stable selector, canary Service and canary
Ingress gone); a jump back never moves the partition up (4 pods stay on v2); jumping to the
last step finishes the release.
"""

from __future__ import annotations

from typing import Any

import pytest

from kruise.core.kube import KubeClient
from kruise.core.kube.resources import CLONESETS, SERVICES
from kruise.rollouts.resources import ROLLOUTS
from kruise.traffic.resources import INGRESSES
from tests.integration.rollouts import helpers as h

pytestmark = pytest.mark.usefixtures("manager")

STEPS: list[dict[str, Any]] = [
    {"traffic": "20%", "replicas": "20%", "pause": {}},
    {"replicas": "40%", "pause": {"duration": 10}},
    {"replicas": "60%", "pause": {"duration": 10}},
    {"replicas": "80%", "pause": {"duration": 10}},
    {"replicas": "100%", "pause": {"duration": 0}},
]


async def jump(kube: KubeClient, namespace: str, target: int) -> None:
    patch = {"status": {"canaryStatus": {"nextStepIndex": target}}}
    await kube.patch(ROLLOUTS, "web", patch, namespace, patch_type="merge", subresource="status")


async def updated(kube: KubeClient, namespace: str) -> int:
    return int((await kube.get(CLONESETS, "web", namespace))["status"]["updatedReplicas"])


async def assert_restored(kube: KubeClient, namespace: str) -> None:
    """Upstream's CheckIngressRestored."""
    assert "pod-template-hash" not in (await h.selector(kube, namespace) or {})
    assert await kube.get_or_none(SERVICES, "web-canary", namespace) is None
    assert await kube.get_or_none(INGRESSES, "web-canary", namespace) is None


async def assert_routed(kube: KubeClient, namespace: str, weight: str) -> None:
    stable_rev, canary_rev = await h.revisions(kube, namespace)
    assert (await h.selector(kube, namespace) or {}).get("pod-template-hash") == stable_rev
    assert (await h.selector(kube, namespace, "web-canary") or {}).get("pod-template-hash") == canary_rev
    canary = await kube.get(INGRESSES, "web-canary", namespace)
    assert h.canary_ingress_annotations(canary)["canary-weight"] == weight


async def paused(kube: KubeClient, namespace: str, step: int, next_step: int) -> dict[str, Any]:
    ro = await h.wait_paused_at(kube, namespace, step)
    cs = h.canary_status(ro)
    assert cs["nextStepIndex"] == next_step
    assert ro["status"]["phase"] == "Progressing"
    assert cs["rolloutHash"] == ro["metadata"]["annotations"]["rollouts.kruise.io/hash"]
    return ro


async def test_patch_next_step_index_to_jump(kube: KubeClient, namespace: str) -> None:
    ro = h.rollout(namespace, STEPS, h.ROUTING_INGRESS)
    await h.start(kube, namespace, ro, "ingress", replicas=5)
    await h.set_image(kube, namespace, h.V2)

    await paused(kube, namespace, 1, 2)
    assert await updated(kube, namespace) == 1
    await assert_routed(kube, namespace, "20")

    await h.approve(kube, namespace)
    await paused(kube, namespace, 2, 3)
    assert await updated(kube, namespace) == 2
    await assert_restored(kube, namespace)

    await h.approve(kube, namespace)
    await paused(kube, namespace, 3, 4)
    assert await updated(kube, namespace) == 3
    await assert_restored(kube, namespace)

    # change the traffic of the current step: the plan changes, step 3 runs again with traffic
    ro = await h.get_rollout(kube, namespace)
    old_hash = h.canary_status(ro)["rolloutHash"]
    ro["spec"]["strategy"]["canary"]["steps"][2] = {
        "traffic": "60%",
        "replicas": 3,
        "pause": {"duration": 10},
    }
    await kube.replace(ROLLOUTS, ro)

    async def rehashed() -> bool:
        return h.canary_status(await h.get_rollout(kube, namespace))["rolloutHash"] != old_hash

    from tests.support.wait import eventually

    await eventually(rehashed, timeout=20, what="plan change observed")
    await paused(kube, namespace, 3, 4)
    assert await updated(kube, namespace) == 3
    await assert_routed(kube, namespace, "60")

    await h.approve(kube, namespace)
    await paused(kube, namespace, 4, 5)
    assert await updated(kube, namespace) == 4
    await assert_restored(kube, namespace)

    # jumps back never take pods back: 4 stay on v2
    await jump(kube, namespace, 3)
    await paused(kube, namespace, 3, 4)
    assert await updated(kube, namespace) == 4
    await assert_routed(kube, namespace, "60")

    await jump(kube, namespace, 2)
    await paused(kube, namespace, 2, 3)
    assert await updated(kube, namespace) == 4
    await assert_restored(kube, namespace)

    await jump(kube, namespace, 1)
    await paused(kube, namespace, 1, 2)
    assert await updated(kube, namespace) == 4
    await assert_routed(kube, namespace, "20")

    await jump(kube, namespace, 5)
    ro = await h.wait_completed(kube, namespace)
    assert h.canary_status(ro)["nextStepIndex"] == -1
    assert h.condition(ro, "Succeeded")["status"] == "True"
    await h.wait_settled(kube, namespace, 5)
    assert await h.pods_by_image(kube, namespace) == {h.V2: 5}
    await assert_restored(kube, namespace)


async def test_step_count_is_immutable_while_progressing(kube: KubeClient, namespace: str) -> None:
    """Step Jump > V1->V2: Deployment, Canary, remove 2-4 steps (the webhook refuses it)."""
    from kruise.core.errors import KruiseError

    ro = h.rollout(namespace, STEPS, h.ROUTING_INGRESS)
    await h.start(kube, namespace, ro, "ingress", replicas=5)
    await h.set_image(kube, namespace, h.V2)
    ro = await paused(kube, namespace, 1, 2)
    ro["spec"]["strategy"]["canary"]["steps"] = STEPS[:1]
    with pytest.raises(KruiseError):
        await kube.replace(ROLLOUTS, ro)
