"""The CloneSet's own pod keys and its notion of a ready / available pod.

The predicates every workload shares are in :mod:`kruise.workloads.pods`; these two mirror
CloneSet-only helpers (``clonesetutils.IsPodUpdateReady`` / sync ``IsPodAvailable``), which
also require ``InPlaceUpdateReady`` not to be False.
"""

from __future__ import annotations

from datetime import datetime

from kruise.workloads.objects import KubeObject
from kruise.workloads.pods import (
    POD_TEMPLATE_HASH_LABEL,
    REVISION_HASH_LABEL,
    LifecycleState,
    in_place_update_ready_ok,
    is_available,
    is_running,
    lifecycle_state,
    short_hash,
)

INSTANCE_ID_LABEL = "apps.kruise.io/cloneset-instance-id"
SCALING_EXCLUDE_PREPARING_DELETE_LABEL = "apps.kruise.io/cloneset-scaling-exclude-preparing-delete"


def is_pod_update_ready(pod: KubeObject, min_ready_seconds: int, now: datetime) -> bool:
    """Running, available and ``InPlaceUpdateReady`` not False (CloneSet ``IsPodUpdateReady``).

    This is what ``status.readyReplicas`` counts (with ``min_ready_seconds=0``).
    """
    return is_running(pod) and is_available(pod, min_ready_seconds, now) and in_place_update_ready_ok(pod)


def is_cloneset_available(pod: KubeObject, min_ready_seconds: int, now: datetime) -> bool:
    """Lifecycle state "" or Normal and :func:`is_pod_update_ready` (sync ``IsPodAvailable``).

    The CloneSet's notion of an available pod for diffs, update limits and
    ``status.availableReplicas``. With ``min_ready_seconds=0`` it is the controller's
    ``isPodReady`` used for ``deleteReadyLimit``.
    """
    if lifecycle_state(pod) not in ("", LifecycleState.NORMAL):
        return False
    return is_pod_update_ready(pod, min_ready_seconds, now)


def revision_labels(revision: str, *, short_hash_label: bool = False) -> dict[str, str]:
    """The revision labels a CloneSet writes on its pods (``WriteRevisionHash``).

    ``controller-revision-hash`` is the full revision name, or only its hash with gate
    ``CloneSetShortHash``; ``pod-template-hash`` is always the short hash.
    """
    return {
        REVISION_HASH_LABEL: short_hash(revision) if short_hash_label else revision,
        POD_TEMPLATE_HASH_LABEL: short_hash(revision),
    }
