"""Hold a pod unready the way a failing readiness probe would, on the embedded cluster.

A kubelet (``GeneratePodReadyCondition``) reports ``Ready`` False while ``ContainersReady`` is not
True, whatever the readiness gates say; KWOK's stages here follow that rule and never set
``ContainersReady`` back on their own. So a test patches both conditions False on ``pods/status``
(strategic merge: the conditions merge by ``type``, nothing else is touched) and the pod stays
unready until the test lets it go.
"""

from __future__ import annotations

from typing import Any

from kruise.core.kube import KubeClient
from kruise.core.kube.resources import PODS

CONTAINERS_NOT_READY = "ContainersNotReady"


def condition(pod: dict[str, Any], ctype: str) -> dict[str, Any]:
    """The pod's condition of type ``ctype``, or ``{}``."""
    for cond in (pod.get("status") or {}).get("conditions") or []:
        if cond.get("type") == ctype:
            return dict(cond)
    return {}


async def patch_conditions(kube: KubeClient, namespace: str, pod: str, *conditions: dict[str, Any]) -> None:
    """Strategic-merge ``conditions`` into the pod's ``status.conditions`` (merged by ``type``)."""
    await kube.patch(
        PODS,
        pod,
        {"status": {"conditions": list(conditions)}},
        namespace,
        patch_type="strategic",
        subresource="status",
    )


async def hold_unready(kube: KubeClient, namespace: str, pod: str) -> None:
    """``ContainersReady`` and ``Ready`` False, as the kubelet reports a container failing its probe."""
    message = "containers with unready status: [probe]"
    await patch_conditions(
        kube,
        namespace,
        pod,
        {"type": "ContainersReady", "status": "False", "reason": CONTAINERS_NOT_READY, "message": message},
        {"type": "Ready", "status": "False", "reason": CONTAINERS_NOT_READY, "message": message},
    )


async def let_ready(kube: KubeClient, namespace: str, pod: str) -> None:
    """The containers pass their probes again: ``ContainersReady`` True (the stages then set Ready)."""
    await patch_conditions(
        kube, namespace, pod, {"type": "ContainersReady", "status": "True", "reason": "", "message": ""}
    )


async def set_gate(kube: KubeClient, namespace: str, pod: str, gate: str, status: str = "True") -> None:
    """Set the readiness-gate condition ``gate`` (what the gate's owner writes)."""
    await patch_conditions(kube, namespace, pod, {"type": gate, "status": status})
