"""With ``PodUnavailableBudgetUpdateGate`` (off by default, so a replica of the manager with it on
replaces the session's): a CloneSet's in-place update asks each pod's budget first, so a budget of
one unavailable pod holds an update that would otherwise take all three pods at once to one pod
at a time, and still finishes; a spec change to a protected pod from outside is refused with
upstream's message once the budget is spent; a Rollout step of three pods of four takes them one
at a time; a SidecarSet upgrade of three pods at once is held
to one pod per budget unit (its pod patches are refused by the webhook meanwhile)."""

from __future__ import annotations

import asyncio
import contextlib
import copy
import itertools
import time
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from kruise.core.errors import KruiseError
from kruise.core.kube import KubeClient
from kruise.core.kube.resources import CLONESETS, PODS, SIDECARSETS
from kruise.rollouts.manager.process import ManagerProcess
from kruise.rollouts.resources import ROLLOUTS
from kruise.workloads.api.podunavailablebudget import PUBS
from tests.integration.cloneset.helpers import IMAGE, JSON, NEW_IMAGE, new_cloneset
from tests.integration.cloneset.test_cloneset_inplace import web_cloneset
from tests.integration.podunavailablebudget.test_pub import EXHAUSTED, budget, ready, status_is
from tests.integration.rollouts import helpers as rh
from tests.integration.sidecarset.helpers import (
    NEW_NGINX,
    base_deployment,
    base_sidecarset,
    container,
    create_deployment,
    create_sidecarset,
    selector_pods,
    sidecarset_name,
    update_sidecarset,
)
from tests.support.cluster import TestCluster
from tests.support.managers import own_replica


@pytest.fixture
async def update_gate(manager: ManagerProcess, cluster: TestCluster, tmp_path: Path) -> AsyncIterator[None]:
    async with own_replica(
        manager,
        cluster,
        tmp_path / "gated",
        extra_args=("--feature-gates=PodUnavailableBudgetUpdateGate=true",),
    ):
        yield


@contextlib.asynccontextmanager
async def unready_peak(kube: KubeClient, namespace: str, selector: str) -> AsyncIterator[list[int]]:
    """The most pods of ``selector`` not Ready at once while the block runs (``[peak]``), from a
    pod watch replayed event by event: every transition is seen, however short (a list polled
    every 100 ms can miss an in-place update KWOK finishes faster)."""
    start = await kube.list(PODS, namespace, label_selector=selector)
    state = {p["metadata"]["name"]: ready(p) for p in start["items"]}
    peak = [sum(1 for r in state.values() if not r)]

    async def follow() -> None:
        rv = start["metadata"]["resourceVersion"]
        async for event in kube.watch(PODS, namespace, resource_version=rv, label_selector=selector):
            pod_name = event.object.get("metadata", {}).get("name")
            if event.type == "DELETED":
                state.pop(pod_name, None)
            elif event.type in ("ADDED", "MODIFIED"):
                state[pod_name] = ready(event.object)
            peak[0] = max(peak[0], sum(1 for r in state.values() if not r))

    task = asyncio.create_task(follow())
    try:
        yield peak
        await asyncio.sleep(1)  # the watch delivers what the block's last poll already saw
    finally:
        if task.done():
            task.result()  # a dead watch would leave the peak short: its error is the failure
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task


@pytest.mark.usefixtures("update_gate")
async def test_in_place_update_goes_one_pod_at_a_time_under_the_budget(
    kube: KubeClient, namespace: str
) -> None:
    strategy = {"type": "InPlaceIfPossible", "maxUnavailable": 3}
    await kube.create(CLONESETS, copy.deepcopy(new_cloneset("web", 3, strategy=strategy)), namespace)
    ref = {"apiVersion": "apps.kruise.io/v1alpha1", "kind": "CloneSet", "name": "web"}
    await kube.create(PUBS, budget(targetRef=ref, maxUnavailable=1), namespace)
    await status_is(kube, namespace, "guard", currentAvailable=3, unavailableAllowed=1, totalReplicas=3)

    async with unready_peak(kube, namespace, "app=web") as most_unready:
        await kube.patch(
            CLONESETS,
            "web",
            {"spec": {"template": {"spec": {"containers": [{"name": "nginx", "image": NEW_IMAGE}]}}}},
            namespace,
        )
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            pods = (await kube.list(PODS, namespace, label_selector="app=web"))["items"]
            images = [p["spec"]["containers"][0]["image"] for p in pods]
            if len(pods) == 3 and images == [NEW_IMAGE] * 3 and all(ready(p) for p in pods):
                break
            await asyncio.sleep(0.1)
        else:
            raise AssertionError(f"the update did not finish: {images}")
    assert most_unready == [1], "the budget lets one pod be unavailable at a time"

    # the budget spent by the last pod (recorded 10 s): an outside spec change is refused
    await status_is(kube, namespace, "guard", currentAvailable=3, unavailableAllowed=1)
    victims = [p["metadata"]["name"] for p in pods]
    first = {"spec": {"containers": [{"name": "nginx", "image": IMAGE}]}}
    await kube.patch(PODS, victims[0], first, namespace, patch_type="strategic")
    with pytest.raises(KruiseError) as refused:
        await kube.patch(PODS, victims[1], first, namespace, patch_type="strategic")
    assert EXHAUSTED in str(refused.value)
    assert 'admission webhook "vpod.kb.io" denied the request' in str(refused.value)


@pytest.fixture
async def sidecarset_cleanup(kube: KubeClient, namespace: str) -> AsyncIterator[None]:
    """SidecarSets are cluster-scoped: the test's goes with it (else it keeps the pod webhook's scope)."""
    yield
    await kube.delete(SIDECARSETS, sidecarset_name(namespace), missing_ok=True)


@pytest.mark.usefixtures("update_gate", "sidecarset_cleanup")
async def test_sidecarset_upgrade_waits_for_the_budget(kube: KubeClient, namespace: str) -> None:
    sidecarset = base_sidecarset(namespace)
    sidecarset["spec"]["containers"] = sidecarset["spec"]["containers"][:1]
    sidecarset["spec"]["updateStrategy"] = {"type": "RollingUpdate", "maxUnavailable": 3}
    await create_sidecarset(kube, sidecarset)
    await create_deployment(kube, base_deployment(namespace, replicas=3))
    await kube.create(
        PUBS, budget(selector={"matchLabels": {"app": "sidecarset"}}, maxUnavailable=1), namespace
    )
    await status_is(kube, namespace, "guard", currentAvailable=3, unavailableAllowed=1, totalReplicas=3)

    def upgrade(obj: JSON) -> None:
        obj["spec"]["containers"][0]["image"] = NEW_NGINX

    started = time.monotonic()
    await update_sidecarset(kube, sidecarset["metadata"]["name"], upgrade)
    upgraded_at: dict[str, float] = {}
    deadline = started + 150
    while time.monotonic() < deadline and len(upgraded_at) < 3:
        for pod in await selector_pods(kube, namespace):
            if container(pod, "nginx-sidecar")["image"] == NEW_NGINX:
                upgraded_at.setdefault(pod["metadata"]["name"], time.monotonic() - started)
        await asyncio.sleep(0.1)
    assert len(upgraded_at) == 3, f"the upgrade did not reach every pod: {upgraded_at}"
    moments = sorted(upgraded_at.values())
    # each upgrade spends the one unit for 10 s (upstream's UpdatedDelayCheckTime): never two at once
    assert all(later - earlier >= 5 for earlier, later in itertools.pairwise(moments)), moments


@pytest.mark.usefixtures("update_gate")
async def test_a_rollout_step_keeps_the_budget(kube: KubeClient, namespace: str) -> None:
    body = web_cloneset(namespace, replicas=4, partition=0, maxUnavailable="100%")
    body["spec"]["template"]["spec"]["terminationGracePeriodSeconds"] = 0
    await kube.create(CLONESETS, body, namespace)
    await rh.wait_settled(kube, namespace, 4)
    ref = {"apiVersion": "apps.kruise.io/v1alpha1", "kind": "CloneSet", "name": "web"}
    await kube.create(PUBS, budget(targetRef=ref, maxUnavailable=1), namespace)
    await status_is(kube, namespace, "guard", currentAvailable=4, unavailableAllowed=1)
    steps = [{"replicas": 3, "pause": {}}, {"replicas": "100%"}]
    await kube.create(ROLLOUTS, rh.rollout(namespace, steps), namespace)
    await rh.wait_phase(kube, namespace, "Healthy")

    async with unready_peak(kube, namespace, "app=web") as most_unready:
        await rh.set_image(kube, namespace, rh.V2)
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            pods = (await kube.list(PODS, namespace, label_selector="app=web"))["items"]
            if await rh.pods_by_image(kube, namespace) == {rh.V2: 3, rh.V1: 1} and all(
                ready(p) for p in pods
            ):
                break
            await asyncio.sleep(0.1)
        else:
            raise AssertionError(f"step 1 did not reach 3 pods: {await rh.pods_by_image(kube, namespace)}")
    assert most_unready == [1], "the step's three pods went one at a time"
    await rh.wait_paused_at(kube, namespace, 1)
    await rh.approve(kube, namespace)
    await rh.wait_completed(kube, namespace, timeout=90)
    assert await rh.pods_by_image(kube, namespace) == {rh.V2: 4}
