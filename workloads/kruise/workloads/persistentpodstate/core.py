"""Pure decisions of PersistentPodState (no API I/O), mirroring OpenKruise v1.8's
``pkg/controller/persistentpodstate`` and ``pkg/webhook/pod/mutating/persistent_pod_state.go``.

- :func:`next_status`: the status a reconcile writes (ready pods' states recorded, scaled-in
  pods' states dropped under ``WhenScaled``, everything dropped when the workload is gone);
- :func:`node_affinity` / :func:`inject`: what a re-created pod gets (required topology as
  ``spec.nodeSelector`` entries, preferred topology as preferred node-affinity terms);
- :func:`generated_pps` / :func:`wants_generated`: the object a StatefulSet's
  ``kruise.io/auto-generate-persistent-pod-state`` annotations ask for.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from kruise.workloads.api.persistentpodstate import (
    AUTO_GENERATE_ANNOTATION,
    INJECTED_ANNOTATION,
    PERSISTENT_ANNOTATIONS_ANNOTATION,
    PREFERRED_TOPOLOGY_ANNOTATION,
    REQUIRED_TOPOLOGY_ANNOTATION,
    WHEN_DELETED,
    PersistentPodStateView,
    PodStateView,
    PpsSpecView,
    PpsStatusView,
    PpsTargetView,
)
from kruise.workloads.pods import is_ready
from kruise.workloads.podunavailablebudget.validation import api_group

__all__ = [
    "AUTO_GENERATED_WEIGHT",
    "Workload",
    "annotation_keys",
    "generated_pps",
    "in_replicas",
    "inject",
    "is_statefulset",
    "next_status",
    "node_affinity",
    "pod_ordinal",
    "same_target",
    "selected",
    "topology_keys",
    "wants_generated",
]

JSON = dict[str, Any]
AUTO_GENERATED_WEIGHT = 100
"""Weight of the preferred term of an auto-generated PersistentPodState (upstream's constant)."""


@dataclass(frozen=True)
class Workload:
    """What the controller needs of the target: ``replicas`` (``spec.replicas``, default 1),
    ``reserve_ordinals`` (Advanced StatefulSet's skipped ordinals) and whether it is being
    deleted."""

    replicas: int
    reserve_ordinals: frozenset[int] = frozenset()
    deleting: bool = False


def is_statefulset(api_version: str, kind: str) -> bool:
    """Upstream's default white list: kind ``StatefulSet`` in group ``apps`` or ``apps.kruise.io``
    (any version)."""
    return kind == "StatefulSet" and api_group(api_version) in ("apps", "apps.kruise.io")


def same_target(a: Mapping[str, Any], b: Mapping[str, Any]) -> bool:
    """Two ``targetRef``\\ s name the same workload: same group (version ignored), kind and name."""
    return (
        api_group(str(a.get("apiVersion") or "")) == api_group(str(b.get("apiVersion") or ""))
        and a.get("kind") == b.get("kind")
        and a.get("name") == b.get("name")
    )


def topology_keys(spec: PpsSpecView) -> frozenset[str]:
    """Node label keys to record: the required term's and every preferred term's."""
    keys = set((spec.get("requiredPersistentTopology") or {}).get("nodeTopologyKeys") or ())
    for term in spec.get("preferredPersistentTopology") or ():
        keys.update((term.get("preference") or {}).get("nodeTopologyKeys") or ())
    return frozenset(keys)


def annotation_keys(spec: PpsSpecView) -> frozenset[str]:
    """Pod annotation keys to record (``persistentPodAnnotations[].key``)."""
    return frozenset(str(a.get("key")) for a in spec.get("persistentPodAnnotations") or () if a.get("key"))


def pod_ordinal(name: str) -> int | None:
    """The ordinal after the last ``-`` of a StatefulSet pod name; ``None`` if not a number."""
    tail = name.rpartition("-")[2]
    return int(tail) if tail.isdigit() else None


def in_replicas(ordinal: int, workload: Workload) -> bool:
    """True when ``ordinal`` is one of the first ``replicas`` ordinals not reserved."""
    counted = 0
    index = 0
    while counted < workload.replicas:
        if index not in workload.reserve_ordinals:
            if index == ordinal:
                return True
            counted += 1
        index += 1
    return False


def _pod_state(
    pod: Mapping[str, Any], node_labels: Mapping[str, str], topo: Collection[str], anns: Collection[str]
) -> PodStateView:
    pod_annotations = (pod.get("metadata") or {}).get("annotations") or {}
    return {
        "nodeName": str((pod.get("spec") or {}).get("nodeName")),
        "nodeTopologyLabels": {k: node_labels[k] for k in sorted(topo) if k in node_labels},
        "annotations": {k: pod_annotations[k] for k in sorted(anns) if k in pod_annotations},
    }


def _up_to_date(state: PodStateView, node: str, topo: Collection[str], anns: Collection[str]) -> bool:
    return (
        state.get("nodeName") == node
        and set(state.get("nodeTopologyLabels") or {}) == set(topo)
        and set(state.get("annotations") or {}) == set(anns)
    )


def next_status(
    pps: PersistentPodStateView,
    workload: Workload | None,
    pods: Mapping[str, Mapping[str, Any]],
    node_labels: Callable[[str], Mapping[str, str] | None],
) -> PpsStatusView:
    """The status a reconcile writes.

    ``workload`` is ``None`` when the target is gone; then (or while it is deleting) the states
    are dropped (``{"observedGeneration": g}``). Otherwise each ready pod (by name in ``pods``)
    bound to a node whose labels ``node_labels`` finds gets a fresh state unless its recorded
    one has the same node and keys; a pod whose node is not found keeps its old state. Unless
    the policy is ``WhenDeleted``, the state of a pod whose ordinal is no longer within the
    replicas and that no longer exists is dropped (upstream's order: record, then clean).
    """
    generation = int((pps.get("metadata") or {}).get("generation") or 0)  # type: ignore[call-overload]
    if workload is None or workload.deleting:
        return {"observedGeneration": generation}
    spec = pps.get("spec") or {}
    topo, anns = topology_keys(spec), annotation_keys(spec)
    states: dict[str, PodStateView] = dict((pps.get("status") or {}).get("podStates") or {})
    for name, pod in sorted(pods.items()):
        node = str((pod.get("spec") or {}).get("nodeName") or "")
        if not node or not is_ready(pod):
            continue
        old = states.get(name)
        if old is not None and _up_to_date(old, node, topo, anns):
            continue
        labels = node_labels(node)
        if labels is None:
            continue
        states[name] = _pod_state(pod, labels, topo, anns)
    if spec.get("persistentPodStateRetentionPolicy") != WHEN_DELETED:
        for name in list(states):
            ordinal = pod_ordinal(name)
            if ordinal is None or in_replicas(ordinal, workload) or name in pods:
                continue
            del states[name]
    status: PpsStatusView = {"observedGeneration": generation}
    if states:
        status["podStates"] = states
    return status


def node_affinity(spec: PpsSpecView, state: PodStateView) -> tuple[dict[str, str], list[JSON]]:
    """``(nodeSelector entries, preferred terms)`` for a pod whose recorded state is ``state``.

    Required keys found in ``state.nodeTopologyLabels`` become selector entries; each preferred
    term becomes ``{"weight": w, "preference": {"matchExpressions": [{key, In, [value]}...]}}``
    with the keys found (upstream keeps a term even when none is found)."""
    labels = state.get("nodeTopologyLabels") or {}
    required = (spec.get("requiredPersistentTopology") or {}).get("nodeTopologyKeys") or ()
    selector = {k: labels[k] for k in required if k in labels}
    preferred: list[JSON] = []
    for term in spec.get("preferredPersistentTopology") or ():
        keys = (term.get("preference") or {}).get("nodeTopologyKeys") or ()
        expressions = [{"key": k, "operator": "In", "values": [labels[k]]} for k in keys if k in labels]
        preference: JSON = {"matchExpressions": expressions} if expressions else {}
        preferred.append({"weight": int(term.get("weight") or 0), "preference": preference})
    return selector, preferred


def inject(pod: JSON, pps: PersistentPodStateView) -> bool:
    """Steer a pod being created back to its recorded topology (in place); True if changed.

    Nothing happens when ``pps`` has no state for the pod's name or the state has no topology
    labels. Otherwise the pod gets :data:`INJECTED_ANNOTATION` (the PPS's name), the required
    labels merged into ``spec.nodeSelector`` and the preferred terms appended to
    ``spec.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution``."""
    name = str((pod.get("metadata") or {}).get("name") or "")
    state = ((pps.get("status") or {}).get("podStates") or {}).get(name)
    if not state or not state.get("nodeTopologyLabels"):
        return False
    selector, preferred = node_affinity(pps.get("spec") or {}, state)
    if not selector and not preferred:
        return False
    meta = pod.setdefault("metadata", {})
    meta.setdefault("annotations", {})
    if meta["annotations"] is None:
        meta["annotations"] = {}
    meta["annotations"][INJECTED_ANNOTATION] = str((pps.get("metadata") or {}).get("name") or "")
    spec = pod.setdefault("spec", {})
    if selector:
        spec["nodeSelector"] = {**(spec.get("nodeSelector") or {}), **selector}
    if preferred:
        affinity = spec.get("affinity") or {}
        node = affinity.get("nodeAffinity") or {}
        terms = list(node.get("preferredDuringSchedulingIgnoredDuringExecution") or ())
        node["preferredDuringSchedulingIgnoredDuringExecution"] = [*terms, *preferred]
        affinity["nodeAffinity"] = node
        spec["affinity"] = affinity
    return True


def _keys(annotations: Mapping[str, str], key: str) -> list[str]:
    value = annotations.get(key) or ""
    return value.split(",") if value else []


def wants_generated(annotations: Mapping[str, str]) -> bool:
    """The workload asks for a generated PersistentPodState: auto-generate ``"true"`` and a
    required or preferred topology annotation."""
    return annotations.get(AUTO_GENERATE_ANNOTATION) == "true" and bool(
        annotations.get(REQUIRED_TOPOLOGY_ANNOTATION) or annotations.get(PREFERRED_TOPOLOGY_ANNOTATION)
    )


def generated_pps(workload: Mapping[str, Any]) -> JSON:
    """The PersistentPodState generated for a StatefulSet (``apiVersion``/``kind``/``metadata``):
    same name and namespace, controlled by it, ``targetRef`` to it, topologies and annotation keys
    from its comma-separated annotations (preferred: one term of weight 100)."""
    meta = workload.get("metadata") or {}
    annotations: Mapping[str, str] = meta.get("annotations") or {}
    target: PpsTargetView = {
        "apiVersion": str(workload.get("apiVersion")),
        "kind": str(workload.get("kind")),
        "name": str(meta.get("name")),
    }
    spec: PpsSpecView = {"targetRef": target}
    if required := _keys(annotations, REQUIRED_TOPOLOGY_ANNOTATION):
        spec["requiredPersistentTopology"] = {"nodeTopologyKeys": required}
    if keys := _keys(annotations, PERSISTENT_ANNOTATIONS_ANNOTATION):
        spec["persistentPodAnnotations"] = [{"key": k} for k in keys]
    if preferred := _keys(annotations, PREFERRED_TOPOLOGY_ANNOTATION):
        spec["preferredPersistentTopology"] = [
            {"weight": AUTO_GENERATED_WEIGHT, "preference": {"nodeTopologyKeys": preferred}}
        ]
    owner = {**target, "uid": meta.get("uid"), "controller": True}
    return {
        "apiVersion": "apps.kruise.io/v1alpha1",
        "kind": "PersistentPodState",
        "metadata": {
            "name": meta.get("name"),
            "namespace": meta.get("namespace"),
            "ownerReferences": [owner],
        },
        "spec": spec,
    }


def selected(
    ppss: Iterable[PersistentPodStateView], target: Mapping[str, Any]
) -> PersistentPodStateView | None:
    """The first PersistentPodState not being deleted whose ``targetRef`` is ``target`` (upstream's
    ``SelectorPersistentPodState``)."""
    for pps in ppss:
        if (pps.get("metadata") or {}).get("deletionTimestamp"):
            continue
        if same_target((pps.get("spec") or {}).get("targetRef") or {}, target):
            return pps
    return None
