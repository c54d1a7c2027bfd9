"""Disabled rollout tests > Rollout status tests (the workload part): a Rollout whose workload
does not exist yet, and a Rollout created next to a workload that already settled.

- no workload: phase ``Initial``, message ``Workload Not Found`` (upstream resets the status
  to just that); once the CloneSet appears the Rollout becomes Healthy and steers its first
  release;
- settled workload: Healthy and, for PaaS platforms that check
  ``observedRolloutID``/``currentStepState``, a status that reads like a release that finished:
  ``Completed`` at the last step (``calculateRolloutStatus``).
"""

from __future__ import annotations

import pytest

from kruise.core.kube import KubeClient
from kruise.rollouts.resources import ROLLOUTS
from tests.integration.rollouts import helpers as h

pytestmark = pytest.mark.usefixtures("manager")

STEPS = [{"replicas": 2, "pause": {}}, {"replicas": "100%"}]


async def test_workload_not_found_then_created(kube: KubeClient, namespace: str) -> None:
    await kube.create(ROLLOUTS, h.rollout(namespace, STEPS), namespace)
    ro = await h.wait_phase(kube, namespace, "Initial")
    assert ro["status"]["message"] == "Workload Not Found"
    assert not ro["status"].get("canaryStatus")

    await h.create_web(kube, namespace)
    ro = await h.wait_phase(kube, namespace, "Healthy")
    stable_rev, _ = await h.revisions(kube, namespace)
    await h.set_image(kube, namespace, h.V2)
    ro = await h.wait_paused_at(kube, namespace, 1)
    assert h.canary_status(ro)["stableRevision"] == stable_rev
    assert await h.pods_by_image(kube, namespace) == {h.V1: 8, h.V2: 2}
    await h.approve(kube, namespace)
    ro = await h.wait_completed(kube, namespace)
    assert h.condition(ro, "Succeeded")["status"] == "True"
    await h.wait_pods(kube, namespace, {h.V2: 10})


async def test_rollout_created_on_a_settled_workload_reads_completed(
    kube: KubeClient, namespace: str
) -> None:
    cs_obj = await h.create_web(kube, namespace)
    await kube.create(ROLLOUTS, h.rollout(namespace, STEPS), namespace)

    async def synthesised() -> dict[str, object] | None:
        got = await h.get_rollout(kube, namespace)
        return got if h.canary_status(got).get("currentStepState") == "Completed" else None

    from tests.support.wait import eventually

    ro = await eventually(synthesised, timeout=30, interval=0.3, what="Completed at the last step")
    assert ro["status"]["phase"] == "Healthy"
    assert ro["status"]["message"] == "workload deployment is completed"
    cs = h.canary_status(ro)
    stable_rev, canary_rev = await h.revisions(kube, namespace)
    assert cs["currentStepIndex"] == 2 and cs["nextStepIndex"] == -1
    assert cs["stableRevision"] == stable_rev and cs["canaryRevision"] == canary_rev
    assert cs["podTemplateHash"] == canary_rev
    assert cs["observedWorkloadGeneration"] == cs_obj["metadata"]["generation"]
    assert cs["observedRolloutID"] == canary_rev  # no rollout-id label: the canary revision
    assert (ro["status"]["currentStepIndex"], ro["status"]["currentStepState"]) == (2, "Completed")
    assert await h.pods_by_image(kube, namespace) == {h.V1: 10}
