"""PVC retention (``persistentVolumeClaimRetentionPolicy``, gate ``StatefulSetAutoDeletePVC``), pure.

The policy is carried by owner references, so the garbage collector does the deleting
(``claimOwnerMatchesSetAndPod`` / ``updateClaimOwnerRefForSetAndPod``):

============================  ==============================================================
whenScaled / whenDeleted      owner references a claim should have
============================  ==============================================================
Retain / Retain               neither the set nor the pod
Retain / Delete               the set, not the pod (deleting the set deletes the claims)
Delete / Retain               not the set; the pod once the pod is scaled down (condemned)
Delete / Delete               scaled down: the pod, not the set; otherwise the set, not the pod
============================  ==============================================================

An unknown policy counts as Retain/Retain. The references are plain (no ``controller``, no
``blockOwnerDeletion``), with ``apps.kruise.io/v1beta1`` / ``v1`` as API versions. A claim with
a reference to a pod of the same name but another UID is *stale*: with ``whenScaled: Delete`` it
blocks creating that pod (the old pod's claim is about to be collected).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kruise.workloads.objects import KubeObject, mapping, metadata, name, sequence, spec, uid
from kruise.workloads.statefulset.identity import STATEFULSET_KIND

__all__ = ["claim_owner_references", "claim_owners_match", "has_stale_owner_ref", "retention_policy"]

RETAIN, DELETE = "Retain", "Delete"


def retention_policy(statefulset: KubeObject) -> tuple[str, str]:
    """``(whenScaled, whenDeleted)``; Retain/Retain when unset or unknown."""
    policy = mapping(spec(statefulset).get("persistentVolumeClaimRetentionPolicy"))
    scaled, deleted = policy.get("whenScaled") or RETAIN, policy.get("whenDeleted") or RETAIN
    if scaled not in (RETAIN, DELETE) or deleted not in (RETAIN, DELETE):
        return RETAIN, RETAIN
    return str(scaled), str(deleted)


def _refs(claim: KubeObject) -> list[Mapping[str, Any]]:
    return [mapping(r) for r in sequence(metadata(claim).get("ownerReferences"))]


def _has_ref(claim: KubeObject, owner: KubeObject) -> bool:
    return any(r.get("uid") == uid(owner) for r in _refs(claim))


def has_stale_owner_ref(claim: KubeObject, pod: KubeObject) -> bool:
    """``hasStaleOwnerRef``: a reference with the pod's name but another UID (or the pod has none)."""
    return any(r.get("name") == name(pod) and r.get("uid") != uid(pod) for r in _refs(claim))


def _wanted(statefulset: KubeObject, scaled_down: bool) -> tuple[bool, bool]:
    """(reference the set, reference the pod) per the policy table."""
    when_scaled, when_deleted = retention_policy(statefulset)
    if when_scaled == RETAIN:
        return when_deleted == DELETE, False
    if when_deleted == RETAIN:
        return False, scaled_down
    return not scaled_down, scaled_down


def claim_owners_match(
    statefulset: KubeObject, claim: KubeObject, pod: KubeObject, *, scaled_down: bool
) -> bool:
    """``claimOwnerMatchesSetAndPod``. ``scaled_down``: the pod's ordinal is outside the replicas."""
    want_set, want_pod = _wanted(statefulset, scaled_down)
    return _has_ref(claim, statefulset) == want_set and _has_ref(claim, pod) == want_pod


def claim_owner_references(
    statefulset: KubeObject, claim: KubeObject, pod: KubeObject, *, scaled_down: bool
) -> list[dict[str, Any]] | None:
    """The claim's ``ownerReferences`` as the policy wants them, or ``None`` when they already are
    (``updateClaimOwnerRefForSetAndPod``). Other owners are kept in place."""
    want_set, want_pod = _wanted(statefulset, scaled_down)
    refs = [dict(r) for r in _refs(claim)]
    changed = False
    for owner, wanted, ref in (
        (statefulset, want_set, {"apiVersion": STATEFULSET_KIND.api_version, "kind": STATEFULSET_KIND.kind}),
        (pod, want_pod, {"apiVersion": "v1", "kind": "Pod"}),
    ):
        present = any(r.get("uid") == uid(owner) for r in refs)
        if wanted and not present:
            refs.append({**ref, "name": name(owner), "uid": uid(owner)})
            changed = True
        elif not wanted and present:
            refs = [r for r in refs if r.get("uid") != uid(owner)]
            changed = True
    return refs if changed else None
