"""Helpers for the Advanced DaemonSet scenarios (upstream's ``DaemonSetTester``).

Every DaemonSet here runs only on nodes its test added: its template selects the label
``ads-test: <pool prefix>`` (unless the test says otherwise), so the session's other nodes (three
KWOK nodes, the real kubelet node while the real-node group runs, nodes other tests add) never
count. Pods are listed by ``daemonset-name: <name>`` (upstream's ``DaemonSetNameLabel``).
"""

from __future__ import annotations

import copy
from typing import Any

from kruise.core.kube import KubeClient
from kruise.core.kube.resources import DAEMONSETS, EVENTS, PODS
from tests.support.nodes import NodePool
from tests.support.wait import eventually

JSON = dict[str, Any]
NAME_LABEL = "daemonset-name"
IMAGE = "registry.example.com/httpd:2.4.38-alpine"
NEW_IMAGE = "registry.example.com/httpd:2.4.39-alpine"
HASH = "controller-revision-hash"


def node_label(pool: NodePool) -> dict[str, str]:
    """The label of the test's own nodes."""
    return {"ads-test": pool.prefix}


def new_daemonset(
    name: str,
    pool: NodePool | None,
    *,
    rolling: JSON | None = None,
    strategy_type: str | None = None,
    image: str = IMAGE,
    **spec: Any,
) -> JSON:
    """``NewDaemonSet``: one ``app`` container; nodeSelector on the pool's label."""
    pod_spec: JSON = {"containers": [{"name": "app", "image": image}]}
    if pool is not None:
        pod_spec["nodeSelector"] = node_label(pool)
    strategy: JSON = {}
    if strategy_type:
        strategy["type"] = strategy_type
    if rolling is not None:
        strategy["rollingUpdate"] = rolling
    body: JSON = {
        "apiVersion": "apps.kruise.io/v1alpha1",
        "kind": "DaemonSet",
        "metadata": {"name": name},
        "spec": {
            "selector": {"matchLabels": {NAME_LABEL: name}},
            "template": {"metadata": {"labels": {NAME_LABEL: name}}, "spec": pod_spec},
            **({"updateStrategy": strategy} if strategy else {}),
            **spec,
        },
    }
    return body


async def create(kube: KubeClient, namespace: str, body: JSON) -> JSON:
    return await kube.create(DAEMONSETS, copy.deepcopy(body), namespace)


async def get(kube: KubeClient, namespace: str, name: str) -> JSON:
    return await kube.get(DAEMONSETS, name, namespace)


async def patch_spec(kube: KubeClient, namespace: str, name: str, spec: JSON) -> JSON:
    """Merge-patch ``spec`` (lists such as ``containers`` are replaced whole)."""
    return await kube.patch(DAEMONSETS, name, {"spec": spec}, namespace, patch_type="merge")


async def set_container(kube: KubeClient, namespace: str, name: str, **container: Any) -> JSON:
    """Replace the template's ``app`` container (image and anything else given)."""
    body = {"name": "app", "image": IMAGE, **container}
    return await patch_spec(kube, namespace, name, {"template": {"spec": {"containers": [body]}}})


def ready(pod: JSON) -> bool:
    return any(
        c.get("type") == "Ready" and c.get("status") == "True"
        for c in (pod.get("status") or {}).get("conditions") or []
    )


def live(pod: JSON) -> bool:
    return not pod["metadata"].get("deletionTimestamp") and (pod.get("status") or {}).get("phase") not in (
        "Succeeded",
        "Failed",
    )


async def pods(
    kube: KubeClient, namespace: str, name: str, *, everything: bool = False, selector: str | None = None
) -> list[JSON]:
    """The DaemonSet's live pods (``everything``: terminating and finished ones too), listed by
    ``daemonset-name: <name>`` or by ``selector`` (a DaemonSet applied as upstream wrote it)."""
    items = (await kube.list(PODS, namespace, label_selector=selector or f"{NAME_LABEL}={name}"))["items"]
    return list(items) if everything else [p for p in items if live(p)]


def node_of(pod: JSON) -> str:
    return str(pod["spec"].get("nodeName") or "")


def label(obj: JSON, key: str) -> str | None:
    value = (obj["metadata"].get("labels") or {}).get(key)
    return None if value is None else str(value)


def image_of(pod: JSON) -> str:
    return str(pod["spec"]["containers"][0]["image"])


async def wait_on_nodes(
    kube: KubeClient,
    namespace: str,
    name: str,
    nodes: list[str],
    *,
    timeout: float = 60,
    image: str | None = None,
    selector: str | None = None,
    ignoring: tuple[str, ...] = (),
) -> dict[str, JSON]:
    """``CheckDaemonPodOnNodes``: exactly one live, Ready pod on each of ``nodes`` and no live pod
    elsewhere (with ``image``, every pod runs it); returns node -> pod. Pods on the ``ignoring``
    nodes (deleted ones, whose pods wait for the pod garbage collector) are left out."""

    async def probe() -> list[dict[str, JSON]] | None:
        by_node: dict[str, JSON] = {}
        for pod in await pods(kube, namespace, name, selector=selector):
            if node_of(pod) in ignoring:
                continue
            if node_of(pod) in by_node or not ready(pod) or node_of(pod) not in nodes:
                return None
            if image is not None and image_of(pod) != image:
                return None
            by_node[node_of(pod)] = pod
        return [by_node] if set(by_node) == set(nodes) else None

    (result,) = await eventually(probe, timeout=timeout, what=f"DaemonSet {name} on exactly {nodes}")
    return result


async def wait_status(
    kube: KubeClient, namespace: str, name: str, *, timeout: float = 60, **want: Any
) -> JSON:
    """Wait until the status (for the current generation) has every ``want`` field."""

    async def probe() -> JSON | None:
        ds = await get(kube, namespace, name)
        st = ds.get("status") or {}
        if ds["metadata"].get("generation") != st.get("observedGeneration"):
            return None
        return ds if all(st.get(k) == v for k, v in want.items()) else None

    return await eventually(probe, timeout=timeout, what=f"DaemonSet {name} status {want}")


async def check_status(kube: KubeClient, namespace: str, name: str, nodes: int) -> JSON:
    """``CheckDaemonStatus``: every desired node runs a ready, up-to-date pod."""
    return await wait_status(
        kube,
        namespace,
        name,
        desiredNumberScheduled=nodes,
        currentNumberScheduled=nodes,
        numberReady=nodes,
        updatedNumberScheduled=nodes,
        numberAvailable=nodes,
        numberMisscheduled=0,
    )


async def events(kube: KubeClient, namespace: str, name: str) -> list[JSON]:
    items = (await kube.list(EVENTS, namespace))["items"]
    return [
        e
        for e in items
        if (e.get("involvedObject") or {}).get("kind") == "DaemonSet"
        and (e.get("involvedObject") or {}).get("name") == name
    ]
