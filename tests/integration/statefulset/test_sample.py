"""The issue's acceptance scenario with upstream's ``sample`` StatefulSet (applied unchanged).

``config/samples/apps_v1alpha1_statefulset.yaml``: v1alpha1, 10 replicas, Parallel,
InPlaceIfPossible, maxUnavailable 2. It yields Ready pods ``sample-0``..``sample-9``; an image
change with partition 5 updates exactly ordinals 5-9 in place (same UIDs, restartCount + 1) with
never more than two pods unavailable at once (watched); a set with ``reserveOrdinals: [1, "3-4"]``
has ordinals 0, 2, 5.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

import pytest
import yaml

from kruise.core.kube import KubeClient
from kruise.core.kube.resources import PODS, Resource
from tests.integration.statefulset.helpers import (
    create,
    get,
    new_statefulset,
    ordinals,
    pods,
    ready,
    wait_running_and_ready,
    wait_status,
)
from tests.support.corpus import UPSTREAM_EXAMPLES
from tests.support.wait import eventually

pytestmark = pytest.mark.usefixtures("manager")

SAMPLE = UPSTREAM_EXAMPLES / "kruise/StatefulSet/004-sample.yaml"
ALPHA = Resource("apps.kruise.io", "v1alpha1", "statefulsets", "StatefulSet")


async def _watch_unavailable(kube: KubeClient, namespace: str, seen: list[int]) -> None:
    """Record the number of not-Ready sample pods after every pod event."""
    state: dict[str, bool] = {}
    async for event in kube.watch(PODS, namespace, label_selector="app=sample"):
        pod = event.object
        if event.type == "BOOKMARK":
            continue
        if event.type == "DELETED":
            state.pop(pod["metadata"]["name"], None)
        else:
            state[pod["metadata"]["name"]] = ready(pod) and not pod["metadata"].get("deletionTimestamp")
        seen.append(sum(1 for ok in state.values() if not ok))


def _restarts(pod: dict[str, Any]) -> int:
    return sum(int(c.get("restartCount") or 0) for c in pod["status"].get("containerStatuses") or [])


async def test_sample_applies_unchanged_and_updates_ordinals_5_to_9_in_place(
    kube: KubeClient, namespace: str
) -> None:
    body = yaml.safe_load(SAMPLE.read_text())
    await kube.create(ALPHA, body, namespace)
    ready_pods = await wait_running_and_ready(kube, namespace, "sample", 10, timeout=90)
    assert ordinals(ready_pods) == list(range(10))
    before = {p["metadata"]["name"]: p for p in ready_pods}
    seen: list[int] = []
    watcher = asyncio.create_task(_watch_unavailable(kube, namespace, seen))
    try:
        await asyncio.sleep(0.5)
        patch = {"spec": {"updateStrategy": {"rollingUpdate": {"partition": 5}}}}
        await kube.patch(ALPHA, "sample", patch, namespace, patch_type="merge")
        image = [{"op": "replace", "path": "/spec/template/spec/containers/0/image", "value": "nginx:1.27"}]
        await kube.patch(ALPHA, "sample", image, namespace, patch_type="json")
        await wait_status(kube, namespace, "sample", updatedReplicas=5, updatedReadyReplicas=5, timeout=120)
    finally:
        watcher.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await watcher
    after = {p["metadata"]["name"]: p for p in await pods(kube, namespace, "sample")}
    updated = sorted(n for n, p in after.items() if p["spec"]["containers"][0]["image"] == "nginx:1.27")
    assert updated == [f"sample-{i}" for i in range(5, 10)]
    for n in updated:
        assert after[n]["metadata"]["uid"] == before[n]["metadata"]["uid"]
        assert _restarts(after[n]) == _restarts(before[n]) + 1
    assert max(seen) <= 2, f"unavailable pods over time: {seen}"
    status = (await get(kube, namespace, "sample"))["status"]
    assert status["currentRevision"] != status["updateRevision"]


async def test_reserve_ordinals_skip_the_reserved(kube: KubeClient, namespace: str) -> None:
    body = new_statefulset("reserve", 3, reserveOrdinals=[1, "3-4"])
    await create(kube, namespace, body)
    ready_pods = await wait_running_and_ready(kube, namespace, "reserve", 3)
    assert ordinals(ready_pods) == [0, 2, 5]

    async def settled() -> bool:
        return (await get(kube, namespace, "reserve")).get("status", {}).get("readyReplicas") == 3

    await eventually(settled, timeout=30)
