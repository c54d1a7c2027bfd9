"""The status patch a StatefulSet round writes, conditions included (pure).

Upstream builds a fresh status each round and writes it whole when it differs
(``updateStatefulSetStatus``): a ``FailedCreatePod`` / ``FailedUpdatePod`` condition set this
round is written (its ``lastTransitionTime`` kept when the condition already had that status,
``SetStatefulsetCondition``), and conditions from earlier rounds vanish with the next write.
Here the computed status is compared field by field (conditions only when this round sets one)
and written as a merge patch, ``null`` removing what is gone.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from kruise.workloads.objects import format_time, mapping, sequence

__all__ = ["FAILED_CREATE_POD", "FAILED_UPDATE_POD", "status_patch"]

FAILED_CREATE_POD = "FailedCreatePod"
FAILED_UPDATE_POD = "FailedUpdatePod"


def _condition(current: Mapping[str, Any], kind: str, message: str, now: datetime) -> dict[str, Any]:
    old = next(
        (mapping(c) for c in sequence(current.get("conditions")) if mapping(c).get("type") == kind), None
    )
    since = (
        old.get("lastTransitionTime") if old is not None and old.get("status") == "True" else format_time(now)
    )
    return {"type": kind, "status": "True", "lastTransitionTime": since, "message": message}


def status_patch(
    current: Mapping[str, Any],
    computed: Mapping[str, Any],
    failed_create: str | None,
    failed_update: str | None,
    now: datetime,
) -> dict[str, Any] | None:
    """The merge patch turning ``current`` into ``computed`` plus this round's conditions, or
    ``None`` when nothing changed."""
    desired = dict(computed)
    conditions = [
        _condition(current, kind, message, now)
        for kind, message in ((FAILED_CREATE_POD, failed_create), (FAILED_UPDATE_POD, failed_update))
        if message
    ]
    compared = set(desired) | {k for k in current if k != "conditions"}
    if conditions:
        desired["conditions"] = conditions
        compared.add("conditions")
    if all(current.get(k) == desired.get(k) for k in compared):
        return None
    patch: dict[str, Any] = {
        k: desired.get(k) for k in compared | {"conditions"} if k in desired or k in current
    }
    if not conditions and current.get("conditions"):
        patch["conditions"] = None
    return patch
