"""CloneSet canary rollout with Ingress > CloneSet V1->V2: Percentage, 20%,60% Succeeded.

The issue's reference release (pods 20% / 50% / 100%, traffic 5% / 50% / 100%) over an nginx
Ingress: the Rollout creates ``web-canary`` (an Ingress with ``canary: "true"`` and
``canary-weight``) next to the user's Ingress, moves the weight with the steps, and deletes it
when the release is over; ``kruise rollout status --watch`` follows it to the end.
"""

from __future__ import annotations

import pytest

from kruise.core.kube import KubeClient
from kruise.core.kube.resources import CLONESETS, SERVICES
from kruise.rollouts.resources import BATCH_RELEASES
from kruise.traffic.resources import INGRESSES
from tests.integration.rollouts import helpers as h
from tests.support.cluster import TestCluster
from tests.support.wait import eventually

pytestmark = pytest.mark.usefixtures("manager")


async def test_reference_release_over_nginx_ingress(
    kube: KubeClient, namespace: str, cluster: TestCluster
) -> None:
    ro = h.rollout(namespace, h.REFERENCE_STEPS, h.ROUTING_INGRESS)
    await h.start(kube, namespace, ro, "ingress")
    user_ingress = await kube.get(INGRESSES, "web", namespace)
    await h.set_image(kube, namespace, h.V2)

    await h.wait_paused_at(kube, namespace, 1)
    assert await h.pods_by_image(kube, namespace) == {h.V1: 8, h.V2: 2}
    canary = await kube.get(INGRESSES, "web-canary", namespace)
    assert h.canary_ingress_annotations(canary) == {"canary": "true", "canary-weight": "5"}
    backend = canary["spec"]["rules"][0]["http"]["paths"][0]["backend"]["service"]
    assert backend["name"] == "web-canary"
    stable_rev, canary_rev = await h.revisions(kube, namespace)
    assert await h.selector(kube, namespace) == {"app": "web", "pod-template-hash": stable_rev}
    assert await h.selector(kube, namespace, "web-canary") == {"app": "web", "pod-template-hash": canary_rev}

    approved = h.kruise("rollout", "approve", "rollout/web", "-n", namespace, cluster=cluster)
    assert approved.returncode == 0, approved.stdout + approved.stderr
    await h.wait_paused_at(kube, namespace, 2)
    assert await h.pods_by_image(kube, namespace) == {h.V1: 5, h.V2: 5}
    canary = await kube.get(INGRESSES, "web-canary", namespace)
    assert h.canary_ingress_annotations(canary) == {"canary": "true", "canary-weight": "50"}

    await h.approve(kube, namespace)
    watched = h.kruise(
        "rollout", "status", "rollout/web", "-n", namespace, "--watch", "--timeout", "60", cluster=cluster
    )
    assert watched.returncode == 0, watched.stdout + watched.stderr
    ro = await h.get_rollout(kube, namespace)
    assert h.condition(ro, "Succeeded")["status"] == "True"
    assert h.canary_status(ro)["currentStepState"] == "Completed"
    assert await h.pods_by_image(kube, namespace) == {h.V2: 10}
    assert await kube.get_or_none(INGRESSES, "web-canary", namespace) is None
    assert (await kube.get(INGRESSES, "web", namespace))["spec"] == user_ingress["spec"]
    assert await kube.get_or_none(SERVICES, "web-canary", namespace) is None
    assert await h.selector(kube, namespace) == {"app": "web"}
    assert await kube.get_or_none(BATCH_RELEASES, "web", namespace) is None
    cs = await kube.get(CLONESETS, "web", namespace)
    assert cs["spec"]["updateStrategy"].get("partition") in (None, 0)

    # the sub-status follows the workload's generation (upstream's WaitRolloutWorkloadGeneration)
    async def observed() -> bool:
        got = h.canary_status(await h.get_rollout(kube, namespace))
        return bool(got["observedWorkloadGeneration"] == cs["metadata"]["generation"])

    await eventually(observed, timeout=10, what="observedWorkloadGeneration")
