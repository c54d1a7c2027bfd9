"""Partition-style release of a native Deployment (pure).

Mirrors Kruise Rollouts' ``control/partitionstyle/deployment/control.go``; the pods themselves
are moved by the advanced Deployment controller (:mod:`kruise.rollouts.advanceddeployment`):

- **initialize** (the Deployment is not under rollout control: control annotation, ``Recreate``,
  ``paused``; or it is under the control of an earlier BatchRelease, which a continuous release
  deletes without finalizing; upstream only checks that some control annotation is there):
  label ``rollouts.kruise.io/controlled-by-advanced-deployment-controller: "true"``,
  annotations ``rollouts.kruise.io/deployment-strategy`` (``rollingStyle: Partition``, the
  Deployment's ``rollingUpdate`` or the one saved in the annotation, with defaults,
  ``partition: 0``, not paused) and ``batchrelease.rollouts.kruise.io/control-info``, and
  ``spec.paused: true``, ``spec.strategy: {type: Recreate}`` (kube's controller lets go);
- **upgrade the batch**: the strategy's ``partition`` becomes the batch's ``canaryReplicas``
  unless it already allows as many new pods (it never moves down);
- **batch ready**: the batch-ready rule on ``status.updatedReplicas`` and the extra status'
  ``updatedReadyReplicas`` against ``NewRSReplicasLimit(canaryReplicas)``, once the Deployment's
  status observed its generation, and as many live pods carry the release's
  ``rollouts.kruise.io/rollout-id``;
- **batch labels**: the Deployment's pods at the update revision get ``rollout-id`` and
  ``rollout-batch-id`` (each batch its increment of the replicas,
  :func:`~kruise.rollouts.workloads.podlabels.release_label_patches`), in every round that has
  nothing else to write;
- **finalize** (``batchPartition`` unset), only while the Deployment is still paused with the
  control annotation: ``paused: false`` (kept ``true`` with the gate
  ``KeepWorkloadPausedOnRolloutDeletion`` unless ``WaitResume``), the strategy back to
  ``RollingUpdate`` with the saved
  ``rollingUpdate``, the strategy and extra-status annotations and the stable-revision and control
  labels removed; the control annotation always goes. ``WaitResume`` completes once every pod
  runs the new template;
- revisions: ``stableRevision`` is the ``rollouts.kruise.io/stable-revision`` label,
  ``updateRevision`` the ``pod-template-hash`` of the template's pods (``template_revision``); a new one while
  progressing (continuous release) is recorded and nothing is touched that round.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from kruise.core.jsoncopy import json_copy
from kruise.rollouts.api.common import BatchReleaseBatchState, RolloutPhase
from kruise.rollouts.release.batchplan import batch_ready
from kruise.rollouts.release.constants import (
    BATCH_RELEASE_CONTROL_ANNOTATION,
    DEFAULT_DURATION_SECONDS,
    STABLE_REVISION_LABEL,
)
from kruise.rollouts.release.hashing import release_plan_hash
from kruise.rollouts.release.objects import meta as meta_of
from kruise.rollouts.release.objects import spec_replicas
from kruise.rollouts.workloads.deployment.info import owned_pods, owned_replicasets
from kruise.rollouts.workloads.deployment.podtemplate import template_revision
from kruise.rollouts.workloads.deployment.strategy import (
    ADVANCED_DEPLOYMENT_CONTROL_LABEL,
    DEPLOYMENT_EXTRA_STATUS_ANNOTATION,
    DEPLOYMENT_STRATEGY_ANNOTATION,
    PARTITION_STYLE,
    DeploymentStrategy,
    dump_strategy,
    new_rs_limit,
    parse_extra_status,
    strategy_of,
    with_defaults,
)
from kruise.rollouts.workloads.ops import ControlDecision, Target, control_info, enter_batch, label_pod, patch
from kruise.rollouts.workloads.podlabels import labels_satisfied, release_label_patches

JSON = dict[str, Any]
PARTITION_DEPLOYMENT_MESSAGE = (
    "partition-style release of an apps/v1 Deployment needs the advanced deployment controller: "
    "enable the feature gate AdvancedDeployment, or set enableExtraWorkloadForCanary: true "
    "(canary style) or use strategy.blueGreen"
)
"""``status.message`` of a partition-style Deployment release with the gate ``AdvancedDeployment`` off."""


def under_rollout_control(deployment: Mapping[str, Any]) -> bool:
    """``IsUnderRolloutControl``: control annotation, ``Recreate`` and paused."""
    spec = deployment.get("spec") or {}
    return (
        bool((meta_of(deployment).get("annotations") or {}).get(BATCH_RELEASE_CONTROL_ANNOTATION))
        and (spec.get("strategy") or {}).get("type") == "Recreate"
        and bool(spec.get("paused"))
    )


def initial_strategy(deployment: Mapping[str, Any]) -> DeploymentStrategy:
    """The strategy annotation a release starts with (partition 0, not paused)."""
    saved = strategy_of(deployment)
    rolling = (deployment.get("spec") or {}).get("strategy", {}).get("rollingUpdate")
    surge, unavailable, has = saved.max_surge, saved.max_unavailable, saved.has_rolling_update
    if isinstance(rolling, dict):
        surge, unavailable, has = rolling.get("maxSurge"), rolling.get("maxUnavailable"), True
    return with_defaults(
        DeploymentStrategy(
            rolling_style=PARTITION_STYLE,
            max_unavailable=unavailable,
            max_surge=surge,
            has_rolling_update=has,
            paused=False,
            partition=0,
        )
    )


def _finalize_body(deployment: Mapping[str, Any], *, keep_paused: bool = False) -> JSON:
    annotations = meta_of(deployment).get("annotations") or {}
    spec = deployment.get("spec") or {}
    saved = strategy_of(deployment)
    dropped: JSON = {BATCH_RELEASE_CONTROL_ANNOTATION: None}
    for key in (DEPLOYMENT_STRATEGY_ANNOTATION, DEPLOYMENT_EXTRA_STATUS_ANNOTATION):
        if key in annotations:
            dropped[key] = None
    body: JSON = {
        "metadata": {
            "annotations": dropped,
            "labels": {STABLE_REVISION_LABEL: None, ADVANCED_DEPLOYMENT_CONTROL_LABEL: None},
        },
        "spec": {"paused": keep_paused},
    }
    if (spec.get("strategy") or {}).get("type") == "Recreate":
        rolling: JSON | None = None
        if saved.has_rolling_update:
            rolling = {}
            if saved.max_unavailable is not None:
                rolling["maxUnavailable"] = saved.max_unavailable
            if saved.max_surge is not None:
                rolling["maxSurge"] = saved.max_surge
        body["spec"]["strategy"] = {"type": "RollingUpdate", "rollingUpdate": rolling}
    return body


def decide_deployment_partition(
    br: Mapping[str, Any],
    deployment: Mapping[str, Any] | None,
    replicasets: Sequence[Mapping[str, Any]] = (),
    *,
    pods: Sequence[Mapping[str, Any]] = (),
    keep_paused_on_cancel: bool = False,
) -> ControlDecision:
    """One round of the partition-style control for ``br`` over ``deployment``.

    ``replicasets``: the ReplicaSets of the namespace (those the Deployment controls are used);
    ``pods``: pods of those ReplicaSets (batch labels).
    ``keep_paused_on_cancel``: feature gate ``KeepWorkloadPausedOnRolloutDeletion``; a release
    finalized without ``WaitResume`` (the Rollout deleted, disabled or rolled back mid-release)
    hands the Deployment back still ``paused: true`` (with its ``RollingUpdate`` strategy), so
    the pods stay where the release left them and the user can roll back.
    """
    status: JSON = json_copy(dict(br.get("status") or {}))
    plan = (br.get("spec") or {}).get("releasePlan") or {}
    status["observedGeneration"] = int(meta_of(br).get("generation") or 0)
    status["observedReleasePlanHash"] = release_plan_hash(plan)
    if deployment is None:
        status["message"] = "workload not found"
        return ControlDecision((), status, requeue_after=2.0)
    d_status = deployment.get("status") or {}
    spec = deployment.get("spec") or {}
    replicas = spec_replicas(deployment)
    consistent = int(d_status.get("observedGeneration") or -1) == int(
        meta_of(deployment).get("generation") or 0
    )
    observed_revision = str(status.get("updateRevision") or "")
    owned = owned_replicasets(deployment, replicasets, active_only=False)
    status["stableRevision"] = str((meta_of(deployment).get("labels") or {}).get(STABLE_REVISION_LABEL) or "")
    status["updateRevision"] = template_revision(spec.get("template"), owned)
    status["observedWorkloadReplicas"] = replicas
    canary: JSON = status.setdefault("canaryStatus", {"currentBatch": 0})
    canary.setdefault("currentBatch", 0)
    canary["updatedReplicas"] = int(d_status.get("updatedReplicas") or 0)
    canary["updatedReadyReplicas"] = parse_extra_status(deployment)[0]
    index = plan.get("batchPartition")
    if (
        index is not None
        and status.get("phase") == RolloutPhase.PROGRESSING
        and consistent
        and observed_revision not in ("", status["updateRevision"])
    ):  # isWorkloadRevisionChanged: a continuous release; the Rollout is about to reset
        return ControlDecision((), status, requeue_after=2.0)

    if index is None:
        return _finalize(br, deployment, status, consistent, keep_paused_on_cancel=keep_paused_on_cancel)
    annotations = meta_of(deployment).get("annotations") or {}
    owned_by_us = annotations.get(BATCH_RELEASE_CONTROL_ANNOTATION) == control_info(br)
    if not (under_rollout_control(deployment) and owned_by_us and strategy_of(deployment).partition_style):
        if status.get("phase") in (None, "", RolloutPhase.PREPARING):
            status["phase"] = RolloutPhase.PREPARING
        body = _initialize_body(br, deployment)
        return ControlDecision((patch(Target.DEPLOYMENT, deployment, body),), status, requeue_after=0.5)
    return _progress(br, deployment, status, consistent, replicasets, pods)


def _finalize(
    br: Mapping[str, Any],
    deployment: Mapping[str, Any],
    status: JSON,
    consistent: bool,
    *,
    keep_paused_on_cancel: bool,
) -> ControlDecision:
    """Hand the Deployment back (``_finalize_body``) while it is still ours and paused; under
    ``WaitResume`` complete only once the Deployment rolled every pod."""
    plan = (br.get("spec") or {}).get("releasePlan") or {}
    spec = deployment.get("spec") or {}
    d_status = deployment.get("status") or {}
    status["phase"] = RolloutPhase.FINALIZING
    ours = BATCH_RELEASE_CONTROL_ANNOTATION in (meta_of(deployment).get("annotations") or {})
    if ours and spec.get("paused"):
        keep = keep_paused_on_cancel and plan.get("finalizingPolicy") != "WaitResume"
        finalize = _finalize_body(deployment, keep_paused=keep)
        return ControlDecision((patch(Target.DEPLOYMENT, deployment, finalize),), status, requeue_after=1.0)
    replicas = spec_replicas(deployment)
    updated, total = int(d_status.get("updatedReplicas") or 0), int(d_status.get("replicas") or 0)
    rolled = consistent and updated == replicas == total
    if plan.get("finalizingPolicy") == "WaitResume" and not rolled:
        return ControlDecision((), status, requeue_after=1.0)
    status["phase"] = RolloutPhase.COMPLETED
    status.pop("message", None)
    return ControlDecision((), status)


def _initialize_body(br: Mapping[str, Any], deployment: Mapping[str, Any]) -> JSON:
    """Take control: the advanced-deployment label, the strategy annotation (partition 0 of the
    Deployment's own rolling parameters), the control annotation, ``paused`` and ``Recreate``."""
    return {
        "metadata": {
            "labels": {ADVANCED_DEPLOYMENT_CONTROL_LABEL: "true"},
            "annotations": {
                DEPLOYMENT_STRATEGY_ANNOTATION: dump_strategy(initial_strategy(deployment)),
                BATCH_RELEASE_CONTROL_ANNOTATION: control_info(br),
            },
        },
        "spec": {"paused": True, "strategy": {"type": "Recreate", "rollingUpdate": None}},
    }


def _progress(
    br: Mapping[str, Any],
    deployment: Mapping[str, Any],
    status: JSON,
    consistent: bool,
    replicasets: Sequence[Mapping[str, Any]],
    pods: Sequence[Mapping[str, Any]],
) -> ControlDecision:
    """The current batch: raise the strategy annotation's partition to the batch's (never lower),
    label the new pods, and report the batch ready once updated, ready and labelled."""
    plan = (br.get("spec") or {}).get("releasePlan") or {}
    replicas = spec_replicas(deployment)
    canary: JSON = status["canaryStatus"]
    status["phase"] = RolloutPhase.PROGRESSING
    status.pop("message", None)
    wanted = enter_batch(canary, plan, int(plan["batchPartition"]))
    current = strategy_of(deployment)
    if new_rs_limit(current.partition, replicas) < new_rs_limit(wanted, replicas):  # UpgradeBatch
        updated = DeploymentStrategy(
            rolling_style=current.rolling_style,
            max_unavailable=current.max_unavailable,
            max_surge=current.max_surge,
            has_rolling_update=current.has_rolling_update,
            paused=current.paused,
            partition=wanted,
        )
        body = {"metadata": {"annotations": {DEPLOYMENT_STRATEGY_ANNOTATION: dump_strategy(updated)}}}
        canary["batchState"] = BatchReleaseBatchState.UPGRADING
        return ControlDecision((patch(Target.DEPLOYMENT, deployment, body),), status, requeue_after=1.0)
    planned = new_rs_limit(wanted, replicas)
    mine = owned_pods(deployment, replicasets, pods)
    labels = release_label_patches(
        mine,
        plan,
        update_revision=status["updateRevision"],
        replicas=replicas,
        current_batch=int(canary["currentBatch"]),
    )
    ready = (
        consistent
        and batch_ready(
            planned,
            canary["updatedReplicas"],
            canary["updatedReadyReplicas"],
            failure_threshold=plan.get("failureThreshold"),
        )
        and not labels
        and labels_satisfied(mine, str(plan.get("rolloutID") or ""), planned)
    )
    canary["batchState"] = BatchReleaseBatchState.READY if ready else BatchReleaseBatchState.UPGRADING
    return ControlDecision(
        tuple(label_pod(p.name, p.labels) for p in labels),
        status,
        requeue_after=None if ready else DEFAULT_DURATION_SECONDS,
    )
