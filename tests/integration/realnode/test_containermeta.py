"""In-place update of env from pod metadata, on the real kubelet with kruise-daemon (OpenKruise
v1.0's "downward API in place"; upstream e2e ``containermeta.go`` and the CloneSet scenario "in-place
update both image and env from label").

A container's env taken from a pod label or annotation (``valueFrom.fieldRef``) only changes when
the container starts again. When a CloneSet's template changes such metadata, the CloneSet patches
the pod's metadata in place and holds ``InPlaceUpdateReady`` False; the node's daemon, which reports
each running container's env hash in ``apps.kruise.io/runtime-containers-meta``, sees the hash the
new metadata asks for differ and stops the container through CRI; the kubelet starts it again with
the new value, and the CloneSet counts the pod updated once the daemon reports the new container's
hash.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from kruise.core.containermeta import RUNTIME_CONTAINERS_META_KEY
from kruise.core.kube import KubeClient
from kruise.core.kube.resources import CLONESETS, PODS, STATEFULSETS
from kruise.core.localcluster.realnode import busybox
from tests.integration.realnode.conftest import RealNode, container_status, real_pod_spec, web_container
from tests.support.wait import eventually

pytestmark = pytest.mark.usefixtures("manager")

JSON = dict[str, Any]


def env_cloneset(name: str, replicas: int, source: str) -> JSON:
    """``web`` reads ``TEST_ENV`` from the pod's ``test-env`` label or annotation (``source``)."""
    web = web_container("web", "v1", 8080)
    web["env"].append(
        {"name": "TEST_ENV", "valueFrom": {"fieldRef": {"fieldPath": f"metadata.{source}['test-env']"}}}
    )
    metadata: JSON = {"labels": {"app": name}}
    metadata["labels" if source == "labels" else "annotations"] = {
        **metadata.get(source, {}),
        "test-env": "foo",
    }
    metadata["labels"]["app"] = name
    return {
        "apiVersion": "apps.kruise.io/v1alpha1",
        "kind": "CloneSet",
        "metadata": {"name": name},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": name}},
            "template": {"metadata": metadata, "spec": real_pod_spec(web)},
            "updateStrategy": {"type": "InPlaceIfPossible"},
        },
    }


async def cloneset_pods(kube: KubeClient, namespace: str, app: str) -> list[JSON]:
    return sorted(
        (await kube.list(PODS, namespace, label_selector=f"app={app}"))["items"],
        key=lambda p: p["metadata"]["name"],
    )


async def wait_updated_ready(
    kube: KubeClient, namespace: str, name: str, replicas: int, timeout: float = 120
) -> None:
    async def probe() -> bool:
        cs = await kube.get(CLONESETS, name, namespace)
        status = cs.get("status") or {}
        return (
            status.get("observedGeneration") == cs["metadata"]["generation"]
            and status.get("updatedReadyReplicas") == replicas
            and status.get("readyReplicas") == replicas
        )

    await eventually(probe, timeout=timeout, what=f"{name}: {replicas} updated and ready")


def running_env(node: RealNode, pod: JSON) -> dict[str, str]:
    container_id = container_status(pod, "web")["containerID"].partition("://")[2]
    out = node.local.crictl(node.name, "exec", container_id, "env")
    return dict(line.split("=", 1) for line in out.splitlines() if "=" in line)


async def reported(kube: KubeClient, namespace: str, pod_name: str) -> JSON:
    async def probe() -> JSON | None:
        pod = await kube.get(PODS, pod_name, namespace)
        raw = (pod["metadata"].get("annotations") or {}).get(RUNTIME_CONTAINERS_META_KEY)
        if raw is None:
            return None
        meta = json.loads(raw)
        entry = next((c for c in meta["containers"] if c["name"] == "web"), None)
        current = container_status(pod, "web").get("containerID")
        return (
            pod
            if entry
            and entry["containerID"] == current
            and entry["hashes"].get("extractedEnvFromMetadataHash")
            else None
        )

    return await eventually(
        probe, timeout=60, what=f"{pod_name}: runtime-containers-meta of its running container"
    )


async def test_should_recreate_container_when_annotations_for_env_changed(
    kube: KubeClient, namespace: str, real_node: RealNode
) -> None:
    await kube.create(CLONESETS, env_cloneset("meta", 2, "annotations"), namespace)
    await wait_updated_ready(kube, namespace, "meta", 2)
    before = await cloneset_pods(kube, namespace, "meta")
    for pod in before:
        pod = await reported(kube, namespace, pod["metadata"]["name"])
        assert running_env(real_node, pod)["TEST_ENV"] == "foo"

    # a change of the pod's annotation alone restarts nothing (no in-place update is under way)
    first = before[0]["metadata"]["name"]
    await kube.patch(PODS, first, {"metadata": {"annotations": {"test-env": "bar"}}}, namespace)
    await asyncio.sleep(5)  # time enough for the daemon to have (wrongly) restarted it
    pod0 = await kube.get(PODS, first, namespace)
    assert container_status(pod0, "web")["restartCount"] == 0
    assert container_status(pod0, "web")["containerID"] == container_status(before[0], "web")["containerID"]

    await kube.patch(
        CLONESETS,
        "meta",
        {"spec": {"template": {"metadata": {"annotations": {"test-env": "bar"}}}}},
        namespace,
    )
    await wait_updated_ready(kube, namespace, "meta", 2)
    after = {p["metadata"]["name"]: p for p in await cloneset_pods(kube, namespace, "meta")}
    for old in before:
        new = after[old["metadata"]["name"]]
        assert new["metadata"]["uid"] == old["metadata"]["uid"]  # in place
        assert container_status(new, "web")["restartCount"] == 1
        assert container_status(new, "web")["containerID"] != container_status(old, "web")["containerID"]
        assert running_env(real_node, new)["TEST_ENV"] == "bar"  # the kubelet resolved the new value


async def test_in_place_update_both_image_and_env_from_label(
    kube: KubeClient, namespace: str, real_node: RealNode
) -> None:
    await kube.create(CLONESETS, env_cloneset("both", 1, "labels"), namespace)
    await wait_updated_ready(kube, namespace, "both", 1)
    (old,) = await cloneset_pods(kube, namespace, "both")
    old = await reported(kube, namespace, old["metadata"]["name"])

    cs = await kube.get(CLONESETS, "both", namespace)
    cs["spec"]["template"]["metadata"]["labels"]["test-env"] = "bar"
    cs["spec"]["template"]["spec"]["containers"][0]["image"] = busybox("v2")
    await kube.replace(CLONESETS, cs)
    await wait_updated_ready(kube, namespace, "both", 1, timeout=180)
    (new,) = await cloneset_pods(kube, namespace, "both")
    assert new["metadata"]["uid"] == old["metadata"]["uid"]
    status = container_status(new, "web")
    assert status["restartCount"] == 1  # one restart carries both the image and the env
    assert status["containerID"] != container_status(old, "web")["containerID"]
    assert status["image"] == busybox("v2")
    assert running_env(real_node, new)["TEST_ENV"] == "bar"


async def test_should_in_place_update_env_from_label(
    kube: KubeClient, namespace: str, real_node: RealNode
) -> None:
    """Advanced StatefulSet (upstream v1beta1 e2e): a template label read by an env var changes,
    pods are updated in place in ordinal order, each container restarted once with the new value
    (upstream's 10 s in-place grace is 1 s here)."""
    web = web_container("web", "v1", 8080)
    web["env"].append(
        {"name": "TEST_ENV", "valueFrom": {"fieldRef": {"fieldPath": "metadata.labels['test-env']"}}}
    )
    spec = real_pod_spec(web)
    spec["readinessGates"] = [{"conditionType": "InPlaceUpdateReady"}]
    sts = {
        "apiVersion": "apps.kruise.io/v1beta1",
        "kind": "StatefulSet",
        "metadata": {"name": "ss"},
        "spec": {
            "replicas": 3,
            "selector": {"matchLabels": {"app": "ss"}},
            "template": {"metadata": {"labels": {"app": "ss", "test-env": "foo"}}, "spec": spec},
            "updateStrategy": {
                "type": "RollingUpdate",
                "rollingUpdate": {
                    "podUpdatePolicy": "InPlaceIfPossible",
                    "inPlaceUpdateStrategy": {"gracePeriodSeconds": 1},
                },
            },
        },
    }
    await kube.create(STATEFULSETS, sts, namespace)

    async def settled(revision: str | None = None) -> JSON | None:
        ss = await kube.get(STATEFULSETS, "ss", namespace)
        st = ss.get("status") or {}
        ok = st.get("observedGeneration") == ss["metadata"]["generation"] and st.get("readyReplicas") == 3
        ok = ok and st.get("updatedReplicas") == 3 and st.get("currentRevision") == st.get("updateRevision")
        return ss if ok and (revision is None or st.get("updateRevision") != revision) else None

    first: JSON = await eventually(settled, timeout=120, what="ss 3 ready")
    before = {p["metadata"]["name"]: p for p in await cloneset_pods(kube, namespace, "ss")}
    for pod in before.values():
        assert (
            running_env(real_node, await reported(kube, namespace, pod["metadata"]["name"]))["TEST_ENV"]
            == "foo"
        )

    patch = {"spec": {"template": {"metadata": {"labels": {"test-env": "bar"}}}}}
    await kube.patch(STATEFULSETS, "ss", patch, namespace)
    await eventually(
        lambda: settled(first["status"]["updateRevision"]), timeout=180, what="ss updated in place"
    )
    for pod in await cloneset_pods(kube, namespace, "ss"):
        old = before[pod["metadata"]["name"]]
        assert pod["metadata"]["uid"] == old["metadata"]["uid"]
        assert container_status(pod, "web")["restartCount"] == 1
        assert running_env(real_node, pod)["TEST_ENV"] == "bar"
