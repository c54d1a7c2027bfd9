"""Feature gate ``KeepWorkloadPausedOnRolloutDeletion`` (Kruise Rollouts, alpha, off by default).

With the gate, deleting a Rollout in the middle of a partition-style release hands the workload
back *where it was*: a Deployment keeps ``paused: true`` (its own ``RollingUpdate`` strategy back,
the release's annotations and labels gone), so kube's Deployment controller does not roll the
remaining pods; a CloneSet keeps its ``partition`` (only ``paused`` is cleared). The user can then
roll back, or resume. Without the gate the same deletion lets the workload finish the rollout
(``test_advanced_deployment.py::test_advanced_deployment_delete_rollout_case``,
``test_delete_rollout.py``).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from kruise.core.kube import KubeClient
from kruise.core.kube.resources import CLONESETS, DEPLOYMENTS
from kruise.rollouts.manager.process import ManagerProcess
from kruise.rollouts.resources import BATCH_RELEASES, ROLLOUTS
from tests.integration.rollouts import helpers as h
from tests.integration.rollouts.workload_support import (
    DEPLOYMENT_REF,
    V1,
    V2,
    canary_strategy,
    deployment,
    pods_by_image,
    rollout,
    set_image,
    start,
    wait_paused_at,
    wait_pods,
)
from tests.support.cluster import TestCluster
from tests.support.managers import own_replica
from tests.support.wait import eventually

STEPS = [
    {"replicas": "20%", "traffic": "20%", "pause": {}},
    {"replicas": "100%", "traffic": "100%", "pause": {"duration": 0}},
]
RELEASE_KEYS = {
    "rollouts.kruise.io/deployment-strategy",
    "rollouts.kruise.io/deployment-extra-status",
    "batchrelease.rollouts.kruise.io/control-info",
    "rollouts.kruise.io/in-progressing",
}


@pytest.fixture
async def keep_paused(manager: ManagerProcess, cluster: TestCluster, tmp_path: Path) -> AsyncIterator[None]:
    async with own_replica(
        manager,
        cluster,
        tmp_path / "gated",
        extra_args=("--feature-gates=KeepWorkloadPausedOnRolloutDeletion=true",),
    ):
        yield


async def deleted(kube: KubeClient, namespace: str) -> None:
    await kube.delete(ROLLOUTS, "web", namespace)

    async def probe() -> bool:
        return (
            await kube.get_or_none(ROLLOUTS, "web", namespace) is None
            and await kube.get_or_none(BATCH_RELEASES, "web", namespace) is None
        )

    await eventually(probe, timeout=40, what="Rollout and BatchRelease deleted")


@pytest.mark.usefixtures("keep_paused")
async def test_a_deployment_stays_paused_where_the_deleted_rollout_left_it(
    kube: KubeClient, namespace: str
) -> None:
    await start(
        kube, namespace, deployment(namespace), rollout(namespace, DEPLOYMENT_REF, canary_strategy(STEPS))
    )
    await set_image(kube, namespace, "Deployment", V2)
    await wait_paused_at(kube, namespace, 1)
    await wait_pods(kube, namespace, {V1: 4, V2: 1})

    await deleted(kube, namespace)
    d = await kube.get(DEPLOYMENTS, "web", namespace)
    assert d["spec"]["paused"] is True
    assert d["spec"]["strategy"] == {
        "type": "RollingUpdate",
        "rollingUpdate": {"maxSurge": 1, "maxUnavailable": 0},
    }
    assert not RELEASE_KEYS & set(d["metadata"].get("annotations") or {})
    assert "rollouts.kruise.io/stable-revision" not in (d["metadata"].get("labels") or {})
    # kube's controller only scales a paused RollingUpdate Deployment (proportionally, up to
    # replicas + maxSurge: the old ReplicaSet may get one pod back); the release goes no further
    await asyncio.sleep(3)
    pods = await pods_by_image(kube, namespace)
    assert pods[V2] == 1 and pods[V1] in (4, 5), pods

    # the user decides: resuming lets kube's controller finish the rollout
    await kube.patch(DEPLOYMENTS, "web", {"spec": {"paused": False}}, namespace, patch_type="merge")
    await wait_pods(kube, namespace, {V2: 5})


@pytest.mark.usefixtures("keep_paused")
async def test_a_cloneset_keeps_its_partition_when_the_rollout_is_deleted(
    kube: KubeClient, namespace: str
) -> None:
    await h.start(
        kube, namespace, h.rollout(namespace, [{"replicas": "20%", "pause": {}}, {"replicas": "100%"}])
    )
    await h.set_image(kube, namespace, h.V2)
    await h.wait_paused_at(kube, namespace, 1)
    await h.wait_pods(kube, namespace, {h.V1: 8, h.V2: 2})

    await deleted(kube, namespace)
    cs = await kube.get(CLONESETS, "web", namespace)
    assert cs["spec"]["updateStrategy"]["partition"] == "80%"
    assert not cs["spec"]["updateStrategy"].get("paused")
    assert not RELEASE_KEYS & set(cs["metadata"].get("annotations") or {})
    await asyncio.sleep(3)
    assert await h.pods_by_image(kube, namespace) == {h.V1: 8, h.V2: 2}
