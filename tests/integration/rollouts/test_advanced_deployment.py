"""Partition-style releases of a native Deployment (the advanced Deployment controller) over an
nginx Ingress.

Upstream scenarios (``KR:test/e2e/rollout_test.go`` "Canary rollout with Ingress using advance
deployment"): "advanced deployment rolling with traffic case", "advanced deployment continuous
rolling case", "advanced deployment rollback case", "advanced deployment delete rollout case",
"advanced deployment scaling case", "advanced deployment plan changed case", with 5 replicas
(maxSurge 1, maxUnavailable 0) and no ``enableExtraWorkloadForCanary``: the Deployment keeps one
set of ReplicaSets, kube's controller is kept out (``paused``, ``Recreate``) and Kruise's own
ReplicaSet controller scales the new one up to the partition in
``rollouts.kruise.io/deployment-strategy``.
"""

from __future__ import annotations

import json

import pytest

from kruise.core.kube import KubeClient
from kruise.core.kube.resources import DEPLOYMENTS, INGRESSES, REPLICASETS, SERVICES
from kruise.rollouts.resources import BATCH_RELEASES, ROLLOUTS
from tests.integration.rollouts.workload_support import (
    DEPLOYMENT_REF,
    V1,
    V2,
    V3,
    approve,
    canary_deployments,
    canary_strategy,
    canary_weight,
    conditions,
    deployment,
    gone,
    pods_by_image,
    replicaset_hash,
    rollout,
    selector_hash,
    set_image,
    start,
    upstream_revision,
    wait_batch_labels,
    wait_paused_at,
    wait_phase,
    wait_pods,
)
from tests.support.wait import eventually

pytestmark = pytest.mark.usefixtures("manager")

STRATEGY = "rollouts.kruise.io/deployment-strategy"
EXTRA_STATUS = "rollouts.kruise.io/deployment-extra-status"
STEPS = [
    {"replicas": "20%", "traffic": "20%", "pause": {}},
    {"replicas": "60%", "traffic": "60%", "pause": {}},
    {"replicas": "100%", "traffic": "100%", "pause": {"duration": 0}},
]


async def _deployment(kube: KubeClient, namespace: str) -> dict:
    return await kube.get(DEPLOYMENTS, "web", namespace)


def _annotations(d: dict) -> dict:
    return d["metadata"].get("annotations") or {}


async def _wait_handed_back(kube: KubeClient, namespace: str) -> dict:
    """Unpaused, ``RollingUpdate`` with the user's fenceposts, no release annotations or labels."""

    async def probe() -> dict | None:
        d = await _deployment(kube, namespace)
        annotations, labels = _annotations(d), d["metadata"].get("labels") or {}
        free = (
            not d["spec"].get("paused")
            and d["spec"]["strategy"]
            == {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1, "maxUnavailable": 0}}
            and not {STRATEGY, EXTRA_STATUS, "batchrelease.rollouts.kruise.io/control-info"}
            & set(annotations)
            and "rollouts.kruise.io/in-progressing" not in annotations
            and not {
                "rollouts.kruise.io/stable-revision",
                "rollouts.kruise.io/controlled-by-advanced-deployment-controller",
            }
            & set(labels)
        )
        return d if free else None

    return await eventually(probe, timeout=40, what="Deployment handed back to kube's controller")


async def _owned_replicasets(kube: KubeClient, namespace: str) -> list[dict]:
    d = await _deployment(kube, namespace)
    return [
        rs
        for rs in (await kube.list(REPLICASETS, namespace))["items"]
        if any(r.get("uid") == d["metadata"]["uid"] for r in rs["metadata"].get("ownerReferences") or [])
    ]


async def test_advanced_deployment_rolling_with_traffic_case(kube: KubeClient, namespace: str) -> None:
    """Upstream "advanced deployment rolling with traffic case" (``rollout_v1beta1_test.go:4551``; at
    ``:4622`` ``canaryRevision`` is ``util.ComputeHash`` of the stored template, ``podTemplateHash``
    the new ReplicaSet's label)."""
    ro = rollout(namespace, DEPLOYMENT_REF, canary_strategy(STEPS))
    await start(kube, namespace, deployment(namespace), ro)
    stable_hash = await replicaset_hash(kube, namespace, "web", V1)
    await set_image(kube, namespace, "Deployment", V2)

    # step 1: kube's controller is kept out, ours runs 1 of 5 pods on v2 in the same Deployment
    ro = await wait_paused_at(kube, namespace, 1)
    await wait_pods(kube, namespace, {V1: 4, V2: 1})
    d = await _deployment(kube, namespace)
    assert d["spec"]["paused"] is True
    assert d["spec"]["strategy"] == {"type": "Recreate"}
    assert d["metadata"]["labels"]["rollouts.kruise.io/stable-revision"] == stable_hash
    assert (
        d["metadata"]["labels"]["rollouts.kruise.io/controlled-by-advanced-deployment-controller"] == "true"
    )
    strategy = json.loads(_annotations(d)[STRATEGY])
    assert strategy == {
        "rollingStyle": "Partition",
        "rollingUpdate": {"maxUnavailable": 0, "maxSurge": 1},
        "partition": "20%",
    }
    assert json.loads(_annotations(d)[EXTRA_STATUS]) == {
        "updatedReadyReplicas": 1,
        "expectedUpdatedReplicas": 1,
    }
    assert (d["status"]["replicas"], d["status"]["updatedReplicas"], d["status"]["readyReplicas"]) == (
        5,
        1,
        5,
    )
    assert await canary_deployments(kube, namespace) == []
    new_hash = await replicaset_hash(kube, namespace, "web", V2)
    cs = ro["status"]["canaryStatus"]
    assert (cs["stableRevision"], cs["canaryRevision"], cs["podTemplateHash"]) == (
        stable_hash,
        await upstream_revision(kube, namespace),
        new_hash,
    )
    assert new_hash == cs["canaryRevision"], "the advanced controller names its ReplicaSet by ComputeHash"
    assert (cs["canaryReplicas"], cs["canaryReadyReplicas"]) == (1, 1)
    assert selector_hash(await kube.get(SERVICES, "web", namespace)) == stable_hash
    assert selector_hash(await kube.get(SERVICES, "web-canary", namespace)) == new_hash
    assert canary_weight(await kube.get(INGRESSES, "web-canary", namespace)) == "20"
    br = await kube.get(BATCH_RELEASES, "web", namespace)
    assert br["spec"]["releasePlan"]["rollingStyle"] == "Partition"
    assert (br["status"]["stableRevision"], br["status"]["updateRevision"]) == (stable_hash, new_hash)
    # the partition control plane labels the Deployment's new pods as any kind's (PatchPodBatchLabel)
    rollout_id = cs["observedRolloutID"]
    await wait_batch_labels(kube, namespace, rollout_id, {"1": 1})

    # step 2: 60% -> 3 new pods, 2 old
    await approve(kube, namespace)
    await wait_paused_at(kube, namespace, 2)
    await wait_pods(kube, namespace, {V1: 2, V2: 3})
    assert canary_weight(await kube.get(INGRESSES, "web-canary", namespace)) == "60"
    await wait_batch_labels(kube, namespace, rollout_id, {"1": 1, "2": 2})

    # step 3 (100%) continues by itself; finalising hands the Deployment back
    await approve(kube, namespace)
    ro = await wait_phase(kube, namespace, "Healthy", timeout=60)
    assert conditions(ro)["Succeeded"]["status"] == "True"
    await gone(kube, namespace)
    await wait_pods(kube, namespace, {V2: 5})
    await _wait_handed_back(kube, namespace)
    assert selector_hash(await kube.get(SERVICES, "web", namespace)) is None
    assert {rs["spec"]["replicas"] for rs in await _owned_replicasets(kube, namespace)} == {0, 5}


async def test_advanced_deployment_continuous_rolling_case(kube: KubeClient, namespace: str) -> None:
    ro = rollout(namespace, DEPLOYMENT_REF, canary_strategy(STEPS))
    await start(kube, namespace, deployment(namespace), ro)
    await set_image(kube, namespace, "Deployment", V2)
    await wait_paused_at(kube, namespace, 1)
    await approve(kube, namespace)
    await wait_paused_at(kube, namespace, 2)
    await wait_pods(kube, namespace, {V1: 2, V2: 3})

    # v3 while v2 is more than half-way: the release restarts from step 1 on v3
    await set_image(kube, namespace, "Deployment", V3)

    async def restarted() -> dict | None:
        ro = await kube.get(ROLLOUTS, "web", namespace)
        cs = ro["status"].get("canaryStatus") or {}
        paused = (cs.get("currentStepIndex"), cs.get("currentStepState")) == (1, "StepPaused")
        pods = await pods_by_image(kube, namespace)
        return ro if paused and pods.get(V3) == 1 else None

    ro = await eventually(restarted, timeout=60, what="release restarted on v3")
    v3_hash = await replicaset_hash(kube, namespace, "web", V3)
    assert (
        ro["status"]["canaryStatus"]["canaryRevision"] == await upstream_revision(kube, namespace) == v3_hash
    )
    assert selector_hash(await kube.get(SERVICES, "web-canary", namespace)) == v3_hash
    strategy = json.loads(_annotations(await _deployment(kube, namespace))[STRATEGY])
    assert strategy["partition"] == "20%" and not strategy.get("paused")

    await approve(kube, namespace)
    await wait_paused_at(kube, namespace, 2)
    await approve(kube, namespace)
    ro = await wait_phase(kube, namespace, "Healthy", timeout=60)
    assert conditions(ro)["Succeeded"]["status"] == "True"
    await wait_pods(kube, namespace, {V3: 5})
    await _wait_handed_back(kube, namespace)


async def test_advanced_deployment_rollback_case(kube: KubeClient, namespace: str) -> None:
    ro = rollout(namespace, DEPLOYMENT_REF, canary_strategy(STEPS))
    await start(kube, namespace, deployment(namespace), ro)
    await set_image(kube, namespace, "Deployment", V2)
    await wait_paused_at(kube, namespace, 1)
    await wait_pods(kube, namespace, {V1: 4, V2: 1})

    await set_image(kube, namespace, "Deployment", V1)  # the user reverts the template
    ro = await wait_phase(kube, namespace, "Healthy", timeout=60)
    assert conditions(ro)["Succeeded"]["status"] == "False"
    await gone(kube, namespace)
    await wait_pods(kube, namespace, {V1: 5})
    await _wait_handed_back(kube, namespace)
    assert selector_hash(await kube.get(SERVICES, "web", namespace)) is None


async def test_advanced_deployment_delete_rollout_case(kube: KubeClient, namespace: str) -> None:
    ro = rollout(namespace, DEPLOYMENT_REF, canary_strategy(STEPS))
    await start(kube, namespace, deployment(namespace), ro)
    await set_image(kube, namespace, "Deployment", V2)
    await wait_paused_at(kube, namespace, 1)
    await wait_pods(kube, namespace, {V1: 4, V2: 1})

    await kube.delete(ROLLOUTS, "web", namespace)
    await eventually(lambda: _absent(kube, namespace), timeout=40, what="Rollout and BatchRelease deleted")
    await _wait_handed_back(kube, namespace)
    await wait_pods(kube, namespace, {V2: 5})  # kube's controller finishes the rollout natively
    assert selector_hash(await kube.get(SERVICES, "web", namespace)) is None
    assert await kube.get_or_none(SERVICES, "web-canary", namespace) is None


async def _absent(kube: KubeClient, namespace: str) -> bool:
    return (
        await kube.get_or_none(ROLLOUTS, "web", namespace) is None
        and await kube.get_or_none(BATCH_RELEASES, "web", namespace) is None
    )


async def test_advanced_deployment_scaling_case(kube: KubeClient, namespace: str) -> None:
    """Upstream "advanced deployment scaling case" (``rollout_v1beta1_test.go:4948``; it failed at
    ``:5026``: 2 updated pods after scaling back to 5 where upstream leaves 1).

    Upstream rule (``syncDeployment``): an active ReplicaSet sized for another ``spec.replicas``
    (``isScalingEvent``) makes the round a scaling event, handled by ``sync`` like a paused
    strategy: the change is shared in proportion to the ReplicaSets' sizes (``GetProportion``,
    toward ``replicas + maxSurge``), not by the partition. At 20%: 5 -> 10 gives 8 old + 2 new,
    10 -> 5 gives 4 + 1 (2 x 6/11 rounds to 1)."""
    ro = rollout(namespace, DEPLOYMENT_REF, canary_strategy(STEPS))
    await start(kube, namespace, deployment(namespace), ro)
    await set_image(kube, namespace, "Deployment", V2)
    await wait_paused_at(kube, namespace, 1)
    await wait_pods(kube, namespace, {V1: 4, V2: 1})

    async def canary_ready(count: int) -> bool:
        ro = await kube.get(ROLLOUTS, "web", namespace)
        return bool(ro["status"]["canaryStatus"].get("canaryReadyReplicas") == count)

    # scale up mid-step: 20% of 10 is 2 new pods, the old ReplicaSet grows to the rest
    await kube.patch(DEPLOYMENTS, "web", {"spec": {"replicas": 10}}, namespace, patch_type="merge")
    await wait_pods(kube, namespace, {V1: 8, V2: 2})
    await eventually(lambda: canary_ready(2), timeout=30, what="canaryReadyReplicas 2")
    await wait_paused_at(kube, namespace, 1)
    d = await _deployment(kube, namespace)
    assert json.loads(_annotations(d)[EXTRA_STATUS])["expectedUpdatedReplicas"] == 2

    # and back to 5: shared in proportion, 1 new pod stays (20% of 5)
    await kube.patch(DEPLOYMENTS, "web", {"spec": {"replicas": 5}}, namespace, patch_type="merge")
    await wait_pods(kube, namespace, {V1: 4, V2: 1})
    await eventually(lambda: canary_ready(1), timeout=30, what="canaryReadyReplicas 1")

    await approve(kube, namespace)
    await wait_paused_at(kube, namespace, 2)
    await wait_pods(kube, namespace, {V1: 2, V2: 3})
    await approve(kube, namespace)
    ro = await wait_phase(kube, namespace, "Healthy", timeout=60)
    assert conditions(ro)["Succeeded"]["status"] == "True"
    await wait_pods(kube, namespace, {V2: 5})
    await _wait_handed_back(kube, namespace)


async def test_advanced_deployment_plan_changed_case(kube: KubeClient, namespace: str) -> None:
    """Upstream "advanced deployment plan changed case" (``rollout_v1beta1_test.go:5035``; at
    ``:5092`` ``canaryRevision`` is ``util.ComputeHash`` of the stored template and
    ``podTemplateHash`` the new ReplicaSet's label)."""
    ro = rollout(namespace, DEPLOYMENT_REF, canary_strategy(STEPS))
    await start(kube, namespace, deployment(namespace), ro)
    await set_image(kube, namespace, "Deployment", V2)
    await wait_paused_at(kube, namespace, 1)
    await approve(kube, namespace)
    await wait_paused_at(kube, namespace, 2)
    await wait_pods(kube, namespace, {V1: 2, V2: 3})

    # step 2 now asks for 80%: the Rollout re-runs it and the partition moves up to 4 pods
    current = await kube.get(ROLLOUTS, "web", namespace)
    steps = current["spec"]["strategy"]["canary"]["steps"]
    steps[1] = {**steps[1], "replicas": "80%", "traffic": "80%"}
    await kube.replace(ROLLOUTS, current)
    await wait_pods(kube, namespace, {V1: 1, V2: 4})
    cs = (await wait_paused_at(kube, namespace, 2))["status"]["canaryStatus"]
    new_hash = await replicaset_hash(kube, namespace, "web", V2)
    assert (cs["canaryRevision"], cs["podTemplateHash"]) == (
        await upstream_revision(kube, namespace),
        new_hash,
    )
    assert canary_weight(await kube.get(INGRESSES, "web-canary", namespace)) == "80"
    strategy = json.loads(_annotations(await _deployment(kube, namespace))[STRATEGY])
    assert strategy["partition"] == "80%"

    await approve(kube, namespace)
    ro = await wait_phase(kube, namespace, "Healthy", timeout=60)
    assert conditions(ro)["Succeeded"]["status"] == "True"
    await wait_pods(kube, namespace, {V2: 5})
    await _wait_handed_back(kube, namespace)
