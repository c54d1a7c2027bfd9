"""Deletion protection for workloads (``policy.kruise.io/delete-protection``).

Mirrors ``pkg/webhook/util/deletionprotection`` ``ValidateWorkloadDeletion`` of OpenKruise v1.8,
used by the CloneSet, Advanced StatefulSet, UnitedDeployment and native workload webhooks on
DELETE. The caller answers HTTP 403 with the returned text. Only active when the feature gate
``ResourcesDeletionProtection`` is on (its default is off).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kruise.core.webhook.configuration import MatchCondition

__all__ = [
    "DELETION_PROTECTION_KEY",
    "DELETION_PROTECTION_TYPE_ALWAYS",
    "DELETION_PROTECTION_TYPE_CASCADING",
    "PROTECTED_DELETE",
    "validate_workload_deletion",
]

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


def validate_workload_deletion(
    obj: Mapping[str, Any] | None, replicas: Any, *, gate_enabled: bool
) -> str | None:
    """Why deleting ``obj`` is forbidden, or ``None`` when it is allowed.

    - gate off, no object, or the object already has a ``deletionTimestamp``: allowed;
    - label ``Always``: ``forbidden by ResourcesProtectionDeletion for
      policy.kruise.io/delete-protection=Always``;
    - label ``Cascading`` and ``replicas`` (``spec.replicas``; ``None`` means unset) ``> 0``:
      ``... for policy.kruise.io/delete-protection=Cascading and replicas 3>0``;
    - any other value: allowed.
    """
    if not gate_enabled or obj is None:
        return None
    metadata = obj.get("metadata")
    metadata = metadata if isinstance(metadata, Mapping) else {}
    if metadata.get("deletionTimestamp") is not None:
        return None
    labels = metadata.get("labels")
    value = labels.get(DELETION_PROTECTION_KEY) if isinstance(labels, Mapping) else None
    if value == DELETION_PROTECTION_TYPE_ALWAYS:
        return f"forbidden by ResourcesProtectionDeletion for {DELETION_PROTECTION_KEY}={value}"
    if value == DELETION_PROTECTION_TYPE_CASCADING and isinstance(replicas, int) and replicas > 0:
        return (
            f"forbidden by ResourcesProtectionDeletion for {DELETION_PROTECTION_KEY}={value} "
            f"and replicas {replicas}>0"
        )
    return None
