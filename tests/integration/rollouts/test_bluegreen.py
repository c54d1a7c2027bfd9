"""Blue-green releases of a Deployment and a CloneSet over an nginx Ingress.

Upstream scenarios (``KR:test/e2e/rollout_v1beta1_test.go``): "Bluegreen Release - Deployment -
Ingress" (bluegreen rolling with traffic case, bluegreen rollback case, bluegreen deployment
continuous rolling case, bluegreen scale up and down, bluegreen delete rollout case) and
"Bluegreen Release - Cloneset - Ingress" (bluegreen rolling with traffic case), with 5 replicas:
new pods surge next to the old ones (``maxSurge`` = the step's replicas, ``minReadySeconds`` =
MaxInt32-1), traffic moves through the canary Service, and finalising restores the workload's own
strategy.
"""

from __future__ import annotations

import json

import pytest

from kruise.core.kube import KubeClient
from kruise.core.kube.resources import CLONESETS, DEPLOYMENTS, INGRESSES, SERVICES
from kruise.rollouts.resources import HPAS_V2, ROLLOUTS
from tests.integration.rollouts.helpers import delete_rollout
from tests.integration.rollouts.workload_support import (
    CLONESET_REF,
    DEPLOYMENT_REF,
    V1,
    V2,
    V3,
    approve,
    blue_green_strategy,
    canary_weight,
    cloneset,
    conditions,
    deployment,
    gone,
    jump,
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

MAX_READY = 2**31 - 2
MAX_PROGRESS = 2**31 - 1
ORIGINAL = "rollouts.kruise.io/original-deployment-strategy"
STEPS = [
    {"replicas": "50%", "traffic": "0%", "pause": {}},
    {"replicas": "100%", "traffic": "50%", "pause": {}},
    {"replicas": "100%", "traffic": "100%", "pause": {}},
]
CLONESET_STEPS = [
    {"replicas": "100%", "traffic": "0%", "pause": {}},
    {"replicas": "100%", "traffic": "50%"},
    {"replicas": "100%", "traffic": "100%"},
]


def hpa(namespace: str) -> dict:
    return {
        "apiVersion": "autoscaling/v2",
        "kind": "HorizontalPodAutoscaler",
        "metadata": {"name": "web", "namespace": namespace},
        "spec": {
            "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
            "minReplicas": 5,
            "maxReplicas": 10,
        },
    }


async def hpa_target(kube: KubeClient, namespace: str) -> str:
    return str((await kube.get(HPAS_V2, "web", namespace))["spec"]["scaleTargetRef"]["name"])


async def deployment_status(kube: KubeClient, namespace: str, updated: int, ready: int) -> dict:
    async def probe() -> dict | None:
        d = await kube.get(DEPLOYMENTS, "web", namespace)
        st = d.get("status") or {}
        counts = (st.get("updatedReplicas"), st.get("readyReplicas"), st.get("unavailableReplicas"))
        return d if counts == (updated, ready, ready) else None  # nothing is ever available

    return await eventually(probe, timeout=20, what=f"{updated} updated of {ready} ready, all unavailable")


async def test_bluegreen_rolling_with_traffic_case(kube: KubeClient, namespace: str) -> None:
    """Also upstream's "bluegreen disable hpa test case - autoscaling/v2": the HPA of the workload
    is pointed away while the release runs and given back at the end. ``updatedRevision`` is
    ``util.ComputeHash`` of the stored template (upstream failed here at
    ``rollout_v1beta1_test.go:1765`` while it was the ReplicaSet's ``pod-template-hash``).

    Batch labels (upstream ``rollout_v1beta1_test.go:1807``, "expected 3 pods with rolloutID ...
    and batchID 1"): the blue-green control plane labels the new pods with the Rollout's observed
    rollout-id and their batch (3 of 50%, then 2 more of 100%), and a batch is not Ready before."""
    await kube.create(HPAS_V2, hpa(namespace), namespace)
    await start(
        kube, namespace, deployment(namespace), rollout(namespace, DEPLOYMENT_REF, blue_green_strategy(STEPS))
    )
    stable_hash = await replicaset_hash(kube, namespace, "web", V1)
    await set_image(kube, namespace, "Deployment", V2)

    # step 1: 3 new pods surge next to the 5 old ones, no traffic yet
    ro = await wait_paused_at(kube, namespace, 1)
    d = await deployment_status(kube, namespace, updated=3, ready=8)
    assert json.loads(d["metadata"]["annotations"][ORIGINAL]) == {
        "maxUnavailable": 0,
        "maxSurge": 1,
        "progressDeadlineSeconds": 600,
    }
    assert not d["spec"].get("paused")
    assert d["spec"]["strategy"] == {
        "type": "RollingUpdate",
        "rollingUpdate": {"maxSurge": "50%", "maxUnavailable": 0},
    }
    assert (d["spec"]["minReadySeconds"], d["spec"]["progressDeadlineSeconds"]) == (MAX_READY, MAX_PROGRESS)
    assert d["metadata"]["labels"]["rollouts.kruise.io/stable-revision"] == stable_hash
    assert await hpa_target(kube, namespace) == "web-DisableByRollout"
    new_hash = await replicaset_hash(kube, namespace, "web", V2)
    assert "canaryStatus" not in ro["status"]
    bg = ro["status"]["blueGreenStatus"]
    assert (bg["stableRevision"], bg["updatedRevision"], bg["podTemplateHash"]) == (
        stable_hash,
        await upstream_revision(kube, namespace),
        new_hash,
    )
    assert (bg["currentStepIndex"], bg["nextStepIndex"]) == (1, 2)
    assert (bg["updatedReplicas"], bg["updatedReadyReplicas"]) == (3, 3)
    rollout_id = bg["observedRolloutID"]
    await wait_batch_labels(kube, namespace, rollout_id, {"1": 3})  # rollout_v1beta1_test.go:1807
    assert selector_hash(await kube.get(SERVICES, "web", namespace)) == stable_hash
    assert selector_hash(await kube.get(SERVICES, "web-canary", namespace)) == new_hash
    assert await kube.get_or_none(INGRESSES, "web-canary", namespace) is None  # 0%: nothing to shift

    # step 2: every new pod up (10 pods), half the traffic
    await approve(kube, namespace)
    await wait_paused_at(kube, namespace, 2)
    d = await deployment_status(kube, namespace, updated=5, ready=10)
    assert d["spec"]["strategy"]["rollingUpdate"] == {"maxSurge": "100%", "maxUnavailable": 0}
    assert canary_weight(await kube.get(INGRESSES, "web-canary", namespace)) == "50"
    await wait_batch_labels(kube, namespace, rollout_id, {"1": 3, "2": 2})  # :1807-1808

    # step 3: all the traffic on the new pods; the last step waits for approval too
    await approve(kube, namespace)
    ro = await wait_paused_at(kube, namespace, 3)
    assert ro["status"]["blueGreenStatus"]["nextStepIndex"] == -1
    assert canary_weight(await kube.get(INGRESSES, "web-canary", namespace)) == "100"
    await wait_pods(kube, namespace, {V1: 5, V2: 5})

    # final approval: finalise, the old pods go, the workload gets its own strategy back
    await approve(kube, namespace)
    ro = await wait_phase(kube, namespace, "Healthy")
    assert conditions(ro)["Succeeded"]["status"] == "True"
    assert conditions(ro)["Progressing"]["reason"] == "Completed"
    await gone(kube, namespace)
    await wait_pods(kube, namespace, {V2: 5})
    d = await kube.get(DEPLOYMENTS, "web", namespace)
    assert ORIGINAL not in (d["metadata"].get("annotations") or {})
    assert "rollouts.kruise.io/stable-revision" not in (d["metadata"].get("labels") or {})
    assert d["spec"]["strategy"]["rollingUpdate"] == {"maxSurge": 1, "maxUnavailable": 0}
    assert (d["spec"].get("minReadySeconds", 0), d["spec"]["progressDeadlineSeconds"]) == (0, 600)
    assert selector_hash(await kube.get(SERVICES, "web", namespace)) is None
    assert await hpa_target(kube, namespace) == "web"


async def test_bluegreen_rollback_case(kube: KubeClient, namespace: str) -> None:
    """Upstream "Bluegreen Release - Deployment - Ingress > bluegreen rollback case" (it failed at
    ``rollout_v1beta1_test.go:2007``: ``updatedRevision`` must be ``util.ComputeHash`` of the
    stored template, ``podTemplateHash`` the new ReplicaSet's label, which the canary Service
    selects)."""
    await start(
        kube, namespace, deployment(namespace), rollout(namespace, DEPLOYMENT_REF, blue_green_strategy(STEPS))
    )
    await set_image(kube, namespace, "Deployment", V2)
    bg = (await wait_paused_at(kube, namespace, 1))["status"]["blueGreenStatus"]
    new_hash = await replicaset_hash(kube, namespace, "web", V2)
    assert (bg["updatedRevision"], bg["podTemplateHash"]) == (
        await upstream_revision(kube, namespace),
        new_hash,
    )
    assert selector_hash(await kube.get(SERVICES, "web-canary", namespace)) == new_hash
    await approve(kube, namespace)
    await wait_paused_at(kube, namespace, 2)
    assert canary_weight(await kube.get(INGRESSES, "web-canary", namespace)) == "50"

    # traffic switch back: jump to step 1, the pods stay
    await jump(kube, namespace, 1)

    async def at_step_one() -> bool:
        ro = await kube.get(ROLLOUTS, "web", namespace)
        bg = ro["status"]["blueGreenStatus"]
        weight = canary_weight(await kube.get(INGRESSES, "web-canary", namespace))
        return (bg["currentStepIndex"], bg["currentStepState"], weight) == (
            1,
            "StepPaused",
            "0",
        )  # kept at 0%

    await eventually(at_step_one, timeout=20, what="back at step 1 with no traffic")
    await deployment_status(kube, namespace, updated=5, ready=10)

    # continuous release (v3) is refused: the Deployment is held, the Rollout says so
    await set_image(kube, namespace, "Deployment", V3)

    async def refused() -> dict | None:
        ro = await kube.get(ROLLOUTS, "web", namespace)
        msg = "new version releasing detected in the progress of blue-green release, please rollback first"
        return ro if ro["status"].get("message") == msg else None

    ro = await eventually(refused, timeout=20, what="continuous release refused")
    assert ro["status"]["blueGreenStatus"]["currentStepState"] == "StepPaused"
    assert (await kube.get(DEPLOYMENTS, "web", namespace))["spec"]["paused"] is True
    await wait_pods(kube, namespace, {V1: 5, V2: 5})

    # PaaS rollback to v1
    await set_image(kube, namespace, "Deployment", V1)
    ro = await wait_phase(kube, namespace, "Healthy")
    assert conditions(ro)["Progressing"]["reason"] == "Completed"
    assert conditions(ro)["Succeeded"]["status"] == "False"
    await gone(kube, namespace)
    await wait_pods(kube, namespace, {V1: 5})
    d = await kube.get(DEPLOYMENTS, "web", namespace)
    assert ORIGINAL not in (d["metadata"].get("annotations") or {})
    assert not d["spec"].get("paused")
    assert selector_hash(await kube.get(SERVICES, "web", namespace)) is None


async def scale(kube: KubeClient, namespace: str, replicas: int) -> None:
    await kube.patch(DEPLOYMENTS, "web", {"spec": {"replicas": replicas}}, namespace, patch_type="merge")


async def blue_green_counts(kube: KubeClient, namespace: str, updated: int) -> dict:
    """The Rollout's ``blueGreenStatus`` once it counts ``updated`` new pods, all ready."""

    async def probe() -> dict | None:
        bg = (await kube.get(ROLLOUTS, "web", namespace))["status"]["blueGreenStatus"]
        return (
            bg if (bg.get("updatedReplicas"), bg.get("updatedReadyReplicas")) == (updated, updated) else None
        )

    return await eventually(probe, timeout=20, what=f"blueGreenStatus counting {updated} updated pods")


async def test_bluegreen_scale_up_and_down(kube: KubeClient, namespace: str) -> None:
    """Upstream "Bluegreen Release - Deployment - Ingress > bluegreen scale up and down"
    (``rollout_v1beta1_test.go:2378``; it failed at ``:2459``, "expected 3 pods with rolloutID ...
    and batchID 1, got 0").

    Upstream rule (``bluegreenstyle/control_plane.go`` ``EnsureBatchPodsReadyAndLabeled``, run while
    a batch is Verifying and again while it is Ready, and ``labelpatch/patcher.go``): the pods at
    the update revision carry ``rollouts.kruise.io/rollout-id`` and ``rollout-batch-id``, each batch
    up to the current one its increment of ``ceil(canaryReplicas x replicas)`` for the replicas of
    the moment, new pods filling the latest batch first. So scaling mid-step relabels: at 50%,
    5 -> 6 -> 7 -> 8 -> 4 replicas leave 3, 3, 4, 4, 2 new pods, all batch 1; at 100%, 4 -> 7 -> 8
    leave 4+3 and 4+4 (batch 1 is ceil(50% x 7) = 4)."""
    await start(
        kube, namespace, deployment(namespace), rollout(namespace, DEPLOYMENT_REF, blue_green_strategy(STEPS))
    )
    await set_image(kube, namespace, "Deployment", V2)
    ro = await wait_paused_at(kube, namespace, 1)
    await deployment_status(kube, namespace, updated=3, ready=8)
    await blue_green_counts(kube, namespace, 3)
    rollout_id = ro["status"]["blueGreenStatus"]["observedRolloutID"]
    await wait_batch_labels(kube, namespace, rollout_id, {"1": 3})

    # 50% maxSurge: the new ReplicaSet follows the replicas, every new pod is batch 1
    for replicas, updated, ready in ((6, 3, 9), (7, 4, 11), (8, 4, 12), (4, 2, 6)):
        await scale(kube, namespace, replicas)
        await deployment_status(kube, namespace, updated=updated, ready=ready)
        bg = await blue_green_counts(kube, namespace, updated)
        assert (bg["currentStepIndex"], bg["nextStepIndex"]) == (1, 2)
        await wait_batch_labels(kube, namespace, rollout_id, {"1": updated})

    # step 2 (100%): the 2 new pods of batch 2, then scaling up owes each batch its increment
    await approve(kube, namespace)
    await wait_paused_at(kube, namespace, 2)
    d = await deployment_status(kube, namespace, updated=4, ready=8)
    assert d["spec"]["strategy"]["rollingUpdate"] == {"maxSurge": "100%", "maxUnavailable": 0}
    assert not d["spec"].get("paused")
    await blue_green_counts(kube, namespace, 4)
    await wait_batch_labels(kube, namespace, rollout_id, {"1": 2, "2": 2})
    for replicas, labels in ((7, {"1": 4, "2": 3}), (8, {"1": 4, "2": 4})):
        await scale(kube, namespace, replicas)
        await deployment_status(kube, namespace, updated=replicas, ready=2 * replicas)
        await blue_green_counts(kube, namespace, replicas)
        await wait_batch_labels(kube, namespace, rollout_id, labels)
    await scale(kube, namespace, 4)
    await deployment_status(kube, namespace, updated=4, ready=8)
    await blue_green_counts(kube, namespace, 4)


async def test_bluegreen_delete_rollout_case(kube: KubeClient, namespace: str) -> None:
    await start(
        kube, namespace, deployment(namespace), rollout(namespace, DEPLOYMENT_REF, blue_green_strategy(STEPS))
    )
    await set_image(kube, namespace, "Deployment", V2)
    await wait_paused_at(kube, namespace, 1)
    await deployment_status(kube, namespace, updated=3, ready=8)

    await delete_rollout(kube, namespace, timeout=40)
    await gone(kube, namespace)
    await wait_pods(kube, namespace, {V2: 5})
    d = await kube.get(DEPLOYMENTS, "web", namespace)
    assert not d["spec"].get("paused")
    assert ORIGINAL not in (d["metadata"].get("annotations") or {})
    assert "rollouts.kruise.io/in-progressing" not in (d["metadata"].get("annotations") or {})
    assert d["spec"]["strategy"]["rollingUpdate"] == {"maxSurge": 1, "maxUnavailable": 0}
    assert selector_hash(await kube.get(SERVICES, "web", namespace)) is None


async def test_bluegreen_rolling_with_traffic_case_cloneset(kube: KubeClient, namespace: str) -> None:
    """Upstream "Bluegreen Release - Cloneset - Ingress > bluegreen rolling with traffic case"
    (``rollout_v1beta1_test.go:3094``): at step 1 the 5 new pods carry the rollout-id, batch 1."""
    ro = rollout(namespace, CLONESET_REF, blue_green_strategy(CLONESET_STEPS))
    await start(kube, namespace, cloneset(namespace), ro)
    await set_image(kube, namespace, "CloneSet", V2)

    # step 1: 5 new pods surge next to the 5 old ones, no traffic yet
    ro = await wait_paused_at(kube, namespace, 1)
    cs = await kube.get(CLONESETS, "web", namespace)
    st = cs["status"]
    assert (st["replicas"], st["updatedReplicas"], st["updatedReadyReplicas"]) == (10, 5, 5)
    assert not cs["spec"]["updateStrategy"].get("paused")
    assert cs["spec"]["updateStrategy"]["maxSurge"] == "100%"
    assert cs["spec"]["minReadySeconds"] == MAX_READY
    update_hash = st["updateRevision"].rsplit("-", 1)[1]
    bg = ro["status"]["blueGreenStatus"]
    assert bg["stableRevision"] == st["currentRevision"].rsplit("-", 1)[1]
    assert (bg["updatedRevision"], bg["podTemplateHash"]) == (update_hash, update_hash)
    await wait_batch_labels(kube, namespace, bg["observedRolloutID"], {"1": 5})  # :3094
    assert selector_hash(await kube.get(SERVICES, "web-canary", namespace)) == update_hash
    assert await kube.get_or_none(INGRESSES, "web-canary", namespace) is None  # 0%: nothing to shift

    await approve(kube, namespace)
    await wait_paused_at(kube, namespace, 2)
    assert canary_weight(await kube.get(INGRESSES, "web-canary", namespace)) == "50"
    await approve(kube, namespace)
    await wait_paused_at(kube, namespace, 3)
    assert canary_weight(await kube.get(INGRESSES, "web-canary", namespace)) == "100"

    await approve(kube, namespace)
    ro = await wait_phase(kube, namespace, "Healthy")
    assert conditions(ro)["Succeeded"]["status"] == "True"
    await gone(kube, namespace)
    await wait_pods(kube, namespace, {V2: 5})
    cs = await kube.get(CLONESETS, "web", namespace)
    assert ORIGINAL not in (cs["metadata"].get("annotations") or {})
    assert cs["spec"].get("minReadySeconds", 0) == 0
    assert selector_hash(await kube.get(SERVICES, "web", namespace)) is None


async def test_bluegreen_rollback_case_for_cloneset(kube: KubeClient, namespace: str) -> None:
    """Upstream "Bluegreen Release - Cloneset - Ingress > bluegreen rollback case for cloneset"
    (``rollout_v1beta1_test.go:3258``): the 5 new pods carry the rollout-id, batch 1."""
    ro = rollout(namespace, CLONESET_REF, blue_green_strategy(CLONESET_STEPS))
    await start(kube, namespace, cloneset(namespace), ro)
    await set_image(kube, namespace, "CloneSet", V2)
    ro = await wait_paused_at(kube, namespace, 1)
    rollout_id = ro["status"]["blueGreenStatus"]["observedRolloutID"]
    await wait_batch_labels(kube, namespace, rollout_id, {"1": 5})  # :3258
    await approve(kube, namespace)
    await wait_paused_at(kube, namespace, 2)
    assert canary_weight(await kube.get(INGRESSES, "web-canary", namespace)) == "50"
    await wait_pods(kube, namespace, {V1: 5, V2: 5})
    await wait_batch_labels(kube, namespace, rollout_id, {"1": 5})  # step 2 (100% again) owes none

    await set_image(kube, namespace, "CloneSet", V1)  # PaaS rollback
    ro = await wait_phase(kube, namespace, "Healthy")
    assert conditions(ro)["Succeeded"]["status"] == "False"
    await gone(kube, namespace)
    await wait_pods(kube, namespace, {V1: 5})
    cs = await kube.get(CLONESETS, "web", namespace)
    assert ORIGINAL not in (cs["metadata"].get("annotations") or {})
    assert cs["spec"]["updateStrategy"].get("partition") in (None, 0)
    assert selector_hash(await kube.get(SERVICES, "web", namespace)) is None
