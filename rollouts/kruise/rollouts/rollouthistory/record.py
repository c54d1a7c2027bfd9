"""What a Rollout's RolloutHistory should say (pure), after upstream's ``RolloutHistoryReconciler``.

- **Only releases with a rollout-id are recorded.** Upstream records a Rollout whose
  ``status.canaryStatus.observedRolloutID`` is set; in v1beta1 that id falls back to the canary
  revision, so here the id must also be the workload's own ``rollouts.kruise.io/rollout-id`` (label,
  else annotation: :func:`recorded_id`), as the reference and upstream's proposal describe.
- **One history per (Rollout, rollout-id)**, labelled ``rollouts.kruise.io/rollout-name`` and
  ``rollouts.kruise.io/rollout-id``. It is created once the release is ``Progressing``, named
  ``<rollout>-<6 hex of the id's hash>`` (upstream: 6 random characters) so a stale cache can
  never create a second one, with the snapshots of the release as it starts (upstream writes
  them at completion; kruise also refreshes them then).
- **canarySteps** lists every step released so far (a step counts once its pods are upgraded:
  from ``StepTrafficRouting`` on) with the live pods carrying the id and the step's
  ``rollouts.kruise.io/rollout-batch-id`` that the workload selects; upstream fills it only at
  completion, for every step.
- **phase** becomes ``completed`` when the release succeeded (phase Healthy, ``Succeeded`` True,
  the same id, last step ``Completed``), with every step listed; a history is never changed after
  that. A release cancelled or superseded keeps ``""`` and the steps it reached.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from kruise.rollouts.api.common import ROLLOUT_ID_LABEL
from kruise.rollouts.api.rollouthistory import PHASE_COMPLETED, ROLLOUT_NAME_LABEL
from kruise.rollouts.release.rolloutid import workload_rollout_id
from kruise.workloads.selector import SelectorError, selector_matches

JSON = dict[str, Any]
BATCH_ID_LABEL = "rollouts.kruise.io/rollout-batch-id"
_UPGRADING = ("BeforeStepUpgrade", "StepUpgrade")


def _sub_status(rollout: Mapping[str, Any]) -> Mapping[str, Any]:
    status = rollout.get("status") or {}
    return status.get("canaryStatus") or status.get("blueGreenStatus") or {}


def recorded_id(rollout: Mapping[str, Any], workload: Mapping[str, Any] | None) -> str:
    """The rollout-id to record the release under, "" when it has none of its own: the Rollout's
    ``observedRolloutID`` when the workload carries that very id."""
    observed = str(_sub_status(rollout).get("observedRolloutID") or "")
    return observed if observed and workload is not None and observed == workload_rollout_id(workload) else ""


def history_name(rollout_name: str, rollout_id: str) -> str:
    """``<rollout>-<6 hex>``: one name per (Rollout, rollout-id), at most 253 characters."""
    digest = hashlib.sha256(f"{rollout_name}/{rollout_id}".encode()).hexdigest()[:6]
    return f"{rollout_name[:246]}-{digest}"


def history_labels(rollout_name: str, rollout_id: str) -> dict[str, str]:
    return {ROLLOUT_NAME_LABEL: rollout_name, ROLLOUT_ID_LABEL: rollout_id}


def steps_of(rollout: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    strategy = (rollout.get("spec") or {}).get("strategy") or {}
    return list((strategy.get("canary") or strategy.get("blueGreen") or {}).get("steps") or ())


def released_steps(rollout: Mapping[str, Any]) -> int:
    """How many steps have their pods upgraded (the current one from ``StepTrafficRouting`` on)."""
    sub = _sub_status(rollout)
    index = int(sub.get("currentStepIndex") or 0)
    return max(0, index - 1 if sub.get("currentStepState") in _UPGRADING else index)


def completed(rollout: Mapping[str, Any], rollout_id: str) -> bool:
    """Whether the release recorded as ``rollout_id`` succeeded."""
    status = rollout.get("status") or {}
    succeeded = any(
        c.get("type") == "Succeeded" and c.get("status") == "True" for c in status.get("conditions") or ()
    )
    sub = _sub_status(rollout)
    return (
        status.get("phase") == "Healthy"
        and succeeded
        and sub.get("observedRolloutID") == rollout_id
        and sub.get("currentStepState") == "Completed"
    )


def canary_steps(
    rollout_id: str, steps: int, selector: Mapping[str, Any] | None, pods: Iterable[Mapping[str, Any]]
) -> list[JSON]:
    """``status.canarySteps`` for steps 1..``steps``: the live pods labelled ``rollout_id`` and the
    step's batch id that ``selector`` (the workload's) matches, by name."""
    by_batch: dict[str, list[JSON]] = {}
    for pod in pods:
        meta = pod.get("metadata") or {}
        labels = meta.get("labels") or {}
        if meta.get("deletionTimestamp") or labels.get(ROLLOUT_ID_LABEL) != rollout_id:
            continue
        try:
            if selector is not None and not selector_matches(selector, labels):
                continue
        except SelectorError:
            continue
        entry = {
            "name": meta.get("name"),
            "ip": (pod.get("status") or {}).get("podIP") or None,
            "nodeName": (pod.get("spec") or {}).get("nodeName") or None,
        }
        by_batch.setdefault(str(labels.get(BATCH_ID_LABEL) or ""), []).append(
            {k: v for k, v in entry.items() if v}
        )
    out = []
    for index in range(1, steps + 1):
        step: JSON = {"canaryStepIndex": index}
        found = sorted(by_batch.get(str(index), []), key=lambda p: str(p.get("name")))
        if found:
            step["pods"] = found
        out.append(step)
    return out


def snapshot_spec(
    rollout: Mapping[str, Any],
    rollout_id: str,
    workload: Mapping[str, Any] | None,
    service: Mapping[str, Any] | None,
    ingress: Mapping[str, Any] | None,
    http_route: Mapping[str, Any] | None,
) -> JSON:
    """``spec``: the raw specs of the Rollout, its workload, its Service and Ingress or HTTPRoute
    (the objects that exist; upstream's ``getRolloutHistorySpec``)."""

    def named(obj: Mapping[str, Any]) -> JSON:
        return {"name": obj["metadata"]["name"], "data": dict(obj.get("spec") or {})}

    spec: JSON = {"rollout": {**named(rollout), "rolloutID": rollout_id}}
    if workload is not None:
        spec["workload"] = {
            "apiVersion": workload.get("apiVersion"),
            "kind": workload.get("kind"),
            **named(workload),
        }
    if service is not None:
        spec["service"] = named(service)
    routing = {}
    if ingress is not None:
        routing["ingress"] = named(ingress)
    if http_route is not None:
        routing["httpRoute"] = named(http_route)
    if routing:
        spec["trafficRouting"] = routing
    return spec


def routed_names(rollout: Mapping[str, Any]) -> tuple[str, str, str]:
    """(Service, Ingress, HTTPRoute) names of the Rollout's first traffic routing ("" for none)."""
    strategy = (rollout.get("spec") or {}).get("strategy") or {}
    refs = (strategy.get("canary") or strategy.get("blueGreen") or {}).get("trafficRoutings") or [{}]
    ref = refs[0]
    return (
        str(ref.get("service") or ""),
        str((ref.get("ingress") or {}).get("name") or ""),
        str((ref.get("gateway") or {}).get("httpRouteName") or ""),
    )


@dataclass(frozen=True)
class Wanted:
    """The history's status as it should be now (None: leave the history alone)."""

    status: JSON | None
    completed: bool = False


def wanted_status(
    rollout: Mapping[str, Any],
    history: Mapping[str, Any],
    selector: Mapping[str, Any] | None,
    pods: Iterable[Mapping[str, Any]],
) -> Wanted:
    """The status of an existing ``history`` of ``rollout``: unchanged once completed; else the
    steps released so far, or all steps and ``completed`` when the release succeeded."""
    current = history.get("status") or {}
    if current.get("phase") == PHASE_COMPLETED:
        return Wanted(None)
    rollout_id = str(((history.get("spec") or {}).get("rollout") or {}).get("rolloutID") or "")
    if _sub_status(rollout).get("observedRolloutID") != rollout_id:
        return Wanted(None)  # the Rollout moved on: the history keeps what it reached
    done = completed(rollout, rollout_id)
    steps = len(steps_of(rollout)) if done else released_steps(rollout)
    status: JSON = {"canarySteps": canary_steps(rollout_id, steps, selector, pods)}
    if done:
        status["phase"] = PHASE_COMPLETED
    return Wanted(status, completed=done)
