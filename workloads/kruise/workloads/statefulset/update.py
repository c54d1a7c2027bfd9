"""The rolling-update phase of a StatefulSet round (``rollingUpdateStatefulsetPods``), pure.

Nothing while ``rollingUpdate.paused``. ``maxUnavailable`` (default 1) is scaled against
``replicas`` rounded down, at least 1. A replica counts as unavailable when it is not healthy,
its in-place update has not finished, or it has not been available for ``minReadySeconds``.

1. Pods labelled ``apps.kruise.io/specified-delete`` are deleted from the highest slot down, each
   only while the unavailable count stays below ``maxUnavailable`` (already unavailable pods
   always go); the partition does not protect them.
2. The pods to update (:func:`sort_pods_to_update`): ordered, the slots from the top down to the
   ``partition``-th slot (reserved slots counted, none taken); with ``unorderedUpdate``, pods
   terminating or already updated first, then the others in priority order, at most
   ``replicas - partition`` in all.
3. Each pod not at the update revision is updated in place (``InPlaceIfPossible`` /
   ``InPlaceOnly`` when only images and metadata changed, after its lifecycle hook) or deleted to
   be recreated; the walk stops at the first available pod when ``maxUnavailable`` pods are
   already unavailable. ``InPlaceOnly`` with any other change is an error.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from kruise.workloads.admission.intstr import IntOrStringError, get_value
from kruise.workloads.inplace import calculate_in_place_update_spec, check_in_place_update_completed
from kruise.workloads.lifecycle import in_place_gate
from kruise.workloads.objects import KubeObject, is_being_deleted, mapping, name, spec
from kruise.workloads.pods import is_pod_update, is_specified_delete, lifecycle_state
from kruise.workloads.revisions import template_of_revision
from kruise.workloads.statefulset.actions import DeleteReason, LifecycleChange, UpdateInPlace
from kruise.workloads.statefulset.health import is_healthy, running_and_available
from kruise.workloads.statefulset.identity import pod_revision
from kruise.workloads.statefulset.round import Round
from kruise.workloads.statefulset.scale import PhaseResult, delete_or_hook
from kruise.workloads.updatesort import priority_sort

__all__ = ["UpdateResult", "plan_update", "sort_pods_to_update"]

IN_PLACE_POLICIES = ("InPlaceIfPossible", "InPlaceOnly")


@dataclass
class UpdateResult(PhaseResult):
    """:class:`PhaseResult` plus the status counts upstream lowers for the pods it moves away
    from the current (``current_gone``) or update (``updated_gone``) revision this round."""

    current_gone: int = 0
    updated_gone: int = 0


def sort_pods_to_update(
    rolling: Mapping[str, Any] | None,
    update_revision: str,
    replicas: int,
    slots: Sequence[KubeObject | None],
) -> list[int]:
    """``sortPodsToUpdate``: slot indexes in update order (see the module docstring)."""
    partition = int(mapping(rolling).get("partition") or 0)
    max_update = replicas - partition
    if max_update <= 0:
        return []
    unordered = mapping(rolling).get("unorderedUpdate")
    if not isinstance(unordered, Mapping):
        picked: list[int] = []
        for index in range(len(slots) - 1, partition - 1, -1):
            if len(picked) >= max_update:
                break
            if slots[index] is not None:
                picked.append(index)
        return picked
    updated, waiting = [], []
    for index in range(len(slots) - 1, -1, -1):
        pod = slots[index]
        if pod is None:
            continue
        if is_being_deleted(pod) or is_pod_update(pod, update_revision):
            updated.append(index)
        else:
            waiting.append(index)
    strategy = unordered.get("priorityStrategy")
    if isinstance(strategy, Mapping):
        present = [p if p is not None else {} for p in slots]
        waiting = priority_sort(present, waiting, strategy)
    return [*updated, *waiting][:max_update]


def _in_place(r: Round, pod: KubeObject, out: UpdateResult) -> bool | None:
    """``inPlaceUpdatePod``: True when the pod is (being) updated in place or waits for its hook,
    False to recreate it, None on an error (recorded; the phase stops)."""
    rolling = mapping(mapping(spec(r.statefulset).get("updateStrategy")).get("rollingUpdate"))
    policy = rolling.get("podUpdatePolicy")
    if policy not in IN_PLACE_POLICIES:
        return False
    update = r.world.update_revision
    old = next((rev for rev in r.world.revisions if name(rev) == pod_revision(pod)), None)
    in_place = None
    if old is not None:
        grace = int(mapping(rolling.get("inPlaceUpdateStrategy")).get("gracePeriodSeconds") or 0)
        in_place = calculate_in_place_update_spec(
            template_of_revision(old),
            template_of_revision(update),
            revision=name(update),
            grace_seconds=grace,
            env_from_metadata=r.options.env_from_metadata,
        )
    if in_place is None:
        if policy == "InPlaceOnly":
            out.errors.append(f"find strategy is InPlaceOnly but Pod {name(pod)} can not update in-place")
            return None
        return False
    gate = in_place_gate(r.statefulset, pod, updated_needs_hook=False)
    if gate.error is not None:
        out.errors.append(gate.error)
        return None
    if gate.transition is not None:
        out.actions.append(LifecycleChange(pod, gate.transition))
    elif gate.proceed:
        has_state = lifecycle_state(pod) != ""
        out.actions.append(UpdateInPlace(pod, in_place, name(update), lifecycle_updating=has_state))
        if in_place.grace_seconds > 0:
            out.wake(float(in_place.grace_seconds))
    return True


def _unavailable(r: Round, out: UpdateResult) -> set[str]:
    names: set[str] = set()
    for pod in r.slots:
        if pod is None:
            continue
        if not is_healthy(pod) or not check_in_place_update_completed(pod):
            names.add(name(pod))
            continue
        available, wait = running_and_available(pod, r.min_ready_seconds, r.world.now)
        if not available:
            names.add(name(pod))
            out.wake(wait)
    return names


def _specified_deletes(r: Round, limit: int, unavailable: set[str], out: UpdateResult) -> set[str]:
    """``handleSpecifiedDeletedPods``; returns the names handled."""
    handled: set[str] = set()
    current, update = name(r.world.current_revision), name(r.world.update_revision)
    for pod in reversed(r.slots):
        if pod is None or r.is_draft(pod) or not is_specified_delete(pod):
            continue
        if len(unavailable) >= limit and name(pod) not in unavailable:
            continue
        handled.add(name(pod))
        action, deleting = delete_or_hook(r, pod, DeleteReason.SPECIFIED)
        if action is not None:
            out.actions.append(action)
        if deleting:
            out.current_gone += pod_revision(pod) == current
            out.updated_gone += pod_revision(pod) == update
        unavailable.add(name(pod))
    return handled


def _max_unavailable(r: Round, rolling: Mapping[str, Any] | None) -> int:
    if rolling is None:
        return 1
    replicas = spec(r.statefulset).get("replicas")
    value = rolling.get("maxUnavailable")
    total = 1 if replicas is None else int(replicas)
    return max(1, get_value(1 if value is None else value, total, False))


def plan_update(r: Round) -> UpdateResult:
    """The rolling-update phase (nothing for ``OnDelete`` or while paused)."""
    out = UpdateResult()
    strategy = mapping(spec(r.statefulset).get("updateStrategy"))
    if strategy.get("type") == "OnDelete":
        return out
    raw = strategy.get("rollingUpdate")
    rolling = raw if isinstance(raw, Mapping) else None
    if rolling is not None and rolling.get("paused"):
        return out
    try:
        limit = _max_unavailable(r, rolling)
    except IntOrStringError as err:
        out.errors.append(str(err))
        return out
    unavailable = _unavailable(r, out)
    specified = _specified_deletes(r, limit, unavailable, out)
    update, current = name(r.world.update_revision), name(r.world.current_revision)
    replicas = spec(r.statefulset).get("replicas")
    total = 1 if replicas is None else int(replicas)
    for index in sort_pods_to_update(rolling, update, total, r.slots):
        pod = r.slots[index]
        if pod is None or pod_revision(pod) == update:
            continue
        if len(unavailable) >= limit and name(pod) not in unavailable:
            break
        if name(pod) in specified or is_being_deleted(pod) or r.is_draft(pod):
            continue
        moving = _in_place(r, pod, out)
        if moving is None:
            break
        if not moving:
            action, moving = delete_or_hook(r, pod, DeleteReason.UPDATE)
            if action is not None:
                out.actions.append(action)
        unavailable.add(name(pod))
        if moving and pod_revision(pod) == current:
            out.current_gone += 1
    return out
