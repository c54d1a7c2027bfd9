"""Canary-style releases of a native Deployment (an extra canary Deployment) over an nginx Ingress.

Upstream scenarios (``KR:test/e2e/rollout_test.go`` "Deployment canary rollout with Ingress"):
"V1->V2: Percentage 20%,60% Succeeded" and "V1->V2: Percentage 20%, and rollback-v1", with
5 replicas and ``enableExtraWorkloadForCanary: true``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from kruise.core.kube import KubeClient
from kruise.core.kube.resources import DEPLOYMENTS, INGRESSES, SERVICES
from kruise.rollouts.resources import BATCH_RELEASES, ROLLOUTS
from tests.integration.rollouts.workload_support import (
    DEPLOYMENT_REF,
    NGINX,
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
    replicaset_hash,
    rollout,
    selector_hash,
    set_image,
    start,
    upstream_revision,
    wait_paused_at,
    wait_phase,
    wait_pods,
)
from tests.support.wait import eventually

pytestmark = pytest.mark.usefixtures("manager")

STEPS = [
    {"replicas": "20%", "traffic": "20%", "pause": {}},
    {"replicas": "60%", "traffic": "60%", "pause": {}},
    {"replicas": "100%", "traffic": "100%", "pause": {"duration": 0}},
]


async def test_deployment_v1_to_v2_percentage_20_60_succeeded(kube: KubeClient, namespace: str) -> None:
    ro = rollout(namespace, DEPLOYMENT_REF, canary_strategy(STEPS, enableExtraWorkloadForCanary=True))
    await start(kube, namespace, deployment(namespace), ro)
    stable_hash = await replicaset_hash(kube, namespace, "web", V1)
    await set_image(kube, namespace, "Deployment", V2)

    # step 1: the stable Deployment is held (paused), a canary Deployment runs 1 pod of v2
    ro = await wait_paused_at(kube, namespace, 1)
    stable = await kube.get(DEPLOYMENTS, "web", namespace)
    assert stable["spec"]["paused"] is True
    assert "rollouts.kruise.io/in-progressing" in stable["metadata"]["annotations"]
    [canary] = await canary_deployments(kube, namespace)
    assert canary["metadata"]["name"].startswith("web-")
    assert canary["metadata"]["finalizers"] == ["finalizer.rollouts.kruise.io/batch-release"]
    assert canary["metadata"]["ownerReferences"][0]["kind"] == "BatchRelease"
    assert canary["spec"]["replicas"] == 1
    await wait_pods(kube, namespace, {V1: 5, V2: 1})
    canary_hash = await replicaset_hash(kube, namespace, canary["metadata"]["name"], V2)
    cs = ro["status"]["canaryStatus"]
    assert (cs["stableRevision"], cs["canaryRevision"], cs["podTemplateHash"]) == (
        stable_hash,
        await upstream_revision(kube, namespace),
        canary_hash,
    )
    assert (cs["canaryReplicas"], cs["canaryReadyReplicas"]) == (1, 1)
    assert selector_hash(await kube.get(SERVICES, "web", namespace)) == stable_hash
    assert selector_hash(await kube.get(SERVICES, "web-canary", namespace)) == canary_hash
    canary_ingress = await kube.get(INGRESSES, "web-canary", namespace)
    assert canary_ingress["metadata"]["annotations"][f"{NGINX}canary"] == "true"
    assert canary_weight(canary_ingress) == "20"
    br = await kube.get(BATCH_RELEASES, "web", namespace)
    assert br["spec"]["releasePlan"]["rollingStyle"] == "Canary"

    # step 2: 3 canary pods, 60% of the traffic
    await approve(kube, namespace)
    await wait_paused_at(kube, namespace, 2)
    await wait_pods(kube, namespace, {V1: 5, V2: 3})
    assert canary_weight(await kube.get(INGRESSES, "web-canary", namespace)) == "60"

    # step 3 (100%) continues by itself; finalising resumes the stable Deployment
    await approve(kube, namespace)
    ro = await wait_phase(kube, namespace, "Healthy", timeout=60)
    assert conditions(ro)["Succeeded"]["status"] == "True"
    assert ro["status"]["canaryStatus"]["currentStepState"] == "Completed"
    await gone(kube, namespace)
    await wait_pods(kube, namespace, {V2: 5})
    stable = await kube.get(DEPLOYMENTS, "web", namespace)
    assert not stable["spec"].get("paused")
    assert "rollouts.kruise.io/in-progressing" not in (stable["metadata"].get("annotations") or {})
    assert "batchrelease.rollouts.kruise.io/control-info" not in (stable["metadata"].get("annotations") or {})
    assert selector_hash(await kube.get(SERVICES, "web", namespace)) is None
    assert await canary_deployments(kube, namespace) == []


async def test_deployment_v1_to_v2_percentage_20_and_rollback_v1(kube: KubeClient, namespace: str) -> None:
    ro = rollout(namespace, DEPLOYMENT_REF, canary_strategy(STEPS, enableExtraWorkloadForCanary=True))
    await start(kube, namespace, deployment(namespace), ro)
    await set_image(kube, namespace, "Deployment", V2)
    await wait_paused_at(kube, namespace, 1)
    await wait_pods(kube, namespace, {V1: 5, V2: 1})

    await set_image(kube, namespace, "Deployment", V1)  # the user reverts the template
    ro = await wait_phase(kube, namespace, "Healthy", timeout=60)
    assert conditions(ro)["Succeeded"]["status"] == "False"
    assert conditions(ro)["Progressing"]["reason"] == "Completed"
    await gone(kube, namespace)
    await wait_pods(kube, namespace, {V1: 5})
    assert await canary_deployments(kube, namespace) == []
    stable = await kube.get(DEPLOYMENTS, "web", namespace)
    assert not stable["spec"].get("paused")
    assert selector_hash(await kube.get(SERVICES, "web", namespace)) is None
    assert (await kube.get(ROLLOUTS, "web", namespace))["status"]["canaryStatus"]["canaryRevision"] == (
        await upstream_revision(kube, namespace)
    )


async def test_deployment_v1_to_v2_percentage_20_40_and_continuous_release_v3(
    kube: KubeClient, namespace: str
) -> None:
    steps = [{**STEPS[0]}, {"replicas": "40%", "traffic": "40%", "pause": {}}, STEPS[2]]
    ro = rollout(namespace, DEPLOYMENT_REF, canary_strategy(steps, enableExtraWorkloadForCanary=True))
    await start(kube, namespace, deployment(namespace), ro)
    await set_image(kube, namespace, "Deployment", V2)
    await wait_paused_at(kube, namespace, 1)
    await approve(kube, namespace)
    await wait_paused_at(kube, namespace, 2)
    await wait_pods(kube, namespace, {V1: 5, V2: 2})
    [v2_canary] = await canary_deployments(kube, namespace)

    # v3 while v2 is half-way: the release restarts from step 1 with a new canary Deployment
    await set_image(kube, namespace, "Deployment", V3)

    async def restarted() -> dict | None:
        ro = await kube.get(ROLLOUTS, "web", namespace)
        cs = ro["status"].get("canaryStatus") or {}
        canaries = await canary_deployments(kube, namespace)
        images = [d["spec"]["template"]["spec"]["containers"][0]["image"] for d in canaries]
        paused = (cs.get("currentStepIndex"), cs.get("currentStepState")) == (1, "StepPaused")
        return ro if paused and images == [V3] else None

    ro = await eventually(restarted, timeout=40, what="release restarted on v3")
    await wait_pods(kube, namespace, {V1: 5, V3: 1})
    assert await kube.get_or_none(DEPLOYMENTS, v2_canary["metadata"]["name"], namespace) is None
    v3_hash = await replicaset_hash(
        kube, namespace, (await canary_deployments(kube, namespace))[0]["metadata"]["name"], V3
    )
    assert ro["status"]["canaryStatus"]["canaryRevision"] == await upstream_revision(kube, namespace)
    assert selector_hash(await kube.get(SERVICES, "web-canary", namespace)) == v3_hash
    assert canary_weight(await kube.get(INGRESSES, "web-canary", namespace)) == "20"


async def test_deployment_v1_to_v2_percentage_20_40_60_80_90_and_replicas_3(
    kube: KubeClient, namespace: str
) -> None:
    """Upstream "Deployment canary rollout with Ingress > Deployment V1->V2: Percentage
    20%,40%,60%,80%,90%, and replicas=3" (``rollout_test.go:363``; it failed in its last line,
    ``WaitRolloutWorkloadGeneration`` at ``:290``): 3 replicas, a template carrying its own
    ``pod-template-hash`` label, and ``patchPodTemplateMetadata`` (the canary's pods are labelled
    and annotated ``pod: canary``, the stable ones ``pod: stable``). After completion the Rollout's
    ``canaryStatus.observedWorkloadGeneration`` is the Deployment's generation.

    Upstream rule (``calculateRolloutStatus``): on every pass, while the recorded canary revision is
    the workload's, ``observedWorkloadGeneration`` follows the workload's generation; the revision is
    ``ComputeHash`` of the Deployment's template whether or not a ReplicaSet runs it (the canary
    template differs from the stable one here)."""
    template = deployment(namespace, replicas=3)
    labels = template["spec"]["template"]["metadata"]["labels"]
    labels.update({"pod": "stable", "pod-template-hash": "abcdefg"})
    template["spec"]["template"]["metadata"]["annotations"] = {"pod": "stable"}
    steps = [{"replicas": f"{p}%", "traffic": f"{p}%", "pause": {}} for p in (20, 40, 60, 80, 90)]
    patch = {"labels": {"pod": "canary"}, "annotations": {"pod": "canary"}}
    strategy = canary_strategy(steps, enableExtraWorkloadForCanary=True, patchPodTemplateMetadata=patch)
    await start(kube, namespace, template, rollout(namespace, DEPLOYMENT_REF, strategy))
    await set_image(kube, namespace, "Deployment", V2)
    for step, canaries in ((1, 1), (2, 2), (3, 2), (4, 3), (5, 3)):
        ro = await wait_paused_at(kube, namespace, step)
        cs = ro["status"]["canaryStatus"]
        assert (cs["canaryReplicas"], cs["canaryReadyReplicas"]) == (canaries, canaries)
        assert (
            canary_weight(await kube.get(INGRESSES, "web-canary", namespace))
            == str(steps[step - 1]["traffic"])[:-1]
        )
        if step == 1:
            [canary] = await canary_deployments(kube, namespace)
            meta = canary["spec"]["template"]["metadata"]
            assert (meta["labels"]["pod"], meta["annotations"]["pod"]) == ("canary", "canary")
        await approve(kube, namespace)

    ro = await wait_phase(kube, namespace, "Healthy", timeout=60)
    assert conditions(ro)["Succeeded"]["status"] == "True"
    assert conditions(ro)["Progressing"]["reason"] == "Completed"
    await gone(kube, namespace)
    await wait_pods(kube, namespace, {V2: 3})
    stable = await kube.get(DEPLOYMENTS, "web", namespace)
    assert not stable["spec"].get("paused")
    assert selector_hash(await kube.get(SERVICES, "web", namespace)) is None

    async def generation_followed() -> bool:
        d = await kube.get(DEPLOYMENTS, "web", namespace)
        cs = (await kube.get(ROLLOUTS, "web", namespace))["status"]["canaryStatus"]
        return bool(cs["observedWorkloadGeneration"] == d["metadata"]["generation"])

    await eventually(generation_followed, timeout=30, what="observedWorkloadGeneration == the Deployment's")
    cs = (await kube.get(ROLLOUTS, "web", namespace))["status"]["canaryStatus"]
    assert cs["canaryRevision"] == await upstream_revision(kube, namespace)


async def test_the_workload_is_labelled_in_the_first_pass_that_finds_it(
    kube: KubeClient, namespace: str
) -> None:
    """The hold webhooks see only workloads labelled ``rollouts.kruise.io/workload-type``, so the
    label must land as early as it can: in the first pass that finds the workload, before the
    Rollout's own finalizer (upstream's "V1->V2: A/B testing, header & cookies" creates the
    Rollout, then the Deployment, and updates it as soon as its pods are Ready; on KWOK that is a
    fraction of a second, and a label written two passes later let the update roll natively).
    One etcd orders both objects' resourceVersions, so the order of the two writes is observable."""
    await kube.create(DEPLOYMENTS, deployment(namespace, 3), namespace)
    start = (await kube.list(ROLLOUTS, namespace))["metadata"]["resourceVersion"]
    steps = [{"replicas": 1, "pause": {}}]
    await kube.create(ROLLOUTS, rollout(namespace, DEPLOYMENT_REF, canary_strategy(steps)), namespace)
    await wait_phase(kube, namespace, "Healthy")
    labelled = await _first_rv(
        kube, DEPLOYMENTS, namespace, start, lambda o: bool(_labels(o).get(WORKLOAD_TYPE))
    )
    finalized = await _first_rv(
        kube, ROLLOUTS, namespace, start, lambda o: bool(o["metadata"].get("finalizers"))
    )
    assert labelled < finalized, (labelled, finalized)


WORKLOAD_TYPE = "rollouts.kruise.io/workload-type"


def _labels(obj: dict[str, Any]) -> dict[str, str]:
    return obj["metadata"].get("labels") or {}


async def _first_rv(
    kube: KubeClient, res: Any, namespace: str, since: str, seen: Callable[[dict[str, Any]], bool]
) -> int:
    """The resourceVersion of the first change after ``since`` where ``seen`` holds (a replayed watch)."""
    async for event in kube.watch(res, namespace, resource_version=since, timeout_seconds=5):
        if event.type in ("ADDED", "MODIFIED") and seen(event.object):
            return int(event.object["metadata"]["resourceVersion"])
    raise AssertionError(f"no {res} change matched after {since}")
