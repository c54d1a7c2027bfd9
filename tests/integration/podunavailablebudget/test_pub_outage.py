"""The manager stopped: only the pods a PodUnavailableBudget guards wait for it.

``vpod.kb.io`` and ``vpodeviction.kb.io`` keep upstream's ``failurePolicy: Fail``, scoped by CEL
(:mod:`kruise.workloads.podunavailablebudget.scope`): a protected pod's deletion is refused while
the manager cannot answer, but deleting a pod no budget counts (in the budget's namespace too) or
evicting one in a namespace without a budget answers at once.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import AsyncIterator

import pytest

from kruise.core.errors import KruiseError
from kruise.core.kube import KubeClient
from kruise.core.kube.resources import NAMESPACES, PODS
from kruise.rollouts.manager.process import ManagerProcess
from kruise.workloads.api.podunavailablebudget import PUBS
from tests.integration.podunavailablebudget.test_pub import bare_pod, budget, evict, status_is
from tests.support.wait import eventually

PROMPT_SECONDS = 5.0


@pytest.fixture
async def elsewhere(kube: KubeClient) -> AsyncIterator[str]:
    """A second namespace, with no budget in it."""
    name = f"pub-outage-{uuid.uuid4().hex[:6]}"
    await kube.create(NAMESPACES, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})
    try:
        yield name
    finally:
        await kube.delete(NAMESPACES, name, missing_ok=True)


async def test_only_protected_pods_wait_for_a_stopped_manager(
    kube: KubeClient, namespace: str, elsewhere: str, manager: ManagerProcess
) -> None:
    for name in ("guarded-1", "guarded-2"):
        await kube.create(PODS, bare_pod(name), namespace)
    await kube.create(PODS, bare_pod("free", app="other"), namespace)
    for name in ("x", "y"):
        await kube.create(PODS, bare_pod(name), elsewhere)
    annotations = {"pub.kruise.io/protect-total-replicas": "2"}
    await kube.create(
        PUBS,
        budget(annotations=annotations, selector={"matchLabels": {"app": "guarded"}}, minAvailable=1),
        namespace,
    )
    await status_is(kube, namespace, "guard", currentAvailable=2, unavailableAllowed=1)

    async def annotated() -> bool:
        pod = await kube.get(PODS, "guarded-1", namespace)
        return pod["metadata"].get("annotations", {}).get("kruise.io/related-pub") == "guard"

    await eventually(annotated, what="guarded-1 carries kruise.io/related-pub")

    await asyncio.to_thread(manager.stop)
    try:
        started = time.monotonic()
        await kube.delete(PODS, "free", namespace)  # no budget counts it
        await kube.delete(PODS, "x", elsewhere)
        await evict(kube, elsewhere, "y")  # no budget in that namespace
        assert time.monotonic() - started < PROMPT_SECONDS

        with pytest.raises(KruiseError) as refused:
            await kube.delete(PODS, "guarded-1", namespace)
        assert "vpod.kb.io" in str(refused.value)
        assert (await kube.get(PODS, "guarded-1", namespace))["metadata"].get("deletionTimestamp") is None
        with pytest.raises(KruiseError) as refused:
            await evict(kube, namespace, "guarded-2")
        assert "vpodeviction.kb.io" in str(refused.value)
    finally:
        await asyncio.to_thread(manager.start)
    await kube.delete(PODS, "guarded-1", namespace)  # the manager is back: the budget allows one
