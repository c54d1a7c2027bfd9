"""Upstream e2e "SidecarSet Injecting functionality [SidecarSetInject]" (test/e2e/apps/sidecarset.go),
one test per ``It``, against the real API server, kube-controller-manager's Deployments,
kube-scheduler and KWOK; plus: a pod created before its SidecarSet keeps its spec and is not
counted."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from kruise.core.errors import InvalidError
from kruise.core.kube import KubeClient
from kruise.core.kube.resources import DEPLOYMENTS, PODS, SIDECARSETS
from kruise.workloads.sidecarset.keys import (
    HASH_ANNOTATION,
    HASH_WITHOUT_IMAGE_ANNOTATION,
    INJECTED_LIST_ANNOTATION,
)
from tests.integration.sidecarset.helpers import (
    BUSYBOX,
    annotation_json,
    base_deployment,
    base_sidecarset,
    container,
    create_deployment,
    create_sidecarset,
    env_value,
    selector_pods,
    wait_pods,
    wait_status,
)

JSON = dict[str, Any]


def generation(deployment: JSON, value: str) -> JSON:
    """The Deployment selecting only its own pods (``gen=<value>``), still ``app=sidecarset``."""
    deployment["spec"]["selector"]["matchLabels"]["gen"] = value
    deployment["spec"]["template"]["metadata"]["labels"]["gen"] = value
    return deployment


async def test_pods_dont_have_matched_sidecarset(kube: KubeClient, sidecarsets: str) -> None:
    ns = sidecarsets
    body = base_sidecarset(ns)
    body["spec"]["selector"]["matchLabels"]["app"] = "nomatched"
    await create_sidecarset(kube, body)
    deployment = base_deployment(ns)
    (pod,) = await create_deployment(kube, deployment)
    assert [c["name"] for c in pod["spec"]["containers"]] == ["main"]
    assert INJECTED_LIST_ANNOTATION not in (pod["metadata"].get("annotations") or {})


async def test_sidecarset_with_volumes_downward_api(kube: KubeClient, sidecarsets: str) -> None:
    ns = sidecarsets
    body = base_sidecarset(ns)
    body["spec"]["volumes"] = [
        {
            "name": "podinfo",
            "downwardAPI": {
                "items": [
                    {"path": "labels", "fieldRef": {"fieldPath": "metadata.labels"}},
                    {"path": "annotations", "fieldRef": {"fieldPath": "metadata.annotations"}},
                ]
            },
        }
    ]
    body["spec"]["containers"][0]["volumeMounts"] = [{"name": "podinfo", "mountPath": "/etc/podinfo"}]
    created = await create_sidecarset(kube, body)
    volume = created["spec"]["volumes"][0]
    assert volume["downwardAPI"]["items"][0]["fieldRef"]["apiVersion"] == "v1"  # defaulted
    (pod,) = await create_deployment(kube, base_deployment(ns))
    assert any(v["name"] == "podinfo" and "downwardAPI" in v for v in pod["spec"]["volumes"])


async def test_sidecarset_inject_pod_sidecar_container(kube: KubeClient, sidecarsets: str) -> None:
    ns = sidecarsets
    sidecarset = await create_sidecarset(kube, base_sidecarset(ns))
    (pod,) = await create_deployment(kube, base_deployment(ns))
    assert [c["name"] for c in pod["spec"]["containers"]] == ["nginx-sidecar", "main", "busybox-sidecar"]
    assert [c["name"] for c in pod["spec"]["initContainers"]] == ["init-sidecar"]
    assert env_value(container(pod, "nginx-sidecar"), "IS_INJECTED") == "true"
    assert env_value(container(pod, "main"), "IS_INJECTED") is None
    name = sidecarset["metadata"]["name"]
    annotations = pod["metadata"]["annotations"]
    assert annotations[INJECTED_LIST_ANNOTATION] == name
    recorded = annotation_json(pod, HASH_ANNOTATION)[name]
    assert recorded["hash"] == sidecarset["metadata"]["annotations"][HASH_ANNOTATION]
    assert recorded["sidecarList"] == ["busybox-sidecar", "nginx-sidecar"]
    assert recorded["controllerRevision"] == sidecarset["status"]["latestRevision"]
    without = annotation_json(pod, HASH_WITHOUT_IMAGE_ANNOTATION)[name]
    assert without["hash"] == sidecarset["metadata"]["annotations"][HASH_WITHOUT_IMAGE_ANNOTATION]
    await wait_status(kube, name, matchedPods=1, updatedPods=1, readyPods=1, updatedReadyPods=1)


async def test_sidecarset_inject_pod_sidecar_container_volumemounts(
    kube: KubeClient, sidecarsets: str
) -> None:
    ns = sidecarsets
    body = base_sidecarset(ns)
    body["spec"]["containers"] = body["spec"]["containers"][:1]
    body["spec"]["containers"][0]["volumeMounts"] = [{"name": "nginx-volume", "mountPath": "/nginx-volume"}]
    body["spec"]["volumes"] = [{"name": "nginx-volume", "emptyDir": {}}]
    await create_sidecarset(kube, body)
    deployment = base_deployment(ns)
    spec = deployment["spec"]["template"]["spec"]
    spec["containers"][0]["volumeMounts"] = [{"name": "main-volume", "mountPath": "/main-volume"}]
    spec["volumes"] = [{"name": "main-volume", "emptyDir": {}}]
    (pod,) = await create_deployment(kube, deployment)
    assert {v["name"] for v in pod["spec"]["volumes"]} >= {"main-volume", "nginx-volume"}
    mounts = {m["mountPath"] for m in pod["spec"]["containers"][0]["volumeMounts"]}
    assert mounts >= {"/main-volume", "/nginx-volume"}


async def test_sidecarset_inject_pod_sidecar_container_volumemounts_subpathexpr_with_expanded_subpath(
    kube: KubeClient, sidecarsets: str
) -> None:
    ns = sidecarsets
    body = base_sidecarset(ns)
    body["spec"]["containers"] = body["spec"]["containers"][:1]
    body["spec"]["containers"][0]["volumeMounts"] = [{"name": "nginx-volume", "mountPath": "/nginx-volume"}]
    body["spec"]["volumes"] = [{"name": "nginx-volume", "emptyDir": {}}]
    await create_sidecarset(kube, body)
    deployment = base_deployment(ns)
    main = deployment["spec"]["template"]["spec"]["containers"][0]
    main["volumeMounts"] = [
        {"name": "main-volume", "mountPath": "/main-volume", "subPathExpr": "foo/$(POD_NAME)/$(OD_NAME)/conf"}
    ]
    main["env"] = [{"name": "POD_NAME", "value": "bar"}, {"name": "OD_NAME", "value": "od_name"}]
    deployment["spec"]["template"]["spec"]["volumes"] = [{"name": "main-volume", "emptyDir": {}}]
    (pod,) = await create_deployment(kube, deployment)
    sidecar = pod["spec"]["containers"][0]
    assert {m["mountPath"] for m in sidecar["volumeMounts"]} >= {"/main-volume", "/nginx-volume"}
    assert env_value(sidecar, "POD_NAME") == "bar" and env_value(sidecar, "OD_NAME") == "od_name"


async def test_sidecarset_inject_pod_sidecar_container_transfer_envs(
    kube: KubeClient, sidecarsets: str
) -> None:
    ns = sidecarsets
    body = base_sidecarset(ns)
    body["spec"]["containers"] = body["spec"]["containers"][:1]
    body["spec"]["containers"][0]["env"] = [{"name": "OD_NAME", "value": "sidecar_name"}]
    body["spec"]["containers"][0]["transferEnv"] = [
        {"sourceContainerName": "main", "envName": "POD_NAME"},
        {"sourceContainerName": "main", "envName": "OD_NAME"},
        {"sourceContainerName": "main", "envNames": ["PROXY_IP", "NOT_THERE"]},
    ]
    await create_sidecarset(kube, body)
    deployment = base_deployment(ns)
    deployment["spec"]["template"]["spec"]["containers"][0]["env"] = [
        {"name": "POD_NAME", "value": "bar"},
        {"name": "OD_NAME", "value": "od_name"},
        {"name": "PROXY_IP", "value": "127.0.0.1"},
    ]
    (pod,) = await create_deployment(kube, deployment)
    sidecar = pod["spec"]["containers"][0]
    expected = {"POD_NAME": "bar", "OD_NAME": "sidecar_name", "PROXY_IP": "127.0.0.1", "NOT_THERE": None}
    assert {k: env_value(sidecar, k) for k in expected} == expected


@pytest.mark.parametrize("where", ["labels", "annotations"])
async def test_sidecarset_inject_pod_sidecar_container_transfer_envs_with_downward_api(
    kube: KubeClient, sidecarsets: str, where: str
) -> None:
    """Both ``It``s: "... transfer Envs with downward API by metadata.labels" / "... annotations"."""
    ns = sidecarsets
    body = base_sidecarset(ns)
    body["spec"]["containers"] = body["spec"]["containers"][:1]
    body["spec"]["containers"][0]["env"] = [
        {"name": "OD_NAME", "value": "sidecar_name"},
        {"name": "SidecarName", "value": "nginx-sidecar"},
    ]
    body["spec"]["containers"][0]["transferEnv"] = [
        {
            "sourceContainerNameFrom": {
                "fieldRef": {"apiVersion": "v1", "fieldPath": f"metadata.{where}['biz']"}
            },
            "envNames": ["POD_NAME", "OD_NAME", "PROXY_IP"],
        }
    ]
    await create_sidecarset(kube, body)
    deployment = base_deployment(ns)
    template = deployment["spec"]["template"]
    template["metadata"].setdefault(where, {})["biz"] = "main"
    template["spec"]["containers"][0]["env"] = [
        {"name": "POD_NAME", "value": "bar"},
        {"name": "OD_NAME", "value": "od_name"},
        {"name": "PROXY_IP", "value": "127.0.0.1"},
    ]
    (pod,) = await create_deployment(kube, deployment)
    assert len(pod["spec"]["containers"]) == 2
    expected = {
        "POD_NAME": "bar",
        "OD_NAME": "sidecar_name",
        "PROXY_IP": "127.0.0.1",
        "SidecarName": "nginx-sidecar",
    }
    sidecar = pod["spec"]["containers"][0]
    assert {k: env_value(sidecar, k) for k in expected} == expected


async def test_sidecarset_inject_initcontainer_with_restartpolicy_always(
    kube: KubeClient, sidecarsets: str
) -> None:
    """Native sidecars: refused with RollingUpdate (no in-place upgrade of init containers);
    with NotUpdate injected in name order after the pod's own, a hot-upgrade one as its pair."""
    ns = sidecarsets
    base = base_sidecarset(ns, "-1")
    base["spec"]["containers"] = []
    base["spec"]["initContainers"] = [
        {
            "name": "init-1",
            "command": ["/bin/sh", "-c", "sleep 1000000"],
            "image": BUSYBOX,
            "restartPolicy": "Always",
        }
    ]
    with pytest.raises(
        InvalidError, match=r"The initContainer in-place upgrade is not currently supported\."
    ):
        await kube.create(SIDECARSETS, copy.deepcopy(base))
    base["spec"]["updateStrategy"] = {"type": "NotUpdate"}
    second = base_sidecarset(ns, "-2")
    second["spec"]["containers"] = []
    second["spec"]["updateStrategy"] = {"type": "NotUpdate"}
    second["spec"]["initContainers"] = [
        {
            "name": "hot-init",
            "image": "registry.example.com/hotupgrade-sample:sidecarv1",
            "restartPolicy": "Always",
            "upgradeStrategy": {
                "upgradeType": "HotUpgrade",
                "hotUpgradeEmptyImage": "registry.example.com/hotupgrade-sample:empty",
            },
        }
    ]
    await create_sidecarset(kube, base)
    await create_sidecarset(kube, second)
    pods = await create_deployment(kube, base_deployment(ns, replicas=2))
    for pod in pods:
        assert [c["name"] for c in pod["spec"]["initContainers"]] == ["hot-init-1", "hot-init-2", "init-1"]
        assert all(c.get("restartPolicy") == "Always" for c in pod["spec"]["initContainers"])


async def test_a_pod_created_before_its_sidecarset_keeps_its_spec_and_is_not_counted(
    kube: KubeClient, sidecarsets: str
) -> None:
    ns = sidecarsets
    (old,) = await create_deployment(kube, generation(base_deployment(ns, name="before"), "1"))
    sidecarset = await create_sidecarset(kube, base_sidecarset(ns))
    name = sidecarset["metadata"]["name"]
    await wait_status(kube, name, matchedPods=0, updatedPods=0, readyPods=0)
    await kube.create(DEPLOYMENTS, generation(base_deployment(ns, name="after"), "2"), ns)
    await wait_pods(kube, ns, 2)
    await wait_status(kube, name, matchedPods=1, updatedPods=1, readyPods=1)
    again = await kube.get(PODS, old["metadata"]["name"], ns)
    assert again["spec"]["containers"] == old["spec"]["containers"]
    assert INJECTED_LIST_ANNOTATION not in (again["metadata"].get("annotations") or {})
    injected = [p for p in await selector_pods(kube, ns) if p["metadata"]["name"] != old["metadata"]["name"]]
    assert [c["name"] for c in injected[0]["spec"]["containers"]] == [
        "nginx-sidecar",
        "main",
        "busybox-sidecar",
    ]
