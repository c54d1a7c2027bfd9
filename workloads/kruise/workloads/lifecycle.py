"""Lifecycle hooks (``spec.lifecycle``) and the pod lifecycle-state transitions (``pkg/util/lifecycle``).

CloneSet, Advanced StatefulSet and Advanced DaemonSet share the hooks. A hook (``preDelete`` /
``inPlaceUpdate`` / ``preNormal``) is a set of labels and finalizers that a user's controller
holds on a pod. *Hooked* means any of them is present, *all hooked* means all are. The
transitions below are the ones the workloads' ``refreshPodState``, ``updatePod`` /
``inPlaceUpdatePod`` and ``deletePod(s)`` make; each returns a :class:`LifecycleTransition` to
patch, or ``None`` to leave the pod alone. Patches are built as data by :func:`lifecycle_patch`.
The functions take the workload object (any kind with ``spec.lifecycle``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from kruise.workloads.objects import (
    KubeObject,
    finalizers,
    format_time,
    labels,
    mapping,
    metadata,
    sequence,
    spec,
)
from kruise.workloads.pods import (
    LIFECYCLE_STATE_LABEL,
    LIFECYCLE_TIMESTAMP_ANNOTATION,
    LifecycleState,
    equal_to_revision_hash,
    lifecycle_state,
    node_name,
)

#: A ``LifecycleHook`` dict:
#: ``{"labelsHandler": {...}, "finalizersHandler": [...], "markPodNotReady": bool}``.
Hook = Mapping[str, Any]


@dataclass(frozen=True)
class LifecycleTransition:
    """Patch the pod's lifecycle state to ``state``.

    Attributes:
        state: the new ``lifecycle.apps.kruise.io/state`` value.
        mark_pod_not_ready: also add (PreparingDelete/PreparingUpdate) or remove (Updated) the
            ``KruisePodReady`` not-ready key, per the hook's ``markPodNotReady``.
        handler: when set, re-add this hook's labels and finalizers in the same patch
            (``UpdatePodLifecycleWithHandler``).
    """

    state: LifecycleState
    mark_pod_not_ready: bool = False
    handler: Mapping[str, Any] | None = field(default=None)


def hook_of(workload: KubeObject, which: str) -> Hook | None:
    """``spec.lifecycle.<which>`` (``preDelete``, ``inPlaceUpdate`` or ``preNormal``) or ``None``."""
    hook = mapping(spec(workload).get("lifecycle")).get(which)
    return hook if isinstance(hook, Mapping) else None


def is_pod_hooked(hook: Hook | None, pod: KubeObject) -> bool:
    """The pod has ANY handler finalizer, or ANY handler label with that value (``IsPodHooked``)."""
    if hook is None:
        return False
    pod_labels, pod_finalizers = labels(pod), finalizers(pod)
    if any(f in pod_finalizers for f in sequence(hook.get("finalizersHandler"))):
        return True
    return any(pod_labels.get(k, "") == v for k, v in mapping(hook.get("labelsHandler")).items())


def is_pod_all_hooked(hook: Hook | None, pod: KubeObject) -> bool:
    """The pod has ALL handler finalizers and labels (``IsPodAllHooked``); False without a hook."""
    if hook is None:
        return False
    pod_labels, pod_finalizers = labels(pod), finalizers(pod)
    if not all(f in pod_finalizers for f in sequence(hook.get("finalizersHandler"))):
        return False
    return all(pod_labels.get(k, "") == v for k, v in mapping(hook.get("labelsHandler")).items())


def is_mark_pod_not_ready(workload: KubeObject) -> bool:
    """``markPodNotReady`` on the preDelete or inPlaceUpdate hook (``IsLifecycleMarkPodNotReady``)."""
    return any(
        bool(mapping(hook_of(workload, w)).get("markPodNotReady")) for w in ("preDelete", "inPlaceUpdate")
    )


def _has_lifecycle(workload: KubeObject) -> bool:
    return isinstance(spec(workload).get("lifecycle"), Mapping)


def refresh_transition(
    workload: KubeObject,
    pod: KubeObject,
    update_revision: str,
    *,
    update_completed: bool,
    normal_needs_node: bool = True,
) -> LifecycleTransition | None:
    """The state change ``refreshPodState`` makes on every reconcile, if any.

    * PreparingNormal -> Normal once all-hooked by the preNormal hook; without that hook, at
      once, or (``normal_needs_node``, the CloneSet's rule) once the pod is scheduled
      (``spec.nodeName`` set; openkruise/kruise#2087, which the upstream e2e "creates with
      unschedulable scheduler" checks: a Pending unscheduled pod stays PreparingNormal). The
      Advanced StatefulSet has no such wait.
    * PreparingUpdate already at ``update_revision`` (rolled back while waiting, issue #1156)
      -> Updated if a lifecycle exists and the pod is not all-hooked by inPlaceUpdate, else Normal.
    * Updating, once ``update_completed`` (see
      :func:`~kruise.workloads.inplace.check_in_place_update_completed`)
      -> Updated / Normal by the same rule.
    * Updated -> Normal without an inPlaceUpdate hook or once all-hooked by it.

    ``mark_pod_not_ready`` follows ``lifecycle.inPlaceUpdate.markPodNotReady`` as upstream does.
    """
    in_place = hook_of(workload, "inPlaceUpdate")
    target: LifecycleState | None = None
    state = lifecycle_state(pod)
    updated_or_normal = (
        LifecycleState.UPDATED
        if _has_lifecycle(workload) and not is_pod_all_hooked(in_place, pod)
        else LifecycleState.NORMAL
    )
    if state == LifecycleState.PREPARING_NORMAL:
        pre_normal = hook_of(workload, "preNormal")
        scheduled = bool(node_name(pod)) or not normal_needs_node
        if (pre_normal is None and scheduled) or is_pod_all_hooked(pre_normal, pod):
            target = LifecycleState.NORMAL
    elif state == LifecycleState.PREPARING_UPDATE:
        if equal_to_revision_hash(pod, update_revision):
            target = updated_or_normal
    elif state == LifecycleState.UPDATING:
        if update_completed:
            target = updated_or_normal
    elif state == LifecycleState.UPDATED and (in_place is None or is_pod_all_hooked(in_place, pod)):
        target = LifecycleState.NORMAL
    if target is None:
        return None
    return LifecycleTransition(target, mark_pod_not_ready=bool(mapping(in_place).get("markPodNotReady")))


def delete_transition(workload: KubeObject, pod: KubeObject) -> LifecycleTransition | None:
    """When deleting ``pod``: PreparingDelete instead if the preDelete hook hooks it (``deletePods``).

    ``None`` means delete the pod (and its PVCs) now. A pod already in PreparingDelete that
    is still hooked gets the same transition back: the state patch is then a no-op, and the
    pod must not be deleted yet.
    """
    pre_delete = hook_of(workload, "preDelete")
    if not is_pod_hooked(pre_delete, pod):
        return None
    return LifecycleTransition(
        LifecycleState.PREPARING_DELETE, mark_pod_not_ready=bool(mapping(pre_delete).get("markPodNotReady"))
    )


@dataclass(frozen=True)
class InPlaceGate:
    """Whether a pod that can be updated in place may be now, per its lifecycle state.

    ``proceed``: write the update now; otherwise ``transition`` (move the pod to PreparingUpdate
    first, the round ends for it), ``error`` (upstream's message) or neither (wait: a hook still
    holds it).
    """

    proceed: bool = False
    transition: LifecycleTransition | None = None
    error: str | None = None


def in_place_gate(workload: KubeObject, pod: KubeObject, *, updated_needs_hook: bool) -> InPlaceGate:
    """The lifecycle part of upstream's ``updatePod`` / ``inPlaceUpdatePod``.

    - ``""``/PreparingNormal/Normal: to PreparingUpdate if the inPlaceUpdate hook hooks the pod
      (with its ``markPodNotReady``), else proceed;
    - Updated (a newer revision came before the user re-hooked the pod): back to PreparingUpdate,
      re-adding the hook's labels and finalizers (``UpdatePodLifecycleWithHandler``); the CloneSet
      waits instead when there is no hook (``updated_needs_hook``);
    - PreparingUpdate: wait while hooked, else proceed; Updating: proceed;
    - anything else: ``not allowed to in-place update pod <name> in state <state>``.
    """
    hook = hook_of(workload, "inPlaceUpdate")
    state = lifecycle_state(pod)
    mark = bool(mapping(hook).get("markPodNotReady"))
    if state in ("", LifecycleState.PREPARING_NORMAL, LifecycleState.NORMAL):
        if is_pod_hooked(hook, pod):
            return InPlaceGate(transition=LifecycleTransition(LifecycleState.PREPARING_UPDATE, mark))
        return InPlaceGate(proceed=True)
    if state == LifecycleState.UPDATED:
        if hook is None and updated_needs_hook:
            return InPlaceGate()
        return InPlaceGate(transition=LifecycleTransition(LifecycleState.PREPARING_UPDATE, mark, hook))
    if state == LifecycleState.PREPARING_UPDATE:
        return InPlaceGate() if is_pod_hooked(hook, pod) else InPlaceGate(proceed=True)
    if state == LifecycleState.UPDATING:
        return InPlaceGate(proceed=True)
    return InPlaceGate(
        error=f"not allowed to in-place update pod {metadata(pod).get('name')} in state {state}"
    )


def lifecycle_patch(transition: LifecycleTransition, now: datetime) -> dict[str, Any]:
    """Strategic-merge patch body setting the state label and RFC 3339 timestamp annotation.

    With ``transition.handler`` the hook's labels are added alongside and its finalizers are
    listed (strategic merge unions ``metadata.finalizers``).
    """
    new_labels: dict[str, Any] = {LIFECYCLE_STATE_LABEL: str(transition.state)}
    meta: dict[str, Any] = {
        "labels": new_labels,
        "annotations": {LIFECYCLE_TIMESTAMP_ANNOTATION: format_time(now)},
    }
    if transition.handler is not None:
        new_labels.update({str(k): v for k, v in mapping(transition.handler.get("labelsHandler")).items()})
        meta["finalizers"] = [str(f) for f in sequence(transition.handler.get("finalizersHandler"))]
    return {"metadata": meta}
