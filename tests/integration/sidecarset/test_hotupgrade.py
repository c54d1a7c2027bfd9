"""Upstream e2e "SidecarSet HotUpgrade functionality [SidecarSetHotUpgrade]"
(test/e2e/apps/sidecarset_hotupgrade.go), one test per ``It``. While a hot upgrade runs, a watch
on the pod checks that some container of the pair always runs the sidecar and is ready."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator
from typing import Any

from kruise.core.kube import KubeClient
from kruise.workloads.sidecarset.hotupgrade import working_and_idle
from kruise.workloads.sidecarset.keys import version_alt_annotation, version_annotation
from tests.integration.sidecarset.helpers import (
    BUSYBOX,
    INVALID,
    NEW_NGINX,
    NGINX,
    base_deployment,
    base_sidecarset,
    container,
    container_status,
    create_deployment,
    create_sidecarset,
    selector_pods,
    update_sidecarset,
    wait_status,
)

JSON = dict[str, Any]
SIDECAR = "nginx-sidecar"


def hot_sidecarset(ns: str) -> JSON:
    body = base_sidecarset(ns)
    body["spec"]["updateStrategy"] = {"type": "RollingUpdate"}
    body["spec"]["containers"] = body["spec"]["containers"][:1]
    body["spec"]["containers"][0]["image"] = NGINX
    body["spec"]["containers"][0]["upgradeStrategy"] = {
        "upgradeType": "HotUpgrade",
        "hotUpgradeEmptyImage": BUSYBOX,
    }
    return body


def pair(pod: JSON) -> tuple[JSON, JSON]:
    """(working, idle) containers of the hot-upgrade sidecar."""
    working, idle = working_and_idle(SIDECAR, pod)
    return container(pod, working), container(pod, idle)


def versions(pod: JSON) -> dict[str, str]:
    annotations = pod["metadata"]["annotations"]
    return {
        key: annotations[key]
        for c in (f"{SIDECAR}-1", f"{SIDECAR}-2")
        for key in (version_annotation(c), version_alt_annotation(c))
    }


def set_image(image: str) -> Any:
    def mutate(obj: JSON) -> None:
        obj["spec"]["containers"][0]["image"] = image

    return mutate


@contextlib.asynccontextmanager
async def always_serving(kube: KubeClient, ns: str) -> AsyncIterator[list[str]]:
    """Poll the pods while the body runs; yields the list of violations (none expected): a moment
    when neither container of the pair runs a non-empty image with a ready status."""
    problems: list[str] = []
    stop = asyncio.Event()

    async def watch() -> None:
        while not stop.is_set():
            for pod in await selector_pods(kube, ns):
                serving = [
                    name
                    for name in (f"{SIDECAR}-1", f"{SIDECAR}-2")
                    if container(pod, name)["image"] != BUSYBOX
                    and container_status(pod, name).get("ready")
                    and container_status(pod, name).get("image") == container(pod, name)["image"]
                ]
                if not serving:
                    problems.append(json.dumps(pod["status"].get("containerStatuses")))
            await asyncio.sleep(0.1)

    task = asyncio.create_task(watch())
    try:
        yield problems
    finally:
        stop.set()
        await task


async def test_sidecarset_inject_pod_hot_upgrade_sidecar_container(
    kube: KubeClient, sidecarsets: str
) -> None:
    ns = sidecarsets
    await create_sidecarset(kube, hot_sidecarset(ns))
    (pod,) = await create_deployment(kube, base_deployment(ns))
    assert [c["name"] for c in pod["spec"]["containers"]] == [f"{SIDECAR}-1", f"{SIDECAR}-2", "main"]
    assert versions(pod) == {
        version_annotation(f"{SIDECAR}-1"): "1",
        version_alt_annotation(f"{SIDECAR}-1"): "0",
        version_annotation(f"{SIDECAR}-2"): "0",
        version_alt_annotation(f"{SIDECAR}-2"): "1",
    }
    assert container(pod, f"{SIDECAR}-1")["image"] == NGINX
    assert container(pod, f"{SIDECAR}-2")["image"] == BUSYBOX


async def test_sidecarset_upgrade_hot_sidecar_container_image(kube: KubeClient, sidecarsets: str) -> None:
    ns = sidecarsets
    name = (await create_sidecarset(kube, hot_sidecarset(ns)))["metadata"]["name"]
    (pod,) = await create_deployment(kube, base_deployment(ns))
    working, idle = pair(pod)
    assert (working["name"], working["image"], idle["name"], idle["image"]) == (
        f"{SIDECAR}-1",
        NGINX,
        f"{SIDECAR}-2",
        BUSYBOX,
    )
    async with always_serving(kube, ns) as problems:
        updated = await update_sidecarset(kube, name, set_image(NEW_NGINX))
        await wait_status(kube, name, matchedPods=1, updatedPods=1, readyPods=1, updatedReadyPods=1)
    assert problems == []
    (pod,) = await selector_pods(kube, ns)
    working, idle = pair(pod)
    assert (working["name"], working["image"], idle["name"], idle["image"]) == (
        f"{SIDECAR}-2",
        NEW_NGINX,
        f"{SIDECAR}-1",
        BUSYBOX,
    )
    assert (
        pod["metadata"]["annotations"][version_annotation(f"{SIDECAR}-2")]
        == updated["metadata"]["resourceVersion"]
    )
    assert pod["metadata"]["annotations"][version_annotation(f"{SIDECAR}-1")] == "0"
    assert container_status(pod, "main")["restartCount"] == 0

    async with always_serving(kube, ns) as problems:
        await update_sidecarset(kube, name, set_image(NGINX))
        await wait_status(kube, name, matchedPods=1, updatedPods=1, readyPods=1, updatedReadyPods=1)
    assert problems == []
    (pod,) = await selector_pods(kube, ns)
    working, idle = pair(pod)
    assert (working["name"], working["image"], idle["name"], idle["image"]) == (
        f"{SIDECAR}-1",
        NGINX,
        f"{SIDECAR}-2",
        BUSYBOX,
    )

    def env_change(obj: JSON) -> None:
        obj["spec"]["containers"][0]["env"] = [{"name": "PROXY", "value": "127.0.0.1"}]

    await update_sidecarset(kube, name, env_change)  # more than the image: no upgrade
    await wait_status(kube, name, matchedPods=1, updatedPods=0, readyPods=1, updatedReadyPods=0)


async def test_sidecarset_upgrade_hot_sidecar_container_failed_image(
    kube: KubeClient, sidecarsets: str
) -> None:
    ns = sidecarsets
    name = (await create_sidecarset(kube, hot_sidecarset(ns)))["metadata"]["name"]
    pods = await create_deployment(kube, base_deployment(ns, replicas=2))
    for pod in pods:
        working, idle = pair(pod)
        assert (working["name"], idle["image"]) == (f"{SIDECAR}-1", BUSYBOX)
    await update_sidecarset(kube, name, set_image(INVALID))
    await wait_status(kube, name, matchedPods=2, updatedPods=1, readyPods=1, updatedReadyPods=0)
    await asyncio.sleep(3)
    for pod in await selector_pods(kube, ns):  # the broken image went to an idle container only
        assert container(pod, f"{SIDECAR}-1")["image"] == NGINX
    await update_sidecarset(kube, name, set_image(NEW_NGINX))
    await wait_status(kube, name, matchedPods=2, updatedPods=2, readyPods=2, updatedReadyPods=2)
    for pod in await selector_pods(kube, ns):
        working, idle = pair(pod)
        assert (working["name"], working["image"], idle["image"]) == (f"{SIDECAR}-2", NEW_NGINX, BUSYBOX)
