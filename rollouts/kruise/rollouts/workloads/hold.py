"""Hold a workload back when its template changes under a Rollout (pure).

Mirrors Kruise Rollouts' workload mutating webhook
(``pkg/webhook/workload/mutating/workload_update_handler.go``) for CloneSet: on an
UPDATE that changes the pod template (or the ``rollouts.kruise.io/rollout-id``:
label, else annotation, see :mod:`.rolloutid`) of a CloneSet that an enabled Rollout
in the same namespace references, set ``updateStrategy.partition: "100%"`` (no pod
moves until the Rollout releases a batch) and stamp
``rollouts.kruise.io/in-progressing: {"rolloutName": ...}``.

Entry conditions as upstream: replicas > 0; with traffic routing the workload must be
single-version (``status.replicas == status.updatedReplicas``), otherwise it silently
does not enter; a workload already in progress is held again on every template change
(continuous release).
"""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping, Sequence
from typing import Any

from kruise.rollouts.release.constants import IN_PROGRESSING_ANNOTATION
from kruise.rollouts.release.rolloutid import workload_rollout_id

JSON = dict[str, Any]


def rollout_for(
    workload: Mapping[str, Any], rollouts: Sequence[Mapping[str, Any]]
) -> Mapping[str, Any] | None:
    """The enabled, live Rollout whose ``workloadRef`` names ``workload``."""
    name = (workload.get("metadata") or {}).get("name")
    kind = workload.get("kind")
    for ro in rollouts:
        ref = (ro.get("spec") or {}).get("workloadRef") or {}
        if ref.get("kind") == kind and ref.get("name") == name:
            if (ro.get("spec") or {}).get("disabled") or (ro.get("metadata") or {}).get("deletionTimestamp"):
                return None
            return ro
    return None


def hold_cloneset(
    new: Mapping[str, Any], old: Mapping[str, Any], rollouts: Sequence[Mapping[str, Any]]
) -> JSON | None:
    """The CloneSet to admit instead of ``new`` (None: admit ``new`` unchanged)."""
    ro = rollout_for(new, rollouts)
    if ro is None:
        return None
    new_spec, old_spec = new.get("spec") or {}, old.get("spec") or {}
    if int(new_spec.get("replicas", 1)) == 0:
        return None
    template_changed = new_spec.get("template") != old_spec.get("template")
    id_changed = workload_rollout_id(new) != workload_rollout_id(old)
    if not template_changed and not id_changed:
        return None
    annotations = (new.get("metadata") or {}).get("annotations") or {}
    in_progress = IN_PROGRESSING_ANNOTATION in annotations
    strategy = (ro.get("spec") or {}).get("strategy") or {}
    routings = (strategy.get("canary") or strategy.get("blueGreen") or {}).get("trafficRoutings")
    status = old.get("status") or {}
    single_version = int(status.get("replicas") or 0) == int(status.get("updatedReplicas") or 0)
    if routings and not single_version and (not in_progress or strategy.get("blueGreen")):
        # upstream never re-holds a multi-version CloneSet; for blue-green (whose surge pods make
        # it multi-version) that is what lets a rollback proceed instead of freezing at 100%
        return None
    held: JSON = copy.deepcopy(dict(new))
    meta = held.setdefault("metadata", {})
    meta.setdefault("annotations", {})
    meta["annotations"][IN_PROGRESSING_ANNOTATION] = json.dumps(
        {"rolloutName": (ro.get("metadata") or {}).get("name")}, separators=(",", ":")
    )
    held.setdefault("spec", {}).setdefault("updateStrategy", {})["partition"] = "100%"
    return held
