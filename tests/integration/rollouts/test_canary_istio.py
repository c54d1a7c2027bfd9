"""Canary rollout with custom network provider > V1->V2: Route traffic with header matches and
weight for VirtualService and DestinationRule.

The issue's reference release over an Istio VirtualService and DestinationRule named by
``customNetworkRefs`` (the built-in Lua scripts): the default route is split 95/5, then 50/50,
the DestinationRule gains upstream's ``canary`` subset (``istio.service.tag: gray``), and both
objects get their exact original spec back at the end (the saved
``rollouts.kruise.io/original-spec-configuration`` is dropped).
"""

from __future__ import annotations

import pytest

from kruise.core.kube import KubeClient
from kruise.traffic.custom import ORIGINAL_SPEC_ANNOTATION
from kruise.traffic.resources import DESTINATIONRULES, VIRTUALSERVICES
from tests.integration.rollouts import helpers as h
from tests.support.cluster import TestCluster

pytestmark = pytest.mark.usefixtures("manager")


async def test_reference_release_over_istio_virtualservice_and_destinationrule(
    kube: KubeClient, namespace: str, cluster: TestCluster
) -> None:
    ro = h.rollout(namespace, h.REFERENCE_STEPS, h.ROUTING_ISTIO)
    await h.start(kube, namespace, ro, "istio")
    vs0 = await kube.get(VIRTUALSERVICES, "web", namespace)
    dr0 = await kube.get(DESTINATIONRULES, "web", namespace)
    await h.set_image(kube, namespace, h.V2)

    await h.wait_paused_at(kube, namespace, 1)
    assert await h.pods_by_image(kube, namespace) == {h.V1: 8, h.V2: 2}
    vs = await kube.get(VIRTUALSERVICES, "web", namespace)
    assert h.vs_weights(vs) == {"web": 95, "web-canary": 5}
    assert ORIGINAL_SPEC_ANNOTATION in vs["metadata"]["annotations"]
    dr = await kube.get(DESTINATIONRULES, "web", namespace)
    subsets = {s["name"]: s.get("labels") for s in dr["spec"]["subsets"]}
    assert subsets["canary"] == {"istio.service.tag": "gray"}  # upstream's built-in DestinationRule script

    await h.approve(kube, namespace)
    await h.wait_paused_at(kube, namespace, 2)
    assert await h.pods_by_image(kube, namespace) == {h.V1: 5, h.V2: 5}
    assert h.vs_weights(await kube.get(VIRTUALSERVICES, "web", namespace)) == {"web": 50, "web-canary": 50}

    await h.approve(kube, namespace)
    watched = h.kruise(
        "rollout", "status", "rollout/web", "-n", namespace, "--watch", "--timeout", "60", cluster=cluster
    )
    assert watched.returncode == 0, watched.stdout + watched.stderr
    ro = await h.get_rollout(kube, namespace)
    assert h.condition(ro, "Succeeded")["status"] == "True"
    assert await h.pods_by_image(kube, namespace) == {h.V2: 10}
    vs = await kube.get(VIRTUALSERVICES, "web", namespace)
    dr = await kube.get(DESTINATIONRULES, "web", namespace)
    assert vs["spec"] == vs0["spec"] and dr["spec"] == dr0["spec"]
    assert ORIGINAL_SPEC_ANNOTATION not in (vs["metadata"].get("annotations") or {})
    assert ORIGINAL_SPEC_ANNOTATION not in (dr["metadata"].get("annotations") or {})
