"""A DaemonSet's pods (pure): which node each is for, which are updated, the pod to create.

Mirrors OpenKruise's Advanced DaemonSet (``daemonset_util.go``, v1.8) and the native helpers it
calls (``k8s.io/kubernetes/pkg/controller/daemon/util``):

- a pod is *updated* when its ``controller-revision-hash`` label is the DaemonSet's hash, or its
  ``pod-template-generation`` label equals the deprecated
  ``deprecated.daemonset.template.generation`` annotation (``IsPodUpdated``);
- pods on one node are ordered scheduled first, then oldest, then by name
  (``podByCreationTimestampAndPhase``); :func:`updated_and_old` finds the node's single new and
  single old pod, or says there are more (``findUpdatedPodsOnNode``);
- a created pod is the template with the default daemon tolerations, the revision hash label
  (plus ``pod-template-generation`` with the annotation), the ``InPlaceUpdateReady`` readiness
  gate for ``InPlaceIfPossible`` and the ``KruisePodReady`` gate (upstream's pod webhook adds it
  to pods of ``apps.kruise.io`` owners), pinned to its node (:func:`new_pod`). With a
  ``preNormal`` hook it starts in lifecycle state ``PreparingNormal``.
"""

from __future__ import annotations

import copy
import random
from collections.abc import Callable, Iterable, Sequence
from datetime import datetime
from typing import Any

from kruise.workloads.admission.pod_defaults import add_marshal_artifacts
from kruise.workloads.daemonset.nodes import daemon_pod_spec
from kruise.workloads.daemonset.strategy import is_in_place
from kruise.workloads.inplace import InPlaceUpdateSpec, calculate_in_place_update_spec
from kruise.workloads.lifecycle import hook_of
from kruise.workloads.nodepredicates import pin_to_node, target_node
from kruise.workloads.objects import (
    KubeObject,
    annotations_of,
    creation_time,
    format_time,
    is_being_deleted,
    labels,
    mapping,
    name,
    namespace,
    sequence,
    spec,
)
from kruise.workloads.pods import (
    IN_PLACE_UPDATE_READY,
    KRUISE_POD_READY,
    LIFECYCLE_STATE_LABEL,
    LIFECYCLE_TIMESTAMP_ANNOTATION,
    REVISION_HASH_LABEL,
    LifecycleState,
    equal_to_revision_hash,
    get_condition,
    is_available,
    lifecycle_state,
    node_name,
    short_hash,
)
from kruise.workloads.revisions import SAFE_ALPHABET, ControllerKind, sort_revisions, template_of_revision

DAEMONSET_KIND = ControllerKind("apps.kruise.io/v1alpha1", "DaemonSet", hash_label=REVISION_HASH_LABEL)
TEMPLATE_GENERATION_LABEL = "pod-template-generation"
TEMPLATE_GENERATION_ANNOTATION = "deprecated.daemonset.template.generation"
DAEMONSET_SCHEDULER = "kubernetes.io/daemonset-controller"
"""``schedulerName`` of pods the controller binds itself (``--assign-pods-by-scheduler=false``)."""
_GENERATED_NAME_BASE = 58  # generateName keeps at most 63 - 5 characters of its prefix


def canonical(ds: KubeObject) -> dict[str, Any]:
    """``ds`` with its pod template as Go marshals it (``metadata.creationTimestamp: null``,
    containers' ``resources: {}``, canonical quantities).

    Upstream reads the DaemonSet into typed structs, so its revision data and its pods never
    depend on how the template's JSON was written; the webhook stores the template as written
    (it adds these artifacts only along with defaults), so ``resources: {}`` on one revision and
    nothing on the next must not read as a change that forbids an in-place update.
    """
    template = mapping(spec(ds).get("template"))
    return {**ds, "spec": {**spec(ds), "template": add_marshal_artifacts(template)}}


def template_generation(ds: KubeObject) -> str | None:
    """The deprecated ``deprecated.daemonset.template.generation`` annotation, if it is an int."""
    value = annotations_of(ds).get(TEMPLATE_GENERATION_ANNOTATION)
    if not isinstance(value, str):
        return None
    try:
        return str(int(value))
    except ValueError:
        return None


def is_pod_updated(pod: KubeObject, hash_value: str, generation: str | None) -> bool:
    """``IsPodUpdated``: the hash label matches, or the template-generation label does."""
    pod_labels = labels(pod)
    if generation is not None and pod_labels.get(TEMPLATE_GENERATION_LABEL) == generation:
        return True
    return bool(hash_value) and pod_labels.get(REVISION_HASH_LABEL) == hash_value


def pod_order(pod: KubeObject) -> tuple[int, float, str]:
    """``podByCreationTimestampAndPhase``: scheduled pods first, then the oldest, then by name."""
    created = creation_time(pod)
    return (0 if node_name(pod) else 1, created.timestamp() if created else float("-inf"), name(pod))


def pods_by_node(pods: Iterable[KubeObject]) -> dict[str, list[KubeObject]]:
    """``getNodesToDaemonPods``: pods grouped by the node they are for, each list in :func:`pod_order`.

    Pods whose node cannot be told are left out (upstream logs and skips them).
    """
    grouped: dict[str, list[KubeObject]] = {}
    for pod in pods:
        node = target_node(pod)
        if node is not None:
            grouped.setdefault(node, []).append(pod)
    for node_pods in grouped.values():
        node_pods.sort(key=pod_order)
    return grouped


def updated_and_old(
    pods: Sequence[KubeObject], hash_value: str, generation: str | None
) -> tuple[KubeObject | None, KubeObject | None, bool]:
    """``findUpdatedPodsOnNode``: ``(new, old, ok)`` among the node's live pods; ``ok`` is False
    (and both ``None``) when there is more than one new or more than one old pod."""
    new: KubeObject | None = None
    old: KubeObject | None = None
    for pod in pods:
        if is_being_deleted(pod):
            continue
        if is_pod_updated(pod, hash_value, generation):
            if new is not None:
                return None, None, False
            new = pod
        else:
            if old is not None:
                return None, None, False
            old = pod
    return new, old, True


def is_pre_deleting(pod: KubeObject | None) -> bool:
    """The pod is in lifecycle state ``PreparingDelete``."""
    return pod is not None and lifecycle_state(pod) == LifecycleState.PREPARING_DELETE


def is_nil_or_pre_deleting(pod: KubeObject | None) -> bool:
    return pod is None or is_pre_deleting(pod)


def has_in_place_gate(pod: KubeObject) -> bool:
    """``ContainsReadinessGate``: the pod carries the ``InPlaceUpdateReady`` readiness gate."""
    return any(
        mapping(g).get("conditionType") == IN_PLACE_UPDATE_READY
        for g in sequence(spec(pod).get("readinessGates"))
    )


def is_daemon_pod_available(pod: KubeObject, min_ready_seconds: int, now: datetime) -> bool:
    """``isDaemonPodAvailable`` (the status's ``numberAvailable``): available for
    ``min_ready_seconds`` and, with the gate, ``InPlaceUpdateReady`` True."""
    if not is_available(pod, min_ready_seconds, now):
        return False
    if has_in_place_gate(pod):
        condition = get_condition(pod, IN_PLACE_UPDATE_READY)
        if condition is not None and condition.get("status") != "True":
            return False
    return True


def is_rollout_available(pod: KubeObject, min_ready_seconds: int, now: datetime) -> bool:
    """What the rolling update counts as available (``podutil.IsPodAvailable``), and not held in
    ``PreparingNormal`` by a ``preNormal`` hook (ours: upstream accepts the hook but ignores it)."""
    if lifecycle_state(pod) == LifecycleState.PREPARING_NORMAL:
        return False
    return is_available(pod, min_ready_seconds, now)


def in_place_spec(
    ds: KubeObject, pod: KubeObject, revisions: Sequence[KubeObject]
) -> InPlaceUpdateSpec | None:
    """How ``pod`` moves to the update revision (the newest of ``revisions``) in place, or
    ``None`` to recreate it (``canPodInPlaceUpdate``): the pod needs the ``InPlaceUpdateReady``
    gate, its own revision among ``revisions``, and a difference the shared engine can apply in
    place (images and metadata; :func:`~kruise.workloads.inplace.calculate_in_place_update_spec`).
    The spec's revision is the hash, which is what the pod's label carries."""
    if not has_in_place_gate(pod) or not revisions:
        return None
    ordered = sort_revisions(revisions)
    update = ordered[-1]
    old = next((r for r in ordered[:-1] if equal_to_revision_hash(pod, name(r))), None)
    if old is None:
        return None
    return calculate_in_place_update_spec(
        template_of_revision(old), template_of_revision(update), revision=short_hash(name(update))
    )


def generated_name(ds_name: str, rng: Callable[[str], str] = random.choice) -> str:
    """``<ds-name>-<5 random characters>``, as ``generateName`` makes it (so the name is known
    before the create and can be expected)."""
    return f"{ds_name[:_GENERATED_NAME_BASE]}-{''.join(rng(SAFE_ALPHABET) for _ in range(5))}"


def new_pod(
    ds: KubeObject,
    hash_value: str,
    node: str,
    pod_name: str,
    now: datetime,
    *,
    assign_by_scheduler: bool = True,
) -> dict[str, Any]:
    """The pod to create on ``node`` at the DaemonSet's current template (``syncNodes``).

    Args:
        ds: the DaemonSet dict; its ``spec.template`` is the template of revision ``hash_value``.
        hash_value: the revision hash, written as ``controller-revision-hash``.
        node: the node the pod is for.
        pod_name: from :func:`generated_name`.
        now: time of the lifecycle timestamp (with a ``preNormal`` hook).
        assign_by_scheduler: pin with node affinity (kube-scheduler binds) or set ``nodeName``.
    """
    template = mapping(spec(ds).get("template"))
    meta = mapping(template.get("metadata"))
    pod_labels: dict[str, Any] = {**dict(mapping(meta.get("labels"))), REVISION_HASH_LABEL: hash_value}
    generation = template_generation(ds)
    if generation is not None:
        pod_labels[TEMPLATE_GENERATION_LABEL] = generation
    annotations: dict[str, Any] = dict(mapping(meta.get("annotations")))
    if hook_of(ds, "preNormal") is not None:
        pod_labels[LIFECYCLE_STATE_LABEL] = str(LifecycleState.PREPARING_NORMAL)
        annotations[LIFECYCLE_TIMESTAMP_ANNOTATION] = format_time(now)
    pod_spec = daemon_pod_spec(mapping(template.get("spec")))
    gates = [dict(mapping(g)) for g in sequence(pod_spec.get("readinessGates"))]
    wanted = [IN_PLACE_UPDATE_READY, KRUISE_POD_READY] if is_in_place(ds) else [KRUISE_POD_READY]
    for gate in wanted:
        if not any(g.get("conditionType") == gate for g in gates):
            gates.append({"conditionType": gate})
    pod_spec["readinessGates"] = gates
    if assign_by_scheduler:
        pod_spec["affinity"] = pin_to_node(mapping(pod_spec.get("affinity")) or None, node)
    else:
        pod_spec["schedulerName"] = DAEMONSET_SCHEDULER
        pod_spec["nodeName"] = node
    pod_meta: dict[str, Any] = {
        "name": pod_name,
        "namespace": namespace(ds),
        "labels": pod_labels,
        "ownerReferences": [DAEMONSET_KIND.reference(ds)],
    }
    if annotations:
        pod_meta["annotations"] = annotations
    if sequence(meta.get("finalizers")):
        pod_meta["finalizers"] = [str(f) for f in sequence(meta.get("finalizers"))]
    return {"apiVersion": "v1", "kind": "Pod", "metadata": pod_meta, "spec": copy.deepcopy(pod_spec)}
