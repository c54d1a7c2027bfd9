"""The UnitedDeployment's status after a round (upstream ``calculateStatus`` and the conditions of
``manageSubsets``), pure.

- ``replicas``/``readyReplicas``: the sums of the subset workloads' status, ``replicas`` without
  the reserved pods of reservation mode (:mod:`.reservation`), which ``reservedPods`` counts
  (and each ``subsetStatuses[].reservedPods``);
- ``updatedReplicas``/``updatedReadyReplicas``: the subsets' active pods labelled with the
  expected revision (and Ready); the pods as :attr:`.kinds.SubsetKind.pods_of` finds them (a
  Deployment's through its ReplicaSets);
- ``subsetReplicas``: the allocation; ``updateStatus``: the update revision's name and the partitions;
- ``currentRevision``: kept, set on first sight, and moved to the expected revision once every
  replica is updated and ready;
- conditions ``SubsetProvisioned`` and ``SubsetUpdated``: True, or False with reason ``Error``
  and the failure; a condition keeps its transition time while its status and reason stay;
  ``UnitedDeploymentUpdated`` (upstream master's ``setUpdatedCondition``, :func:`updated_condition`):
  False (``UnitedDeploymentRevisionUpdating``) while the current revision is not the update
  revision, else True (``UnitedDeploymentRevisionUpdated``), replaced only when its status flips;
  ``SubsetFailure`` is removed (upstream's subset adapters never report a failure);
- ``subsetStatuses``: each subset's name, replicas, ready replicas, partition and the
  ``Schedulable`` condition the Adaptive strategy keeps;
- ``collisionCount``: the one the update revision's name was hashed with (kept once set);
- ``labelSelector`` for HPA (in reservation mode with ``,apps.kruise.io/united-deployment-reserved-pod=false``
  appended, so reserved pods are not counted), ``observedGeneration``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from kruise.workloads.api.uniteddeployment import RESERVED_POD_LABEL
from kruise.workloads.objects import (
    KubeObject,
    format_time,
    labels,
    mapping,
    metadata,
    sequence,
    spec,
    status,
)
from kruise.workloads.pods import is_active, is_ready
from kruise.workloads.selector import format_label_selector
from kruise.workloads.uniteddeployment.allocation import Allocation
from kruise.workloads.uniteddeployment.subsets import REVISION_LABEL

__all__ = ["UPDATED_CONDITION", "RoundOutcome", "status_patch", "updated_condition"]

UPDATED_CONDITION = "UnitedDeploymentUpdated"


@dataclass(frozen=True)
class RoundOutcome:
    """What the round's writes reported: ``""`` for success, else the error text."""

    provision_error: str = ""
    update_error: str = ""


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _condition(previous: Sequence[Any], kind: str, error: str, now: datetime) -> dict[str, Any]:
    """``NewUnitedDeploymentCondition`` set like ``SetUnitedDeploymentCondition``: an unchanged
    status and reason keep the stored condition."""
    wanted = {"type": kind, "status": "False" if error else "True"}
    if error:
        wanted |= {"reason": "Error", "message": error}
    for old in previous:
        old = mapping(old)
        if (
            old.get("type") == kind
            and old.get("status") == wanted["status"]
            and old.get("reason") == wanted.get("reason")
        ):
            return dict(old)
    return {**wanted, "lastTransitionTime": format_time(now)}


def updated_condition(
    previous: Sequence[Any], current_revision: str, update_revision: str, now: datetime
) -> dict[str, Any]:
    """The ``UnitedDeploymentUpdated`` condition (``setUpdatedCondition``): the stored one while
    its status stays, else a new one at ``now``."""
    updating = current_revision != update_revision
    wanted = "False" if updating else "True"
    for old in previous:
        if mapping(old).get("type") == UPDATED_CONDITION and mapping(old).get("status") == wanted:
            return dict(mapping(old))
    if updating:
        reason, message = "UnitedDeploymentRevisionUpdating", f"updating to revision {update_revision}"
    else:
        reason, message = "UnitedDeploymentRevisionUpdated", f"updated to revision {update_revision}"
    return {
        "type": UPDATED_CONDITION,
        "status": wanted,
        "lastTransitionTime": format_time(now),
        "reason": reason,
        "message": message,
    }


def reservation_mode(ud: KubeObject) -> bool:
    """Adaptive with ``reserveUnschedulablePods`` (``ShouldReserveUnschedulablePods``)."""
    strategy = mapping(mapping(spec(ud).get("topology")).get("scheduleStrategy"))
    return (
        strategy.get("type") == "Adaptive"
        and mapping(strategy.get("adaptive")).get("reserveUnschedulablePods") is True
    )


def status_patch(
    ud: KubeObject,
    workloads: Mapping[str, KubeObject],
    pods: Mapping[str, Sequence[KubeObject]],
    allocation: Allocation,
    partitions: Mapping[str, int],
    revision: str,
    collision_count: int,
    outcome: RoundOutcome,
    now: datetime,
    reserved: Mapping[str, int] | None = None,
) -> dict[str, Any] | None:
    """The new ``status`` of ``ud`` (a full replacement for a merge patch), or ``None`` when it is
    what is stored. ``workloads``/``pods`` are by subset name; ``revision`` is the update
    ControllerRevision's name, ``collision_count`` the one its hash used; ``reserved`` the
    reserved pods of each subset (reservation mode)."""
    old = status(ud)
    reserved = reserved or {}
    total_reserved = sum(reserved.get(n, 0) for n in workloads)
    replicas = sum(_int(status(w).get("replicas")) for w in workloads.values()) - total_reserved
    ready = sum(_int(status(w).get("readyReplicas")) for w in workloads.values())
    updated = [
        p for ps in pods.values() for p in ps if labels(p).get(REVISION_LABEL) == revision and is_active(p)
    ]
    updated_ready = sum(1 for p in updated if is_ready(p))
    current = str(old.get("currentRevision") or "") or revision
    if current != revision and updated_ready >= replicas:
        current = revision
    # upstream sets it before promoting the current revision (True one round later); here after
    updated_cond = updated_condition(sequence(old.get("conditions")), current, revision, now)
    previous = sequence(old.get("conditions"))
    kept = [
        dict(mapping(c))
        for c in previous
        if mapping(c).get("type")
        not in ("SubsetProvisioned", "SubsetUpdated", "SubsetFailure", UPDATED_CONDITION)
    ]
    conditions = [
        *kept,
        _condition(previous, "SubsetProvisioned", outcome.provision_error, now),
        _condition(previous, "SubsetUpdated", outcome.update_error, now),
        updated_cond,
    ]
    old_subsets = {mapping(s).get("name"): mapping(s) for s in sequence(old.get("subsetStatuses"))}
    subset_statuses = []
    for name in allocation.replicas:
        entry: dict[str, Any] = {"name": name}
        workload = workloads.get(name)
        if workload is not None:
            entry["replicas"] = _int(status(workload).get("replicas"))
            entry["readyReplicas"] = _int(status(workload).get("readyReplicas"))
        if partitions.get(name):
            entry["partition"] = partitions[name]
        entry["reservedPods"] = reserved.get(name, 0) if workload is not None else 0
        changed = allocation.schedulable.get(name)
        if changed is not None:
            entry["conditions"] = [changed.to_dict()]
        elif mapping(old_subsets.get(name)).get("conditions"):
            entry["conditions"] = list(sequence(mapping(old_subsets[name]).get("conditions")))
        subset_statuses.append({k: v for k, v in entry.items() if v != 0})
    new: dict[str, Any] = {
        "observedGeneration": _int(metadata(ud).get("generation")),
        "replicas": replicas,
        "readyReplicas": ready,
        "updatedReplicas": len(updated),
        "updatedReadyReplicas": updated_ready,
        "currentRevision": current,
        "subsetReplicas": dict(allocation.replicas),
        "subsetStatuses": subset_statuses,
        "updateStatus": {"updatedRevision": revision, "currentPartitions": dict(partitions)},
        "conditions": conditions,
        "labelSelector": format_label_selector(mapping(spec(ud).get("selector")))
        + (f",{RESERVED_POD_LABEL}=false" if reservation_mode(ud) else ""),
    }
    if total_reserved:
        new["reservedPods"] = total_reserved
    if collision_count or old.get("collisionCount") is not None:
        new["collisionCount"] = collision_count
    return None if new == dict(old) else new
