"""Disabled rollout tests > Rollout status tests.

Upstream's sequence on the example CloneSet: a second Rollout for the same workload is
refused; a Rollout disabled while it is rolling finalises (phase ``Disabling``, then
``Disabled``): the workload is released and the BatchRelease deleted; a disabled Rollout holds
nothing back (the next template change rolls out at once); enabling it again makes it Healthy.
A Rollout created disabled is ``Disabled`` from the start and never holds the workload.
"""

from __future__ import annotations

import pytest

from kruise.core.errors import KruiseError
from kruise.core.kube import KubeClient
from kruise.core.kube.resources import CLONESETS
from kruise.rollouts.resources import BATCH_RELEASES, ROLLOUTS
from tests.integration.rollouts import helpers as h

pytestmark = pytest.mark.usefixtures("manager")

STEPS = [{"replicas": 2, "pause": {}}, {"replicas": "50%", "pause": {}}]
IN_PROGRESSING = "rollouts.kruise.io/in-progressing"


async def set_disabled(kube: KubeClient, namespace: str, disabled: bool) -> None:
    await kube.patch(ROLLOUTS, "web", {"spec": {"disabled": disabled}}, namespace, patch_type="merge")


async def test_disable_a_rolling_rollout_then_enable_it(kube: KubeClient, namespace: str) -> None:
    await kube.create(ROLLOUTS, h.rollout(namespace, STEPS), namespace)
    other = h.rollout(namespace, STEPS)
    other["metadata"]["name"] = "web-2"
    with pytest.raises(KruiseError):
        await kube.create(ROLLOUTS, other, namespace)  # one Rollout per workload
    await h.wait_phase(kube, namespace, "Initial")

    await h.create_web(kube, namespace)
    await h.wait_phase(kube, namespace, "Healthy")
    await h.set_image(kube, namespace, h.V2)
    ro = await h.wait_paused_at(kube, namespace, 1)
    cs = h.canary_status(ro)
    assert (cs["canaryReplicas"], cs["canaryReadyReplicas"]) == (2, 2)
    assert (await kube.get(CLONESETS, "web", namespace))["spec"]["updateStrategy"]["partition"] == 8

    await set_disabled(kube, namespace, True)
    ro = await h.wait_phase(kube, namespace, "Disabled")
    assert ro["status"]["message"] == "Rollout is disabled"
    await h.wait_settled(kube, namespace, 10)
    assert await h.pods_by_image(kube, namespace) == {h.V2: 10}
    cs_obj = await kube.get(CLONESETS, "web", namespace)
    assert cs_obj["spec"]["updateStrategy"].get("partition") in (None, 0)
    assert IN_PROGRESSING not in (cs_obj["metadata"].get("annotations") or {})
    assert await kube.get_or_none(BATCH_RELEASES, "web", namespace) is None

    # disabled: no hold on the next release
    await h.set_image(kube, namespace, h.V3)
    await h.wait_settled(kube, namespace, 10)
    assert await h.pods_by_image(kube, namespace) == {h.V3: 10}
    cs_obj = await kube.get(CLONESETS, "web", namespace)
    assert IN_PROGRESSING not in (cs_obj["metadata"].get("annotations") or {})

    await set_disabled(kube, namespace, False)
    ro = await h.wait_phase(kube, namespace, "Healthy")
    assert ro["status"]["message"] == "rollout is healthy"


async def test_rollout_created_disabled_never_holds_the_workload(kube: KubeClient, namespace: str) -> None:
    await h.create_web(kube, namespace)
    ro = h.rollout(namespace, STEPS)
    ro["spec"]["disabled"] = True
    await kube.create(ROLLOUTS, ro, namespace)
    ro = await h.wait_phase(kube, namespace, "Disabled")
    assert ro["status"]["message"] == "Rollout is disabled"

    await h.set_image(kube, namespace, h.V2)
    await h.wait_settled(kube, namespace, 10)
    assert await h.pods_by_image(kube, namespace) == {h.V2: 10}
    cs_obj = await kube.get(CLONESETS, "web", namespace)
    assert IN_PROGRESSING not in (cs_obj["metadata"].get("annotations") or {})
    assert (await h.get_rollout(kube, namespace))["status"]["phase"] == "Disabled"
    assert await kube.get_or_none(BATCH_RELEASES, "web", namespace) is None
