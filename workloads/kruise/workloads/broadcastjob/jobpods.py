"""A BroadcastJob's pods (pure): their labels, which node each is for, how each counts, and the
pod to create on a node. Mirrors ``broadcastjob_utils.go`` and ``createPod`` (v1.8).

- Every pod carries ``broadcastjob-name: <job>`` and ``broadcastjob-controller-uid: <uid>``
  (``labelsAsMap``; the template may not preset them, see the validating webhook).
- A pod is *for* the node its ``spec.nodeName`` names, else the one its required node affinity
  pins it to (``getAssignedNode``); "" when neither.
- Counting (``filterPods``): phase Succeeded -> succeeded; Failed -> failed; otherwise, when not
  being deleted, failed if ``restartPolicy: OnFailure`` and its containers' restarts (init and
  app, summed) exceed ``failurePolicy.restartLimit``, else active; a terminating pod that has
  not finished counts nowhere.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from kruise.workloads.nodepredicates import pin_to_node, target_node
from kruise.workloads.objects import (
    KubeObject,
    is_being_deleted,
    mapping,
    metadata,
    name,
    namespace,
    sequence,
    spec,
    uid,
)
from kruise.workloads.objects import status as status_of
from kruise.workloads.pods import PHASE_FAILED, PHASE_SUCCEEDED, phase
from kruise.workloads.revisions import ControllerKind

__all__ = [
    "BROADCASTJOB_KIND",
    "CONTROLLER_UID_LABEL",
    "JOB_NAME_LABEL",
    "PodCounts",
    "assigned_node",
    "classify",
    "job_labels",
    "new_pod",
    "owned_by",
    "restart_count",
]

BROADCASTJOB_KIND = ControllerKind("apps.kruise.io/v1alpha1", "BroadcastJob")
JOB_NAME_LABEL = "broadcastjob-name"
CONTROLLER_UID_LABEL = "broadcastjob-controller-uid"
_PREFIX_MAX = 58  # generateName keeps at most 63 - 5 characters of its prefix


def job_labels(job: KubeObject) -> dict[str, str]:
    """``labelsAsMap``: the labels every pod of ``job`` carries."""
    return {JOB_NAME_LABEL: name(job), CONTROLLER_UID_LABEL: uid(job)}


def assigned_node(pod: KubeObject) -> str:
    """``getAssignedNode``: the node ``pod`` is for, "" when it names none."""
    return target_node(pod) or ""


def restart_count(pod: KubeObject) -> int:
    """Restarts of all init and app containers of ``pod``, summed."""
    st = status_of(pod)
    return sum(
        int(mapping(c).get("restartCount") or 0)
        for key in ("initContainerStatuses", "containerStatuses")
        for c in sequence(st.get(key))
    )


@dataclass(frozen=True)
class PodCounts:
    """Pods by outcome (``filterPods``); each tuple keeps the input order."""

    active: tuple[KubeObject, ...]
    failed: tuple[KubeObject, ...]
    succeeded: tuple[KubeObject, ...]


def classify(pods: Iterable[KubeObject], restart_limit: int) -> PodCounts:
    """Split ``pods`` into active, failed and succeeded (see the module docstring)."""
    active: list[KubeObject] = []
    failed: list[KubeObject] = []
    succeeded: list[KubeObject] = []
    for pod in pods:
        if phase(pod) == PHASE_SUCCEEDED:
            succeeded.append(pod)
        elif phase(pod) == PHASE_FAILED:
            failed.append(pod)
        elif not is_being_deleted(pod):
            over_limit = spec(pod).get("restartPolicy") == "OnFailure" and restart_count(pod) > restart_limit
            (failed if over_limit else active).append(pod)
    return PodCounts(tuple(active), tuple(failed), tuple(succeeded))


def new_pod(job: KubeObject, node: str, *, assign_by_scheduler: bool = True) -> dict[str, Any]:
    """The pod to create for ``job`` on ``node`` (``GetPodFromTemplate`` + ``createPod``).

    Labels, annotations and finalizers come from the template, plus :func:`job_labels`; the name
    is generated from ``<job>-``; the controller reference points at the job. With
    ``assign_by_scheduler`` (``--assign-bcj-pods-by-scheduler``, default true) the pod's required
    node affinity is replaced by one ``metadata.name In [node]`` term so kube-scheduler binds it;
    otherwise ``spec.nodeName`` is set.
    """
    template = mapping(spec(job).get("template"))
    meta = mapping(template.get("metadata"))
    pod_spec: dict[str, Any] = copy.deepcopy(dict(mapping(template.get("spec"))))
    if assign_by_scheduler:
        pod_spec["affinity"] = pin_to_node(mapping(pod_spec.get("affinity")) or None, node)
    else:
        pod_spec["nodeName"] = node
    pod_meta: dict[str, Any] = {
        "generateName": f"{name(job)}-"[:_PREFIX_MAX],
        "namespace": namespace(job),
        "labels": {**{str(k): str(v) for k, v in mapping(meta.get("labels")).items()}, **job_labels(job)},
        "ownerReferences": [BROADCASTJOB_KIND.reference(job)],
    }
    if mapping(meta.get("annotations")):
        pod_meta["annotations"] = dict(mapping(meta.get("annotations")))
    if sequence(meta.get("finalizers")):
        pod_meta["finalizers"] = [str(f) for f in sequence(meta.get("finalizers"))]
    return {"apiVersion": "v1", "kind": "Pod", "metadata": pod_meta, "spec": pod_spec}


def owned_by(pod: KubeObject, job: KubeObject) -> bool:
    """Whether ``job`` is ``pod``'s controller (kind BroadcastJob and the job's uid)."""
    return any(
        mapping(ref).get("controller")
        and mapping(ref).get("kind") == BROADCASTJOB_KIND.kind
        and mapping(ref).get("uid") == uid(job)
        for ref in sequence(metadata(pod).get("ownerReferences"))
    )
