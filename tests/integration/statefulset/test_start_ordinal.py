"""Upstream e2e ``StatefulSet v1beta1 > ... > Scaling StatefulSetStartOrdinal``.

``spec.ordinals.start`` needs the alpha gate ``StatefulSetStartOrdinal``: these tests run against
a manager replica started with it (the session manager steps aside for the module).
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from kruise.core.kube import KubeClient
from kruise.rollouts.manager.process import ManagerProcess
from tests.integration.statefulset.helpers import (
    create,
    new_statefulset,
    patch_spec,
    pods,
    ready,
    wait_status,
)
from tests.support.cluster import TestCluster
from tests.support.managers import own_replica
from tests.support.wait import eventually


@pytest.fixture(scope="module")
async def gated(
    manager: ManagerProcess, cluster: TestCluster, tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[ManagerProcess]:
    workdir = tmp_path_factory.mktemp("start-ordinal")
    gates = ("--feature-gates=StatefulSetStartOrdinal=true",)
    async with own_replica(manager, cluster, workdir, extra_args=gates) as own:
        yield own


pytestmark = pytest.mark.usefixtures("gated")


async def wait_names(kube: KubeClient, namespace: str, names: list[str]) -> None:
    """``waitForPodNames`` then ready: exactly these pods, all Ready, and the status says so."""

    async def probe() -> bool:
        found = await pods(kube, namespace, "ss")
        return sorted(p["metadata"]["name"] for p in found) == names and all(ready(p) for p in found)

    await eventually(probe, timeout=90, what=f"pods {names}")
    await wait_status(kube, namespace, "ss", replicas=len(names), readyReplicas=len(names))


async def test_setting_start_ordinal(kube: KubeClient, namespace: str) -> None:
    """Setting .start.ordinal"""
    await create(kube, namespace, new_statefulset("ss", 2))
    await wait_names(kube, namespace, ["ss-0", "ss-1"])
    await patch_spec(kube, namespace, "ss", {"ordinals": {"start": 2}, "replicas": 3})
    await wait_names(kube, namespace, ["ss-2", "ss-3", "ss-4"])


async def test_increasing_start_ordinal(kube: KubeClient, namespace: str) -> None:
    """Increasing .start.ordinal"""
    await create(kube, namespace, new_statefulset("ss", 2, ordinals={"start": 2}))
    await wait_names(kube, namespace, ["ss-2", "ss-3"])
    await patch_spec(kube, namespace, "ss", {"ordinals": {"start": 4}})
    await wait_names(kube, namespace, ["ss-4", "ss-5"])


async def test_decreasing_start_ordinal(kube: KubeClient, namespace: str) -> None:
    """Decreasing .start.ordinal"""
    await create(kube, namespace, new_statefulset("ss", 2, ordinals={"start": 3}))
    await wait_names(kube, namespace, ["ss-3", "ss-4"])
    await patch_spec(kube, namespace, "ss", {"ordinals": {"start": 2}})
    await wait_names(kube, namespace, ["ss-2", "ss-3"])


async def test_removing_start_ordinal(kube: KubeClient, namespace: str) -> None:
    """Removing .start.ordinal"""
    await create(kube, namespace, new_statefulset("ss", 2, ordinals={"start": 3}))
    await wait_names(kube, namespace, ["ss-3", "ss-4"])
    await patch_spec(kube, namespace, "ss", {"ordinals": None})
    await wait_names(kube, namespace, ["ss-0", "ss-1"])
