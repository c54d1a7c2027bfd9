"""Upstream e2e "SidecarSet Upgrade functionality" ``It``\\ s about ControllerRevisions: history
checkers, injecting a stored revision, and Partial injection during a canary upgrade."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from kruise.core.kube import KubeClient
from kruise.core.kube.resources import CONTROLLER_REVISIONS, DEPLOYMENTS
from kruise.workloads.sidecarset.keys import CUSTOM_VERSION_LABEL, HASH_ANNOTATION, SIDECARSET_NAME_LABEL
from tests.integration.sidecarset.helpers import (
    annotation_json,
    base_deployment,
    base_sidecarset,
    container,
    create_deployment,
    create_sidecarset,
    patch_whitelist,
    selector_pods,
    update_sidecarset,
    wait_observed,
    wait_pods,
    wait_status,
)
from tests.support.wait import eventually

JSON = dict[str, Any]
MANAGER_NAMESPACE = "kruise-system"


async def revisions(kube: KubeClient, name: str) -> list[JSON]:
    """The SidecarSet's revisions, by ``.revision``."""
    listed = await kube.list(
        CONTROLLER_REVISIONS, MANAGER_NAMESPACE, label_selector=f"{SIDECARSET_NAME_LABEL}={name}"
    )
    return sorted(listed["items"], key=lambda r: int(r["revision"]))


async def update_and_observe(kube: KubeClient, name: str, mutate: Callable[[JSON], None]) -> JSON:
    await update_sidecarset(kube, name, mutate)
    return await wait_observed(kube, name)


async def test_sidecarset_history_revision_checker(kube: KubeClient, sidecarsets: str) -> None:
    ns = sidecarsets
    body = base_sidecarset(ns)
    body["spec"]["imagePullSecrets"] = [{"name": "secret-1"}]
    name = (await create_sidecarset(kube, body))["metadata"]["name"]
    first = await revisions(kube, name)
    assert len(first) == 1
    assert set(first[0]["data"]["spec"]) >= {"volumes", "containers", "initContainers", "imagePullSecrets"}
    assert first[0]["metadata"]["ownerReferences"][0]["name"] == name

    def secret(i: int) -> Callable[[JSON], None]:
        def mutate(obj: JSON) -> None:
            obj["spec"]["imagePullSecrets"] = [{"name": f"secret-{i}"}]

        return mutate

    for i in range(2, 16):
        await update_and_observe(kube, name, secret(i))
    assert [int(r["revision"]) for r in await revisions(kube, name)] == list(range(6, 16))
    await update_and_observe(kube, name, secret(12))  # back to a stored one: bumped, not created

    async def bumped() -> list[int] | None:
        numbers = [int(r["revision"]) for r in await revisions(kube, name)]
        return numbers if numbers == [6, 7, 8, 9, 10, 11, 13, 14, 15, 16] else None

    await eventually(bumped, timeout=20, what="revision 12 bumped to 16")


async def test_sidecarset_history_revision_data_checker(kube: KubeClient, sidecarsets: str) -> None:
    ns = sidecarsets
    body = base_sidecarset(ns)
    body["spec"]["imagePullSecrets"] = [{"name": "secret-1"}]
    body["spec"]["patchPodMetadata"] = [
        {"patchPolicy": "Retain", "annotations": {"sidecarset.kruise.io/test": "version-1"}}
    ]
    async with patch_whitelist(kube, "^sidecarset.kruise.io/"):
        name = (await create_sidecarset(kube, body))["metadata"]["name"]

        def version_two(obj: JSON) -> None:
            obj["spec"]["patchPodMetadata"][0]["annotations"]["sidecarset.kruise.io/test"] = "version-2"

        await update_and_observe(kube, name, version_two)
    listed = await revisions(kube, name)
    assert len(listed) == 2
    for revision, version in zip(listed, ("version-1", "version-2"), strict=True):
        spec = revision["data"]["spec"]
        assert set(spec) >= {
            "volumes",
            "containers",
            "initContainers",
            "imagePullSecrets",
            "patchPodMetadata",
        }
        assert spec["patchPodMetadata"][0]["annotations"]["sidecarset.kruise.io/test"] == version


async def test_sidecarset_injectionstrategy_revision_checker(kube: KubeClient, sidecarsets: str) -> None:
    ns = sidecarsets
    tags = ["latest", "1.21.1", "1.21", "1.20.1", "1.20", "1.19.10"]

    def nginx(tag: str) -> str:
        return f"registry.example.com/nginx:{tag}"

    body = base_sidecarset(ns)
    body["metadata"]["labels"][CUSTOM_VERSION_LABEL] = "0"
    body["spec"]["updateStrategy"] = {"paused": True}
    body["spec"]["containers"][0]["image"] = nginx(tags[0])
    name = (await create_sidecarset(kube, body))["metadata"]["name"]
    for i in range(1, 6):

        def version(obj: JSON, i: int = i) -> None:
            obj["spec"]["containers"][0]["image"] = nginx(tags[i])
            obj["metadata"]["labels"][CUSTOM_VERSION_LABEL] = str(i)

        await update_and_observe(kube, name, version)
    listed = await revisions(kube, name)
    assert [r["metadata"]["labels"][CUSTOM_VERSION_LABEL] for r in listed] == [str(i) for i in range(6)]
    pick = 3

    def inject_pick(obj: JSON) -> None:
        obj["spec"]["injectionStrategy"] = {"revision": {"customVersion": str(pick), "policy": "Always"}}

    await update_and_observe(kube, name, inject_pick)
    (pod,) = await create_deployment(kube, base_deployment(ns, replicas=1))
    assert container(pod, "nginx-sidecar")["image"] == nginx(tags[pick])
    assert (
        annotation_json(pod, HASH_ANNOTATION)[name]["controllerRevision"] == listed[pick]["metadata"]["name"]
    )

    def resume(obj: JSON) -> None:
        obj["spec"]["updateStrategy"]["paused"] = False

    await update_sidecarset(kube, name, resume)
    await wait_status(kube, name, matchedPods=1, updatedPods=1, readyPods=1, updatedReadyPods=1)
    (pod,) = await selector_pods(kube, ns)
    assert container(pod, "nginx-sidecar")["image"] == nginx(tags[5])
    assert annotation_json(pod, HASH_ANNOTATION)[name]["controllerRevision"] == listed[5]["metadata"]["name"]


async def test_sidecarset_inject_pod_sidecar_during_canary_upgrades(
    kube: KubeClient, sidecarsets: str
) -> None:
    ns = sidecarsets
    stable, canary = "registry.example.com/nginx:1.20.1", "registry.example.com/nginx:1.21.1"
    body = base_sidecarset(ns)
    body["metadata"]["labels"] = {CUSTOM_VERSION_LABEL: "0"}
    body["spec"]["containers"][0]["image"] = stable
    body["spec"]["updateStrategy"] = {"type": "RollingUpdate"}
    name = (await create_sidecarset(kube, body))["metadata"]["name"]
    deployments = {}
    for version in ("stable", "canary"):
        deployment = base_deployment(ns, replicas=1, name=f"deployment-test-{version}")
        deployment["spec"]["selector"]["matchLabels"]["version"] = version
        deployment["spec"]["template"]["metadata"]["labels"]["version"] = version
        deployments[version] = deployment
        await create_deployment(kube, deployment)

    async def counts(version: str) -> tuple[int, int]:
        pods = await selector_pods(kube, ns, {"app": "sidecarset", "version": version})
        found = [container(p, "nginx-sidecar")["image"] for p in pods]
        return found.count(stable), found.count(canary)

    assert await counts("stable") == (1, 0) and await counts("canary") == (1, 0)

    def canary_release(obj: JSON) -> None:
        sidecar = obj["spec"]["containers"][0]
        sidecar["image"] = canary
        sidecar["env"] = [{"name": "SOME_ENV", "value": "SOME_VAL"}]  # not upgradable in place
        obj["spec"]["updateStrategy"]["selector"] = {"matchLabels": {"version": "canary"}}
        obj["spec"]["injectionStrategy"] = {"revision": {"customVersion": "0", "policy": "Partial"}}
        obj["metadata"]["labels"] = {CUSTOM_VERSION_LABEL: "1"}

    await update_sidecarset(kube, name, canary_release)
    await wait_status(kube, name, matchedPods=2, updatedPods=0, readyPods=2, updatedReadyPods=0)
    for version in ("stable", "canary"):
        await kube.patch(
            DEPLOYMENTS, f"deployment-test-{version}", {"spec": {"replicas": 2}}, ns, patch_type="merge"
        )
    await wait_pods(kube, ns, 4)
    assert await counts("stable") == (2, 0)  # not selected by the update strategy: the stored revision
    assert await counts("canary") == (1, 1)  # selected, integer partition: the latest
    assert json.dumps(deployments)  # both Deployments ran
