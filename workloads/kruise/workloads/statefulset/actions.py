"""What one StatefulSet round decides to do, as data (the shell executes it in order).

Each action names the pod (or claim) it acts on; ``reason`` says why, for events and logs.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from kruise.workloads.inplace import InPlaceUpdateSpec
from kruise.workloads.lifecycle import LifecycleTransition
from kruise.workloads.objects import KubeObject

__all__ = [
    "Action",
    "CreateClaims",
    "CreatePod",
    "DeletePod",
    "DeleteReason",
    "FixIdentity",
    "LifecycleChange",
    "SetClaimOwners",
    "UpdateInPlace",
]


class DeleteReason(StrEnum):
    """Why a pod is deleted."""

    FINISHED = "Finished"  # Failed or Succeeded: recreated at the next round (evicted pods)
    CONDEMNED = "Condemned"  # ordinal outside the replicas (scale in, reserved ordinal)
    UPDATE = "Update"  # recreate at the update revision
    SPECIFIED = "SpecifiedDelete"  # labelled apps.kruise.io/specified-delete


@dataclass(frozen=True)
class CreatePod:
    """Create the claims the pod mounts (those missing), then the pod; then set the claims'
    retention owners (``CreateStatefulPod``)."""

    pod: dict[str, Any]
    claims: tuple[dict[str, Any], ...] = ()


@dataclass(frozen=True)
class CreateClaims:
    """Create the missing claims of a pending pod (``createMissingPersistentVolumeClaims``)."""

    pod: KubeObject
    claims: tuple[dict[str, Any], ...]


@dataclass(frozen=True)
class DeletePod:
    pod: KubeObject
    reason: DeleteReason


@dataclass(frozen=True)
class LifecycleChange:
    """Patch the pod's lifecycle state (PreparingDelete instead of a delete, PreparingUpdate
    while an inPlaceUpdate hook holds the pod)."""

    pod: KubeObject
    transition: LifecycleTransition


@dataclass(frozen=True)
class UpdateInPlace:
    pod: KubeObject
    spec: InPlaceUpdateSpec
    revision: str
    #: upstream sets lifecycle ``Updating`` only on a pod that has a lifecycle state
    lifecycle_updating: bool = True


@dataclass(frozen=True)
class SetClaimOwners:
    """Replace a claim's ``ownerReferences`` (retention policy), guarded by its resourceVersion."""

    claim: KubeObject
    owner_references: list[dict[str, Any]] = field(default_factory=list)


@dataclass(frozen=True)
class FixIdentity:
    """Patch the identity labels of a pod that lost them (``updateIdentity``)."""

    pod: KubeObject
    labels: dict[str, str]


Action = CreatePod | CreateClaims | DeletePod | LifecycleChange | UpdateInPlace | SetClaimOwners | FixIdentity
