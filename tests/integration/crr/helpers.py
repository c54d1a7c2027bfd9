"""Pods and ContainerRecreateRequests for the CRR integration tests (KWOK nodes).

KWOK reports containers running but without container IDs; a CRR needs them (the webhook
refuses a container without one), so :func:`running_pod` writes ``containerd://`` IDs into the
pod status as a kubelet would.
"""

from __future__ import annotations

from typing import Any

from kruise.core.kube import KubeClient
from kruise.core.kube.resources import CONTAINERRECREATEREQUESTS, PODS
from tests.support.wait import eventually

JSON = dict[str, Any]
KRUISE_POD_READY = "KruisePodReady"


def pod_body(name: str, *, gate: bool = False, node_selector: dict[str, str] | None = None) -> JSON:
    spec: JSON = {
        "terminationGracePeriodSeconds": 20,
        "containers": [
            {
                "name": "app",
                "image": "registry.example.com/app:1",
                "ports": [{"name": "http", "containerPort": 8080}],
                "lifecycle": {"preStop": {"httpGet": {"path": "/quit", "port": "http"}}},
            },
            {
                "name": "sidecar",
                "image": "registry.example.com/sidecar:1",
                "lifecycle": {"preStop": {"exec": {"command": ["sh", "-c", "sleep 1"]}}},
            },
        ],
    }
    if gate:
        spec["readinessGates"] = [{"conditionType": KRUISE_POD_READY}]
    if node_selector:
        spec["nodeSelector"] = node_selector
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name}, "spec": spec}


async def running_pod(kube: KubeClient, namespace: str, name: str, *, gate: bool = False) -> JSON:
    """A pod Running on a KWOK node with container IDs in its status (and, with ``gate``, the
    ``KruisePodReady`` readiness gate set True and the pod Ready)."""
    await kube.create(PODS, pod_body(name, gate=gate), namespace)

    async def running() -> Any:
        pod = await kube.get(PODS, name, namespace)
        statuses = (pod.get("status") or {}).get("containerStatuses") or []
        return pod if pod["status"].get("phase") == "Running" and len(statuses) == 2 else None

    pod: JSON = await eventually(running, what=f"pod {name} running")
    statuses = [
        {**s, "containerID": f"containerd://{name}-{s['name']}-1"} for s in pod["status"]["containerStatuses"]
    ]
    conditions = [{"type": KRUISE_POD_READY, "status": "True"}] if gate else []
    await kube.patch(
        PODS,
        name,
        {"status": {"containerStatuses": statuses, **({"conditions": conditions} if conditions else {})}},
        namespace,
        patch_type="strategic",
        subresource="status",
    )

    async def settled() -> Any:
        current = await kube.get(PODS, name, namespace)
        ids = [s.get("containerID") for s in current["status"].get("containerStatuses") or []]
        if not all(ids):
            return None
        return current if not gate or ready(current) else None

    settled_pod: JSON = await eventually(settled, what=f"pod {name} with container IDs")
    return settled_pod


def condition(pod: JSON, ctype: str) -> JSON:
    for cond in (pod.get("status") or {}).get("conditions") or []:
        if cond.get("type") == ctype:
            return dict(cond)
    return {}


def ready(pod: JSON) -> bool:
    return condition(pod, "Ready").get("status") == "True"


def crr_body(name: str, pod: str, *containers: str, **spec: Any) -> JSON:
    return {
        "apiVersion": "apps.kruise.io/v1alpha1",
        "kind": "ContainerRecreateRequest",
        "metadata": {"name": name},
        "spec": {"podName": pod, "containers": [{"name": c} for c in containers or ("app",)], **spec},
    }


async def crrs(kube: KubeClient, namespace: str) -> list[JSON]:
    return list((await kube.list(CONTAINERRECREATEREQUESTS, namespace)).get("items") or [])


async def set_crr_status(kube: KubeClient, namespace: str, name: str, status: JSON) -> JSON:
    """Write the CRR's status as the daemon does (merge patch of the subresource)."""
    return await kube.patch(
        CONTAINERRECREATEREQUESTS,
        name,
        {"status": status},
        namespace,
        patch_type="merge",
        subresource="status",
    )
