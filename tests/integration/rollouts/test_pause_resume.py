"""CloneSet canary rollout with Ingress > V1->V2: Percentage 20%,40%, paused and resume.

``kruise rollout pause rollout/web`` sets ``spec.strategy.paused``: the Progressing condition
turns to reason ``Paused`` and nothing moves, not even a timed step whose duration passed;
``kruise rollout resume`` returns it to ``InRolling`` and the release completes.
"""

from __future__ import annotations

import asyncio

import pytest

from kruise.core.kube import KubeClient
from kruise.traffic.resources import HTTPROUTES
from tests.integration.rollouts import helpers as h
from tests.support.cluster import TestCluster
from tests.support.wait import eventually

pytestmark = pytest.mark.usefixtures("manager")

STEPS = [
    {"replicas": "20%", "traffic": "20%", "pause": {"duration": 3}},
    {"replicas": "40%", "traffic": "40%", "pause": {"duration": 3}},
    {"replicas": "100%", "traffic": "100%"},
]


async def test_global_pause_and_resume_with_the_cli(
    kube: KubeClient, namespace: str, cluster: TestCluster
) -> None:
    ro = h.rollout(namespace, STEPS, h.ROUTING_GATEWAY)
    await h.start(kube, namespace, ro, "httproute")
    await h.set_image(kube, namespace, h.V2)
    await h.wait_paused_at(kube, namespace, 1)

    out = h.kruise("rollout", "pause", "rollout/web", "-n", namespace, cluster=cluster)
    assert out.returncode == 0, out.stdout + out.stderr

    async def paused() -> dict[str, object] | None:
        got = await h.get_rollout(kube, namespace)
        return got if h.condition(got, "Progressing").get("reason") == "Paused" else None

    ro = await eventually(paused, timeout=20, interval=0.3, what="Progressing reason Paused")
    assert h.condition(ro, "Progressing")["status"] == "True"
    assert ro["status"]["message"] == "Rollout has been paused, you can resume it by kube-cli"
    index = h.canary_status(ro)["currentStepIndex"]
    await asyncio.sleep(5)  # well past the 3 s pause of the step
    ro = await h.get_rollout(kube, namespace)
    assert h.condition(ro, "Progressing")["reason"] == "Paused"
    assert h.canary_status(ro)["currentStepIndex"] == index
    assert (await h.pods_by_image(kube, namespace)).get(h.V2) == 2 * index

    out = h.kruise("rollout", "resume", "rollout/web", "-n", namespace, cluster=cluster)
    assert out.returncode == 0, out.stdout + out.stderr
    ro = await h.wait_completed(kube, namespace)
    assert h.condition(ro, "Succeeded")["status"] == "True"
    await h.wait_pods(kube, namespace, {h.V2: 10})
    route = await kube.get(HTTPROUTES, "web", namespace)
    assert [r["name"] for r in route["spec"]["rules"][0]["backendRefs"]] == ["web"]
