"""CloneSet canary rollout with Ingress > CloneSet V1->V2: Percentage, 20%,60% Succeeded, with the
manager SIGKILLed in every step state it can be caught in and started again.

State lives in the Rollout's status (``currentStepIndex``, ``currentStepState``,
``finalisingStep``, ``lastUpdateTime``), the BatchRelease and the routed objects, so a manager
killed without warning decides the same again when it comes back: the release completes with the
same pod counts and weights at every step, and a paused step is not advanced by the restart.

This module runs its own manager replica: the session one is stopped (it hands the Lease back)
and started again at the end. A SIGKILLed leader cannot hand its Lease back, so before each
restart the test expires it (``renewTime`` in the past), which a new replica would otherwise
wait out (15 s).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from kruise.core.kube import KubeClient
from kruise.core.kube.resources import SERVICES
from kruise.rollouts.manager.process import ManagerProcess
from kruise.rollouts.resources import BATCH_RELEASES
from kruise.traffic.resources import HTTPROUTES
from tests.integration.rollouts import helpers as h
from tests.support.managers import kill_and_restart
from tests.support.wait import eventually


async def catch(
    kube: KubeClient, namespace: str, what: str, predicate: Callable[[dict[str, Any]], bool]
) -> dict[str, Any]:
    async def probe() -> dict[str, Any] | None:
        ro = await h.get_rollout(kube, namespace)
        return ro if predicate(ro) else None

    return await eventually(probe, timeout=60, interval=0.05, what=what)


def at(step: int, *states: str) -> Callable[[dict[str, Any]], bool]:
    def predicate(ro: dict[str, Any]) -> bool:
        cs = h.canary_status(ro)
        return cs.get("currentStepIndex") == step and cs.get("currentStepState") in states

    return predicate


async def test_release_survives_sigkill_in_every_step_state(
    kube: KubeClient, namespace: str, replica: ManagerProcess
) -> None:
    ro = h.rollout(namespace, h.REFERENCE_STEPS, h.ROUTING_GATEWAY)
    await h.start(kube, namespace, ro, "httproute")
    await h.set_image(kube, namespace, h.V2)
    caught: list[str] = []

    # step 1 while the pods move
    ro = await catch(kube, namespace, "step 1 upgrading", at(1, "StepUpgrade"))
    caught.append(h.canary_status(ro)["currentStepState"])
    await kill_and_restart(kube, replica)
    await h.wait_paused_at(kube, namespace, 1)
    assert await h.pods_by_image(kube, namespace) == {h.V1: 8, h.V2: 2}
    assert h.route_weights(await kube.get(HTTPROUTES, "web", namespace)) == {"web": 95, "web-canary": 5}

    # step 2 while the route moves (StepTrafficRouting waits the grace period after a change)
    await h.approve(kube, namespace)
    ro = await catch(kube, namespace, "step 2 routing", at(2, "StepTrafficRouting"))
    caught.append(h.canary_status(ro)["currentStepState"])
    await kill_and_restart(kube, replica)
    await h.wait_paused_at(kube, namespace, 2)
    assert await h.pods_by_image(kube, namespace) == {h.V1: 5, h.V2: 5}
    assert h.route_weights(await kube.get(HTTPROUTES, "web", namespace)) == {"web": 50, "web-canary": 50}

    # paused: a restart does not approve anything
    caught.append("StepPaused")
    await kill_and_restart(kube, replica)
    await asyncio.sleep(3)
    ro = await h.get_rollout(kube, namespace)
    assert at(2, "StepPaused")(ro)
    assert await h.pods_by_image(kube, namespace) == {h.V1: 5, h.V2: 5}

    # finalising (whichever finalising step we land in)
    await h.approve(kube, namespace)

    def finalising(ro: dict[str, Any]) -> bool:
        started = h.canary_status(ro).get("finalisingStep") not in (None, "", "END")
        return h.condition(ro, "Progressing").get("reason") == "Finalising" and started

    ro = await catch(kube, namespace, "finalising", finalising)
    caught.append(f"Finalising/{h.canary_status(ro)['finalisingStep']}")
    await kill_and_restart(kube, replica)
    ro = await h.wait_completed(kube, namespace)
    assert h.condition(ro, "Succeeded")["status"] == "True"
    await h.wait_pods(kube, namespace, {h.V2: 10})
    route = await kube.get(HTTPROUTES, "web", namespace)
    assert [r["name"] for r in route["spec"]["rules"][0]["backendRefs"]] == ["web"]
    assert await kube.get_or_none(SERVICES, "web-canary", namespace) is None
    assert await h.selector(kube, namespace) == {"app": "web"}
    assert await kube.get_or_none(BATCH_RELEASES, "web", namespace) is None
    print(f"\n[kruise] manager killed in: {', '.join(caught)}")
