"""Step Jump > V1->V2: Deployment, Canary, patch nextStepIndex to jump; V1->V2: Deployment,
Canary, remove 2-4 steps; V1->V2: Deployment, Partition, patch nextStepIndex to jump
(``KR:test/e2e/rollout_v1beta1_test.go:618``, ``:1598`` and ``:934``).

A canary-style release (``enableExtraWorkloadForCanary: true``) of 5 replicas with upstream's
``rollout_v1beta1_canary_base.yaml`` steps 20%, 40%, 60%, 80%, 100%. Upstream checks one pod per
batch (``rollouts.kruise.io/rollout-id`` = the Rollout's ``observedRolloutID``,
``rollouts.kruise.io/rollout-batch-id`` 1, 2, 3) among the canary Deployment's pods; without the
labels its checks retried for 30 s each, its 10 s pauses ran out meanwhile and the release completed
before the jump. Here every pause waits for approval (``pause: {}``), so the scenario does not
depend on time; the labels are what is checked.

Upstream rule (``canarystyle/control_plane.go`` ``EnsureBatchPodsReadyAndLabeled``,
``labelpatch/patcher.go``): the canary Deployment's pods at the update revision are labelled, each
batch up to the current one its increment of ``ceil(canaryReplicas x replicas)``; a jump back never
scales the canary down nor relabels a pod.
"""

from __future__ import annotations

from typing import Any

import pytest

from kruise.core.errors import KruiseError
from kruise.core.kube import KubeClient
from kruise.core.kube.resources import DEPLOYMENTS
from kruise.rollouts.resources import BATCH_RELEASES, ROLLOUTS
from tests.integration.rollouts.workload_support import (
    DEPLOYMENT_REF,
    V1,
    V2,
    approve,
    canary_deployments,
    canary_strategy,
    deployment,
    jump,
    replicaset_hash,
    rollout,
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

STEPS: list[dict[str, Any]] = [
    {"traffic": f"{p}%", "replicas": f"{p}%", "pause": {}} for p in (20, 40, 60, 80)
] + [{"traffic": "100%", "replicas": "100%", "pause": {"duration": 0}}]


async def at_step(kube: KubeClient, namespace: str, step: int, canary_pods: int) -> str:
    """Paused at ``step`` (next ``step + 1``) with ``canary_pods`` available canary pods and the
    stable Deployment untouched; returns the observed rollout-id."""
    ro = await wait_paused_at(kube, namespace, step)
    cs = ro["status"]["canaryStatus"]
    assert cs["nextStepIndex"] == step + 1

    async def canary_available() -> bool:
        [canary] = await canary_deployments(kube, namespace)
        return bool((canary.get("status") or {}).get("availableReplicas") == canary_pods)

    await eventually(canary_available, timeout=30, what=f"{canary_pods} available canary pods")
    stable = (await kube.get(DEPLOYMENTS, "web", namespace))["status"]
    assert (stable.get("updatedReplicas", 0), stable["availableReplicas"]) == (0, 5)
    return str(cs["observedRolloutID"])


async def test_deployment_canary_patch_next_step_index_to_jump(kube: KubeClient, namespace: str) -> None:
    ro = rollout(namespace, DEPLOYMENT_REF, canary_strategy(STEPS, enableExtraWorkloadForCanary=True))
    await start(kube, namespace, deployment(namespace), ro)
    await set_image(kube, namespace, "Deployment", V2)
    rollout_id = await at_step(kube, namespace, 1, 1)
    await wait_batch_labels(kube, namespace, rollout_id, {"1": 1})
    for step in (2, 3, 4):
        await approve(kube, namespace)
        assert await at_step(kube, namespace, step, step) == rollout_id
    await wait_batch_labels(kube, namespace, rollout_id, {"1": 1, "2": 1, "3": 1, "4": 1})

    # jump back to step 3: the canary keeps its 4 pods and their labels
    await jump(kube, namespace, 3)
    await at_step(kube, namespace, 3, 4)
    await wait_batch_labels(kube, namespace, rollout_id, {"1": 1, "2": 1, "3": 1, "4": 1})

    await approve(kube, namespace)
    await at_step(kube, namespace, 4, 4)
    await approve(kube, namespace)  # the last step (100%, no pause) finishes the release
    ro = await wait_phase(kube, namespace, "Healthy")
    assert {c["type"]: c for c in ro["status"]["conditions"]}["Succeeded"]["status"] == "True"
    await wait_pods(kube, namespace, {V2: 5})
    assert await canary_deployments(kube, namespace) == []


async def test_deployment_canary_remove_2_4_steps(kube: KubeClient, namespace: str) -> None:
    ro = rollout(namespace, DEPLOYMENT_REF, canary_strategy(STEPS, enableExtraWorkloadForCanary=True))
    await start(kube, namespace, deployment(namespace), ro)
    await set_image(kube, namespace, "Deployment", V2)
    rollout_id = await at_step(kube, namespace, 1, 1)

    await jump(kube, namespace, 3)  # from step 1: the canary grows to 60% at once
    assert await at_step(kube, namespace, 3, 3) == rollout_id
    await wait_batch_labels(kube, namespace, rollout_id, {"1": 1, "2": 1, "3": 1})
    await wait_pods(kube, namespace, {V1: 5, V2: 3})

    # the step count cannot change while progressing; the release stays where it is
    ro = await kube.get(ROLLOUTS, "web", namespace)
    assert (
        ro["status"]["canaryStatus"]["rolloutHash"]
        == ro["metadata"]["annotations"]["rollouts.kruise.io/hash"]
    )
    ro["spec"]["strategy"]["canary"]["steps"] = [{"traffic": "20%", "replicas": "20%", "pause": {}}]
    with pytest.raises(KruiseError):
        await kube.replace(ROLLOUTS, ro)
    await at_step(kube, namespace, 3, 3)


async def _batch_states(kube: KubeClient, namespace: str, since: str, batch: int) -> list[str]:
    """The BatchRelease's ``batchState`` values at ``currentBatch == batch`` in the events after
    resourceVersion ``since``, up to the first ``Ready``."""
    states: list[str] = []
    async for event in kube.watch(BATCH_RELEASES, namespace, resource_version=since, timeout_seconds=30):
        canary = (event.object.get("status") or {}).get("canaryStatus") or {}
        if canary.get("currentBatch") != batch or not canary.get("batchState"):
            continue
        if not states or states[-1] != canary["batchState"]:
            states.append(canary["batchState"])
        if canary["batchState"] == "Ready":
            break
    return states


async def test_deployment_partition_patch_next_step_index_to_jump(kube: KubeClient, namespace: str) -> None:
    """Upstream "Step Jump > V1->V2: Deployment, Partition, patch nextStepIndex to jump" (it failed
    at ``rollout_v1beta1_test.go:985``: ``canaryRevision`` was kube-controller-manager's
    ``pod-template-hash`` where the spec expects ``util.ComputeHash(&workload.Spec.Template, nil)``).
    At every step, also after jumping back, the canary revision is upstream's ``ComputeHash`` of
    the stored template and ``podTemplateHash`` the new ReplicaSet's label (the advanced Deployment
    controller names it by the same hash). Upstream's spec still fails later, at its jump
    (``:329``): it re-patches ``nextStepIndex`` every second while the step state reads
    ``StepPaused``, and our re-run of step 3 used to complete within that second; a re-entered
    batch now verifies as upstream's does (:mod:`kruise.rollouts.batchrelease.pacing`), which is
    asserted from the BatchRelease's watch events."""
    await start(
        kube, namespace, deployment(namespace), rollout(namespace, DEPLOYMENT_REF, canary_strategy(STEPS))
    )
    stable_hash = await replicaset_hash(kube, namespace, "web", V1)
    await set_image(kube, namespace, "Deployment", V2)

    async def check(step: int, updated: int) -> None:
        ro = await wait_paused_at(kube, namespace, step)
        cs = ro["status"]["canaryStatus"]
        revision = await upstream_revision(kube, namespace)
        new_hash = await replicaset_hash(kube, namespace, "web", V2)
        assert (cs["stableRevision"], cs["canaryRevision"], cs["podTemplateHash"]) == (
            stable_hash,
            revision,
            new_hash,
        )
        assert new_hash == revision
        assert cs["nextStepIndex"] == step + 1
        d = await kube.get(DEPLOYMENTS, "web", namespace)
        assert d["status"].get("updatedReplicas") == updated

    await check(1, 1)
    for step in (2, 3, 4):
        await approve(kube, namespace)
        await check(step, step)
    for step in (3, 2, 1):  # jumping back never scales the new ReplicaSet down
        since = (await kube.get(BATCH_RELEASES, "web", namespace))["metadata"]["resourceVersion"]
        await jump(kube, namespace, step)
        await check(step, 4)
        # the re-entered batch moved no pod, yet it verified before reporting Ready, as upstream's
        # executor (2 s per state): upstream's spec re-patches nextStepIndex every second while
        # the Rollout reads StepPaused and needs to see it leave that state
        states = await _batch_states(kube, namespace, since, batch=step - 1)
        assert states[-1:] == ["Ready"] and "Verifying" in states[:-1], states
