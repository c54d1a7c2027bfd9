"""Container launch priority on the real kubelet (upstream e2e ``containerlaunchpriority.go``).

The pod webhook injects ``KRUISE_CONTAINER_BARRIER`` from the pod's ``<pod>-barrier`` ConfigMap;
the kubelet really cannot create a container until its key exists (CreateContainerConfigError),
and the manager's controller adds the keys one priority at a time as containers become ready.
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any

import pytest

from kruise.core.errors import KruiseError
from kruise.core.kube import KubeClient
from kruise.core.kube.resources import CLONESETS, CONFIGMAPS, PODS
from tests.integration.realnode.conftest import (
    RealNode,
    condition,
    container_status,
    real_pod_spec,
    web_container,
)
from tests.support.wait import eventually

pytestmark = pytest.mark.usefixtures("manager")

JSON = dict[str, Any]
BARRIER = "KRUISE_CONTAINER_BARRIER"
PRIORITY = "KRUISE_CONTAINER_PRIORITY"


def cloneset(name: str, *containers: JSON, annotations: dict[str, str] | None = None) -> JSON:
    return {
        "apiVersion": "apps.kruise.io/v1alpha1",
        "kind": "CloneSet",
        "metadata": {"name": name},
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": {"app": name}, "annotations": annotations or {}},
                "spec": real_pod_spec(*containers),
            },
        },
    }


async def ready_pod(kube: KubeClient, namespace: str, app: str, timeout: float = 120) -> JSON:
    async def probe() -> JSON | None:
        pods = (await kube.list(PODS, namespace, label_selector=f"app={app}"))["items"]
        ready = [p for p in pods if condition(p, "Ready") == "True"]
        return ready[0] if ready else None

    return await eventually(probe, timeout=timeout, what=f"a Ready pod of {app}")


def started(pod: JSON, name: str) -> datetime:
    return datetime.fromisoformat(container_status(pod, name)["state"]["running"]["startedAt"])


def barrier_of(pod: JSON, name: str) -> JSON | None:
    container = next(c for c in pod["spec"]["containers"] if c["name"] == name)
    env = [e for e in container.get("env") or () if e["name"] == BARRIER]
    return env[0]["valueFrom"]["configMapKeyRef"] if env else None


async def test_container_priority_created_by_cloneset(
    kube: KubeClient, namespace: str, real_node: RealNode
) -> None:
    c2 = web_container("c2", "v1", 8081)
    c2["env"].append({"name": PRIORITY, "value": "10"})
    await kube.create(CLONESETS, cloneset("prio", web_container("c1", "v1", 8080), c2), namespace)

    pod = await ready_pod(kube, namespace, "prio")
    name = pod["metadata"]["name"]
    assert barrier_of(pod, "c1") == {"name": f"{name}-barrier", "key": "p_0"}
    assert barrier_of(pod, "c2") == {"name": f"{name}-barrier", "key": "p_10"}
    # the kubelet started c2 (priority 10) first, and c1 only once c2 was ready (startedAt has
    # one-second resolution: the two may share a second, never be reversed)
    assert started(pod, "c2") <= started(pod, "c1")
    assert container_status(pod, "c1")["restartCount"] == 0
    barrier = await kube.get(CONFIGMAPS, f"{name}-barrier", namespace)
    assert barrier["data"] == {"p_10": "true", "p_0": "true"}
    assert barrier["metadata"]["ownerReferences"][0]["uid"] == pod["metadata"]["uid"]

    async def completed() -> bool:
        current = await kube.get(PODS, name, namespace)
        return (
            current["metadata"]
            .get("annotations", {})
            .get("apps.kruise.io/container-launch-priority-completed")
            == "true"
        )

    await eventually(completed, timeout=30, what="the pod marked launch-priority-completed")


async def test_ordered_annotation_starts_containers_in_their_order(
    kube: KubeClient, namespace: str, real_node: RealNode
) -> None:
    containers = [web_container(n, "v1", p) for n, p in (("first", 8080), ("second", 8081), ("third", 8082))]
    await kube.create(
        CLONESETS,
        cloneset("ordered", *containers, annotations={"apps.kruise.io/container-launch-priority": "Ordered"}),
        namespace,
    )
    pod = await ready_pod(kube, namespace, "ordered", timeout=180)
    assert [barrier_of(pod, n)["key"] for n in ("first", "second", "third")] == ["p_0", "p_-1", "p_-2"]  # type: ignore[index]
    # startedAt has one-second resolution: containers the barrier lets through within one second
    # carry the same time; the order is never reversed
    assert started(pod, "first") <= started(pod, "second") <= started(pod, "third")


async def test_run_with_no_container_priority(kube: KubeClient, namespace: str, real_node: RealNode) -> None:
    await kube.create(
        CLONESETS,
        cloneset("plain", web_container("c1", "v1", 8080), web_container("c2", "v1", 8081)),
        namespace,
    )
    pod = await ready_pod(kube, namespace, "plain")
    assert barrier_of(pod, "c1") is None and barrier_of(pod, "c2") is None
    assert [len(c["env"]) for c in pod["spec"]["containers"]] == [1, 1]


async def test_a_priority_that_is_not_an_integer_refuses_the_pod(kube: KubeClient, namespace: str) -> None:
    bad = web_container("c2", "v1", 8081)
    bad["env"].append({"name": PRIORITY, "value": "high"})
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "bad"},
        "spec": real_pod_spec(web_container(), bad),
    }
    with pytest.raises(KruiseError, match=re.escape('strconv.Atoi: parsing "high": invalid syntax')):
        await kube.create(PODS, pod, namespace)
    assert (await kube.list(PODS, namespace))["items"] == []
