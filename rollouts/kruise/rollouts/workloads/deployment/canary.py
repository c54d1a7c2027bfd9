"""Canary-style release of a native Deployment through an extra canary Deployment (pure).

Mirrors Kruise Rollouts' ``control/canarystyle/deployment`` (``canary.go``, ``stable.go``,
``control.go``) and the canary control plane:

- the workload webhook keeps the stable Deployment ``spec.paused: true`` (its new template
  produces no pods); taking control stamps it with ``batchrelease.rollouts.kruise.io/control-info``;
- the BatchRelease creates the **canary Deployment**: ``generateName: <stable name>-``, label
  ``rollouts.kruise.io/canary-deployment: <stable name>``, the control annotation, finalizer
  ``finalizer.rollouts.kruise.io/batch-release``, owned (controller) by the BatchRelease; its
  spec is a copy of the stable spec with ``replicas: 0``, ``paused: false`` and the release
  plan's ``patchPodTemplateMetadata`` applied to the pod template. The canary Deployment of
  this release is the newest live one owned by the BatchRelease with that template
  (``filterCanaryDeployment``);
- each batch scales it **up** to ``ceil(canaryReplicas x replicas)`` (clamped to the workload's
  replicas; never down); the batch is ready on the canary's ``status.replicas`` (updated) and
  ``status.availableReplicas`` (updated ready) by the batch-ready rule;
- **batch labels** (``EnsureBatchPodsReadyAndLabeled``): once the canary has its batch's replicas,
  the canary Deployment's pods at the update revision get ``rollouts.kruise.io/rollout-id`` and
  ``rollout-batch-id`` (each batch its increment of the stable replicas,
  :func:`~kruise.rollouts.workloads.podlabels.release_label_patches`); upstream's canary batch
  context plans no labelled count, so the batch does not wait for them;
- **finalising** (``batchPartition`` unset) patches the stable Deployment
  ``paused: false`` and drops the control annotation, removes the finalizer from the canary
  Deployments (they go with the BatchRelease, by garbage collection), and with
  ``finalizingPolicy: WaitResume`` completes only once the stable Deployment rolled everything
  (``waitAllUpdatedAndReady``). A BatchRelease deleted mid-release (continuous release, a
  deleted Rollout) finalises with the stable Deployment left paused, then drops its own
  finalizer ``rollouts.kruise.io/batch-release-finalizer``.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from typing import Any

from kruise.core.jsoncopy import json_copy
from kruise.rollouts.api.common import BatchReleaseBatchState, RolloutPhase
from kruise.rollouts.release.batchplan import batch_ready, planned_canary, scaled
from kruise.rollouts.release.constants import (
    BATCH_RELEASE_CONTROL_ANNOTATION,
    BATCH_RELEASE_FINALIZER,
    BATCH_RELEASE_OWN_FINALIZER,
    CANARY_DEPLOYMENT_LABEL,
)
from kruise.rollouts.release.hashing import release_plan_hash
from kruise.rollouts.release.objects import meta as meta_of
from kruise.rollouts.release.objects import observed_current, spec_replicas
from kruise.rollouts.workloads.deployment.info import owned_pods, stable_replicaset
from kruise.rollouts.workloads.deployment.podtemplate import equal_ignore_hash, pod_template_hash
from kruise.rollouts.workloads.ops import (
    ControlDecision,
    Op,
    OpKind,
    Target,
    control_info,
    enter_batch,
    label_pod,
    owner_reference,
    patch,
)
from kruise.rollouts.workloads.podlabels import release_label_patches

JSON = dict[str, Any]


def canary_template(stable: Mapping[str, Any], plan: Mapping[str, Any]) -> JSON:
    """The stable pod template with ``patchPodTemplateMetadata`` applied."""
    template: JSON = copy.deepcopy(dict((stable.get("spec") or {}).get("template") or {}))
    extra = plan.get("patchPodTemplateMetadata") or {}
    if extra.get("labels") or extra.get("annotations"):
        meta = template.setdefault("metadata", {})
        for key in ("labels", "annotations"):
            if extra.get(key):
                meta[key] = {**(meta.get(key) or {}), **extra[key]}
    return template


def canary_deployment_body(br: Mapping[str, Any], stable: Mapping[str, Any]) -> JSON:
    """The canary Deployment ``create`` sends (the API server picks its name)."""
    plan = (br.get("spec") or {}).get("releasePlan") or {}
    spec: JSON = copy.deepcopy(dict(stable.get("spec") or {}))
    spec["template"] = canary_template(stable, plan)
    spec["replicas"] = 0
    spec["paused"] = False
    name = str(meta_of(stable).get("name"))
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {
            "generateName": f"{name}-",
            "namespace": meta_of(stable).get("namespace"),
            "labels": {CANARY_DEPLOYMENT_LABEL: name},
            "annotations": {BATCH_RELEASE_CONTROL_ANNOTATION: control_info(br)},
            "finalizers": [BATCH_RELEASE_FINALIZER],
            "ownerReferences": [owner_reference(br)],
        },
        "spec": spec,
    }


def owned_canaries(
    br: Mapping[str, Any], deployments: Sequence[Mapping[str, Any]]
) -> list[Mapping[str, Any]]:
    uid = meta_of(br).get("uid")
    return [
        d
        for d in deployments
        if any(r.get("controller") and r.get("uid") == uid for r in meta_of(d).get("ownerReferences") or [])
    ]


def current_canary(
    br: Mapping[str, Any], stable: Mapping[str, Any], deployments: Sequence[Mapping[str, Any]]
) -> Mapping[str, Any] | None:
    """``filterCanaryDeployment``: the newest live owned canary with this release's template."""
    plan = (br.get("spec") or {}).get("releasePlan") or {}
    want = canary_template(stable, plan)
    live: list[Mapping[str, Any]] = [
        d for d in owned_canaries(br, deployments) if not meta_of(d).get("deletionTimestamp")
    ]
    live.sort(key=lambda d: (str(meta_of(d).get("creationTimestamp") or ""), str(meta_of(d).get("name"))))
    matching = [c for c in live if equal_ignore_hash((c.get("spec") or {}).get("template"), want)]
    return matching[-1] if matching else None


def max_unavailable(deployment: Mapping[str, Any]) -> int:
    """``deploymentutil.MaxUnavailable``: 0 unless RollingUpdate; fenceposts (0/0 means 1)."""
    spec = deployment.get("spec") or {}
    strategy = spec.get("strategy") or {}
    replicas = spec_replicas(deployment)
    if strategy.get("type", "RollingUpdate") != "RollingUpdate" or replicas == 0:
        return 0
    rolling = strategy.get("rollingUpdate") or {}
    surge = scaled(rolling.get("maxSurge", "25%"), replicas, round_up=True)
    unavailable = scaled(rolling.get("maxUnavailable", "25%"), replicas, round_up=False)
    if surge == 0 and unavailable == 0:
        unavailable = 1
    return min(unavailable, replicas)


def all_updated_and_ready(deployment: Mapping[str, Any]) -> bool:
    """``waitAllUpdatedAndReady`` of the canary style: resumed, every pod updated, and enough
    available within ``maxUnavailable``."""
    status = deployment.get("status") or {}
    if (deployment.get("spec") or {}).get("paused") or not observed_current(deployment):
        return False
    created = int(status.get("replicas") or 0)
    if created != int(status.get("updatedReplicas") or 0):
        return False
    return max_unavailable(deployment) + int(status.get("availableReplicas") or 0) >= created


def _finalizers(obj: Mapping[str, Any]) -> list[str]:
    return list(meta_of(obj).get("finalizers") or [])


def _own_finalizer(kind: OpKind, br: Mapping[str, Any]) -> Op:
    """Add or remove the BatchRelease's own finalizer (``rollouts.kruise.io/batch-release-finalizer``)."""
    return Op(
        kind, Target.BATCH_RELEASE, str(meta_of(br).get("name")), {"finalizer": BATCH_RELEASE_OWN_FINALIZER}
    )


def decide_deployment_canary(
    br: Mapping[str, Any],
    stable: Mapping[str, Any] | None,
    deployments: Sequence[Mapping[str, Any]],
    replicasets: Sequence[Mapping[str, Any]] = (),
    pods: Sequence[Mapping[str, Any]] = (),
) -> ControlDecision:
    """One round of the canary-style control for ``br``.

    ``deployments``: the Deployments of the namespace that may be its canaries;
    ``replicasets``: ReplicaSets of the namespace (for the revisions it reports);
    ``pods``: pods of those ReplicaSets (the canary's get the batch labels).
    """
    status: JSON = json_copy(dict(br.get("status") or {}))
    meta = meta_of(br)
    plan = (br.get("spec") or {}).get("releasePlan") or {}
    status["observedGeneration"] = int(meta.get("generation") or 0)
    status["observedReleasePlanHash"] = release_plan_hash(plan)
    deleting = bool(meta.get("deletionTimestamp"))
    if stable is None:
        status["message"] = "workload not found"
        if deleting and BATCH_RELEASE_OWN_FINALIZER in _finalizers(br):
            return ControlDecision((_own_finalizer(OpKind.REMOVE_FINALIZER, br),), status)
        return ControlDecision((), status, requeue_after=2.0)

    canary = current_canary(br, stable, deployments)
    stable_rs = stable_replicaset(stable, replicasets)
    status["stableRevision"] = pod_template_hash(stable_rs) if stable_rs is not None else ""
    canary_rs = stable_replicaset(canary, replicasets) if canary is not None else None
    if canary_rs is not None:
        status["updateRevision"] = pod_template_hash(canary_rs)
    status["observedWorkloadReplicas"] = spec_replicas(stable)
    batch: JSON = status.setdefault("canaryStatus", {"currentBatch": 0})
    batch.setdefault("currentBatch", 0)
    canary_status = (canary or {}).get("status") or {}
    batch["updatedReplicas"] = int(canary_status.get("replicas") or 0)
    batch["updatedReadyReplicas"] = int(canary_status.get("availableReplicas") or 0)
    if deleting or plan.get("batchPartition") is None:
        return _finalize(br, stable, owned_canaries(br, deployments), status)
    ops = _take_control(br, stable)
    preparing = status.get("phase") in (None, "", RolloutPhase.PREPARING)
    if preparing and not ops and canary is None:  # Initialize creates the canary Deployment once
        ops.append(Op(OpKind.CREATE, Target.DEPLOYMENT, "", canary_deployment_body(br, stable)))
    if ops:
        if preparing:
            status["phase"] = RolloutPhase.PREPARING
        return ControlDecision(tuple(ops), status, requeue_after=0.5)
    return _progress(br, stable, canary, status, replicasets, pods)


def _finalize(
    br: Mapping[str, Any], stable: Mapping[str, Any], canaries: Sequence[Mapping[str, Any]], status: JSON
) -> ControlDecision:
    """Hand the stable Deployment back: unpaused when the plan ended (left paused when the
    BatchRelease goes mid-release), control annotation dropped, the canaries' finalizers removed;
    under ``WaitResume`` complete only once the stable Deployment rolled every pod."""
    deleting = bool(meta_of(br).get("deletionTimestamp"))
    plan = (br.get("spec") or {}).get("releasePlan") or {}
    keep_paused = plan.get("batchPartition") is not None
    ops: list[Op] = []
    body: JSON = {}
    if bool((stable.get("spec") or {}).get("paused")) != keep_paused:
        body["spec"] = {"paused": keep_paused}
    if BATCH_RELEASE_CONTROL_ANNOTATION in (meta_of(stable).get("annotations") or {}):
        body["metadata"] = {"annotations": {BATCH_RELEASE_CONTROL_ANNOTATION: None}}
    if body:
        ops.append(patch(Target.DEPLOYMENT, stable, body))
    ops += [
        Op(
            OpKind.REMOVE_FINALIZER,
            Target.DEPLOYMENT,
            str(meta_of(d).get("name")),
            {"finalizer": BATCH_RELEASE_FINALIZER},
        )
        for d in canaries
        if BATCH_RELEASE_FINALIZER in _finalizers(d)
    ]
    status["phase"] = RolloutPhase.FINALIZING
    if ops:
        return ControlDecision(tuple(ops), status, requeue_after=1.0)
    if not deleting and plan.get("finalizingPolicy") == "WaitResume" and not all_updated_and_ready(stable):
        status["message"] = "wait the stable Deployment to roll every pod"
        return ControlDecision((), status, requeue_after=1.0)
    status["phase"] = RolloutPhase.COMPLETED
    status.pop("message", None)
    if deleting and BATCH_RELEASE_OWN_FINALIZER in _finalizers(br):
        return ControlDecision((_own_finalizer(OpKind.REMOVE_FINALIZER, br),), status)
    return ControlDecision((), status)


def _take_control(br: Mapping[str, Any], stable: Mapping[str, Any]) -> list[Op]:
    """The BatchRelease's own finalizer, and the control annotation on the stable Deployment."""
    ops = []
    if BATCH_RELEASE_OWN_FINALIZER not in _finalizers(br):
        ops.append(_own_finalizer(OpKind.ADD_FINALIZER, br))
    if (meta_of(stable).get("annotations") or {}).get(BATCH_RELEASE_CONTROL_ANNOTATION) != control_info(br):
        annotation = {BATCH_RELEASE_CONTROL_ANNOTATION: control_info(br)}
        ops.append(patch(Target.DEPLOYMENT, stable, {"metadata": {"annotations": annotation}}))
    return ops


def _progress(
    br: Mapping[str, Any],
    stable: Mapping[str, Any],
    canary: Mapping[str, Any] | None,
    status: JSON,
    replicasets: Sequence[Mapping[str, Any]],
    pods: Sequence[Mapping[str, Any]],
) -> ControlDecision:
    """The current batch: scale the canary up to its planned replicas (never down), then report
    the batch ready by the batch-ready rule and label the canary's pods."""
    plan = (br.get("spec") or {}).get("releasePlan") or {}
    batch: JSON = status["canaryStatus"]
    status["phase"] = RolloutPhase.PROGRESSING
    batch_replicas = enter_batch(batch, plan, int(plan["batchPartition"]))  # set: not finalising
    if canary is None:  # the template changed under the release: the Rollout restarts or rolls back
        batch["batchState"] = BatchReleaseBatchState.UPGRADING
        status["message"] = f"no canary Deployment of {meta_of(stable).get('name')} with the current template"
        return ControlDecision((), status, requeue_after=2.0)
    status.pop("message", None)
    replicas = spec_replicas(stable)
    desired = planned_canary(batch_replicas, replicas)
    if replicas > 0 and spec_replicas(canary) < desired:  # UpgradeBatch only scales up
        batch["batchState"] = BatchReleaseBatchState.UPGRADING
        return ControlDecision(
            (patch(Target.DEPLOYMENT, canary, {"spec": {"replicas": desired}}),), status, requeue_after=1.0
        )
    ready = observed_current(canary) and batch_ready(
        desired,
        batch["updatedReplicas"],
        batch["updatedReadyReplicas"],
        failure_threshold=plan.get("failureThreshold"),
    )
    batch["batchState"] = BatchReleaseBatchState.READY if ready else BatchReleaseBatchState.UPGRADING
    labels = release_label_patches(
        owned_pods(canary, replicasets, pods),
        plan,
        update_revision=str(status.get("updateRevision") or ""),
        replicas=replicas,
        current_batch=int(batch["currentBatch"]),
    )
    return ControlDecision(
        tuple(label_pod(p.name, p.labels) for p in labels), status, requeue_after=None if ready else 1.0
    )
