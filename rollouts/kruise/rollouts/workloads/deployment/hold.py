"""Hold a native Deployment back when its template changes under a Rollout (pure).

Mirrors ``handleDeployment`` of Kruise Rollouts' workload mutating webhook
(``KR:pkg/webhook/workload/mutating/workload_update_handler.go``):

- **entering a release** (no ``rollouts.kruise.io/in-progressing`` yet): with replicas > 0 and an
  *effective revision change* (the pod template changed, ignoring ``pod-template-hash``; or, when
  the ``rollouts.kruise.io/rollout-id`` annotation is set, that annotation changed) and at least
  one active ReplicaSet (with traffic routing: exactly one, a single-version workload), the
  Deployment is admitted with ``spec.paused: true``, the annotation
  ``rollouts.kruise.io/in-progressing: {"rolloutName": ...}`` and the label
  ``rollouts.kruise.io/stable-revision: <pod-template-hash of the stable ReplicaSet>``;
- **already in a release**:

  - blue-green (the BatchRelease saved ``rollouts.kruise.io/original-deployment-strategy``):
    another effective revision change (a rollback, or a continuous release that the Rollout
    refuses) pauses it again; ``strategy.type`` may not leave ``RollingUpdate``;
  - partition style (the BatchRelease wrote ``rollouts.kruise.io/deployment-strategy`` with
    ``rollingStyle: Partition``): it stays ``paused: true`` and ``strategy.type: Recreate`` (kube's
    Deployment controller keeps out; the advanced Deployment controller rolls it); a
    ``rollingUpdate`` in the update is moved into the annotation (it may change mid-release);
    another effective revision change sets the annotation's ``paused: true``;
  - otherwise (canary style): it stays ``paused: true`` and may not switch to ``Recreate``
    (the whole old strategy is kept then).

A CD tool's update without ``metadata.uid`` (OCM, Karmada) gets the old object's uid.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping, Sequence
from typing import Any

from kruise.rollouts.release.constants import (
    IN_PROGRESSING_ANNOTATION,
    ORIGINAL_DEPLOYMENT_STRATEGY_ANNOTATION,
    STABLE_REVISION_LABEL,
)
from kruise.rollouts.release.rolloutid import workload_rollout_id
from kruise.rollouts.workloads.deployment.info import new_and_stable, owned_replicasets
from kruise.rollouts.workloads.deployment.podtemplate import equal_ignore_hash, pod_template_hash
from kruise.rollouts.workloads.deployment.strategy import (
    DEPLOYMENT_STRATEGY_ANNOTATION,
    DeploymentStrategy,
    dump_strategy,
    strategy_of,
)
from kruise.rollouts.workloads.hold import rollout_for, traffic_routed

JSON = dict[str, Any]


def effective_revision_change(old: Mapping[str, Any], new: Mapping[str, Any]) -> bool:
    """``isEffectiveDeploymentRevisionChange``: with a rollout-id (the shared label-then-annotation
    rule, :func:`~kruise.rollouts.rollout.rolloutid.workload_rollout_id`) only an id change
    counts, else a template change."""
    new_id = workload_rollout_id(new)
    old_id = workload_rollout_id(old)
    if new_id:
        return new_id != old_id
    return not equal_ignore_hash(
        (old.get("spec") or {}).get("template"), (new.get("spec") or {}).get("template")
    )


def _hold_partition(held: JSON, old: Mapping[str, Any], new: Mapping[str, Any]) -> bool:
    """The partition-style branch for a release in progress; edits ``held``, says if it did."""
    spec = held["spec"]
    modified = False
    if not spec.get("paused"):
        spec["paused"] = True
        modified = True
    saved = strategy_of(held)
    strategy = dict(spec.get("strategy") or {})
    if strategy.get("type", "RollingUpdate") == "RollingUpdate":
        strategy["type"] = "Recreate"
        modified = True
    rolling = strategy.pop("rollingUpdate", None)
    if rolling is not None:
        modified = True
        saved = DeploymentStrategy(
            rolling_style=saved.rolling_style,
            max_unavailable=rolling.get("maxUnavailable"),
            max_surge=rolling.get("maxSurge"),
            has_rolling_update=True,
            paused=saved.paused,
            partition=saved.partition,
        )
    spec["strategy"] = strategy
    if effective_revision_change(old, new) and not saved.paused:
        modified = True
        saved = DeploymentStrategy(
            rolling_style=saved.rolling_style,
            max_unavailable=saved.max_unavailable,
            max_surge=saved.max_surge,
            has_rolling_update=saved.has_rolling_update,
            paused=True,
            partition=saved.partition,
        )
    if modified:
        held["metadata"].setdefault("annotations", {})[DEPLOYMENT_STRATEGY_ANNOTATION] = dump_strategy(saved)
    return modified


def hold_deployment(
    new: Mapping[str, Any],
    old: Mapping[str, Any],
    rollouts: Sequence[Mapping[str, Any]],
    replicasets: Sequence[Mapping[str, Any]],
) -> JSON | None:
    """The Deployment to admit instead of ``new`` (None: admit ``new`` unchanged).

    ``replicasets``: the ReplicaSets of the namespace (those ``new`` controls are used).
    """
    ro = rollout_for(new, rollouts)
    if ro is None:
        return None
    held: JSON = copy.deepcopy(dict(new))
    meta = held.setdefault("metadata", {})
    if not meta.get("uid") and (old.get("metadata") or {}).get("uid"):
        meta["uid"] = old["metadata"]["uid"]
    spec = held.setdefault("spec", {})
    old_spec = old.get("spec") or {}
    annotations = meta.get("annotations") or {}

    if annotations.get(IN_PROGRESSING_ANNOTATION):
        modified = False
        strategy = spec.get("strategy") or {}
        if annotations.get(ORIGINAL_DEPLOYMENT_STRATEGY_ANNOTATION):  # blue-green
            if effective_revision_change(old, new):
                spec["paused"] = True
                modified = True
            if strategy.get("type", "RollingUpdate") != "RollingUpdate":
                spec.setdefault("strategy", {})["type"] = (old_spec.get("strategy") or {}).get(
                    "type", "RollingUpdate"
                )
                modified = True
        elif strategy_of(held).partition_style:
            modified = _hold_partition(held, old, new)
        else:  # canary style
            if not spec.get("paused"):
                spec["paused"] = True
                modified = True
            if strategy.get("type") == "Recreate":
                spec["strategy"] = copy.deepcopy(old_spec.get("strategy") or {})
                modified = True
        return held if modified else None

    replicas = spec.get("replicas")
    if replicas is not None and int(replicas) == 0:
        return None
    if not effective_revision_change(old, new):
        return None
    active = owned_replicasets(held, replicasets)
    if not active:
        return None  # "Cannot find any activate replicaset ... no need to rolling"
    if traffic_routed(ro) and len(active) != 1:
        return None  # several versions of pods: does not enter the release
    _, stable = new_and_stable(active, held)
    if stable is not None:
        meta.setdefault("labels", {})[STABLE_REVISION_LABEL] = pod_template_hash(stable)
    spec["paused"] = True
    meta.setdefault("annotations", {})[IN_PROGRESSING_ANNOTATION] = json.dumps(
        {"rolloutName": (ro.get("metadata") or {}).get("name")}, separators=(",", ":")
    )
    return held
