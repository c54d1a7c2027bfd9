"""Blue-green release of a CloneSet or a native Deployment (pure).

Mirrors Kruise Rollouts' ``control/bluegreenstyle/{cloneset,deployment}`` and ``hpa``. New pods
**surge** next to the old ones instead of replacing them, and nothing is ever considered
available, so the workload controller never scales the old version down:

- **take control** (once per BatchRelease, ``IsControlledByBatchRelease``): disable the HPA of
  the workload (``scaleTargetRef.name += "-DisableByRollout"``); save the user's settings in
  ``rollouts.kruise.io/original-deployment-strategy`` (``{"maxUnavailable", "maxSurge",
  "minReadySeconds", "progressDeadlineSeconds"}``, defaults 25%/25%/0/600 for a Deployment and
  20%/0%/0 for a CloneSet) with the control annotation; set ``maxSurge: 1``,
  ``maxUnavailable: 0`` and ``minReadySeconds: MaxInt32-1`` (Deployment: also
  ``progressDeadlineSeconds: MaxInt32``, ``RollingUpdate``, and ``minReadySeconds`` on the
  stable ReplicaSet, so its pods stop counting as available; CloneSet: ``paused: false``, the
  webhook's ``partition: 100%`` still holds it);
- **each batch** raises the surge to the batch's ``canaryReplicas`` (a ``maxSurge`` of 1 counts
  as the initial 0), never lowers it; Deployment: ``paused: false``, ``maxUnavailable: 0``;
  CloneSet: ``partition: null``. Before that the workload must still carry the settings
  (``ValidateReadyForBlueGreenRelease``: CloneSet ``ReCreate``; Deployment ``RollingUpdate``),
  else the BatchRelease reports upstream's message and waits;
- **ready**: updated pods (Deployment: ``status.updatedReplicas`` and the ready pods of the new
  ReplicaSet; CloneSet: ``updatedReplicas``/``updatedReadyReplicas``) reach the batch's
  planned count (Deployment: ``NewRSReplicasLimit``, a percentage below 100% never takes all),
  and as many live pods carry the release's ``rollouts.kruise.io/rollout-id``
  (``batchLabelSatisfied``);
- **batch labels**, in every round that has nothing else to write (upstream's
  ``EnsureBatchPodsReadyAndLabeled`` runs while Verifying and Ready, so a workload scaled
  mid-step is labelled again): the pods at the update revision get ``rollout-id`` and
  ``rollout-batch-id``, each batch its increment of the replicas
  (:func:`~kruise.rollouts.workloads.podlabels.release_label_patches`);
- **finalise** (``batchPartition`` unset): restore the saved settings (Deployment also
  ``paused: false``), drop the annotations and the ``rollouts.kruise.io/stable-revision``
  label, wait until every ready pod is updated (Deployment: ``waitAllUpdatedAndReady``), then
  give the HPA back. A BatchRelease still partitioned (continuous release) is left alone: that is
  unsupported upstream too.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from kruise.core.jsoncopy import json_copy
from kruise.core.kube.resources import CLONESETS, DEPLOYMENTS, Resource
from kruise.rollouts.api.common import (
    BatchReleaseBatchState,
    ProgressingReason,
    RollingStyle,
    RolloutConditionType,
    RolloutPhase,
)
from kruise.rollouts.release.batchplan import IntOrStr, batch_ready, scaled
from kruise.rollouts.release.constants import (
    BATCH_RELEASE_CONTROL_ANNOTATION,
    DEFAULT_DURATION_SECONDS,
    MAX_PROGRESS_SECONDS,
    MAX_READY_SECONDS,
    ORIGINAL_DEPLOYMENT_STRATEGY_ANNOTATION,
    STABLE_REVISION_LABEL,
)
from kruise.rollouts.release.hashing import release_plan_hash
from kruise.rollouts.release.objects import meta as meta_of
from kruise.rollouts.release.objects import observed_current, spec_replicas
from kruise.rollouts.workloads.bluegreen_setting import (
    dump_setting,
    is_controlled,
    is_deployment,
    original_setting,
    saved_setting,
    validate_ready,
)
from kruise.rollouts.workloads.deployment.canary import max_unavailable
from kruise.rollouts.workloads.deployment.info import new_and_stable, owned_replicasets, stable_replicaset
from kruise.rollouts.workloads.deployment.podtemplate import pod_template_hash
from kruise.rollouts.workloads.hpa import hpa_op
from kruise.rollouts.workloads.info import WorkloadInfo
from kruise.rollouts.workloads.ops import (
    ControlDecision,
    Op,
    Target,
    control_info,
    enter_batch,
    label_pod,
    patch,
)
from kruise.rollouts.workloads.podlabels import labels_satisfied, release_label_patches
from kruise.rollouts.workloads.port import Gates, Observation

JSON = dict[str, Any]


# ------------------------------------------------------------------------------ counts
def _max_surge(workload: Mapping[str, Any]) -> IntOrStr:
    spec = workload.get("spec") or {}
    if is_deployment(workload):
        value = ((spec.get("strategy") or {}).get("rollingUpdate") or {}).get("maxSurge")
    else:
        value = (spec.get("updateStrategy") or {}).get("maxSurge")
    if value is None or value == 1:  # 1 is the initial value set when taking control
        return 0
    return value  # type: ignore[no-any-return]


def new_rs_replicas_limit(surge: IntOrStr, replicas: int) -> int:
    """``NewRSReplicasLimit``: pods the new ReplicaSet may have for ``surge``."""
    limit = max(0, min(scaled(surge, replicas, round_up=True), replicas))
    if replicas > 1 and isinstance(surge, str) and surge != "100%":
        limit = min(limit, replicas - 1)
    return limit


def _updated_counts(workload: Mapping[str, Any], replicasets: Sequence[Mapping[str, Any]]) -> tuple[int, int]:
    status = workload.get("status") or {}
    if not is_deployment(workload):
        return int(status.get("updatedReplicas") or 0), int(status.get("updatedReadyReplicas") or 0)
    new_rs, _ = new_and_stable(owned_replicasets(workload, replicasets, active_only=False), workload)
    ready = int(((new_rs or {}).get("status") or {}).get("readyReplicas") or 0)
    return int(status.get("updatedReplicas") or 0), ready


def _all_updated_and_ready(workload: Mapping[str, Any]) -> bool:
    status = workload.get("status") or {}
    if not observed_current(workload):
        return False
    if not is_deployment(workload):
        return int(status.get("readyReplicas") or 0) == int(status.get("updatedReadyReplicas") or 0)
    if (workload.get("spec") or {}).get("paused"):
        return False
    if int(status.get("readyReplicas") or 0) != int(status.get("updatedReplicas") or 0):
        return False
    return max_unavailable(workload) + int(status.get("availableReplicas") or 0) >= int(
        status.get("replicas") or 0
    )


def _target(workload: Mapping[str, Any]) -> Resource:
    return DEPLOYMENTS if is_deployment(workload) else CLONESETS


def needs_hpas(br: Mapping[str, Any], workload: Mapping[str, Any] | None) -> bool:
    """Whether this round may touch an HPA (taking control or finalising)."""
    plan = (br.get("spec") or {}).get("releasePlan") or {}
    return workload is not None and (plan.get("batchPartition") is None or not is_controlled(br, workload))


# ------------------------------------------------------------------------------ decide
def _take_control(
    br: Mapping[str, Any],
    workload: Mapping[str, Any],
    replicasets: Sequence[Mapping[str, Any]],
    hpas: Sequence[tuple[Resource, Mapping[str, Any]]],
) -> list[Op]:
    ops: list[Op] = []
    hpa = hpa_op(workload, hpas, disable=True)
    if hpa is not None:
        ops.append(hpa)
    annotations = {
        ORIGINAL_DEPLOYMENT_STRATEGY_ANNOTATION: dump_setting(original_setting(workload)),
        BATCH_RELEASE_CONTROL_ANNOTATION: control_info(br),
    }
    if is_deployment(workload):
        stable_rs = stable_replicaset(workload, replicasets)
        if (
            stable_rs is not None
            and int((stable_rs.get("spec") or {}).get("minReadySeconds") or 0) != MAX_READY_SECONDS
        ):
            ops.append(
                patch(
                    Target.REPLICASET,
                    stable_rs,
                    {"spec": {"minReadySeconds": MAX_READY_SECONDS}},
                    guarded=False,
                )
            )
        spec: JSON = {
            "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1, "maxUnavailable": 0}},
            "minReadySeconds": MAX_READY_SECONDS,
            "progressDeadlineSeconds": MAX_PROGRESS_SECONDS,
        }
    else:
        spec = {
            "updateStrategy": {"paused": False, "maxSurge": 1, "maxUnavailable": 0},
            "minReadySeconds": MAX_READY_SECONDS,
        }
    ops.append(patch(_target(workload), workload, {"metadata": {"annotations": annotations}, "spec": spec}))
    return ops


def _restore(workload: Mapping[str, Any]) -> Op:
    try:
        setting = saved_setting(workload)
    except ValueError:
        setting = {}
    annotations = {ORIGINAL_DEPLOYMENT_STRATEGY_ANNOTATION: None, BATCH_RELEASE_CONTROL_ANNOTATION: None}
    rolling = {"maxSurge": setting.get("maxSurge"), "maxUnavailable": setting.get("maxUnavailable")}
    if is_deployment(workload):
        body: JSON = {
            "metadata": {"annotations": annotations, "labels": {STABLE_REVISION_LABEL: None}},
            "spec": {
                "paused": False,
                "minReadySeconds": int(setting.get("minReadySeconds") or 0),
                "progressDeadlineSeconds": setting.get("progressDeadlineSeconds"),
                "strategy": {"rollingUpdate": rolling},
            },
        }
    else:
        body = {
            "metadata": {"annotations": annotations},
            "spec": {"minReadySeconds": int(setting.get("minReadySeconds") or 0), "updateStrategy": rolling},
        }
    return patch(_target(workload), workload, body)


def _with_condition(status: JSON, message: str) -> None:
    """``progressingStateTransition(InRolling, message)``."""
    conditions = [
        c for c in status.get("conditions") or [] if c.get("type") != RolloutConditionType.PROGRESSING
    ]
    conditions.append(
        {
            "type": RolloutConditionType.PROGRESSING,
            "status": "True",
            "reason": ProgressingReason.IN_ROLLING,
            "message": message,
        }
    )
    status["conditions"] = conditions
    status["message"] = message


def _clear_condition(status: JSON) -> None:
    status["conditions"] = [
        c for c in status.get("conditions") or [] if c.get("type") != RolloutConditionType.PROGRESSING
    ]
    if not status["conditions"]:
        status.pop("conditions")
    status.pop("message", None)


def decide_blue_green(
    br: Mapping[str, Any],
    workload: Mapping[str, Any] | None,
    replicasets: Sequence[Mapping[str, Any]] = (),
    hpas: Sequence[tuple[Resource, Mapping[str, Any]]] = (),
    pods: Sequence[Mapping[str, Any]] = (),
) -> ControlDecision:
    """One round of the blue-green control for ``br`` on a CloneSet or Deployment ``workload``.

    ``replicasets``: the namespace's ReplicaSets (Deployment only); ``hpas``: see :func:`hpa_op`
    (only needed when :func:`needs_hpas`); ``pods``: the workload's pods (batch labels).
    """
    status: JSON = json_copy(dict(br.get("status") or {}))
    meta = meta_of(br)
    plan = (br.get("spec") or {}).get("releasePlan") or {}
    status["observedGeneration"] = int(meta.get("generation") or 0)
    status["observedReleasePlanHash"] = release_plan_hash(plan)
    if workload is None:
        status["message"] = "workload not found"
        return ControlDecision((), status, requeue_after=2.0)
    replicas = spec_replicas(workload)
    wl_status = workload.get("status") or {}
    status["observedWorkloadReplicas"] = replicas
    if is_deployment(workload):
        status["stableRevision"] = str(
            (meta_of(workload).get("labels") or {}).get(STABLE_REVISION_LABEL) or ""
        )
        new_rs, _ = new_and_stable(owned_replicasets(workload, replicasets), workload)
        if new_rs is not None:
            status["updateRevision"] = pod_template_hash(new_rs)
    else:
        status["stableRevision"] = str(wl_status.get("currentRevision") or "").rsplit("-", 1)[-1]
        status["updateRevision"] = str(wl_status.get("updateRevision") or "").rsplit("-", 1)[-1]
    batch: JSON = status.setdefault("canaryStatus", {"currentBatch": 0})
    batch.setdefault("currentBatch", 0)
    updated, updated_ready = _updated_counts(workload, replicasets)
    batch["updatedReplicas"] = updated
    batch["updatedReadyReplicas"] = updated_ready
    index = plan.get("batchPartition")
    if index is None or meta.get("deletionTimestamp"):
        return _finalize(workload, status, hpas, continuous=index is not None)
    if not is_controlled(br, workload):
        status["phase"] = RolloutPhase.PREPARING
        try:
            ops = _take_control(br, workload, replicasets, hpas)
        except ValueError as err:
            _with_condition(
                status, f"cannot get original setting for {_kind_name(workload)}: {err} from annotation"
            )
            return ControlDecision((), status, requeue_after=2.0)
        return ControlDecision(tuple(ops), status, requeue_after=0.5)
    return _progress(br, workload, status, pods, updated, updated_ready)


def _kind_name(workload: Mapping[str, Any]) -> str:
    """``deployment NS/NAME`` or ``cloneset NS/NAME``, as upstream's messages name the workload."""
    kind = "deployment" if is_deployment(workload) else "cloneset"
    return f"{kind} {meta_of(workload).get('namespace')}/{meta_of(workload).get('name')}"


def _finalize(
    workload: Mapping[str, Any],
    status: JSON,
    hpas: Sequence[tuple[Resource, Mapping[str, Any]]],
    *,
    continuous: bool,
) -> ControlDecision:
    """Restore the workload's original strategy, wait until every pod is updated and ready,
    re-enable its HPA, then complete. A continuous release (a new revision mid-release) is not
    supported for blue-green: nothing to undo, it completes at once."""
    status["phase"] = RolloutPhase.FINALIZING
    if continuous:
        status["phase"] = RolloutPhase.COMPLETED
        return ControlDecision((), status)
    wl_meta = meta_of(workload)
    original = (wl_meta.get("annotations") or {}).get(ORIGINAL_DEPLOYMENT_STRATEGY_ANNOTATION)
    if original and not wl_meta.get("deletionTimestamp"):
        return ControlDecision((_restore(workload),), status, requeue_after=1.0)
    if not _all_updated_and_ready(workload):
        status["message"] = "wait all pods updated and ready"
        return ControlDecision((), status, requeue_after=1.0)
    hpa = hpa_op(workload, hpas, disable=False)
    if hpa is not None:
        return ControlDecision((hpa,), status, requeue_after=0.5)
    status["phase"] = RolloutPhase.COMPLETED
    status.pop("message", None)
    return ControlDecision((), status)


def _progress(
    br: Mapping[str, Any],
    workload: Mapping[str, Any],
    status: JSON,
    pods: Sequence[Mapping[str, Any]],
    updated: int,
    updated_ready: int,
) -> ControlDecision:
    """The current batch: raise the workload's maxSurge to the batch's (never lower; a
    Deployment is also unpaused with ``maxUnavailable: 0``), label the new pods, and report the
    batch ready once updated, ready and labelled."""
    plan = (br.get("spec") or {}).get("releasePlan") or {}
    batch: JSON = status["canaryStatus"]
    replicas = spec_replicas(workload)
    status["phase"] = RolloutPhase.PROGRESSING
    desired_surge = enter_batch(batch, plan, int(plan["batchPartition"]))
    problem = validate_ready(workload)
    if problem is not None:
        _with_condition(
            status,
            f"cannot upgrade batch, because {_kind_name(workload)} doesn't satisfy conditions: {problem}",
        )
        batch["batchState"] = BatchReleaseBatchState.UPGRADING
        return ControlDecision((), status, requeue_after=2.0)
    _clear_condition(status)
    current = scaled(_max_surge(workload), replicas, round_up=True)
    desired = scaled(desired_surge, replicas, round_up=True)
    if replicas > 0 and current < desired:
        if is_deployment(workload):
            rolling = {"maxSurge": desired_surge, "maxUnavailable": 0}
            body: JSON = {
                "spec": {"paused": False, "strategy": {"type": "RollingUpdate", "rollingUpdate": rolling}}
            }
        else:
            body = {"spec": {"updateStrategy": {"partition": None, "maxSurge": desired_surge}}}
        batch["batchState"] = BatchReleaseBatchState.UPGRADING
        return ControlDecision((patch(_target(workload), workload, body),), status, requeue_after=1.0)
    planned = new_rs_replicas_limit(desired_surge, replicas) if is_deployment(workload) else desired
    labels = release_label_patches(
        pods,
        plan,
        update_revision=str(status.get("updateRevision") or ""),
        replicas=replicas,
        current_batch=int(batch["currentBatch"]),
    )
    ready = (
        observed_current(workload)
        and batch_ready(planned, updated, updated_ready, failure_threshold=plan.get("failureThreshold"))
        and not labels
        and labels_satisfied(pods, str(plan.get("rolloutID") or ""), planned)
    )
    batch["batchState"] = BatchReleaseBatchState.READY if ready else BatchReleaseBatchState.UPGRADING
    return ControlDecision(
        tuple(label_pod(p.name, p.labels) for p in labels),
        status,
        requeue_after=None if ready else DEFAULT_DURATION_SECONDS,
    )


@dataclass(frozen=True)
class BlueGreenRelease:
    """The blue-green :class:`~kruise.rollouts.workloads.port.ReleaseStyle` of a CloneSet or a
    Deployment: ``read`` is the kind's info; ``finalise_when_deleted``: a BatchRelease deleted
    mid-release still hands the workload back (a Deployment) or leaves it as it is (a CloneSet,
    whose Rollout finalised it)."""

    read: Callable[[Mapping[str, Any], Observation], WorkloadInfo]
    finalise_when_deleted: bool = True
    style: RollingStyle = RollingStyle.BLUE_GREEN
    rollback_in_batches: bool = False

    def info(self, rollout: Mapping[str, Any], obs: Observation) -> WorkloadInfo:
        return self.read(rollout, obs)

    def control(self, br: Mapping[str, Any], obs: Observation | None, gates: Gates) -> ControlDecision:
        if meta_of(br).get("deletionTimestamp") and not self.finalise_when_deleted:
            return ControlDecision((), dict(br.get("status") or {}))
        if obs is None:
            return decide_blue_green(br, None)
        return decide_blue_green(br, obs.workload, obs.replicasets, obs.hpas, obs.pods)

    def needs_hpas(self, br: Mapping[str, Any], obs: Observation | None) -> bool:
        return needs_hpas(br, None if obs is None else obs.workload)
