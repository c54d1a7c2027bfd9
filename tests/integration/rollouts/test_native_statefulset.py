"""StatefulSet canary rollout with Ingress > Native StatefulSet rollout canary with Ingress
(``KR:test/e2e/rollout_v1beta1_test.go``), plus what issue 13 adds to that group: deleting the
Rollout and scaling mid-release, ``failureThreshold`` and rolling back in batches. Its four
upstream cases are also "Advanced StatefulSet rollout canary with Ingress" (``[advanced]``: the
same StatefulSet as ``apps.kruise.io/v1beta1``, kruise's controller, upstream's defaults).

A native ``apps/v1`` StatefulSet ``web`` of 5 pods (kube-controller-manager's statefulset
controller; KWOK makes the pods Ready) behind a headless Service, the Service ``web`` and an nginx
Ingress. The hold webhook sets ``updateStrategy.rollingUpdate.partition: 32767``; each step lowers
the partition, so the highest ordinals run the new revision (``ordinals(v1, v2)``); the canary
Service ``web-canary`` selects ``controller-revision-hash: <status.updateRevision>`` and the stable
Service is pinned to ``<status.currentRevision>``; finalising clears the partition (the API server
defaults it to 0) and restores every Service and the Ingress.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from kruise.core.kube import KubeClient
from kruise.core.kube.resources import PODS, SERVICES
from kruise.rollouts.resources import BATCH_RELEASES
from kruise.traffic.resources import INGRESSES
from tests.integration.rollouts import helpers as h
from tests.integration.rollouts import statefulset_support as s
from tests.integration.rollouts.statefulset_support import V1, V2, V3, ordinals
from tests.support.podready import set_gate
from tests.support.wait import eventually

V2_FAILED = "registry.example.com/shop/web:failed"
"""A broken image by the KWOK stages' rule (tag ``failed``, as upstream's ``echoserver:failed``)."""

pytestmark = pytest.mark.usefixtures("manager")

IN_PROGRESSING = "rollouts.kruise.io/in-progressing"
CONTROL = "batchrelease.rollouts.kruise.io/control-info"
TRAFFIC_20_60_100: list[dict[str, Any]] = [
    {"replicas": "20%", "traffic": "20%", "pause": {}},
    {"replicas": "60%", "pause": {}},
    {"replicas": "100%", "pause": {}},
]
TRAFFIC_20_40_100: list[dict[str, Any]] = [
    {"replicas": "20%", "traffic": "20%", "pause": {}},
    {"replicas": "40%", "pause": {}},
    {"replicas": "100%", "pause": {}},
]
KINDS = pytest.mark.parametrize("kind", [s.NATIVE, s.ADVANCED], ids=str)
"""Upstream's four cases run for both kinds."""


async def assert_restored(
    kube: KubeClient, namespace: str, image: str, revision: str, *, kind: s.Kind = s.NATIVE
) -> dict[str, Any]:
    """Every pod on ``image`` at ``revision``, the StatefulSet and the traffic handed back."""
    replicas = (await s.get(kube, namespace, kind=kind))["spec"]["replicas"]
    sts = await s.wait_settled(kube, namespace, replicas, kind=kind)
    await s.wait_ordinals(kube, namespace, dict.fromkeys(range(replicas), image))
    assert sts["status"]["currentRevision"] == sts["status"]["updateRevision"] == revision
    assert s.partition(sts) in (None, 0)
    annotations = sts["metadata"].get("annotations") or {}
    assert IN_PROGRESSING not in annotations and CONTROL not in annotations
    assert await kube.get_or_none(INGRESSES, "web-canary", namespace) is None
    assert await kube.get_or_none(SERVICES, "web-canary", namespace) is None
    assert await s.selector(kube, namespace) == {"app": "web"}
    assert await kube.get_or_none(BATCH_RELEASES, "web", namespace) is None
    return sts


async def wait_generation_followed(kube: KubeClient, namespace: str, *, kind: s.Kind = s.NATIVE) -> None:
    """``WaitRolloutWorkloadGeneration``: the sub-status follows the workload's generation."""

    async def probe() -> bool:
        sts = await s.get(kube, namespace, kind=kind)
        got = h.canary_status(await h.get_rollout(kube, namespace))
        return bool(got.get("observedWorkloadGeneration") == sts["metadata"]["generation"])

    await eventually(probe, timeout=20, interval=0.3, what="observedWorkloadGeneration")


async def scale(kube: KubeClient, namespace: str, replicas: int, *, kind: s.Kind = s.NATIVE) -> None:
    await kube.patch(kind.resource, "web", {"spec": {"replicas": replicas}}, namespace, patch_type="merge")


@KINDS
async def test_v1_v2_percentage_20_60_succeeded_with_canary_service_check(
    kube: KubeClient, namespace: str, kind: s.Kind
) -> None:
    ro = await s.start(kube, namespace, s.rollout(namespace, TRAFFIC_20_60_100, kind=kind), kind=kind)
    sts = await s.get(kube, namespace, kind=kind)
    stable = h.canary_status(ro)["stableRevision"]
    assert stable == sts["status"]["currentRevision"]
    assert (sts["metadata"].get("labels") or {}).get("rollouts.kruise.io/workload-type") == "statefulset"

    await s.set_image(kube, namespace, V2, kind=kind)
    ro = await h.wait_paused_at(kube, namespace, 1)
    sts = await s.get(kube, namespace, kind=kind)
    assert (sts["status"]["updatedReplicas"], sts["status"]["readyReplicas"], s.partition(sts)) == (1, 5, 4)
    await s.wait_ordinals(kube, namespace, ordinals(4, 1))
    canary_svc = await kube.get(SERVICES, "web-canary", namespace)
    stable_svc = await kube.get(SERVICES, "web", namespace)
    assert canary_svc["metadata"].get("labels") == stable_svc["metadata"].get("labels")
    assert canary_svc["metadata"].get("annotations") == stable_svc["metadata"].get("annotations")
    cs = h.canary_status(ro)
    canary = sts["status"]["updateRevision"]
    assert (cs["stableRevision"], cs["canaryRevision"], cs["podTemplateHash"]) == (stable, canary, canary)
    assert cs["currentStepIndex"] == 1
    assert cs["rolloutHash"] == ro["metadata"]["annotations"]["rollouts.kruise.io/hash"]
    assert await s.selector(kube, namespace) == {"app": "web", "controller-revision-hash": stable}
    assert await s.selector(kube, namespace, "web-canary") == {
        "app": "web",
        "controller-revision-hash": canary,
    }
    ingress = await kube.get(INGRESSES, "web-canary", namespace)
    assert h.canary_ingress_annotations(ingress) == {"canary": "true", "canary-weight": "20"}

    await h.approve(kube, namespace)
    await h.wait_paused_at(kube, namespace, 2)
    sts = await s.get(kube, namespace, kind=kind)
    assert (sts["status"]["updatedReplicas"], sts["status"]["readyReplicas"], s.partition(sts)) == (3, 5, 2)
    await s.wait_ordinals(kube, namespace, ordinals(2, 3))
    assert await kube.get_or_none(INGRESSES, "web-canary", namespace) is None  # a step without traffic
    assert await s.selector(kube, namespace) == {"app": "web"}

    await h.approve(kube, namespace)
    ro = await h.wait_completed(kube, namespace)
    assert h.condition(ro, "Succeeded")["status"] == "True"
    assert h.condition(ro, "Progressing")["status"] == "False"
    await assert_restored(kube, namespace, V2, canary, kind=kind)
    await wait_generation_followed(kube, namespace, kind=kind)

    await scale(kube, namespace, 6, kind=kind)  # a scale after the release is no release
    await s.wait_settled(kube, namespace, 6, kind=kind)
    await wait_generation_followed(kube, namespace, kind=kind)
    assert (await h.get_rollout(kube, namespace))["status"]["phase"] == "Healthy"


@KINDS
async def test_v1_v2_percentage_20_40_and_continuous_release_v3(
    kube: KubeClient, namespace: str, kind: s.Kind
) -> None:
    ro = await s.start(kube, namespace, s.rollout(namespace, TRAFFIC_20_40_100, kind=kind), kind=kind)
    stable = h.canary_status(ro)["stableRevision"]
    await s.set_image(kube, namespace, V2, kind=kind)
    ro = await h.wait_paused_at(kube, namespace, 1)
    v2 = h.canary_status(ro)["podTemplateHash"]
    await h.approve(kube, namespace)
    await h.wait_paused_at(kube, namespace, 2)
    await s.wait_ordinals(kube, namespace, ordinals(3, 2))

    await s.set_image(kube, namespace, V3, kind=kind)  # v1 -> v2 -> v3: the release starts over

    ro = await h.wait_restarted(kube, namespace, v2, timeout=90)
    sts = await s.get(kube, namespace, kind=kind)
    v3 = sts["status"]["updateRevision"]
    cs = h.canary_status(ro)
    assert cs["stableRevision"] == stable and cs["canaryRevision"] == cs["podTemplateHash"] == v3 != v2
    # step 1's pod runs v3 (ordinal 4), ordinal 3 still v2: as for a CloneSet
    # (test_continuous_release.py), the old BatchRelease moved nothing once v3 arrived
    by_ordinal = await s.pods_by_ordinal(kube, namespace)
    assert (by_ordinal[4], by_ordinal[3]) == (V3, V2) and {by_ordinal[i] for i in range(3)} == {V1}
    assert cs["canaryReplicas"] == sum(1 for image in by_ordinal.values() if image == V3)
    assert await s.selector(kube, namespace) == {"app": "web", "controller-revision-hash": stable}
    assert await s.selector(kube, namespace, "web-canary") == {"app": "web", "controller-revision-hash": v3}
    ingress = await kube.get(INGRESSES, "web-canary", namespace)
    assert h.canary_ingress_annotations(ingress)["canary-weight"] == "20"

    await h.approve(kube, namespace)
    await h.wait_paused_at(kube, namespace, 2)
    await s.wait_ordinals(kube, namespace, {0: V1, 1: V1, 2: V1, 3: V3, 4: V3})
    await h.approve(kube, namespace)
    ro = await h.wait_completed(kube, namespace)
    assert h.condition(ro, "Succeeded")["status"] == "True"
    await assert_restored(kube, namespace, V3, v3, kind=kind)
    await wait_generation_followed(kube, namespace, kind=kind)


@KINDS
async def test_v1_v2_percentage_20_and_rollback_v1(kube: KubeClient, namespace: str, kind: s.Kind) -> None:
    """Upstream e2e "StatefulSet canary rollout with Ingress > Native StatefulSet rollout canary
    with Ingress > V1->V2: Percentage, 20%, and rollback(v1)" (``KR:test/e2e/
    rollout_v1beta1_test.go:5854``) and its Advanced StatefulSet twin (``:6323``).

    v2 is a broken image (tag ``failed``, as upstream's ``echoserver:failed``; the KWOK stage
    ``pod-pending-image-pull-backoff`` keeps its pod Pending in ImagePullBackOff), so step 1
    waits in StepUpgrade; reverting the template to v1 cancels the release. The StatefulSet
    controller waits on the broken pod forever, so the test deletes it (as upstream's e2e does)
    and the StatefulSet recreates it on v1."""
    ro = await s.start(kube, namespace, s.rollout(namespace, TRAFFIC_20_40_100, kind=kind), kind=kind)
    stable = h.canary_status(ro)["stableRevision"]
    await s.set_image(kube, namespace, V2_FAILED, kind=kind)

    async def stuck() -> bool:
        sts = await s.get(kube, namespace, kind=kind)
        cs = h.canary_status(await h.get_rollout(kube, namespace))
        at = (cs.get("currentStepIndex"), cs.get("currentStepState"))
        return at == (1, "StepUpgrade") and sts["status"].get("updatedReplicas") == 1

    await eventually(stuck, timeout=60, interval=0.3, what="step 1 waiting on an unready v2 pod")
    await asyncio.sleep(3)
    assert await stuck(), "a batch whose pods are not Ready never advances"
    broken = await kube.get(PODS, "web-4", namespace)
    assert broken["spec"]["containers"][0]["image"] == V2_FAILED and broken["status"]["phase"] == "Pending"
    waiting = broken["status"]["containerStatuses"][0]["state"]["waiting"]
    assert waiting["reason"] == "ImagePullBackOff"
    cs = h.canary_status(await h.get_rollout(kube, namespace))
    assert (
        cs["stableRevision"] == stable
        and cs["canaryRevision"] == (await s.get(kube, namespace, kind=kind))["status"]["updateRevision"]
    )

    await s.set_image(kube, namespace, V1, kind=kind)  # the user rolls the template back
    await asyncio.sleep(2)
    await kube.delete(PODS, "web-4", namespace)
    ro = await h.wait_completed(kube, namespace, timeout=90)
    assert h.condition(ro, "Progressing")["reason"] == "Completed"
    assert h.condition(ro, "Succeeded")["status"] == "False"
    assert h.canary_status(ro)["stableRevision"] == stable
    await assert_restored(kube, namespace, V1, stable, kind=kind)


@KINDS
async def test_v1_v2_percentage_20_40_60_80_100_no_traffic_succeeded(
    kube: KubeClient, namespace: str, kind: s.Kind
) -> None:
    steps = [
        {"replicas": "20%", "pause": {}},
        {"replicas": "40%", "pause": {"duration": 1}},
        {"replicas": "60%", "pause": {"duration": 1}},
        {"replicas": "80%", "pause": {"duration": 1}},
        {"replicas": "100%", "pause": {"duration": 0}},
    ]
    ro = await s.start(
        kube, namespace, s.rollout(namespace, steps, routing=False, kind=kind), ingress=False, kind=kind
    )
    stable = h.canary_status(ro)["stableRevision"]
    await s.set_image(kube, namespace, V2, kind=kind)
    ro = await h.wait_paused_at(kube, namespace, 1)
    sts = await s.get(kube, namespace, kind=kind)
    assert sts["status"]["updatedReplicas"] == 1
    cs = h.canary_status(ro)
    assert cs["stableRevision"] == stable and cs["canaryRevision"] == sts["status"]["updateRevision"]
    canary = cs["podTemplateHash"]
    await h.approve(kube, namespace)
    ro = await h.wait_completed(kube, namespace, timeout=120)
    assert h.condition(ro, "Succeeded")["status"] == "True"
    await assert_restored(kube, namespace, V2, canary, kind=kind)
    await wait_generation_followed(kube, namespace, kind=kind)
    await scale(kube, namespace, 6, kind=kind)
    await s.wait_settled(kube, namespace, 6, kind=kind)
    await wait_generation_followed(kube, namespace, kind=kind)


async def test_deleting_the_rollout_mid_release_restores_the_statefulset(
    kube: KubeClient, namespace: str
) -> None:
    await s.start(kube, namespace, s.rollout(namespace, TRAFFIC_20_60_100))
    await s.set_image(kube, namespace, V2)
    await h.wait_paused_at(kube, namespace, 1)
    assert await kube.get_or_none(INGRESSES, "web-canary", namespace) is not None

    await h.delete_rollout(kube, namespace)
    sts = await assert_restored(
        kube, namespace, V2, (await s.get(kube, namespace))["status"]["updateRevision"]
    )
    assert "rollouts.kruise.io/workload-type" not in (sts["metadata"].get("labels") or {})

    await s.set_image(kube, namespace, V3)  # without a Rollout the next release rolls at once
    await s.wait_settled(kube, namespace, 5)
    await s.wait_ordinals(kube, namespace, dict.fromkeys(range(5), V3))


async def test_scaling_mid_step_keeps_the_step_and_never_moves_the_partition_up(
    kube: KubeClient, namespace: str
) -> None:
    """Step 2 (60%: ordinals 2-4 on v2, partition 2). Down to 3 pods: 60% of 3 is 2, the
    partition moves down to 1. Back up to 5: the partition never moves up (upstream's
    ``UpgradeBatch``), so the new ordinals 3 and 4, above it, start on v2."""
    await s.start(kube, namespace, s.rollout(namespace, TRAFFIC_20_60_100))
    await s.set_image(kube, namespace, V2)
    await h.wait_paused_at(kube, namespace, 1)
    await h.approve(kube, namespace)
    await h.wait_paused_at(kube, namespace, 2)
    await s.wait_ordinals(kube, namespace, ordinals(2, 3))

    await scale(kube, namespace, 3)
    await s.wait_ordinals(kube, namespace, ordinals(1, 2))
    assert s.partition(await s.get(kube, namespace)) == 1

    async def canary_replicas(want: int) -> dict[str, Any]:
        async def probe() -> dict[str, Any] | None:
            ro = await h.get_rollout(kube, namespace)
            cs = h.canary_status(ro)
            ok = cs.get("canaryReplicas") == cs.get("canaryReadyReplicas") == want
            return ro if ok else None

        return await eventually(probe, timeout=40, interval=0.3, what=f"canaryReplicas {want}")

    ro = await canary_replicas(2)
    assert (h.canary_status(ro)["currentStepIndex"], h.canary_status(ro)["currentStepState"]) == (
        2,
        "StepPaused",
    )

    await scale(kube, namespace, 5)
    await s.wait_ordinals(kube, namespace, ordinals(1, 4))
    assert s.partition(await s.get(kube, namespace)) == 1
    await canary_replicas(4)

    await h.approve(kube, namespace)
    await h.wait_completed(kube, namespace)
    await assert_restored(kube, namespace, V2, (await s.get(kube, namespace))["status"]["updateRevision"])


async def test_v1_v2_disable_quickly_rollback_policy_without_traffic_routing(
    kube: KubeClient, namespace: str
) -> None:
    """``rollouts.kruise.io/rollback-in-batch: "true"`` without traffic routing: a rollback at step
    3 (ordinals 2-4 on v2) starts over at step 1 with the stable revision as the canary; the 2 pods
    already on v1 need nothing, and each step releases its share of the 3 others (the highest
    ordinals first, inside the partition)."""
    steps = [
        {"replicas": "20%", "pause": {}},
        {"replicas": "40%", "pause": {"duration": 1}},
        {"replicas": "60%", "pause": {}},
        {"replicas": "100%", "pause": {"duration": 1}},
    ]
    ro = s.rollout(namespace, steps, routing=False)
    ro["metadata"]["annotations"] = {"rollouts.kruise.io/rollback-in-batch": "true"}
    ro = await s.start(kube, namespace, ro, ingress=False)
    stable = h.canary_status(ro)["stableRevision"]
    await s.set_image(kube, namespace, V2)
    await h.wait_paused_at(kube, namespace, 1)
    await h.approve(kube, namespace)
    await h.wait_paused_at(kube, namespace, 3)
    await s.wait_ordinals(kube, namespace, ordinals(2, 3))

    await s.set_image(kube, namespace, V1)
    ro = await h.wait_paused_at(kube, namespace, 1)
    cs = h.canary_status(ro)
    assert cs["canaryRevision"] == stable and cs["nextStepIndex"] == 2
    assert h.condition(ro, "Progressing")["reason"] == "InRolling"
    await s.wait_ordinals(kube, namespace, {0: V1, 1: V1, 2: V2, 3: V2, 4: V1})
    br = await kube.get(BATCH_RELEASES, "web", namespace)
    assert br["metadata"]["annotations"]["rollouts.kruise.io/rollback-in-batch"] == "true"
    assert br["status"]["canaryStatus"]["noNeedUpdateReplicas"] == 2

    await h.approve(kube, namespace)
    await h.wait_paused_at(kube, namespace, 3)
    await s.wait_ordinals(kube, namespace, {0: V1, 1: V1, 2: V2, 3: V1, 4: V1})
    await h.approve(kube, namespace)
    ro = await h.wait_completed(kube, namespace)
    assert h.condition(ro, "Succeeded")["status"] == "True"
    await assert_restored(kube, namespace, V1, stable)


async def test_failure_threshold(kube: KubeClient, namespace: str) -> None:
    """Test > failure threshold, on a StatefulSet: ``failureThreshold: 50%`` lets a batch of 2 pass
    with one of them unready, never with none Ready. v2 carries a readiness gate the test owns; the
    StatefulSet updates the highest ordinal first and waits for it to be Ready before the next."""
    gate = "example.com/serving"
    steps = [{"replicas": "40%", "pause": {}}, {"replicas": "100%", "pause": {}}]
    ro = await s.start(kube, namespace, s.rollout(namespace, steps, routing=False, failureThreshold="50%"))
    await s.set_image(kube, namespace, V2, readinessGates=[{"conditionType": gate}])

    async def at_upgrade(updated: int, ready: int) -> bool:
        sub = h.canary_status(await h.get_rollout(kube, namespace))
        st = (await s.get(kube, namespace))["status"]
        waiting = (sub.get("currentStepIndex"), sub.get("currentStepState")) == (1, "StepUpgrade")
        return waiting and (st.get("updatedReplicas"), sub.get("canaryReadyReplicas")) == (updated, ready)

    await eventually(lambda: at_upgrade(1, 0), timeout=60, interval=0.3, what="web-4 updated, not Ready")
    await asyncio.sleep(2)
    assert await at_upgrade(1, 0), "a batch never passes with no new pod Ready"

    await set_gate(kube, namespace, "web-4", gate)  # web-4 Ready; web-3 is updated next, unready
    ro = await h.wait_paused_at(kube, namespace, 1)
    sts = await s.get(kube, namespace)
    assert sts["status"]["updatedReplicas"] == 2
    assert (h.canary_status(ro)["canaryReplicas"], h.canary_status(ro)["canaryReadyReplicas"]) == (2, 1)

    await h.approve(kube, namespace)
    opened = {"web-4"}

    async def open_new_gates() -> bool:
        """Let each pod the StatefulSet updates become Ready; done when the release completes."""
        for pod in (await kube.list(PODS, namespace, label_selector="app=web"))["items"]:
            name = pod["metadata"]["name"]
            gated = any(g.get("conditionType") == gate for g in pod["spec"].get("readinessGates") or [])
            if gated and name not in opened and not pod["metadata"].get("deletionTimestamp"):
                await set_gate(kube, namespace, name, gate)
                opened.add(name)
        ro = await h.get_rollout(kube, namespace)
        return h.condition(ro, "Progressing").get("reason") == "Completed"

    await eventually(open_new_gates, timeout=120, interval=0.5, what="release completed")
    ro = await h.get_rollout(kube, namespace)
    assert h.condition(ro, "Succeeded")["status"] == "True"
    await s.wait_settled(kube, namespace, 5)
