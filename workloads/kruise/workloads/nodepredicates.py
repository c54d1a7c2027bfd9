"""Node predicates every per-node workload shares (pure): taints vs tolerations, node selectors and
required node affinity, pinning a pod to a node, heartbeat-only node updates.

Used by the Advanced DaemonSet (:mod:`kruise.workloads.daemonset.nodes` adds its default daemon
tolerations on top) and the BroadcastJob (:mod:`kruise.workloads.broadcastjob.nodes`). They mirror
``k8s.io/component-helpers/scheduling/corev1`` (``FindMatchingUntoleratedTaint``,
``nodeaffinity.GetRequiredNodeAffinity``) and the native DaemonSet util
(``ReplaceDaemonSetPodNodeNameNodeAffinity``, ``GetTargetNodeName``):

- node-selector operators are ``In``, ``NotIn``, ``Exists``, ``DoesNotExist``, ``Gt`` and ``Lt`` on
  labels and ``In``/``NotIn`` on the ``metadata.name`` field; a malformed term matches nothing (the
  scheduler's lazy-error rule); an empty term matches nothing;
- taints' ``PreferNoSchedule`` effect is left to the caller (it passes the effects it cares about);
- a pod is pinned by a single required term ``metadata.name In [node]`` so kube-scheduler binds it.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from kruise.workloads.objects import KubeObject, labels, mapping, name, sequence, spec

__all__ = [
    "NODE_NAME_FIELD",
    "NO_EXECUTE",
    "NO_SCHEDULE",
    "add_toleration",
    "is_heartbeat_only",
    "node_affinity_matches",
    "pin_to_node",
    "target_node",
    "term_matches",
    "tolerates",
    "untolerated_taints",
]

NO_SCHEDULE = "NoSchedule"
NO_EXECUTE = "NoExecute"
NODE_NAME_FIELD = "metadata.name"

_INT64 = re.compile(r"[+-]?[0-9]+")


def _same_toleration(a: Mapping[str, Any], b: Mapping[str, Any]) -> bool:
    """``Toleration.MatchToleration``: same key, operator, value and effect."""
    return all((a.get(k) or "") == (b.get(k) or "") for k in ("key", "operator", "value", "effect"))


def add_toleration(tolerations: Sequence[Any], toleration: Mapping[str, Any]) -> list[dict[str, Any]]:
    """``AddOrUpdateTolerationInPodSpec``: replace a matching toleration, else append."""
    out = [dict(mapping(t)) for t in tolerations]
    for i, existing in enumerate(out):
        if _same_toleration(existing, toleration):
            out[i] = dict(toleration)
            return out
    return [*out, dict(toleration)]


def tolerates(toleration: Mapping[str, Any], taint: Mapping[str, Any]) -> bool:
    """``Toleration.ToleratesTaint``: effect (if set) and key (if set) equal; ``Exists`` or equal value."""
    effect, key = toleration.get("effect") or "", toleration.get("key") or ""
    if effect and effect != taint.get("effect"):
        return False
    if key and key != taint.get("key"):
        return False
    operator = toleration.get("operator") or "Equal"
    if operator == "Exists":
        return True
    return operator == "Equal" and (toleration.get("value") or "") == (taint.get("value") or "")


def untolerated_taints(
    taints: Iterable[Any], tolerations: Sequence[Any], effects: Iterable[str]
) -> list[Mapping[str, Any]]:
    """Taints with one of ``effects`` that no toleration tolerates (``FindMatchingUntoleratedTaint``)."""
    wanted = set(effects)
    return [
        mapping(t)
        for t in taints
        if mapping(t).get("effect") in wanted
        and not any(tolerates(mapping(o), mapping(t)) for o in tolerations)
    ]


def _requirement(req: Mapping[str, Any], value: str | None) -> bool:
    """One ``NodeSelectorRequirement`` against the label (or field) value, ``None`` when absent."""
    operator = req.get("operator")
    values = [str(v) for v in sequence(req.get("values"))]
    if operator == "In":
        return bool(values) and value is not None and value in values
    if operator == "NotIn":
        return bool(values) and (value is None or value not in values)
    if operator in ("Exists", "DoesNotExist"):
        if values:
            return False  # malformed: values must be empty
        return bool((value is not None) == (operator == "Exists"))
    if operator in ("Gt", "Lt"):
        if (
            len(values) != 1
            or value is None
            or not _INT64.fullmatch(values[0])
            or not _INT64.fullmatch(value)
        ):
            return False
        return int(value) > int(values[0]) if operator == "Gt" else int(value) < int(values[0])
    return False


def term_matches(term: Mapping[str, Any], node: KubeObject) -> bool:
    """One ``NodeSelectorTerm`` (all its expressions and fields) matches ``node``; an empty or
    malformed term matches nothing."""
    expressions = [mapping(e) for e in sequence(term.get("matchExpressions"))]
    fields = [mapping(f) for f in sequence(term.get("matchFields"))]
    if not expressions and not fields:
        return False  # an empty term matches no objects
    node_labels = labels(node)
    for req in expressions:
        key = str(req.get("key") or "")
        if not _requirement(req, node_labels.get(key)):
            return False
    for req in fields:
        if req.get("key") != NODE_NAME_FIELD or req.get("operator") not in ("In", "NotIn"):
            return False
        if len(sequence(req.get("values"))) != 1 or not _requirement(req, name(node)):
            return False
    return True


def node_affinity_matches(pod_spec: Mapping[str, Any], node: KubeObject) -> bool:
    """``nodeSelector`` and the required node affinity of ``pod_spec`` both match ``node``."""
    node_labels = labels(node)
    if any(node_labels.get(k) != str(v) for k, v in mapping(pod_spec.get("nodeSelector")).items()):
        return False
    affinity = mapping(mapping(pod_spec.get("affinity")).get("nodeAffinity"))
    required = affinity.get("requiredDuringSchedulingIgnoredDuringExecution")
    if required is None:
        return True
    return any(term_matches(mapping(t), node) for t in sequence(mapping(required).get("nodeSelectorTerms")))


def pin_to_node(affinity: Mapping[str, Any] | None, node_name: str) -> dict[str, Any]:
    """``ReplaceDaemonSetPodNodeNameNodeAffinity``: the affinity with its required node selector
    replaced by one term matching the field ``metadata.name`` In ``[node_name]`` (the other
    required terms go: the controller has already checked the node against them)."""
    out: dict[str, Any] = copy.deepcopy(dict(affinity or {}))
    node_affinity = dict(mapping(out.get("nodeAffinity")))
    node_affinity["requiredDuringSchedulingIgnoredDuringExecution"] = {
        "nodeSelectorTerms": [
            {"matchFields": [{"key": NODE_NAME_FIELD, "operator": "In", "values": [node_name]}]}
        ]
    }
    out["nodeAffinity"] = node_affinity
    return out


def target_node(pod: KubeObject) -> str | None:
    """``GetTargetNodeName``: ``spec.nodeName``, else the single node a ``metadata.name`` In term
    of the required node affinity names; ``None`` when neither says."""
    bound = str(spec(pod).get("nodeName") or "")
    if bound:
        return bound
    affinity = mapping(mapping(spec(pod).get("affinity")).get("nodeAffinity"))
    terms = sequence(
        mapping(affinity.get("requiredDuringSchedulingIgnoredDuringExecution")).get("nodeSelectorTerms")
    )
    for term in terms:
        for req in sequence(mapping(term).get("matchFields")):
            req_map = mapping(req)
            values = sequence(req_map.get("values"))
            if req_map.get("key") == NODE_NAME_FIELD and req_map.get("operator") == "In" and len(values) == 1:
                return str(values[0])
    return None


def _true_conditions(node: KubeObject) -> set[str]:
    return {
        str(mapping(c).get("type"))
        for c in sequence(mapping(node.get("status")).get("conditions"))
        if mapping(c).get("status") == "True"
    }


def _without_heartbeat(node: KubeObject) -> dict[str, Any]:
    meta = {
        k: v
        for k, v in mapping(node.get("metadata")).items()
        if k not in ("resourceVersion", "managedFields")
    }
    status = {k: v for k, v in mapping(node.get("status")).items() if k != "conditions"}
    return {**node, "metadata": meta, "status": status}


def is_heartbeat_only(old: KubeObject, new: KubeObject) -> bool:
    """``shouldIgnoreNodeUpdate``: the same conditions are True and nothing else changed but the
    resourceVersion and the conditions (a kubelet's or KWOK's heartbeat)."""
    return _true_conditions(old) == _true_conditions(new) and _without_heartbeat(old) == _without_heartbeat(
        new
    )
