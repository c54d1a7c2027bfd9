"""Scaling an advanced Deployment whose strategy is paused: the sizes of its ReplicaSets (pure).

Mirrors the ``sync``/``scale`` of Kruise Rollouts' Deployment controller (``sync.go``, helpers in
``util/deployment_util.go``), which runs while the strategy annotation says ``paused`` (a new
template arrived mid-release and the BatchRelease has not taken it yet):

- one active ReplicaSet (or none: then the new one, else the newest old one) takes
  ``spec.replicas`` (``FindActiveOrLatest``);
- a saturated new ReplicaSet (``spec.replicas`` pods, all available, ``desired-replicas`` equal
  to ``spec.replicas``) leaves the old ones at 0 (``IsSaturated``);
- otherwise the difference is spread **proportionally** over the active ReplicaSets, as for a
  RollingUpdate Deployment (``IsRollingUpdate`` is always true there): scaling down first takes
  the unhealthy pods of old ReplicaSets (oldest first, ``cleanupUnhealthyReplicas``); then, from
  the largest ReplicaSet down (ties: newer first when growing, older first when shrinking),
  each gets ``round(size * (replicas + maxSurge) / annotated) - size`` bounded by what is left
  (``GetProportion``), and the rounding leftover goes to the largest one.

``annotated`` is upstream's ``max-replicas`` annotation: ``replicas + maxSurge`` of the
Deployment when the ReplicaSet was last sized. This controller writes kube's value for a Recreate
Deployment there (``replicas``, see :mod:`.replicasets`), so upstream's number is rebuilt as
``max-replicas + maxSurge(max-replicas)``; without the annotation it is ``status.replicas``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from kruise.rollouts.advanceddeployment.replicasets import (
    DESIRED_REPLICAS_ANNOTATION,
    MAX_REPLICAS_ANNOTATION,
    created,
    status_int,
)
from kruise.rollouts.release.objects import meta, spec_replicas
from kruise.rollouts.workloads.deployment.strategy import DeploymentStrategy, fenceposts

RS = Mapping[str, Any]


def _name(rs: RS) -> str:
    return str(meta(rs).get("name") or "")


def _annotation(rs: RS, key: str) -> int | None:
    value = (meta(rs).get("annotations") or {}).get(key)
    try:
        return int(str(value)) if value is not None else None
    except ValueError:
        return None


def _round(value: float) -> int:
    """Go's ``math.Round``: halves away from zero."""
    return int(value + 0.5) if value >= 0 else -int(-value + 0.5)


def saturated(deployment: Mapping[str, Any], new: RS | None) -> bool:
    """``IsSaturated``: the new ReplicaSet holds every replica, all available, and knows it."""
    if new is None:
        return False
    d_replicas = spec_replicas(deployment)
    return (
        spec_replicas(new) == d_replicas
        and _annotation(new, DESIRED_REPLICAS_ANNOTATION) == d_replicas
        and status_int(new, "availableReplicas") == d_replicas
    )


def _fraction(
    size: int, rs: RS, deployment: Mapping[str, Any], strategy: DeploymentStrategy, d_replicas: int
) -> int:
    """``getReplicaSetFraction``: how far ``rs`` (now ``size`` pods) moves toward its share."""
    if d_replicas == 0:
        return -size
    target_total = d_replicas + fenceposts(strategy, d_replicas)[0]
    recorded = _annotation(rs, MAX_REPLICAS_ANNOTATION)
    if recorded is None:
        annotated = status_int(deployment, "replicas")
    else:
        annotated = recorded + fenceposts(strategy, recorded)[0]
    if annotated <= 0:
        return 0
    return _round(size * target_total / annotated) - size


def paused_sizes(
    deployment: Mapping[str, Any],
    new: RS | None,
    olds: Sequence[RS],
    strategy: DeploymentStrategy,
) -> dict[str, int]:
    """The ReplicaSet sizes (name -> replicas) after a paused round; unchanged ones included."""
    d_replicas = spec_replicas(deployment)
    everyone = [*olds, *([new] if new is not None else [])]
    sizes = {_name(rs): spec_replicas(rs) for rs in everyone}
    active = [rs for rs in everyone if spec_replicas(rs) > 0]
    if len(active) <= 1:  # FindActiveOrLatest
        latest = active[0] if active else new or max(olds, key=created, default=None)
        if latest is not None:
            sizes[_name(latest)] = d_replicas
        return sizes
    if saturated(deployment, new):
        for rs in olds:
            sizes[_name(rs)] = 0
        return sizes
    to_add = d_replicas - sum(sizes[_name(rs)] for rs in active)
    if to_add < 0:  # cleanupUnhealthyReplicas: old ReplicaSets' unhealthy pods go first
        for rs in sorted(olds, key=created):
            size = sizes[_name(rs)]
            unhealthy = size - status_int(rs, "availableReplicas")
            if -to_add <= 0 or size == 0 or unhealthy <= 0:
                continue
            step = min(-to_add, unhealthy)
            sizes[_name(rs)] = size - step
            to_add += step
        active = [rs for rs in active if sizes[_name(rs)] > 0]
    if to_add == 0 or not active:
        return sizes
    # largest first; ties: newer first when growing (BySizeNewer), older first when shrinking
    by_age = sorted(active, key=created, reverse=to_add > 0)
    ordered = sorted(by_age, key=lambda rs: -sizes[_name(rs)])
    added = 0
    for rs in ordered:
        size = sizes[_name(rs)]
        if size == 0 or added == to_add:
            continue
        allowed = to_add - added
        fraction = _fraction(size, rs, deployment, strategy, d_replicas)
        proportion = min(fraction, allowed) if to_add > 0 else max(fraction, allowed)
        sizes[_name(rs)] = size + proportion
        added += proportion
    largest = _name(ordered[0])
    sizes[largest] = max(sizes[largest] + to_add - added, 0)
    return sizes
