"""CloneSet canary rollout with Ingress > V1->V2: Percentage 20%,40%, but delete rollout crd.

Deleting the Rollout in the middle of a canary finalises it like a success (reason
RolloutDeleting): stable Service selector restored, routes back on the stable Service (the
canary Ingress deleted), canary Service removed, the CloneSet's partition released (every pod
moves to v2) and its ``in-progressing`` annotation dropped, the BatchRelease deleted; only then
is the ``rollouts.kruise.io/rollout`` finalizer removed and the Rollout gone.
"""

from __future__ import annotations

import pytest

from kruise.core.kube import KubeClient
from kruise.core.kube.resources import CLONESETS, SERVICES
from kruise.rollouts.resources import BATCH_RELEASES
from kruise.traffic.resources import INGRESSES
from tests.integration.rollouts import helpers as h

pytestmark = pytest.mark.usefixtures("manager")


async def test_deleting_the_rollout_mid_canary_restores_everything(kube: KubeClient, namespace: str) -> None:
    ro = h.rollout(namespace, h.REFERENCE_STEPS, h.ROUTING_INGRESS)
    await h.start(kube, namespace, ro, "ingress")
    assert "rollouts.kruise.io/rollout" in (await h.get_rollout(kube, namespace))["metadata"]["finalizers"]
    await h.set_image(kube, namespace, h.V2)
    await h.wait_paused_at(kube, namespace, 1)
    assert await kube.get_or_none(INGRESSES, "web-canary", namespace) is not None

    await h.delete_rollout(kube, namespace)
    await h.wait_settled(kube, namespace, 10)
    assert await h.pods_by_image(kube, namespace) == {h.V2: 10}
    cs = await kube.get(CLONESETS, "web", namespace)
    assert cs["spec"]["updateStrategy"].get("partition") in (None, 0)
    assert not cs["spec"]["updateStrategy"].get("paused")
    annotations = cs["metadata"].get("annotations") or {}
    assert "rollouts.kruise.io/in-progressing" not in annotations
    assert "batchrelease.rollouts.kruise.io/control-info" not in annotations
    assert await kube.get_or_none(INGRESSES, "web-canary", namespace) is None
    assert await kube.get_or_none(SERVICES, "web-canary", namespace) is None
    assert await h.selector(kube, namespace) == {"app": "web"}
    assert await kube.get_or_none(BATCH_RELEASES, "web", namespace) is None

    # without a Rollout the next template change rolls out at once (no webhook hold)
    await h.set_image(kube, namespace, h.V3)
    await h.wait_settled(kube, namespace, 10)
    assert await h.pods_by_image(kube, namespace) == {h.V3: 10}
