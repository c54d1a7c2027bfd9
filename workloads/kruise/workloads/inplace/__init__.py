"""The in-place update engine every Kruise workload shares (upstream ``pkg/util/inplaceupdate``).

CloneSet, Advanced StatefulSet and Advanced DaemonSet update a pod in place the same way; what
differs is only which pods they pick and when. The engine is pure and works on pod dicts:

- :mod:`.spec`: can an old revision's template become the new one in place
  (:func:`calculate_in_place_update_spec` -> :class:`InPlaceUpdateSpec` or ``None`` = recreate);
- :mod:`.state`: the ``apps.kruise.io/inplace-update-state`` / ``-grace`` annotations and the
  "has the kubelet finished?" check (:func:`check_in_place_update_completed`);
- :mod:`.apply`: the pod to write for an update (:func:`in_place_update_pod`), the per-reconcile
  bookkeeping (:func:`refresh_in_place_update`: grace periods, next container batches,
  ``InPlaceUpdateReady``) and the patch between two pod dicts (:func:`pod_patch`).

A workload's shell writes what these return; the revision labels it writes are passed in, so
nothing here knows which kind owns the pod.
"""

from kruise.core.containermeta import RUNTIME_CONTAINERS_META_KEY
from kruise.workloads.inplace.apply import (
    RefreshDecision,
    RefreshKind,
    apply_update_spec,
    container_priority,
    has_in_place_readiness_gate,
    in_place_update_pod,
    pod_patch,
    refresh_in_place_update,
    start_in_place_update_condition,
)
from kruise.workloads.inplace.spec import InPlaceUpdateSpec, calculate_in_place_update_spec
from kruise.workloads.inplace.state import (
    GRACE_KEY,
    GRACE_KEY_OLD,
    STATE_KEY,
    STATE_KEY_OLD,
    HashCheck,
    InPlaceUpdateState,
    check_in_place_update_completed,
    containers_update_completed,
    grace_annotation,
    in_place_update_seconds,
    parse_state,
    state_annotation,
)

__all__ = [
    "GRACE_KEY",
    "GRACE_KEY_OLD",
    "RUNTIME_CONTAINERS_META_KEY",
    "STATE_KEY",
    "STATE_KEY_OLD",
    "HashCheck",
    "InPlaceUpdateSpec",
    "InPlaceUpdateState",
    "RefreshDecision",
    "RefreshKind",
    "apply_update_spec",
    "calculate_in_place_update_spec",
    "check_in_place_update_completed",
    "container_priority",
    "containers_update_completed",
    "grace_annotation",
    "has_in_place_readiness_gate",
    "in_place_update_pod",
    "in_place_update_seconds",
    "parse_state",
    "pod_patch",
    "refresh_in_place_update",
    "start_in_place_update_condition",
    "state_annotation",
]
