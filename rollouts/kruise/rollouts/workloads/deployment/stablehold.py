"""A held abort of a Deployment release: every pod back on the stable revision (pure).

Kruise's held abort (``kruise rollout abort``, ``progressDeadlineAbort``;
:mod:`kruise.rollouts.rollout.deadline`) keeps the new template in the workload and puts the pods
back on the stable revision once traffic is back and the BatchRelease is gone. A CloneSet does it
with its partition; a Deployment, by the style it was released in:

- **canary style**: the canary Deployments belong to the deleted BatchRelease and go with it
  (garbage collection, once its finalisation dropped their finalizer); the stable Deployment
  stayed paused on the stable pods all along. Nothing to write: wait until no canary Deployment is
  left;
- **partition style** (the advanced Deployment controller still holds it: control annotation,
  ``paused``, ``Recreate``): the strategy annotation's partition goes to 0 (not paused), then every
  ReplicaSet of another revision is scaled to 0; with a partition of 0 and no new pod the advanced
  controller grows the stable ReplicaSet back to ``spec.replicas`` (its ``reconcileOldReplicaSets``
  gives the old ReplicaSets their share). Done once no pod of another revision is left and the
  stable ReplicaSet has every replica.

A retry (or a new revision) starts a new BatchRelease, which takes control again from partition 0.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from kruise.rollouts.release.objects import spec_replicas
from kruise.rollouts.workloads.deployment.info import owned_replicasets
from kruise.rollouts.workloads.deployment.podtemplate import pod_template_hash
from kruise.rollouts.workloads.deployment.strategy import (
    DEPLOYMENT_STRATEGY_ANNOTATION,
    dump_strategy,
    strategy_of,
    under_control,
)
from kruise.rollouts.workloads.ops import Op, Target, patch

JSON = dict[str, Any]


@dataclass(frozen=True)
class StableHold:
    """The writes of one round (in order) and whether pods are still off the stable revision."""

    ops: tuple[Op, ...] = ()
    waiting: bool = False


def deployment_stable_hold(
    deployment: Mapping[str, Any],
    replicasets: Sequence[Mapping[str, Any]],
    canaries: Sequence[Mapping[str, Any]],
    stable_revision: str,
) -> StableHold:
    """One round putting ``deployment``'s pods back on ``stable_revision`` (its stable
    ReplicaSet's ``pod-template-hash``); ``replicasets``: those of the Deployment (and of its
    canaries); ``canaries``: its canary Deployments."""
    if canaries:
        return StableHold(waiting=True)  # canary style: they go with the BatchRelease
    if not stable_revision or not under_control(deployment):
        return StableHold()
    strategy = strategy_of(deployment)
    if strategy.partition not in (0, "0", "0%") or strategy.paused:
        held = dump_strategy(replace(strategy, partition=0, paused=False))
        body = {"metadata": {"annotations": {DEPLOYMENT_STRATEGY_ANNOTATION: held}}}
        return StableHold((patch(Target.DEPLOYMENT, deployment, body),), waiting=True)
    owned = owned_replicasets(deployment, replicasets, active_only=False)
    ops = tuple(
        patch(Target.REPLICASET, rs, {"spec": {"replicas": 0}})
        for rs in owned
        if pod_template_hash(rs) != stable_revision and spec_replicas(rs) > 0
    )
    off_stable = any(
        pod_template_hash(rs) != stable_revision and int((rs.get("status") or {}).get("replicas") or 0) > 0
        for rs in owned
    )
    stable = [rs for rs in owned if pod_template_hash(rs) == stable_revision]
    short = not stable or spec_replicas(stable[0]) < spec_replicas(deployment)
    return StableHold(ops, waiting=bool(ops) or off_stable or short)
