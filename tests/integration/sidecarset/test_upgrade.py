"""Upstream e2e "SidecarSet Upgrade functionality [SidecarSetUpgrade]" (test/e2e/apps/sidecarset.go),
one test per ``It``: in-place sidecar upgrades by the SidecarSet controller, played by KWOK's
in-place stage (the changed container restarts, the app does not), a broken image by its
ImagePullBackOff stage."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from kruise.core.kube import KubeClient
from kruise.core.kube.resources import DEPLOYMENTS, NAMESPACES, PODS, SIDECARSETS
from kruise.workloads.sidecarset.keys import HASH_ANNOTATION, HASH_WITHOUT_IMAGE_ANNOTATION
from tests.integration.sidecarset.helpers import (
    BUSYBOX,
    INVALID,
    NEW_NGINX,
    NGINX,
    annotation_json,
    base_deployment,
    base_sidecarset,
    container,
    container_status,
    create_deployment,
    create_sidecarset,
    patch_whitelist,
    selector_pods,
    update_sidecarset,
    wait_pods,
    wait_status,
)
from tests.support.wait import eventually

JSON = dict[str, Any]
UPGRADABLE = "SidecarSetUpgradable"


def one_sidecar(ns: str, suffix: str = "", **strategy: Any) -> JSON:
    body = base_sidecarset(ns, suffix)
    body["spec"]["containers"] = body["spec"]["containers"][:1]
    body["spec"]["updateStrategy"] = {"type": "RollingUpdate", **strategy}
    return body


def set_image(image: str, index: int = 0) -> Callable[[JSON], None]:
    def mutate(obj: JSON) -> None:
        obj["spec"]["containers"][index]["image"] = image

    return mutate


def condition(pod: JSON, ctype: str) -> JSON:
    return next((c for c in pod["status"].get("conditions") or [] if c["type"] == ctype), {})


async def images(kube: KubeClient, ns: str, name: str = "nginx-sidecar") -> list[str]:
    return [container(p, name)["image"] for p in await selector_pods(kube, ns)]


async def test_sidecarset_patch_pod_metadata(kube: KubeClient, sidecarsets: str) -> None:
    ns = sidecarsets
    async with patch_whitelist(kube, "^key$", selector={"matchLabels": {"app": "sidecar"}}):
        body = one_sidecar(ns)
        body["spec"]["patchPodMetadata"] = [
            {"patchPolicy": "MergePatchJson", "annotations": {"key": '{"nginx-sidecar":1}'}}
        ]
        created = await create_sidecarset(kube, body)
        name = created["metadata"]["name"]
        pods = await create_deployment(kube, base_deployment(ns, replicas=2))
        assert [p["metadata"]["annotations"]["key"] for p in pods] == ['{"nginx-sidecar":1}'] * 2

        def patch_two(obj: JSON) -> None:
            obj["spec"]["patchPodMetadata"][0]["annotations"]["key"] = '{"nginx-sidecar":2}'

        await update_sidecarset(kube, name, patch_two)  # metadata only: no in-place update
        await wait_status(kube, name, matchedPods=2, updatedPods=2, readyPods=2, updatedReadyPods=2)
        await asyncio.sleep(2)
        assert [p["metadata"]["annotations"]["key"] for p in await selector_pods(kube, ns)] == [
            '{"nginx-sidecar":1}'
        ] * 2
        await update_sidecarset(kube, name, set_image(BUSYBOX))
        await wait_status(kube, name, matchedPods=2, updatedPods=2, readyPods=2, updatedReadyPods=2)
        for pod in await selector_pods(kube, ns):
            assert container(pod, "nginx-sidecar")["image"] == BUSYBOX
            assert pod["metadata"]["annotations"]["key"] == '{"nginx-sidecar":2}'


async def test_sidecarset_upgrade_cold_sidecar_container_image_only(
    kube: KubeClient, sidecarsets: str
) -> None:
    """A cluster-wide SidecarSet with a namespaceSelector: pods of a namespace it does not select
    are not injected; once labelled, recreated pods are; an image change then updates both pods in
    place: only the sidecar restarts."""
    ns = sidecarsets
    body = one_sidecar(ns, maxUnavailable=2)
    body["spec"].pop("namespace")
    body["spec"]["namespaceSelector"] = {
        "matchLabels": {"inject": "sidecar", "kubernetes.io/metadata.name": ns}
    }
    created = await create_sidecarset(kube, body)
    name = created["metadata"]["name"]
    pods = await create_deployment(kube, base_deployment(ns, replicas=2))
    assert all(len(p["spec"]["containers"]) == 1 for p in pods)
    await kube.patch(NAMESPACES, ns, {"metadata": {"labels": {"inject": "sidecar"}}}, patch_type="merge")
    await asyncio.sleep(1)  # the webhook reads namespace labels from its informer (upstream waits 5 s)
    for pod in pods:
        await kube.delete(PODS, pod["metadata"]["name"], ns)

    async def recreated() -> list[JSON] | None:
        items = await selector_pods(kube, ns)
        fresh = [p for p in items if len(p["spec"]["containers"]) == 2]
        return fresh if len(items) == 2 and len(fresh) == 2 else None

    await eventually(recreated, timeout=60, what="pods recreated with the sidecar")
    await wait_pods(kube, ns, 2)
    await update_sidecarset(kube, name, set_image(BUSYBOX))
    await wait_status(kube, name, matchedPods=2, updatedPods=2, readyPods=2, updatedReadyPods=2)
    for pod in await selector_pods(kube, ns):
        assert container(pod, "nginx-sidecar")["image"] == BUSYBOX
        assert condition(pod, UPGRADABLE)["status"] == "True"
        assert container_status(pod, "nginx-sidecar")["restartCount"] == 1
        assert container_status(pod, "main")["restartCount"] == 0


def assert_upgrade_specs(pod: JSON, sidecarset: JSON) -> None:
    name = sidecarset["metadata"]["name"]
    for key in (HASH_ANNOTATION, HASH_WITHOUT_IMAGE_ANNOTATION):
        spec = annotation_json(pod, key)[name]
        assert spec["sidecarSetName"] == name
        assert spec["hash"] == sidecarset["metadata"]["annotations"][key]
        assert sorted(spec["sidecarList"]) == sorted(c["name"] for c in sidecarset["spec"]["containers"])


async def test_sidecarset_upgrade_cold_sidecar_container_failed_image_and_only_update_one_pod(
    kube: KubeClient, sidecarsets: str
) -> None:
    ns = sidecarsets
    created = await create_sidecarset(kube, one_sidecar(ns))
    name = created["metadata"]["name"]
    for pod in await create_deployment(kube, base_deployment(ns, replicas=2)):
        assert_upgrade_specs(pod, created)
    await update_sidecarset(kube, name, set_image(INVALID))
    await wait_status(kube, name, matchedPods=2, updatedPods=1, readyPods=1, updatedReadyPods=0)
    await asyncio.sleep(3)  # the broken pod holds the other back (maxUnavailable 1)
    assert sorted(await images(kube, ns)) == sorted([INVALID, NGINX])
    fixed = await update_sidecarset(kube, name, set_image(BUSYBOX))
    await wait_status(kube, name, matchedPods=2, updatedPods=2, readyPods=2, updatedReadyPods=2)
    fixed = await kube.get(SIDECARSETS, name)
    for pod in await selector_pods(kube, ns):
        assert_upgrade_specs(pod, fixed)


async def test_sidecarset_upgrade_sidecar_container_more_than_image_field_no_pod_should_be_updated(
    kube: KubeClient, sidecarsets: str
) -> None:
    ns = sidecarsets
    body = one_sidecar(ns)
    body["spec"].pop("initContainers")
    created = await create_sidecarset(kube, body)
    name = created["metadata"]["name"]
    await create_deployment(kube, base_deployment(ns, replicas=1))

    def add_env(obj: JSON) -> None:
        obj["spec"]["containers"][0]["env"] = [{"name": "version", "value": "v2"}]

    await update_sidecarset(kube, name, add_env)
    await wait_status(kube, name, matchedPods=1, updatedPods=0, readyPods=1, updatedReadyPods=0)

    async def not_upgradable() -> bool:
        (pod,) = await selector_pods(kube, ns)
        found = condition(pod, UPGRADABLE)
        return found.get("status") == "False" and found.get("reason") == "UpdateImmutableField"

    await eventually(not_upgradable, timeout=30, what="SidecarSetUpgradable False")
    await kube.patch(DEPLOYMENTS, "deployment-test", {"spec": {"replicas": 2}}, ns, patch_type="merge")
    await wait_pods(kube, ns, 2)
    await update_sidecarset(kube, name, set_image(NEW_NGINX))
    await wait_status(kube, name, matchedPods=2, updatedPods=1, readyPods=2, updatedReadyPods=1)


async def test_multi_sidecarset_upgrade_sidecar_container_check_pod_condition(
    kube: KubeClient, sidecarsets: str
) -> None:
    ns = sidecarsets
    first = await create_sidecarset(kube, one_sidecar(ns, "-1"))
    second_body = base_sidecarset(ns, "-2")
    second_body["spec"]["initContainers"] = []
    second_body["spec"]["containers"] = second_body["spec"]["containers"][1:2]
    second = await create_sidecarset(kube, second_body)
    await create_deployment(kube, base_deployment(ns, replicas=2))

    def new_command(obj: JSON) -> None:
        obj["spec"]["containers"][0]["command"] = ["sleep", "1000"]

    await update_sidecarset(kube, first["metadata"]["name"], new_command)
    await wait_status(
        kube, first["metadata"]["name"], matchedPods=2, updatedPods=0, readyPods=2, updatedReadyPods=0
    )
    await update_sidecarset(kube, second["metadata"]["name"], set_image(NGINX))
    await wait_status(
        kube, second["metadata"]["name"], matchedPods=2, updatedPods=2, readyPods=2, updatedReadyPods=2
    )
    for pod in await selector_pods(kube, ns):
        assert condition(pod, UPGRADABLE)["status"] == "False"  # the first SidecarSet still cannot

    def back(obj: JSON) -> None:
        obj["spec"]["containers"][0]["image"] = NEW_NGINX
        obj["spec"]["containers"][0]["command"] = ["tail", "-f", "/dev/null"]

    await update_sidecarset(kube, first["metadata"]["name"], back)
    await wait_status(
        kube, first["metadata"]["name"], matchedPods=2, updatedPods=2, readyPods=2, updatedReadyPods=2
    )

    async def all_upgradable() -> bool:
        return all(condition(p, UPGRADABLE).get("status") == "True" for p in await selector_pods(kube, ns))

    await eventually(all_upgradable, timeout=30, what="SidecarSetUpgradable True on every pod")


async def test_sidecarset_upgrade_cold_sidecar_container_image_and_paused(
    kube: KubeClient, sidecarsets: str
) -> None:
    """Upstream pauses a few seconds into the rollout (a real kubelet is slow); KWOK restarts at
    once, so here the image changes with the pause set: nothing moves until it is lifted."""
    ns = sidecarsets
    name = (await create_sidecarset(kube, one_sidecar(ns)))["metadata"]["name"]
    await create_deployment(kube, base_deployment(ns, replicas=2))

    def paused_new_image(obj: JSON) -> None:
        obj["spec"]["containers"][0]["image"] = BUSYBOX
        obj["spec"]["updateStrategy"]["paused"] = True

    await update_sidecarset(kube, name, paused_new_image)
    await wait_status(kube, name, matchedPods=2, updatedPods=0, readyPods=2, updatedReadyPods=0)
    await asyncio.sleep(3)
    assert await images(kube, ns) == [NGINX, NGINX]

    def resume(obj: JSON) -> None:
        obj["spec"]["updateStrategy"]["paused"] = False

    await update_sidecarset(kube, name, resume)
    await wait_status(kube, name, matchedPods=2, updatedPods=2, readyPods=2, updatedReadyPods=2)


async def test_sidecarset_upgrade_cold_sidecar_container_image_and_selector(
    kube: KubeClient, sidecarsets: str
) -> None:
    ns = sidecarsets
    name = (await create_sidecarset(kube, one_sidecar(ns)))["metadata"]["name"]
    pods = await create_deployment(kube, base_deployment(ns, replicas=2))
    canary = pods[0]["metadata"]["name"]
    await kube.patch(
        PODS, canary, {"metadata": {"labels": {"canary.release": "true"}}}, ns, patch_type="merge"
    )

    def canary_only(obj: JSON) -> None:
        obj["spec"]["containers"][0]["image"] = BUSYBOX
        obj["spec"]["updateStrategy"]["selector"] = {"matchLabels": {"canary.release": "true"}}

    await update_sidecarset(kube, name, canary_only)
    await wait_status(kube, name, matchedPods=2, updatedPods=1, readyPods=2, updatedReadyPods=1)
    for pod in await selector_pods(kube, ns):
        want = BUSYBOX if pod["metadata"]["name"] == canary else NGINX
        assert container(pod, "nginx-sidecar")["image"] == want

    def everyone(obj: JSON) -> None:
        obj["spec"]["updateStrategy"].pop("selector")

    await update_sidecarset(kube, name, everyone)
    await wait_status(kube, name, matchedPods=2, updatedPods=2, readyPods=2, updatedReadyPods=2)


async def test_sidecarset_upgrade_cold_sidecar_container_image_and_partition(
    kube: KubeClient, sidecarsets: str
) -> None:
    ns = sidecarsets
    name = (await create_sidecarset(kube, one_sidecar(ns)))["metadata"]["name"]
    await create_deployment(kube, base_deployment(ns, replicas=2))
    await wait_status(kube, name, matchedPods=2, updatedPods=2, readyPods=2, updatedReadyPods=2)

    def half(obj: JSON) -> None:
        obj["spec"]["containers"][0]["image"] = BUSYBOX
        obj["spec"]["updateStrategy"]["partition"] = "50%"

    await update_sidecarset(kube, name, half)
    await wait_status(kube, name, matchedPods=2, updatedPods=1, readyPods=2, updatedReadyPods=1)

    def no_partition(obj: JSON) -> None:
        obj["spec"]["updateStrategy"].pop("partition")

    await update_sidecarset(kube, name, no_partition)
    await wait_status(kube, name, matchedPods=2, updatedPods=2, readyPods=2, updatedReadyPods=2)


async def test_sidecarset_upgrade_cold_sidecar_container_image_and_maxunavailable(
    kube: KubeClient, sidecarsets: str
) -> None:
    ns = sidecarsets
    name = (await create_sidecarset(kube, one_sidecar(ns)))["metadata"]["name"]
    await create_deployment(kube, base_deployment(ns, replicas=4))

    def broken_half(obj: JSON) -> None:
        obj["spec"]["containers"][0]["image"] = INVALID
        obj["spec"]["updateStrategy"]["maxUnavailable"] = "50%"

    await update_sidecarset(kube, name, broken_half)
    await wait_status(kube, name, matchedPods=4, updatedPods=2, readyPods=2, updatedReadyPods=0)
    await update_sidecarset(kube, name, set_image(BUSYBOX))
    await wait_status(kube, name, matchedPods=4, updatedPods=4, readyPods=4, updatedReadyPods=4)


async def test_sidecarset_update_init_sidecar_container_and_dont_upgrade(
    kube: KubeClient, sidecarsets: str
) -> None:
    ns = sidecarsets
    created = await create_sidecarset(kube, one_sidecar(ns))
    assert created["spec"]["initContainers"][0]["podInjectPolicy"] == "AfterAppContainer"
    assert created["spec"]["containers"][0]["podInjectPolicy"] == "BeforeAppContainer"
    name = created["metadata"]["name"]
    await create_deployment(kube, base_deployment(ns, replicas=1))
    await wait_status(kube, name, matchedPods=1, updatedPods=1, readyPods=1, updatedReadyPods=1)

    def init_image(obj: JSON) -> None:
        obj["spec"]["initContainers"][0]["image"] = INVALID

    updated = await update_sidecarset(kube, name, init_image)
    assert (
        updated["metadata"]["annotations"][HASH_ANNOTATION]
        == created["metadata"]["annotations"][HASH_ANNOTATION]
    )
    await asyncio.sleep(2)
    await wait_status(kube, name, matchedPods=1, updatedPods=1, readyPods=1, updatedReadyPods=1)
    (pod,) = await selector_pods(kube, ns)
    assert pod["spec"]["initContainers"][0]["image"] == BUSYBOX
