"""The ``KruisePodReady`` readiness gate: a not-ready switch several writers share (pure).

Mirrors OpenKruise's ``pkg/util/podreadiness`` and the lifecycle part of ``pkg/util/lifecycle``:

- Every pod a Kruise workload creates carries the readiness gate ``KruisePodReady`` (upstream's
  pod webhook injects it into pods owned by ``apps.kruise.io`` objects; the CloneSet controller
  does it here when it builds the pod), and the condition starts ``True`` (upstream's
  pod-readiness controller sets it on any pod with the gate and no condition).
- A writer that wants the pod out of the endpoints adds a *not-ready key*
  ``{"userAgent": ..., "key": ...}`` to the condition's message, a JSON list sorted by
  ``(userAgent, key)``; the condition is ``False`` while the list is not empty and ``True``
  again when the last key is removed. Adding a key also recomputes the pod's ``Ready``
  condition at once (``util.SetPodReadyCondition``), so traffic drains before the kubelet's next
  status report; removing one leaves ``Ready`` to the kubelet.
- Lifecycle ``markPodNotReady`` (``executePodNotReadyPolicy``): entering ``PreparingDelete`` adds
  ``{Lifecycle, preDeleteHook}``, entering ``PreparingUpdate`` adds ``{Lifecycle, preUpdateHook}``,
  entering ``Updated`` removes ``{Lifecycle, preUpdateHook}``; ``Normal`` leaves the keys alone.
  A pod without the gate is left as it is (the policy is a no-op upstream too).

One difference: a condition created by adding a key has status ``False`` (upstream leaves the
status empty, which counts as not True all the same).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from kruise.workloads.objects import KubeObject, format_time, mapping, sequence, spec
from kruise.workloads.pods import KRUISE_POD_READY, POD_READY, LifecycleState, get_condition

CONTAINERS_READY = "ContainersReady"
READINESS_GATES_NOT_READY = "ReadinessGatesNotReady"
LIFECYCLE_USER_AGENT = "Lifecycle"
PRE_DELETE_HOOK_KEY = "preDeleteHook"
PRE_UPDATE_HOOK_KEY = "preUpdateHook"


@dataclass(frozen=True, order=True)
class NotReadyKey:
    """One writer's entry in the ``KruisePodReady`` message (``podreadiness.Message``)."""

    user_agent: str
    key: str

    def as_json(self) -> dict[str, str]:
        return {"userAgent": self.user_agent, "key": self.key}


PRE_DELETE = NotReadyKey(LIFECYCLE_USER_AGENT, PRE_DELETE_HOOK_KEY)
PRE_UPDATE = NotReadyKey(LIFECYCLE_USER_AGENT, PRE_UPDATE_HOOK_KEY)


@dataclass(frozen=True)
class NotReadyChange:
    """Add (``add=True``) or remove ``key`` from the pod's ``KruisePodReady`` condition."""

    add: bool
    key: NotReadyKey


def lifecycle_not_ready_change(state: LifecycleState) -> NotReadyChange | None:
    """``executePodNotReadyPolicy``: the key change a ``markPodNotReady`` hook makes on ``state``."""
    if state == LifecycleState.PREPARING_DELETE:
        return NotReadyChange(True, PRE_DELETE)
    if state == LifecycleState.PREPARING_UPDATE:
        return NotReadyChange(True, PRE_UPDATE)
    if state == LifecycleState.UPDATED:
        return NotReadyChange(False, PRE_UPDATE)
    return None


def has_kruise_readiness_gate(pod: KubeObject) -> bool:
    """``spec.readinessGates`` contains ``KruisePodReady``."""
    return any(
        mapping(g).get("conditionType") == KRUISE_POD_READY for g in sequence(spec(pod).get("readinessGates"))
    )


def not_ready_keys(pod: KubeObject) -> list[NotReadyKey]:
    """The keys in the ``KruisePodReady`` message (an unreadable message reads as none)."""
    condition = get_condition(pod, KRUISE_POD_READY) or {}
    try:
        entries = json.loads(str(condition.get("message") or "[]"))
    except ValueError:
        return []
    return [
        NotReadyKey(str(e.get("userAgent") or ""), str(e.get("key") or ""))
        for e in sequence(entries)
        if isinstance(e, dict)
    ]


def _dump(keys: list[NotReadyKey]) -> str:
    """Sorted compact JSON, as upstream's ``messageList.dump``."""
    return json.dumps([k.as_json() for k in sorted(keys)], separators=(",", ":"))


def initial_condition(pod: KubeObject, now: datetime) -> dict[str, Any] | None:
    """``KruisePodReady=True`` for a pod with the gate and no such condition (pod-readiness
    controller); ``None`` otherwise."""
    if not has_kruise_readiness_gate(pod) or get_condition(pod, KRUISE_POD_READY) is not None:
        return None
    return {"type": KRUISE_POD_READY, "status": "True", "lastTransitionTime": format_time(now)}


def ready_condition(
    pod: KubeObject, conditions: list[dict[str, Any]], now: datetime
) -> dict[str, Any] | None:
    """``util.SetPodReadyCondition``: the ``Ready`` condition recomputed from the readiness gates
    once ``conditions`` are merged in; ``None`` when the pod has no ``Ready`` condition yet or its
    containers are not ready (the kubelet's value stands), or when nothing would change."""
    merged = {str(c.get("type")): c for c in sequence(mapping(pod.get("status")).get("conditions"))}
    merged.update({str(c["type"]): c for c in conditions})
    current = merged.get(POD_READY)
    if current is None or mapping(merged.get(CONTAINERS_READY)).get("status") != "True":
        return None
    unready: list[str] = []
    for gate in sequence(spec(pod).get("readinessGates")):
        ctype = str(mapping(gate).get("conditionType") or "")
        found = merged.get(ctype)
        if found is None:
            unready.append(f'corresponding condition of pod readiness gate "{ctype}" does not exist.')
        elif found.get("status") != "True":
            unready.append(
                f'the status of pod readiness gate "{ctype}" is not "True", but {found.get("status")}'
            )
    if not unready:
        wanted = {"type": POD_READY, "status": "True", "reason": None, "message": None}
    else:
        wanted = {
            "type": POD_READY,
            "status": "False",
            "reason": READINESS_GATES_NOT_READY,
            "message": ", ".join(unready),
        }
    if all((current.get(k) or None) == (v or None) for k, v in wanted.items()):
        return None
    return {**wanted, "lastTransitionTime": format_time(now)}


def not_ready_patch(pod: KubeObject, change: NotReadyChange, now: datetime) -> dict[str, Any] | None:
    """The ``pods/status`` strategic-merge patch making ``change`` (``addNotReadyKey`` /
    ``removeNotReadyKey``), or ``None`` when there is nothing to do (no gate; the key already
    there, or already gone). An added key also carries the recomputed ``Ready`` condition."""
    if not has_kruise_readiness_gate(pod):
        return None
    current = get_condition(pod, KRUISE_POD_READY)
    keys = not_ready_keys(pod)
    stamp = format_time(now)
    if change.add:
        if current is not None and change.key in keys:
            return None
        condition = {
            "type": KRUISE_POD_READY,
            "status": "False",
            "message": _dump([*keys, change.key]),
            "lastTransitionTime": stamp,
        }
        conditions: list[dict[str, Any]] = [condition]
        ready = ready_condition(pod, conditions, now)
        if ready is not None:
            conditions.append(ready)
        return {"status": {"conditions": conditions}}
    if current is None or change.key not in keys:
        return None
    left = [k for k in keys if k != change.key]
    removed: dict[str, Any] = {
        "type": KRUISE_POD_READY,
        "status": current.get("status") if left else "True",
        "message": _dump(left),
        "lastTransitionTime": stamp,
    }
    return {"status": {"conditions": [removed]}}
