"""Deletion protection (``policy.kruise.io/delete-protection``): the pure decision.

Mirrors ``pkg/webhook/util/deletionprotection`` of OpenKruise v1.8 (``ValidateWorkloadDeletion``,
``ValidateNamespaceDeletion``, ``ValidateCRDDeletion``, ``ValidateServiceDeletion``,
``ValidateIngressDeletion``), used on DELETE by the CloneSet, Advanced StatefulSet,
UnitedDeployment webhooks and :mod:`kruise.workloads.deletionprotection` (namespaces, CRDs,
Services, Ingresses, Deployments, ReplicaSets, StatefulSets). The caller answers HTTP 403 with
the returned text. Only active when the feature gate ``ResourcesDeletionProtection`` is on (its
default is off).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from kruise.core.webhook.configuration import MatchCondition

__all__ = [
    "CRD_CASCADING_GATE",
    "DELETION_PROTECTION_KEY",
    "DELETION_PROTECTION_TYPE_ALWAYS",
    "DELETION_PROTECTION_TYPE_CASCADING",
    "PROTECTED_DELETE",
    "WORKLOAD_KINDS",
    "Facts",
    "active_count",
    "bound_pvc_count",
    "decide",
    "needs_facts",
    "protection_value",
    "validate_workload_deletion",
]

CRD_CASCADING_GATE = "DeletionProtectionForCRDCascadingGate"
"""Needed (besides ``ResourcesDeletionProtection``) for ``Cascading`` on a CRD."""
WORKLOAD_KINDS = frozenset({"CloneSet", "StatefulSet", "UnitedDeployment", "Deployment", "ReplicaSet"})
"""Kinds judged by ``spec.replicas`` (``ValidateWorkloadDeletion``)."""
_ALWAYS_ONLY_KINDS = frozenset({"Service", "Ingress"})

DELETION_PROTECTION_KEY = "policy.kruise.io/delete-protection"
"""Label on the protected object."""
DELETION_PROTECTION_TYPE_ALWAYS = "Always"
"""Deletion is always forbidden."""
DELETION_PROTECTION_TYPE_CASCADING = "Cascading"
"""Deletion is forbidden while the workload still wants pods (``spec.replicas > 0``)."""

PROTECTED_DELETE = MatchCondition(
    "protected-delete",
    "request.operation != 'DELETE' || (has(oldObject.metadata.labels) && "
    f"'{DELETION_PROTECTION_KEY}' in oldObject.metadata.labels)",
)
"""A DELETE is sent to a workload's validating webhook only for an object labelled
``policy.kruise.io/delete-protection`` (the only deletions it can refuse)."""


@dataclass(frozen=True)
class Facts:
    """What a ``Cascading`` decision needs from the cluster: a namespace's active pods and its
    ``Bound`` PVCs not being deleted, a CRD's objects not being deleted, and whether
    :data:`CRD_CASCADING_GATE` is on. ``None`` where not looked up."""

    active_pods: int | None = None
    bound_pvcs: int | None = None
    active_crs: int | None = None
    crd_cascading_gate: bool = False


def protection_value(obj: Mapping[str, Any] | None) -> str | None:
    """The object's ``policy.kruise.io/delete-protection`` label, ``None`` without one, or when
    the object is already being deleted (upstream lets those through)."""
    metadata = obj.get("metadata") if isinstance(obj, Mapping) else None
    metadata = metadata if isinstance(metadata, Mapping) else {}
    if metadata.get("deletionTimestamp") is not None:
        return None
    labels = metadata.get("labels")
    value = labels.get(DELETION_PROTECTION_KEY) if isinstance(labels, Mapping) else None
    return str(value) if value is not None else None


def needs_facts(kind: str, obj: Mapping[str, Any] | None) -> bool:
    """Whether :func:`decide` needs :class:`Facts` for ``obj`` (a ``Cascading`` namespace or CRD)."""
    return kind in ("Namespace", "CustomResourceDefinition") and protection_value(obj) == "Cascading"


def active_count(objects: Iterable[Mapping[str, Any]], *, pods: bool = False) -> int:
    """Objects without a ``deletionTimestamp``; with ``pods`` also not ``Succeeded``/``Failed``
    (``kubecontroller.IsPodActive``)."""
    count = 0
    for obj in objects:
        if (obj.get("metadata") or {}).get("deletionTimestamp") is not None:
            continue
        if pods and (obj.get("status") or {}).get("phase") in ("Succeeded", "Failed"):
            continue
        count += 1
    return count


def bound_pvc_count(pvcs: Iterable[Mapping[str, Any]]) -> int:
    """PVCs in phase ``Bound`` and not being deleted."""
    return sum(
        1
        for pvc in pvcs
        if (pvc.get("metadata") or {}).get("deletionTimestamp") is None
        and (pvc.get("status") or {}).get("phase") == "Bound"
    )


def _forbidden(value: str, tail: str = "") -> str:
    return f"forbidden by ResourcesProtectionDeletion for {DELETION_PROTECTION_KEY}={value}{tail}"


def decide(
    kind: str, obj: Mapping[str, Any] | None, facts: Facts = Facts(), *, gate_enabled: bool
) -> str | None:
    """Why deleting ``obj`` of ``kind`` is forbidden (the HTTP 403 message), or ``None``.

    - gate off, no object, no label or an object already being deleted: allowed;
    - ``Always``: ``forbidden by ResourcesProtectionDeletion for
      policy.kruise.io/delete-protection=Always`` for every kind;
    - ``Cascading`` (never for Services and Ingresses, nor unknown kinds):
      workloads (:data:`WORKLOAD_KINDS`) while ``spec.replicas`` ``> 0``
      (``... and replicas 3>0``); a namespace while it has active pods (``... and active pods
      2>0``), then ``Bound`` PVCs (``... and "Bound" status pvc 1>0``); a CRD, without
      :data:`CRD_CASCADING_GATE` ``feature-gate DeletionProtectionForCRDCascadingGate is not
      enabled``, else while it has objects (``... and active CRs 4>0``).
    """
    if not gate_enabled or obj is None:
        return None
    value = protection_value(obj)
    if value == DELETION_PROTECTION_TYPE_ALWAYS:
        return _forbidden(value)
    if value != DELETION_PROTECTION_TYPE_CASCADING or kind in _ALWAYS_ONLY_KINDS:
        return None
    if kind in WORKLOAD_KINDS:
        spec = obj.get("spec")
        replicas = spec.get("replicas") if isinstance(spec, Mapping) else None
        if isinstance(replicas, int) and not isinstance(replicas, bool) and replicas > 0:
            return _forbidden(value, f" and replicas {replicas}>0")
    elif kind == "Namespace":
        if facts.active_pods:
            return _forbidden(value, f" and active pods {facts.active_pods}>0")
        if facts.bound_pvcs:
            return _forbidden(value, f' and "Bound" status pvc {facts.bound_pvcs}>0')
    elif kind == "CustomResourceDefinition":
        if not facts.crd_cascading_gate:
            return f"feature-gate {CRD_CASCADING_GATE} is not enabled"
        if facts.active_crs:
            return _forbidden(value, f" and active CRs {facts.active_crs}>0")
    return None


def validate_workload_deletion(
    obj: Mapping[str, Any] | None, replicas: Any, *, gate_enabled: bool
) -> str | None:
    """Why deleting the workload ``obj`` is forbidden, or ``None`` when it is allowed
    (``ValidateWorkloadDeletion``; ``replicas`` is its ``spec.replicas``, ``None`` if unset):
    :func:`decide` for a workload kind.
    """
    if obj is None:
        return None
    return decide("Deployment", {**obj, "spec": {"replicas": replicas}}, gate_enabled=gate_enabled)
