"""The status a StatefulSet round writes (``updateStatus``, ``updatePVCStatus``,
``completeRollingUpdate``), pure.

Counted over the replica slots and the condemned pods, drafts excluded (not created):

- ``replicas``: created pods; ``readyReplicas``: Running and Ready; ``availableReplicas``: also
  available for ``minReadySeconds`` with lifecycle ``""``/``Normal``; the ``updated*`` variants
  among pods at the update revision;
- ``currentReplicas`` / ``updatedReplicas``: created, not terminating, at the current / update
  revision, less the pods this round moves away from them (in place or deleted);
- ``volumeClaims``: per claim template, how many replica pods' claims are compatible (same
  storage class and access modes, requested storage at least the template's) and of those how
  many are ready (capacity at least the request); terminating and missing claims skipped;
- once every replica is updated and ready under ``RollingUpdate``, ``currentRevision`` becomes
  the update revision (``completeRollingUpdate``).

Upstream writes only when a few fields differ; here any difference in the computed status is
written, so ``updatedReadyReplicas`` (read by Kruise Rollouts) never lags.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from decimal import Decimal
from typing import Any

from kruise.workloads.admission.quantity import quantity_value
from kruise.workloads.objects import KubeObject, is_being_deleted, mapping, metadata, name, sequence, spec
from kruise.workloads.selector import format_label_selector
from kruise.workloads.statefulset.health import is_created, is_running_and_ready, running_and_available
from kruise.workloads.statefulset.identity import claim_name, ordinal_of, pod_revision
from kruise.workloads.statefulset.round import Round

__all__ = ["COUNTERS", "compute_status"]

COUNTERS = (
    "replicas",
    "readyReplicas",
    "availableReplicas",
    "currentReplicas",
    "updatedReplicas",
    "updatedReadyReplicas",
    "updatedAvailableReplicas",
)


def _storage(section: Any) -> Decimal:
    """A ``storage`` quantity as a number (Go's ``ResourceList.Storage()``: 0 when absent)."""
    value = quantity_value(mapping(section).get("storage"))
    return Decimal(0) if value is None else value


def claim_compatibility(claim: KubeObject, template: Mapping[str, Any]) -> tuple[bool, bool]:
    """``IsPVCCompatibleAndReady``: ``(compatible, ready)``."""
    claim_spec, template_spec = mapping(claim.get("spec")), mapping(template.get("spec"))
    classes = (claim_spec.get("storageClassName"), template_spec.get("storageClassName"))
    if None not in classes and classes[0] != classes[1]:
        return False, False
    if list(sequence(claim_spec.get("accessModes"))) != list(sequence(template_spec.get("accessModes"))):
        return False, False
    requested = _storage(mapping(claim_spec.get("resources")).get("requests"))
    compatible = requested >= _storage(mapping(template_spec.get("resources")).get("requests"))
    ready = _storage(mapping(claim.get("status")).get("capacity")) >= requested
    return compatible, ready


def _volume_claims(r: Round, pods: Sequence[KubeObject]) -> list[dict[str, Any]]:
    out = []
    for template in sequence(spec(r.statefulset).get("volumeClaimTemplates")):
        template_name = str(mapping(mapping(template).get("metadata")).get("name") or "")
        compatible = ready = 0
        for pod in pods:
            claim = r.world.claims.get(claim_name(template_name, name(r.statefulset), ordinal_of(pod)))
            if claim is None or is_being_deleted(claim):
                continue
            ok, is_ready = claim_compatibility(claim, mapping(template))
            compatible += ok
            ready += ok and is_ready
        out.append(
            {
                "volumeClaimName": template_name,
                "compatibleReplicas": compatible,
                "compatibleReadyReplicas": ready,
            }
        )
    return out


def compute_status(r: Round, *, current_gone: int = 0, updated_gone: int = 0) -> dict[str, Any]:
    """The whole ``status`` for this round (see the module docstring)."""
    sts, world = r.statefulset, r.world
    current, update = name(world.current_revision), name(world.update_revision)
    replicas = [p for p in r.slots if p is not None and not r.is_draft(p)]
    counts = dict.fromkeys(COUNTERS, 0)
    for pod in [*replicas, *r.condemned]:
        if not is_created(pod):
            continue
        counts["replicas"] += 1
        at_update = pod_revision(pod) == update
        if is_running_and_ready(pod):
            available = running_and_available(pod, r.min_ready_seconds, world.now)[0]
            counts["readyReplicas"] += 1
            counts["availableReplicas"] += available
            counts["updatedReadyReplicas"] += at_update
            counts["updatedAvailableReplicas"] += at_update and available
        if not is_being_deleted(pod):
            counts["currentReplicas"] += pod_revision(pod) == current
            counts["updatedReplicas"] += at_update
    counts["currentReplicas"] -= current_gone
    counts["updatedReplicas"] -= updated_gone
    status: dict[str, Any] = {
        "observedGeneration": int(metadata(sts).get("generation") or 0),
        **counts,
        "currentRevision": current,
        "updateRevision": update,
        "collisionCount": world.collision_count,
        "labelSelector": format_label_selector(mapping(spec(sts).get("selector"))),
    }
    claims = _volume_claims(r, replicas)
    if claims:
        status["volumeClaims"] = claims
    rolling_update = mapping(spec(sts).get("updateStrategy")).get("type") in (None, "RollingUpdate")
    if rolling_update and counts["updatedReplicas"] == counts["replicas"] == counts["readyReplicas"]:
        status["currentReplicas"] = status["updatedReplicas"]
        status["currentRevision"] = update
    return status
