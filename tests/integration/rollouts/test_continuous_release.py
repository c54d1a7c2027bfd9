"""CloneSet canary rollout with Ingress > Cloneset V1->V2: Percentage, 20%,40% and continuous
release v3; V1->V2: Percentage 20% v2 failed image, and v3 succeed image.

While v2 is paused at step 2, the user releases v3. The Rollout resets (routes restored,
BatchRelease and canary Service removed; the stable Service keeps its v1 pin), then starts
over from step 1 with v3 as the canary revision, and finally rolls every pod to v3.
"""

from __future__ import annotations

import asyncio

import pytest

from kruise.core.kube import KubeClient
from kruise.traffic.resources import HTTPROUTES
from tests.integration.rollouts import helpers as h

pytestmark = pytest.mark.usefixtures("manager")


V2_FAILED = "registry.example.com/shop/web:failed"
"""A broken image by the KWOK stages' rule (tag ``failed``)."""


async def test_v3_released_during_v2_restarts_from_step_one(kube: KubeClient, namespace: str) -> None:
    ro = h.rollout(namespace, h.REFERENCE_STEPS, h.ROUTING_GATEWAY)
    await h.start(kube, namespace, ro, "httproute")
    stable_rev, _ = await h.revisions(kube, namespace)
    await h.set_image(kube, namespace, h.V2)
    await h.wait_paused_at(kube, namespace, 1)
    await h.approve(kube, namespace)
    ro = await h.wait_paused_at(kube, namespace, 2)
    v2_rev = h.canary_status(ro)["canaryRevision"]
    assert await h.pods_by_image(kube, namespace) == {h.V1: 5, h.V2: 5}

    await h.set_image(kube, namespace, h.V3)

    ro = await h.wait_restarted(kube, namespace, v2_rev)
    cs = h.canary_status(ro)
    _, v3_rev = await h.revisions(kube, namespace)
    assert cs["canaryRevision"] == v3_rev == cs["podTemplateHash"]
    assert cs["stableRevision"] == stable_rev
    assert cs["nextStepIndex"] == 2
    # step 1's two pods run v3, no more: the old BatchRelease moved nothing once v3 arrived (where
    # upstream's next round may race the reset and release its step 2 share as v3)
    assert (await h.pods_by_image(kube, namespace)).get(h.V3, 0) == 2
    assert h.route_weights(await kube.get(HTTPROUTES, "web", namespace)) == {"web": 95, "web-canary": 5}
    assert await h.selector(kube, namespace) == {"app": "web", "pod-template-hash": stable_rev}
    assert await h.selector(kube, namespace, "web-canary") == {"app": "web", "pod-template-hash": v3_rev}

    await h.approve(kube, namespace)
    await h.wait_paused_at(kube, namespace, 2)
    assert (await h.pods_by_image(kube, namespace)).get(h.V3) == 5
    await h.approve(kube, namespace)
    ro = await h.wait_completed(kube, namespace)
    assert h.condition(ro, "Succeeded")["status"] == "True"
    await h.wait_pods(kube, namespace, {h.V3: 10})
    route = await kube.get(HTTPROUTES, "web", namespace)
    assert [r["name"] for r in route["spec"]["rules"][0]["backendRefs"]] == ["web"]
    assert await h.selector(kube, namespace) == {"app": "web"}


async def test_v2_never_ready_then_v3_succeeds(kube: KubeClient, namespace: str) -> None:
    """Upstream e2e "Deployment canary rollout with Ingress > V1->V2: Percentage 20% v2 failed
    image, and v3 succeed image" (``KR:test/e2e/rollout_test.go:1523``), on a CloneSet: v2 is a
    broken image (tag ``failed``, as upstream's ``echoserver:failed``, which the KWOK stages never
    let start), so its pods never become ready and step 1 stays in StepUpgrade; releasing v3
    resets the Rollout and v3 rolls out to the end."""
    from kruise.core.kube.resources import CLONESETS

    ro = h.rollout(namespace, h.REFERENCE_STEPS, h.ROUTING_GATEWAY)
    await h.start(kube, namespace, ro, "httproute")
    broken = {"spec": {"template": {"spec": {"containers": [{"name": "web", "image": V2_FAILED}]}}}}
    await kube.patch(CLONESETS, "web", broken, namespace, patch_type="merge")

    async def stuck() -> bool:
        cs = await kube.get(CLONESETS, "web", namespace)
        st = cs.get("status") or {}
        sub = h.canary_status(await h.get_rollout(kube, namespace))
        at_upgrade = (sub.get("currentStepIndex"), sub.get("currentStepState")) == (1, "StepUpgrade")
        return at_upgrade and st.get("updatedReplicas") == 2 and st.get("updatedReadyReplicas") == 0

    from tests.support.wait import eventually

    await eventually(stuck, timeout=40, what="step 1 stuck on 2 unready v2 pods")
    await asyncio.sleep(3)
    assert await stuck(), "an unready batch never advances"
    assert h.route_weights(await kube.get(HTTPROUTES, "web", namespace)) == {"web": 1}

    fixed = {"spec": {"template": {"spec": {"containers": [{"name": "web", "image": h.V3}]}}}}
    await kube.patch(CLONESETS, "web", fixed, namespace, patch_type="merge")

    async def v3_paused() -> bool:
        sub = h.canary_status(await h.get_rollout(kube, namespace))
        at_pause = (sub.get("currentStepIndex"), sub.get("currentStepState")) == (1, "StepPaused")
        _, update = await h.revisions(kube, namespace)
        return at_pause and sub.get("canaryRevision") == update

    await eventually(v3_paused, timeout=60, interval=0.3, what="step 1 paused on v3")
    assert h.route_weights(await kube.get(HTTPROUTES, "web", namespace)) == {"web": 95, "web-canary": 5}
    await h.approve(kube, namespace)
    await h.wait_paused_at(kube, namespace, 2)
    await h.approve(kube, namespace)
    ro = await h.wait_completed(kube, namespace)
    assert h.condition(ro, "Succeeded")["status"] == "True"
    await h.wait_pods(kube, namespace, {h.V3: 10})
