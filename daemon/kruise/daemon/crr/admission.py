"""ContainerRecreateRequest admission (pure): upstream's checks, defaults and pod injection.

Mirrors ``pkg/webhook/containerrecreaterequest/mutating/crr_mutating_handler.go`` (v1.8.4),
where one mutating handler both refuses and defaults; the checks run in its order, so the first
refusal a request earns is upstream's, with upstream's text and HTTP code:

- UPDATE (403): ``spec`` unchanged, labels ``pod-uid``/``node-name`` unchanged, annotation
  ``unready-acquired`` unchanged once set (:func:`update_refusal`); nothing else is looked at.
- CREATE, before reading the pod (400): ``podName``, ``containers``, ``activeDeadlineSeconds``
  >= :data:`MIN_DEADLINE_SECONDS`, non-negative grace periods, a known ``failurePolicy``
  (:func:`spec_refusal`);
- the pod: active (not Succeeded/Failed, not deleting; a pod the SidecarTerminator ended still
  counts), then scheduled (:func:`pod_refusal`);
- per container, in order: not named twice, no user-set ``preStop``/``ports``/``statusContext``,
  present in the pod spec, present with a ``containerID`` in the pod status (:func:`inject`).

Defaults on CREATE: labels ``crr.apps.kruise.io/active=true``, ``pod-uid``, ``node-name`` (and
``type=virtual-kubelet`` when the node carries it), ``strategy: {}`` then ``failurePolicy: Fail``,
``terminationGracePeriodSeconds`` from the pod, and per container the pod's ``preStop``
(exec/httpGet/tcpSocket only), its ``ports`` only when that preStop is an httpGet, and
``statusContext{containerID, restartCount}`` from the pod status. The ownerReference to the Pod
is ours (upstream relies on the label; the reference lets the garbage collector remove the CRRs
of a deleted pod).
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from kruise.daemon.api.containerrecreaterequest import (
    ACTIVE_LABEL,
    FAILURE_POLICY_FAIL,
    FAILURE_POLICY_IGNORE,
    NODE_NAME_LABEL,
    POD_UID_LABEL,
    UNREADY_ACQUIRED_KEY,
)

__all__ = [
    "MIN_DEADLINE_SECONDS",
    "VIRTUAL_KUBELET_LABEL",
    "Refusal",
    "default_crr",
    "inject",
    "pod_refusal",
    "spec_refusal",
    "update_refusal",
]

JSON = dict[str, Any]
MIN_DEADLINE_SECONDS = 3
"""Smallest ``activeDeadlineSeconds`` accepted (upstream ``minDeadlineSeconds``)."""
VIRTUAL_KUBELET_LABEL = ("type", "virtual-kubelet")
"""Node label copied onto the CRR (upstream ``util.VirtualKubeletLabelKey``/``Value``)."""
SIDECAR_TERMINATED = "SidecarTerminated"
"""Pod condition the SidecarTerminator sets; such a pod may still get a CRR to stop its sidecars."""

BAD_REQUEST = 400
FORBIDDEN = 403


@dataclass(frozen=True)
class Refusal:
    """A denied request: upstream's message and HTTP code (``admission.Errored``)."""

    message: str
    code: int = BAD_REQUEST


def _map(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def update_refusal(new: Mapping[str, Any], old: Mapping[str, Any]) -> Refusal | None:
    """The 403 an UPDATE earns, or None: the spec, the pod-uid and node-name labels, and a set
    unready-acquired annotation are immutable."""
    if _map(new.get("spec")) != _map(old.get("spec")):
        return Refusal("spec of ContainerRecreateRequest is immutable", FORBIDDEN)
    new_meta, old_meta = _map(new.get("metadata")), _map(old.get("metadata"))
    new_labels, old_labels = _map(new_meta.get("labels")), _map(old_meta.get("labels"))
    for key in (POD_UID_LABEL, NODE_NAME_LABEL):
        if new_labels.get(key) != old_labels.get(key):
            return Refusal(f"not allowed to update immutable label {key}", FORBIDDEN)
    was = _map(old_meta.get("annotations")).get(UNREADY_ACQUIRED_KEY)
    if was and _map(new_meta.get("annotations")).get(UNREADY_ACQUIRED_KEY) != was:
        return Refusal(f"not allowed to update immutable annotation {UNREADY_ACQUIRED_KEY}", FORBIDDEN)
    return None


def spec_refusal(crr: Mapping[str, Any]) -> Refusal | None:
    """The 400 a CREATE earns from its spec alone, or None (upstream's order)."""
    spec = _map(crr.get("spec"))
    strategy = _map(spec.get("strategy"))
    if not spec.get("podName"):
        return Refusal("podName can not be empty")
    if not _list(spec.get("containers")):
        return Refusal("containers list can not be null")
    deadline = spec.get("activeDeadlineSeconds")
    if deadline is not None and deadline < MIN_DEADLINE_SECONDS:
        return Refusal(f"activeDeadlineSeconds can not be less than {MIN_DEADLINE_SECONDS}s")
    grace = strategy.get("terminationGracePeriodSeconds")
    if grace is not None and grace < 0:
        return Refusal("terminationGracePeriodSeconds must be non-negative integer")
    unready = strategy.get("unreadyGracePeriodSeconds")
    if unready is not None and unready < 0:
        return Refusal("unreadyGracePeriodSeconds must be non-negative integer")
    policy = strategy.get("failurePolicy") or ""
    if policy not in ("", FAILURE_POLICY_FAIL, FAILURE_POLICY_IGNORE):
        return Refusal(f"unknown failurePolicy {policy}")
    return None


def pod_refusal(pod: Mapping[str, Any]) -> Refusal | None:
    """The 400 for a pod that cannot have containers recreated: inactive (``IsPodActive`` false
    and not ended by the SidecarTerminator), or not scheduled yet."""
    status = _map(pod.get("status"))
    active = status.get("phase") not in ("Succeeded", "Failed") and not _map(pod.get("metadata")).get(
        "deletionTimestamp"
    )
    sidecar_terminated = any(
        _map(c).get("type") == SIDECAR_TERMINATED for c in _list(status.get("conditions"))
    )
    if not active and not sidecar_terminated:
        return Refusal("not allowed to recreate containers in an inactive Pod")
    if not _map(pod.get("spec")).get("nodeName"):
        return Refusal("not allowed to recreate containers in a pending Pod")
    return None


def _named(items: Any, name: str) -> Mapping[str, Any] | None:
    for item in _list(items):
        if _map(item).get("name") == name:
            return _map(item)
    return None


def inject(crr: JSON, pod: Mapping[str, Any], node: Mapping[str, Any] | None) -> Refusal | None:
    """``injectPodIntoContainerRecreateRequest``: write the pod's facts into ``crr`` (in place).

    Returns the 400 refusal of the first bad container; ``crr`` is then partly written and must
    be dropped.
    """
    meta = crr.setdefault("metadata", {})
    labels = meta.setdefault("labels", {})
    pod_meta, pod_spec = _map(pod.get("metadata")), _map(pod.get("spec"))
    labels[NODE_NAME_LABEL] = str(pod_spec.get("nodeName") or "")
    labels[POD_UID_LABEL] = str(pod_meta.get("uid") or "")
    key, value = VIRTUAL_KUBELET_LABEL
    if _map(_map(_map(node).get("metadata")).get("labels")).get(key) == value:
        labels[key] = value
    strategy = crr["spec"]["strategy"]
    if (
        strategy.get("terminationGracePeriodSeconds") is None
        and pod_spec.get("terminationGracePeriodSeconds") is not None
    ):
        strategy["terminationGracePeriodSeconds"] = pod_spec["terminationGracePeriodSeconds"]
    seen: set[str] = set()
    statuses = _map(pod.get("status")).get("containerStatuses")
    for container in crr["spec"]["containers"]:
        name = str(container.get("name") or "")
        if name in seen:
            return Refusal(f"can not recreate {name} multi times")
        seen.add(name)
        if any(container.get(k) is not None for k in ("preStop", "ports", "statusContext")):
            return Refusal("preStop, ports, statusContext in container are ready-only fields")
        in_spec = _named(pod_spec.get("containers"), name)
        if in_spec is None:
            return Refusal(f"container {name} not found in Pod")
        in_status = _named(statuses, name)
        if in_status is None:
            return Refusal(f"not found {name} containerStatus in Pod Status")
        if not in_status.get("containerID"):
            return Refusal(
                f"no containerID in {name} containerStatus, maybe the container has not been initialized"
            )
        pre_stop = _map(_map(in_spec.get("lifecycle")).get("preStop"))
        handler = {
            k: copy.deepcopy(pre_stop[k])
            for k in ("exec", "httpGet", "tcpSocket")
            if pre_stop.get(k) is not None
        }
        if pre_stop:
            container["preStop"] = handler
        if handler.get("httpGet") is not None and in_spec.get("ports") is not None:
            container["ports"] = copy.deepcopy(in_spec["ports"])
        container["statusContext"] = {
            "containerID": in_status["containerID"],
            "restartCount": int(in_status.get("restartCount") or 0),
        }
    return None


def owner_reference(pod: Mapping[str, Any]) -> JSON:
    """The CRR's ownerReference to its Pod (not a controller reference)."""
    meta = _map(pod.get("metadata"))
    return {"apiVersion": "v1", "kind": "Pod", "name": meta.get("name"), "uid": meta.get("uid")}


def default_crr(
    crr: Mapping[str, Any], pod: Mapping[str, Any] | None, node: Mapping[str, Any] | None
) -> JSON | Refusal:
    """The CREATE decision after the spec checks: a refusal, or the defaulted CRR (a new dict).

    ``pod`` None means the pod does not exist (``no found Pod named <podName>``).
    """
    out = copy.deepcopy(dict(crr))
    spec = out.setdefault("spec", {})
    if not isinstance(spec.get("strategy"), dict):
        spec["strategy"] = {}
    out.setdefault("metadata", {}).setdefault("labels", {})[ACTIVE_LABEL] = "true"
    if not spec["strategy"].get("failurePolicy"):
        spec["strategy"]["failurePolicy"] = FAILURE_POLICY_FAIL
    if pod is None:
        return Refusal(f"no found Pod named {spec.get('podName')}")
    refusal = pod_refusal(pod) or inject(out, pod, node)
    if refusal is not None:
        return refusal
    refs = [
        r
        for r in _list(out["metadata"].get("ownerReferences"))
        if _map(r).get("uid") != _map(pod.get("metadata")).get("uid")
    ]
    out["metadata"]["ownerReferences"] = [*refs, owner_reference(pod)]
    return out
