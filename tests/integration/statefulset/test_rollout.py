"""The issue's Rollout acceptance over upstream's ``sample`` Advanced StatefulSet (applied
unchanged: v1alpha1, 10 replicas, Parallel, InPlaceIfPossible, maxUnavailable 2).

A Rollout 20% / 60% / 100% (steps with ``pause: {}``, no traffic routing) referencing it as
``apps.kruise.io/v1alpha1``: the image change is held at partition 32767 (nothing moves), the
release moves it to 8, then each approval lowers it, 4 and 0 (the last step completes without a
pause), the highest ordinals first, every pod updated in place (same UID); finalising clears the
partition (defaulted back to 0) and the control annotations.
Upstream's "Advanced StatefulSet rollout canary with Ingress" cases run in
``tests/integration/rollouts/test_native_statefulset.py`` for both kinds.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

import pytest
import yaml

from kruise.core.kube import KubeClient
from kruise.core.kube.resources import STATEFULSETS, Resource
from kruise.rollouts.resources import ROLLOUTS
from tests.integration.rollouts import helpers as h
from tests.integration.statefulset.helpers import pods, wait_running_and_ready, wait_status
from tests.support.corpus import UPSTREAM_EXAMPLES

pytestmark = pytest.mark.usefixtures("manager")

SAMPLE = UPSTREAM_EXAMPLES / "kruise/StatefulSet/004-sample.yaml"
ALPHA = Resource("apps.kruise.io", "v1alpha1", "statefulsets", "StatefulSet")
NEW_IMAGE = "nginx:1.27"
IN_PROGRESSING = "rollouts.kruise.io/in-progressing"
CONTROL = "batchrelease.rollouts.kruise.io/control-info"


def rollout() -> dict[str, Any]:
    steps = [{"replicas": r, "pause": {}} for r in ("20%", "60%", "100%")]
    return {
        "apiVersion": "rollouts.kruise.io/v1beta1",
        "kind": "Rollout",
        "metadata": {"name": "web"},
        "spec": {
            "workloadRef": {"apiVersion": "apps.kruise.io/v1alpha1", "kind": "StatefulSet", "name": "sample"},
            "strategy": {"canary": {"steps": steps}},
        },
    }


def partition(sts: dict[str, Any]) -> int | None:
    return ((sts["spec"].get("updateStrategy") or {}).get("rollingUpdate") or {}).get("partition")


async def watch_partitions(kube: KubeClient, namespace: str, seen: list[int]) -> None:
    """Record every new partition the set is written with (unset reads 0, its meaning)."""
    async for event in kube.watch(STATEFULSETS, namespace):
        if event.type in ("ADDED", "MODIFIED"):
            value = partition(event.object) or 0
            if not seen or seen[-1] != value:
                seen.append(value)


async def images(kube: KubeClient, namespace: str) -> dict[int, tuple[str, str]]:
    """Ordinal -> (image, UID) of the live pods."""
    return {
        int(p["metadata"]["name"].rsplit("-", 1)[1]): (
            p["spec"]["containers"][0]["image"],
            p["metadata"]["uid"],
        )
        for p in await pods(kube, namespace, "sample")
    }


async def test_a_rollout_20_60_100_moves_the_partition_8_4_0_in_place(
    kube: KubeClient, namespace: str
) -> None:
    await kube.create(ALPHA, yaml.safe_load(SAMPLE.read_text()), namespace)
    await wait_running_and_ready(kube, namespace, "sample", 10, timeout=90)
    await kube.create(ROLLOUTS, rollout(), namespace)
    await h.wait_phase(kube, namespace, "Healthy")
    before = await images(kube, namespace)
    old_image = before[0][0]

    seen: list[int] = []
    watcher = asyncio.create_task(watch_partitions(kube, namespace, seen))
    try:
        await release(kube, namespace, before, old_image)
    finally:
        watcher.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await watcher
    assert seen == [0, 32767, 8, 4, 0], "held, then lowered once per approved step, cleared"


async def release(
    kube: KubeClient, namespace: str, before: dict[int, tuple[str, str]], old_image: str
) -> None:
    """The image change, each step checked and approved, the release completed and finalised."""
    patch = [{"op": "replace", "path": "/spec/template/spec/containers/0/image", "value": NEW_IMAGE}]
    await kube.patch(ALPHA, "sample", patch, namespace, patch_type="json")
    for step, want_partition in ((1, 8), (2, 4)):
        ro = await h.wait_paused_at(kube, namespace, step, timeout=90)
        sts = await wait_status(
            kube,
            namespace,
            "sample",
            updatedReplicas=10 - want_partition,
            updatedReadyReplicas=10 - want_partition,
        )
        assert partition(sts) == want_partition, f"step {step}"
        now = await images(kube, namespace)
        assert {i: img for i, (img, _) in now.items()} == {
            i: NEW_IMAGE if i >= want_partition else old_image for i in range(10)
        }
        assert {i: uid for i, (_, uid) in now.items()} == {i: uid for i, (_, uid) in before.items()}, (
            "in place"
        )
        cs = h.canary_status(ro)
        assert cs["canaryRevision"] == cs["podTemplateHash"] == sts["status"]["updateRevision"]
        await h.approve(kube, namespace)

    # the last step (100%) does not pause: it completes the release
    ro = await h.wait_completed(kube, namespace, timeout=90)
    assert h.condition(ro, "Succeeded")["status"] == "True"
    sts = await wait_status(
        kube, namespace, "sample", updatedReplicas=10, updatedReadyReplicas=10, readyReplicas=10
    )
    assert partition(sts) in (None, 0)
    now = await images(kube, namespace)
    assert now == {i: (NEW_IMAGE, uid) for i, (_, uid) in before.items()}, "every pod updated in place"
    assert sts["status"]["currentRevision"] == sts["status"]["updateRevision"]
    annotations = sts["metadata"].get("annotations") or {}
    assert IN_PROGRESSING not in annotations and CONTROL not in annotations
