"""The ContainerRecreateRequest manager controller on the real control plane (KWOK nodes).

No daemon runs here: the tests write the CRR's status as the daemon would and assert what the
manager does around it (``pkg/controller/containerrecreaterequest``): the deadline, the synced
container statuses, the pod made not-ready through ``KruisePodReady`` for an
``unreadyGracePeriodSeconds`` CRR and given back on completion, the active label, the TTL.
"""

from __future__ import annotations

import datetime
import json
from typing import Any

import pytest

from kruise.core.kube import KubeClient
from kruise.core.kube.resources import CONTAINERRECREATEREQUESTS, PODS
from tests.integration.crr.helpers import (
    KRUISE_POD_READY,
    condition,
    crr_body,
    ready,
    running_pod,
    set_crr_status,
)
from tests.support.wait import eventually

pytestmark = pytest.mark.usefixtures("manager")
JSON = dict[str, Any]
ACTIVE = "crr.apps.kruise.io/active"
UNREADY = "crr.apps.kruise.io/unready-acquired"
SYNCED = "crr.apps.kruise.io/sync-container-statuses"


async def test_active_deadline_completes_the_crr_and_drops_the_active_label(
    kube: KubeClient, namespace: str
) -> None:
    await running_pod(kube, namespace, "web-0")
    await kube.create(CONTAINERRECREATEREQUESTS, crr_body("r", "web-0", activeDeadlineSeconds=3), namespace)

    async def completed() -> Any:
        crr = await kube.get(CONTAINERRECREATEREQUESTS, "r", namespace)
        done = crr.get("status", {}).get("phase") == "Completed" and ACTIVE not in crr["metadata"]["labels"]
        return crr if done else None

    crr = await eventually(completed, timeout=20, what="the CRR completed by its deadline")
    assert crr["status"]["message"] == "recreating has exceeded the activeDeadlineSeconds"
    assert crr["status"]["completionTime"]


async def test_ttl_after_finished_deletes_the_crr(kube: KubeClient, namespace: str) -> None:
    await running_pod(kube, namespace, "web-0")
    await kube.create(CONTAINERRECREATEREQUESTS, crr_body("r", "web-0", ttlSecondsAfterFinished=1), namespace)
    now = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    await set_crr_status(kube, namespace, "r", {"phase": "Completed", "completionTime": now})

    async def gone() -> bool:
        return await kube.get_or_none(CONTAINERRECREATEREQUESTS, "r", namespace) is None

    await eventually(gone, timeout=20, what="the CRR deleted after its TTL")


async def test_unready_grace_takes_the_pods_readiness_and_gives_it_back(
    kube: KubeClient, namespace: str
) -> None:
    pod = await running_pod(kube, namespace, "web-0", gate=True)
    assert ready(pod)
    body = crr_body("r", "web-0", strategy={"unreadyGracePeriodSeconds": 1})
    created = await kube.create(CONTAINERRECREATEREQUESTS, body, namespace)
    await set_crr_status(kube, namespace, "r", {"phase": "Recreating"})  # the daemon starts
    # the daemon's restart: a new "app" container, started no earlier than the CRR (upstream syncs
    # only those; the pod's first container, started before the CRR, is history)
    await restarted(kube, namespace, pod, "app", since=created["metadata"]["creationTimestamp"])

    async def acquired() -> Any:
        crr = await kube.get(CONTAINERRECREATEREQUESTS, "r", namespace)
        annotations = crr["metadata"].get("annotations", {})
        return crr if annotations.get(UNREADY) and json.loads(annotations.get(SYNCED) or "[]") else None

    crr = await eventually(acquired, timeout=20, what="unready-acquired and the new container synced")
    assert UNREADY in crr["metadata"]["finalizers"]
    synced = json.loads(crr["metadata"]["annotations"][SYNCED])
    assert synced == [
        {"name": "app", "ready": True, "restartCount": 1, "containerID": "containerd://web-0-app-2"}
    ]
    pod = await kube.get(PODS, "web-0", namespace)
    gate = condition(pod, KRUISE_POD_READY)
    assert gate["status"] == "False"
    assert json.loads(gate["message"]) == [{"userAgent": "ContainerRecreateRequest", "key": f"{namespace}/r"}]
    assert not ready(pod)

    now = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    await set_crr_status(
        kube, namespace, "r", {"phase": "Completed", "completionTime": now}
    )  # the daemon is done

    async def released() -> Any:
        crr = await kube.get(CONTAINERRECREATEREQUESTS, "r", namespace)
        pod = await kube.get(PODS, "web-0", namespace)
        done = (
            UNREADY not in (crr["metadata"].get("finalizers") or [])
            and ACTIVE not in crr["metadata"]["labels"]
            and condition(pod, KRUISE_POD_READY).get("status") == "True"
        )
        return pod if done else None

    pod = await eventually(released, timeout=20, what="readiness given back")
    assert json.loads(condition(pod, KRUISE_POD_READY)["message"]) == []
    await eventually(lambda: _ready(kube, namespace), timeout=20, what="the pod Ready again")


async def restarted(kube: KubeClient, namespace: str, pod: JSON, name: str, *, since: str) -> None:
    """Write the pod status a kubelet reports after restarting container ``name``: a second
    container ID, ``restartCount`` 1, running since ``since`` (an RFC 3339 time, seconds)."""
    statuses = [
        {
            **s,
            "containerID": f"containerd://{pod['metadata']['name']}-{name}-2",
            "restartCount": 1,
            "ready": True,
            "state": {"running": {"startedAt": since}},
        }
        for s in pod["status"]["containerStatuses"]
        if s["name"] == name
    ]
    await kube.patch(
        PODS,
        pod["metadata"]["name"],
        {"status": {"containerStatuses": statuses}},
        namespace,
        patch_type="strategic",
        subresource="status",
    )


async def _ready(kube: KubeClient, namespace: str) -> bool:
    return ready(await kube.get(PODS, "web-0", namespace))


async def test_a_deleted_crr_gives_the_readiness_back(kube: KubeClient, namespace: str) -> None:
    await running_pod(kube, namespace, "web-0", gate=True)
    body = crr_body("r", "web-0", strategy={"unreadyGracePeriodSeconds": 30})
    await kube.create(CONTAINERRECREATEREQUESTS, body, namespace)
    await set_crr_status(kube, namespace, "r", {"phase": "Recreating"})

    async def not_ready() -> bool:
        return condition(await kube.get(PODS, "web-0", namespace), KRUISE_POD_READY).get("status") == "False"

    await eventually(not_ready, timeout=20, what="the pod made not-ready")
    await kube.delete(CONTAINERRECREATEREQUESTS, "r", namespace)

    async def back() -> bool:
        pod = await kube.get(PODS, "web-0", namespace)
        gone = await kube.get_or_none(CONTAINERRECREATEREQUESTS, "r", namespace) is None
        return gone and condition(pod, KRUISE_POD_READY).get("status") == "True"

    await eventually(back, timeout=20, what="the CRR gone (finalizer released) and the pod ready")
