"""A held abort of a Deployment release (``kruise rollout abort``): the pods go back to the stable
revision as a CloneSet's do (issue 23 item 5), traffic first, the new template kept.

- partition style (the advanced Deployment controller): the strategy's partition goes to 0 and the
  new ReplicaSet to 0 pods; the stable ReplicaSet grows back to every replica;
- canary style: the canary Deployment goes with the deleted BatchRelease; the stable Deployment
  never left the stable pods.

Then ``kruise rollout retry`` starts the release over at step 1.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from kruise.core.kube import KubeClient
from kruise.core.kube.resources import DEPLOYMENTS
from kruise.rollouts.resources import BATCH_RELEASES
from tests.integration.rollouts import helpers as h
from tests.integration.rollouts.workload_support import (
    DEPLOYMENT_REF,
    V1,
    V2,
    canary_deployments,
    canary_strategy,
    deployment,
    rollout,
    set_image,
    start,
    wait_paused_at,
    wait_pods,
)
from tests.support.cluster import TestCluster
from tests.support.wait import eventually

pytestmark = pytest.mark.usefixtures("manager")

JSON = dict[str, Any]
STEPS = [
    {"replicas": "40%", "traffic": "40%", "pause": {}},
    {"replicas": "100%", "traffic": "100%", "pause": {"duration": 0}},
]


async def abort_and_hold(kube: KubeClient, namespace: str, cluster: TestCluster) -> JSON:
    aborted = h.kruise("rollout", "abort", "rollout/web", "-n", namespace, cluster=cluster)
    assert aborted.returncode == 0, aborted.stdout + aborted.stderr

    async def held() -> JSON | None:
        ro = await h.get_rollout(kube, namespace)
        return ro if h.canary_status(ro).get("finalisingStep") == "Held" else None

    ro = await eventually(held, timeout=90, interval=0.5, what="the abort held")
    assert h.condition(ro, "Aborted")["reason"] == "AbortedByUser"
    assert await kube.get_or_none(BATCH_RELEASES, "web", namespace) is None
    return ro


async def template_image(kube: KubeClient, namespace: str) -> str:
    d = await kube.get(DEPLOYMENTS, "web", namespace)
    return str(d["spec"]["template"]["spec"]["containers"][0]["image"])


async def retry_at_step_one(kube: KubeClient, namespace: str, cluster: TestCluster, canary: int) -> None:
    retried = h.kruise("rollout", "retry", "rollout/web", "-n", namespace, cluster=cluster)
    assert retried.returncode == 0, retried.stdout + retried.stderr
    await wait_paused_at(kube, namespace, 1, timeout=90)
    await wait_pods(kube, namespace, {V1: 5 if canary else 3, V2: 2}, timeout=60)


async def test_an_aborted_partition_style_deployment_goes_back_to_stable(
    kube: KubeClient, namespace: str, cluster: TestCluster
) -> None:
    ro = rollout(namespace, DEPLOYMENT_REF, canary_strategy(STEPS))
    await start(kube, namespace, deployment(namespace), ro)
    await set_image(kube, namespace, "Deployment", V2)
    await wait_paused_at(kube, namespace, 1)
    await wait_pods(kube, namespace, {V1: 3, V2: 2})

    await abort_and_hold(kube, namespace, cluster)
    await wait_pods(kube, namespace, {V1: 5}, timeout=60)
    assert await template_image(kube, namespace) == V2, "the new template is held"
    d = await kube.get(DEPLOYMENTS, "web", namespace)
    strategy = json.loads(d["metadata"]["annotations"]["rollouts.kruise.io/deployment-strategy"])
    assert strategy["partition"] == 0 and not strategy.get("paused")

    async def settled() -> bool:
        st = (await kube.get(DEPLOYMENTS, "web", namespace)).get("status") or {}
        return (st.get("replicas"), st.get("availableReplicas"), st.get("updatedReplicas", 0)) == (5, 5, 0)

    await eventually(settled, timeout=30, what="5 available stable pods, none updated")
    await retry_at_step_one(kube, namespace, cluster, canary=0)


async def test_an_aborted_canary_style_deployment_goes_back_to_stable(
    kube: KubeClient, namespace: str, cluster: TestCluster
) -> None:
    ro = rollout(namespace, DEPLOYMENT_REF, canary_strategy(STEPS, enableExtraWorkloadForCanary=True))
    await start(kube, namespace, deployment(namespace), ro)
    await set_image(kube, namespace, "Deployment", V2)
    await wait_paused_at(kube, namespace, 1)
    await wait_pods(kube, namespace, {V1: 5, V2: 2})

    await abort_and_hold(kube, namespace, cluster)
    assert await canary_deployments(kube, namespace) == []
    await wait_pods(kube, namespace, {V1: 5}, timeout=60)
    assert await template_image(kube, namespace) == V2, "the new template is held"
    assert (await kube.get(DEPLOYMENTS, "web", namespace))["spec"]["paused"] is True
    await retry_at_step_one(kube, namespace, cluster, canary=1)
