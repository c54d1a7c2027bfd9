"""Ours (not in Kruise Rollouts): pre-pull the next batch's images while a canary step waits.

Opt-in per Rollout with the annotation ``rollouts.kruise.io/prepull-next-batch: "true"``. While
a canary step is paused (``StepPaused``) or analysing (``StepMetricsAnalysis``) and a later step
exists, the Rollout owns one ImagePullJob per container image the new revision changes, whose
``selector.names`` are exactly the nodes of the pods the *next* step will update: the pods not
yet on the update revision, in the order the workload's controller updates them (a CloneSet:
:func:`kruise.workloads.cloneset.sorting.sort_for_update`, its ``priorityStrategy`` and
``scatterStrategy`` included; an Advanced StatefulSet: highest ordinal first), as many as the next
step adds. The nodes pull the image (``IfNotPresent`` in kruise-daemon: already there costs
nothing) while the release waits, so the next batch starts on warm nodes.

The plan is shown as the Rollout condition ``PrePullNextBatch`` (status ``True``, reason
``PrePulling``, message ``pre-pull on: node-a, node-b``) and by ``kruise rollout plan``. When no
step waits any more (the release finished, was cancelled or the Rollout is deleted) the jobs
are deleted and the condition removed.

Pure: the shell (:mod:`kruise.rollouts.rollout.prepull_effects`) reads the pods and writes.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from kruise.rollouts.release.batchplan import real_canary_goal
from kruise.workloads.cloneset.sorting import sort_for_update
from kruise.workloads.pods import equal_to_revision_hash
from kruise.workloads.predownload import diff_images

__all__ = [
    "CONDITION_TYPE",
    "PREPULL_ANNOTATION",
    "PREPULL_LABEL",
    "PrePullPlan",
    "condition",
    "enabled",
    "job_name",
    "next_batch_pods",
    "plan_prepull",
    "pull_job",
]

JSON = dict[str, Any]
PREPULL_ANNOTATION = "rollouts.kruise.io/prepull-next-batch"
PREPULL_LABEL = "rollouts.kruise.io/prepull-rollout"
"""Label on the ImagePullJobs a Rollout owns for pre-pulling: the Rollout's name."""
CONDITION_TYPE = "PrePullNextBatch"
CONDITION_REASON = "PrePulling"
WAITING_STATES = frozenset({"StepPaused", "StepMetricsAnalysis"})


@dataclass(frozen=True)
class PrePullPlan:
    """The images to pull (container name -> image) and the nodes to pull them on (sorted)."""

    step: int
    images: Mapping[str, str]
    nodes: tuple[str, ...]

    @property
    def message(self) -> str:
        return f"pre-pull on: {', '.join(self.nodes)}"


def enabled(rollout: Mapping[str, Any]) -> bool:
    annotations = (rollout.get("metadata") or {}).get("annotations") or {}
    return str(annotations.get(PREPULL_ANNOTATION, "")).lower() == "true"


def _ordinal(pod: Mapping[str, Any]) -> int:
    tail = str((pod.get("metadata") or {}).get("name") or "").rsplit("-", 1)[-1]
    return int(tail) if tail.isdigit() else -1


def next_batch_pods(
    workload: Mapping[str, Any], pods: Sequence[Mapping[str, Any]], update_revision: str, goal: int
) -> list[Mapping[str, Any]]:
    """The pods the workload updates to reach ``goal`` updated pods, in its update order."""
    live = [p for p in pods if not (p.get("metadata") or {}).get("deletionTimestamp")]
    stale = [i for i, p in enumerate(live) if not equal_to_revision_hash(p, update_revision)]
    need = max(0, goal - (len(live) - len(stale)))
    if not need:
        return []
    kind = str(workload.get("kind") or "")
    if kind == "CloneSet":
        strategy = (workload.get("spec") or {}).get("updateStrategy")
        order = sort_for_update(live, stale, strategy)
    elif kind == "StatefulSet":
        order = sorted(stale, key=lambda i: _ordinal(live[i]), reverse=True)
    else:
        return []
    return [live[i] for i in order[:need]]


def plan_prepull(
    rollout: Mapping[str, Any], workload: Mapping[str, Any] | None, pods: Sequence[Mapping[str, Any]]
) -> PrePullPlan | None:
    """What to pre-pull now, ``None`` for nothing (the jobs go).

    Needs the annotation, a canary release waiting at a step that has a next step, the
    workload's ``status.updateRevision`` and an image the new revision changes.
    """
    if workload is None or not enabled(rollout):
        return None
    if (rollout.get("metadata") or {}).get("deletionTimestamp"):
        return None
    status = rollout.get("status") or {}
    canary_status = status.get("canaryStatus") or {}
    if canary_status.get("currentStepState") not in WAITING_STATES:
        return None
    if status.get("phase") != "Progressing":
        return None
    steps = ((rollout.get("spec") or {}).get("strategy") or {}).get("canary", {}).get("steps") or []
    index = int(canary_status.get("currentStepIndex") or 0)  # 1-based
    if index < 1 or index >= len(steps):
        return None
    replicas = int((workload.get("spec") or {}).get("replicas") or 0)
    next_replicas = steps[index].get("replicas")
    if next_replicas is None:
        return None
    goal = real_canary_goal(next_replicas, replicas)
    update_revision = str((workload.get("status") or {}).get("updateRevision") or "")
    if not update_revision:
        return None
    chosen = next_batch_pods(workload, pods, update_revision, goal)
    nodes = sorted({str((p.get("spec") or {}).get("nodeName") or "") for p in chosen} - {""})
    if not nodes:
        return None
    template = (workload.get("spec") or {}).get("template") or {}
    images = diff_images(chosen[0], template)  # the chosen pods still run the old images
    if not images:
        return None
    return PrePullPlan(step=index + 1, images=images, nodes=tuple(nodes))


def job_name(rollout_name: str, container: str) -> str:
    return f"{rollout_name}-prepull-{container}"[:253]


def pull_job(rollout: Mapping[str, Any], container: str, image: str, nodes: Sequence[str]) -> JSON:
    """The ImagePullJob pulling ``image`` on ``nodes``, controlled by the Rollout."""
    meta = rollout.get("metadata") or {}
    return {
        "apiVersion": "apps.kruise.io/v1alpha1",
        "kind": "ImagePullJob",
        "metadata": {
            "name": job_name(str(meta.get("name")), container),
            "namespace": meta.get("namespace"),
            "labels": {PREPULL_LABEL: str(meta.get("name"))},
            "ownerReferences": [
                {
                    "apiVersion": str(rollout.get("apiVersion") or "rollouts.kruise.io/v1beta1"),
                    "kind": "Rollout",
                    "name": meta.get("name"),
                    "uid": meta.get("uid"),
                    "controller": True,
                    "blockOwnerDeletion": True,
                }
            ],
        },
        "spec": {
            "image": image,
            "selector": {"names": list(nodes)},
            "parallelism": len(nodes),
            "completionPolicy": {"type": "Never"},
        },
    }


def condition(status: Mapping[str, Any], plan: PrePullPlan | None, now: str) -> list[JSON]:
    """``status.conditions`` with ``PrePullNextBatch`` set from ``plan`` (removed for ``None``)."""
    kept = [dict(c) for c in status.get("conditions") or [] if c.get("type") != CONDITION_TYPE]
    if plan is None:
        return kept
    old = next((c for c in status.get("conditions") or [] if c.get("type") == CONDITION_TYPE), None)
    same = old is not None and old.get("message") == plan.message
    stamp = str(old.get("lastTransitionTime")) if same and old is not None else now
    kept.append(
        {
            "type": CONDITION_TYPE,
            "status": "True",
            "reason": CONDITION_REASON,
            "message": plan.message,
            "lastUpdateTime": stamp,
            "lastTransitionTime": stamp,
        }
    )
    return kept
