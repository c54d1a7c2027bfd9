"""SidecarSet on a real kubelet: the sidecar is injected into a pod the real node runs, and an
image change of the SidecarSet restarts only the sidecar container inside the same pod (same UID,
IP and sandbox; the app container keeps its containerID and restartCount 0), as upstream's
in-place sidecar upgrade promises (openkruise.io/docs/user-manuals/sidecarset)."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from kruise.core.kube import KubeClient
from kruise.core.kube.resources import PODS, SIDECARSETS
from kruise.core.localcluster.realnode import busybox
from tests.integration.realnode.conftest import (
    RealNode,
    container_status,
    real_pod_spec,
    wait_pod,
    web_container,
)
from tests.support.wait import eventually

pytestmark = pytest.mark.usefixtures("manager")

JSON = dict[str, Any]


def sidecarset(name: str, namespace: str, tag: str) -> JSON:
    sidecar = web_container("log-sidecar", tag, 8081)
    return {
        "apiVersion": "apps.kruise.io/v1alpha1",
        "kind": "SidecarSet",
        "metadata": {"name": name},
        "spec": {
            "namespace": namespace,
            "selector": {"matchLabels": {"app": "web-sidecar"}},
            "containers": [sidecar],
            "updateStrategy": {"type": "RollingUpdate", "maxUnavailable": 1},
        },
    }


async def status_is(kube: KubeClient, name: str, **want: int) -> bool:
    obj = await kube.get(SIDECARSETS, name)
    status = obj.get("status") or {}
    current = status.get("observedGeneration") == obj["metadata"]["generation"]
    return current and all(status.get(k) == v for k, v in want.items())


async def test_sidecar_upgrade_restarts_only_the_sidecar_on_a_real_kubelet(
    kube: KubeClient, namespace: str, real_node: RealNode
) -> None:
    name = f"realnode-{namespace[-5:]}"
    await kube.create(SIDECARSETS, sidecarset(name, namespace, "v1"))
    try:
        await eventually(lambda: status_is(kube, name), timeout=30, what="sidecarset observed")
        pod = {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "web", "labels": {"app": "web-sidecar"}},
            "spec": real_pod_spec(web_container("web", "v1", 8080)),
        }
        await kube.create(PODS, copy.deepcopy(pod), namespace)
        before = await wait_pod(kube, namespace, "web", timeout=90)
        assert [c["name"] for c in before["spec"]["containers"]] == ["log-sidecar", "web"]
        assert before["spec"]["nodeName"] == real_node.name
        (sandbox,) = real_node.sandboxes(before["metadata"]["uid"])
        await eventually(
            lambda: status_is(kube, name, matchedPods=1, updatedPods=1, readyPods=1),
            timeout=30,
            what="sidecarset status for the running pod",
        )

        obj = await kube.get(SIDECARSETS, name)
        obj["spec"]["containers"][0]["image"] = busybox("v2")
        await kube.replace(SIDECARSETS, obj)
        await eventually(
            lambda: status_is(kube, name, matchedPods=1, updatedPods=1, readyPods=1, updatedReadyPods=1),
            timeout=120,
            what="the sidecar upgraded in place and ready",
        )
        after = await wait_pod(kube, namespace, "web")
        assert after["metadata"]["uid"] == before["metadata"]["uid"]
        assert after["status"]["podIP"] == before["status"]["podIP"]
        sidecar, old_sidecar = container_status(after, "log-sidecar"), container_status(before, "log-sidecar")
        assert (sidecar["restartCount"], sidecar["image"]) == (1, busybox("v2"))
        assert sidecar["containerID"] != old_sidecar["containerID"]
        assert sidecar["imageID"] != old_sidecar["imageID"]
        web, old_web = container_status(after, "web"), container_status(before, "web")
        assert (web["restartCount"], web["containerID"]) == (0, old_web["containerID"])
        (still,) = real_node.sandboxes(after["metadata"]["uid"])
        assert still["id"] == sandbox["id"]
        attempts = real_node.containers(sandbox["id"], "log-sidecar")
        assert [(c["metadata"]["attempt"], c["state"]) for c in attempts] == [
            (0, "CONTAINER_EXITED"),
            (1, "CONTAINER_RUNNING"),
        ]
    finally:
        await kube.delete(SIDECARSETS, name, missing_ok=True)
