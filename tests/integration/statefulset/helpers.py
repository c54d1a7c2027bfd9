"""Helpers for the Advanced StatefulSet scenarios (upstream's ``StatefulSetTester``).

Every set here selects its pods with ``app: <name>`` so several sets can share a namespace.
Pods are listed by that label; terminating pods are left out unless asked.
"""

from __future__ import annotations

import copy
from typing import Any

from kruise.core.kube import KubeClient
from kruise.core.kube.resources import CONTROLLER_REVISIONS, EVENTS, PODS, PVCS, STATEFULSETS
from tests.support.wait import eventually, wait_observed

JSON = dict[str, Any]
IMAGE = "registry.example.com/nginx:1.25"
NEW_IMAGE = "registry.example.com/nginx:1.26"
REVISION = "controller-revision-hash"
IN_PLACE_GATE = {"conditionType": "InPlaceUpdateReady"}


def new_statefulset(
    name: str,
    replicas: int,
    *,
    image: str = IMAGE,
    parallel: bool = False,
    in_place: bool = False,
    rolling: JSON | None = None,
    claims: tuple[str, ...] = (),
    **spec: Any,
) -> JSON:
    """An ``apps.kruise.io/v1beta1`` StatefulSet like upstream's ``NewStatefulSet``: one ``nginx``
    container, selector ``app=<name>``, ``claims`` as 1Mi volume claim templates mounted at /data."""
    container: JSON = {"name": "nginx", "image": image}
    if claims:
        container["volumeMounts"] = [{"name": c, "mountPath": f"/data/{c}"} for c in claims]
    pod_spec: JSON = {"containers": [container]}
    if in_place:
        pod_spec["readinessGates"] = [IN_PLACE_GATE]
    body: JSON = {
        "apiVersion": "apps.kruise.io/v1beta1",
        "kind": "StatefulSet",
        "metadata": {"name": name},
        "spec": {
            "replicas": replicas,
            "serviceName": "test",
            "selector": {"matchLabels": {"app": name}},
            "template": {"metadata": {"labels": {"app": name}}, "spec": pod_spec},
            **spec,
        },
    }
    if parallel:
        body["spec"]["podManagementPolicy"] = "Parallel"
    strategy = dict(rolling or {})
    if in_place:
        strategy.setdefault("podUpdatePolicy", "InPlaceIfPossible")
    if strategy:
        body["spec"]["updateStrategy"] = {"type": "RollingUpdate", "rollingUpdate": strategy}
    if claims:
        body["spec"]["volumeClaimTemplates"] = [
            {
                "metadata": {"name": c},
                "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Mi"}}},
            }
            for c in claims
        ]
    return body


async def create(kube: KubeClient, namespace: str, body: JSON) -> JSON:
    return await kube.create(STATEFULSETS, copy.deepcopy(body), namespace)


async def get(kube: KubeClient, namespace: str, name: str) -> JSON:
    return await kube.get(STATEFULSETS, name, namespace)


async def patch_spec(kube: KubeClient, namespace: str, name: str, spec: JSON) -> JSON:
    """Merge-patch ``spec`` (a list such as ``containers`` is replaced whole)."""
    return await kube.patch(STATEFULSETS, name, {"spec": spec}, namespace, patch_type="merge")


async def set_image(kube: KubeClient, namespace: str, name: str, image: str) -> JSON:
    """JSON-patch the first container's image (the other template fields stay as they are)."""
    patch = [{"op": "replace", "path": "/spec/template/spec/containers/0/image", "value": image}]
    return await kube.patch(STATEFULSETS, name, patch, namespace, patch_type="json")


async def pods(
    kube: KubeClient, namespace: str, name: str, *, include_terminating: bool = False
) -> list[JSON]:
    items = (await kube.list(PODS, namespace, label_selector=f"app={name}"))["items"]
    if include_terminating:
        return list(items)
    return [p for p in items if not p["metadata"].get("deletionTimestamp")]


async def claims(kube: KubeClient, namespace: str) -> list[JSON]:
    return list((await kube.list(PVCS, namespace))["items"])


async def revisions(kube: KubeClient, namespace: str, name: str) -> list[JSON]:
    items = (await kube.list(CONTROLLER_REVISIONS, namespace, label_selector=f"app={name}"))["items"]
    return sorted(items, key=lambda r: int(r.get("revision") or 0))


async def events(kube: KubeClient, namespace: str, name: str) -> list[JSON]:
    items = (await kube.list(EVENTS, namespace))["items"]
    return [e for e in items if (e.get("involvedObject") or {}).get("name") == name]


def ready(pod: JSON) -> bool:
    return any(
        c.get("type") == "Ready" and c.get("status") == "True"
        for c in (pod.get("status") or {}).get("conditions") or []
    )


def ordinal(pod: JSON) -> int:
    return int(pod["metadata"]["name"].rsplit("-", 1)[1])


def ordinals(items: list[JSON]) -> list[int]:
    return sorted(ordinal(p) for p in items)


def revision_of(pod: JSON) -> str:
    return str((pod["metadata"].get("labels") or {}).get(REVISION) or "")


def image_of(pod: JSON) -> str:
    return str(pod["spec"]["containers"][0]["image"])


async def wait_status(
    kube: KubeClient, namespace: str, name: str, *, timeout: float = 60, **want: Any
) -> JSON:
    """Wait until the set's status (for its current generation) has every ``want`` field."""
    return await wait_observed(
        lambda: get(kube, namespace, name), timeout=timeout, what=f"StatefulSet {name}", **want
    )


async def wait_running_and_ready(
    kube: KubeClient, namespace: str, name: str, count: int, *, timeout: float = 60
) -> list[JSON]:
    """Wait until exactly ``count`` pods exist, all Running and Ready (``WaitForRunningAndReady``)."""

    async def probe() -> list[JSON] | None:
        found = await pods(kube, namespace, name)
        if len(found) != count or not all(ready(p) and p["status"].get("phase") == "Running" for p in found):
            return None
        return found or [{}]

    found = await eventually(probe, timeout=timeout, what=f"{count} ready pods of {name}")
    return [p for p in found if p]
