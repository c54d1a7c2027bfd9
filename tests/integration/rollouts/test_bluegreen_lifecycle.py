"""Blue-green releases ended from outside: the Rollout disabled or deleted, a new version released.

Upstream scenarios (``KR:test/e2e/rollout_v1beta1_test.go``): "Bluegreen Release - Deployment -
Ingress > bluegreen disable rollout case", "Bluegreen Release - Cloneset - Ingress > bluegreen
disable rollout case for cloneset", "... > bluegreen delete rollout case for cloneset" and
"... > bluegreen continuous rolling case for cloneset". Disabling or deleting finalises as a
success would (the workload gets its own strategy back and rolls on by itself); a new version
in the middle of a blue-green release is refused until the user rolls back.
"""

from __future__ import annotations

import asyncio

import pytest

from kruise.core.kube import KubeClient
from kruise.core.kube.resources import CLONESETS, DEPLOYMENTS, INGRESSES, SERVICES
from kruise.rollouts.resources import BATCH_RELEASES, ROLLOUTS
from tests.integration.rollouts.helpers import delete_rollout
from tests.integration.rollouts.workload_support import (
    CLONESET_REF,
    DEPLOYMENT_REF,
    V1,
    V2,
    V3,
    approve,
    blue_green_strategy,
    cloneset,
    conditions,
    deployment,
    gone,
    rollout,
    selector_hash,
    set_image,
    start,
    wait_paused_at,
    wait_phase,
    wait_pods,
)
from tests.support.wait import eventually

pytestmark = pytest.mark.usefixtures("manager")

ORIGINAL = "rollouts.kruise.io/original-deployment-strategy"
STEPS = [
    {"replicas": "50%", "traffic": "0%", "pause": {}},
    {"replicas": "100%", "traffic": "50%", "pause": {}},
    {"replicas": "100%", "traffic": "100%", "pause": {}},
]
CLONESET_STEPS = [
    {"replicas": "100%", "traffic": "0%", "pause": {}},
    {"replicas": "100%", "traffic": "50%", "pause": {}},
    {"replicas": "100%", "traffic": "100%"},
]
CONTINUOUS_MESSAGE = (
    "new version releasing detected in the progress of blue-green release, please rollback first"
)


async def cloneset_at_step_two(kube: KubeClient, namespace: str) -> dict:
    """The CloneSet's blue-green release of v2, approved to step 2 (every new pod up, 50%)."""
    ro = rollout(namespace, CLONESET_REF, blue_green_strategy(CLONESET_STEPS))
    await start(kube, namespace, cloneset(namespace), ro)
    await set_image(kube, namespace, "CloneSet", V2)
    await wait_paused_at(kube, namespace, 1)
    await approve(kube, namespace)
    return await wait_paused_at(kube, namespace, 2)


async def disable(kube: KubeClient, namespace: str) -> None:
    await kube.patch(ROLLOUTS, "web", {"spec": {"disabled": True}}, namespace, patch_type="merge")


async def test_bluegreen_disable_rollout_case(kube: KubeClient, namespace: str) -> None:
    ro = rollout(namespace, DEPLOYMENT_REF, blue_green_strategy(STEPS))
    await start(kube, namespace, deployment(namespace), ro)
    await set_image(kube, namespace, "Deployment", V2)
    ro = await wait_paused_at(kube, namespace, 1)
    assert "canaryStatus" not in ro["status"]
    assert ro["status"]["blueGreenStatus"]["updatedReplicas"] == 3

    await disable(kube, namespace)
    await wait_phase(kube, namespace, "Disabled")
    d = await kube.get(DEPLOYMENTS, "web", namespace)
    assert ORIGINAL not in (d["metadata"].get("annotations") or {})
    assert d["spec"]["strategy"] == {
        "type": "RollingUpdate",
        "rollingUpdate": {"maxSurge": 1, "maxUnavailable": 0},
    }
    assert not d["spec"].get("paused")
    assert (d["spec"].get("minReadySeconds", 0), d["spec"]["progressDeadlineSeconds"]) == (0, 600)
    assert d["spec"]["template"]["spec"]["containers"][0]["image"] == V2
    await gone(kube, namespace)
    assert selector_hash(await kube.get(SERVICES, "web", namespace)) is None
    await wait_pods(kube, namespace, {V2: 5})  # the Deployment rolls on by itself


async def test_bluegreen_disable_rollout_case_for_cloneset(kube: KubeClient, namespace: str) -> None:
    await cloneset_at_step_two(kube, namespace)
    assert (await kube.get(INGRESSES, "web-canary", namespace)) is not None

    await disable(kube, namespace)
    await wait_phase(kube, namespace, "Disabled")
    await gone(kube, namespace)
    await wait_pods(kube, namespace, {V2: 5})
    cs = await kube.get(CLONESETS, "web", namespace)
    assert ORIGINAL not in (cs["metadata"].get("annotations") or {})
    assert cs["spec"].get("minReadySeconds", 0) == 0
    assert cs["spec"]["updateStrategy"].get("maxSurge") in (None, 0)
    assert not cs["spec"]["updateStrategy"].get("paused")
    assert selector_hash(await kube.get(SERVICES, "web", namespace)) is None


async def test_bluegreen_delete_rollout_case_for_cloneset(kube: KubeClient, namespace: str) -> None:
    await cloneset_at_step_two(kube, namespace)

    await delete_rollout(kube, namespace, timeout=40)
    await gone(kube, namespace)
    await wait_pods(kube, namespace, {V2: 5})
    cs = await kube.get(CLONESETS, "web", namespace)
    annotations = cs["metadata"].get("annotations") or {}
    assert ORIGINAL not in annotations and "rollouts.kruise.io/in-progressing" not in annotations
    assert cs["spec"].get("minReadySeconds", 0) == 0
    assert selector_hash(await kube.get(SERVICES, "web", namespace)) is None


async def test_bluegreen_continuous_rolling_case_for_cloneset(kube: KubeClient, namespace: str) -> None:
    """``handleContinuousRelease``: blue-green cannot restart on v3 mid-release; the Rollout says
    so and holds everything as it was until the user rolls back to v1, which cancels it."""
    ro = await cloneset_at_step_two(kube, namespace)
    updated = ro["status"]["blueGreenStatus"]["updatedRevision"]

    await set_image(kube, namespace, "CloneSet", V3)

    async def refused() -> dict | None:
        got = await kube.get(ROLLOUTS, "web", namespace)
        return got if (got.get("status") or {}).get("message") == CONTINUOUS_MESSAGE else None

    ro = await eventually(refused, timeout=30, what="blue-green refuses the continuous release")
    assert conditions(ro)["Progressing"]["message"] == CONTINUOUS_MESSAGE
    await asyncio.sleep(3)
    ro = await kube.get(ROLLOUTS, "web", namespace)
    assert ro["status"]["phase"] == "Progressing"
    assert ro["status"]["blueGreenStatus"]["updatedRevision"] == updated
    assert await kube.get_or_none(BATCH_RELEASES, "web", namespace) is not None
    assert (await kube.get(INGRESSES, "web-canary", namespace)) is not None

    await set_image(kube, namespace, "CloneSet", V1)  # the user rolls back first
    ro = await wait_phase(kube, namespace, "Healthy")
    assert conditions(ro)["Succeeded"]["status"] == "False"
    assert ro["status"]["message"] == "Rollout progressing has been canceled"
    await gone(kube, namespace)
    await wait_pods(kube, namespace, {V1: 5})
