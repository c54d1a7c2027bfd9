"""Stable identity of an Advanced StatefulSet's pods: ordinals, names, claims, the pods it creates.

Mirrors ``pkg/controller/statefulset/stateful_set_utils.go`` (OpenKruise v1.8):

- a pod is ``<set>-<ordinal>`` (``(.*)-([0-9]+)$``, the ordinal an int32; anything else has
  ordinal -1 and is ignored), its claims ``<template>-<set>-<ordinal>``;
- the replicas occupy ``[start, end)`` minus ``reserveOrdinals``: ``start`` is
  ``ordinals.start`` with gate ``StatefulSetStartOrdinal`` (else 0) and ``end`` grows past every
  reserved ordinal until ``replicas`` ordinals are free (``getStatefulSetReplicasRange``); a
  malformed range in ``reserveOrdinals`` makes upstream reserve nothing at all;
- a new pod gets the template of its revision, the revision's name in
  ``controller-revision-hash``, ``statefulset.kubernetes.io/pod-name``,
  ``apps.kubernetes.io/pod-index`` (gate ``PodIndexLabel``, on), ``hostname`` = its name,
  ``subdomain`` = ``serviceName``, one volume per claim template (replacing a template volume
  of that name), the lifecycle state ``Normal`` (``PreparingNormal`` while a preNormal hook
  does not hold it yet), the ``KruisePodReady`` readiness gate (which upstream's pod webhook
  adds to every pod a Kruise workload owns) and the set as controller owner;
- partition (``isCurrentRevisionNeeded``): with ordered updates a new pod keeps the current
  revision when fewer than ``partition`` pods precede it (reserved slots not counted); with
  ``unorderedUpdate``, while fewer than ``partition`` other pods are not at the update revision.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from kruise.workloads.lifecycle import hook_of, is_pod_all_hooked
from kruise.workloads.objects import KubeObject, format_time, labels, mapping, name, namespace, sequence, spec
from kruise.workloads.pods import (
    KRUISE_POD_READY,
    LIFECYCLE_STATE_LABEL,
    LIFECYCLE_TIMESTAMP_ANNOTATION,
    REVISION_HASH_LABEL,
    LifecycleState,
    is_pod_update,
)
from kruise.workloads.revisions import ControllerKind, template_of_revision

__all__ = [
    "POD_INDEX_LABEL",
    "POD_NAME_LABEL",
    "STATEFULSET_KIND",
    "ReplicaRange",
    "claim_name",
    "claims_for",
    "current_revision_needed",
    "identity_matches",
    "new_pod",
    "ordinal_of",
    "parent_and_ordinal",
    "pod_name",
    "pod_revision",
    "replica_range",
    "reserved_ordinals",
    "storage_matches",
]

POD_NAME_LABEL = "statefulset.kubernetes.io/pod-name"
POD_INDEX_LABEL = "apps.kubernetes.io/pod-index"
STATEFULSET_KIND = ControllerKind("apps.kruise.io/v1beta1", "StatefulSet")
_POD_NAME = re.compile(r"(.*)-([0-9]+)$")
_INT32_MAX = 2**31 - 1


def parent_and_ordinal(pod_name_: str) -> tuple[str, int]:
    """``getParentNameAndOrdinal``: ``("web", 3)`` for ``web-3``; ``("", -1)`` when not a member name."""
    match = _POD_NAME.match(pod_name_)
    if match is None:
        return "", -1
    number = int(match.group(2))
    return match.group(1), number if number <= _INT32_MAX else -1


def ordinal_of(pod: KubeObject) -> int:
    """The pod's ordinal, -1 when its name has none."""
    return parent_and_ordinal(name(pod))[1]


def pod_revision(pod: KubeObject) -> str:
    """``controller-revision-hash`` ("" when absent)."""
    return str(labels(pod).get(REVISION_HASH_LABEL) or "")


def pod_name(set_name: str, ordinal: int) -> str:
    return f"{set_name}-{ordinal}"


def claim_name(template_name: str, set_name: str, ordinal: int) -> str:
    return f"{template_name}-{set_name}-{ordinal}"


def _parse_range(text: str) -> tuple[int, int] | None:
    parts = text.split("-")
    if len(parts) != 2 or not all(re.fullmatch(r"[+-]?[0-9]+", p) for p in parts):
        return None
    start, end = int(parts[0]), int(parts[1])
    return (start, end) if start <= end else None


def reserved_ordinals(statefulset: KubeObject) -> frozenset[int]:
    """``GetReserveOrdinalIntSet``: ints and ``"a-b"`` ranges (inclusive); a malformed range
    reserves nothing (upstream logs it and returns an empty set)."""
    values: set[int] = set()
    for item in sequence(spec(statefulset).get("reserveOrdinals")):
        if isinstance(item, int) and not isinstance(item, bool):
            values.add(item)
        elif isinstance(item, str):
            bounds = _parse_range(item)
            if bounds is None:
                return frozenset()
            values.update(range(bounds[0], bounds[1] + 1))
    return frozenset(values)


@dataclass(frozen=True)
class ReplicaRange:
    """``[start, end)`` minus ``reserved``: the ordinals the replicas occupy."""

    start: int
    end: int
    reserved: frozenset[int]

    def holds(self, ordinal: int) -> bool:
        """``podInOrdinalRangeWithParams``."""
        return self.start <= ordinal < self.end and ordinal not in self.reserved

    def ordinals(self) -> list[int]:
        return [o for o in range(self.start, self.end) if o not in self.reserved]


def replica_range(statefulset: KubeObject, *, start_ordinal_gate: bool) -> ReplicaRange:
    """``getStatefulSetReplicasRange`` (``replicas`` defaults to 1)."""
    start = 0
    ordinals = spec(statefulset).get("ordinals")
    if start_ordinal_gate and isinstance(ordinals, Mapping):
        start = int(ordinals.get("start") or 0)
    reserved = reserved_ordinals(statefulset)
    raw = spec(statefulset).get("replicas")
    replicas = 1 if raw is None else int(raw)
    end, found = start, 0
    while found < replicas:
        if end not in reserved:
            found += 1
        end += 1
    return ReplicaRange(start, end, reserved)


def claims_for(statefulset: KubeObject, ordinal: int) -> list[dict[str, Any]]:
    """``getPersistentVolumeClaims``: one PVC per claim template, labelled with the selector's
    ``matchLabels`` (instead of the template's labels, as upstream), no owner yet."""
    match_labels = dict(mapping(mapping(spec(statefulset).get("selector")).get("matchLabels")))
    out = []
    for template in sequence(spec(statefulset).get("volumeClaimTemplates")):
        claim = copy.deepcopy(dict(mapping(template)))
        meta = dict(mapping(claim.get("metadata")))
        meta.pop("creationTimestamp", None)
        meta["name"] = claim_name(str(meta.get("name") or ""), name(statefulset), ordinal)
        meta["namespace"] = namespace(statefulset)
        meta["labels"] = match_labels
        claim.pop("status", None)
        out.append({**claim, "apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": meta})
    return out


def _claim_volumes(statefulset: KubeObject, ordinal: int) -> list[dict[str, Any]]:
    return [
        {
            "name": str(mapping(mapping(t).get("metadata")).get("name") or ""),
            "persistentVolumeClaim": {
                "claimName": claim_name(
                    str(mapping(mapping(t).get("metadata")).get("name") or ""), name(statefulset), ordinal
                )
            },
        }
        for t in sequence(spec(statefulset).get("volumeClaimTemplates"))
    ]


def new_pod(
    statefulset: KubeObject,
    revision: KubeObject,
    ordinal: int,
    now: datetime,
    *,
    pod_index_label: bool = True,
) -> dict[str, Any]:
    """The pod to create for ``ordinal`` at ``revision`` (``newVersionedStatefulSetPod``)."""
    template = template_of_revision(revision)
    template_meta = mapping(template.get("metadata"))
    pod = pod_name(name(statefulset), ordinal)
    pre_normal = hook_of(statefulset, "preNormal")
    state = LifecycleState.NORMAL
    pod_labels: dict[str, Any] = {**dict(mapping(template_meta.get("labels"))), POD_NAME_LABEL: pod}
    finalizers = [str(f) for f in sequence(template_meta.get("finalizers"))]
    draft = {"metadata": {"labels": pod_labels, "finalizers": finalizers}}
    if pre_normal is not None and not is_pod_all_hooked(pre_normal, draft):
        state = LifecycleState.PREPARING_NORMAL
    if pod_index_label:
        pod_labels[POD_INDEX_LABEL] = str(ordinal)
    pod_labels[REVISION_HASH_LABEL] = name(revision)
    pod_labels[LIFECYCLE_STATE_LABEL] = str(state)
    annotations = {
        **dict(mapping(template_meta.get("annotations"))),
        LIFECYCLE_TIMESTAMP_ANNOTATION: format_time(now),
    }
    pod_spec: dict[str, Any] = copy.deepcopy(dict(mapping(template.get("spec"))))
    pod_spec["hostname"] = pod
    if spec(statefulset).get("serviceName"):
        pod_spec["subdomain"] = spec(statefulset)["serviceName"]
    claims = _claim_volumes(statefulset, ordinal)
    if claims:
        taken = {v["name"] for v in claims}
        pod_spec["volumes"] = [
            *claims,
            *(v for v in sequence(pod_spec.get("volumes")) if mapping(v).get("name") not in taken),
        ]
    gates = [dict(g) for g in sequence(pod_spec.get("readinessGates"))]
    if not any(g.get("conditionType") == KRUISE_POD_READY for g in gates):
        pod_spec["readinessGates"] = [*gates, {"conditionType": KRUISE_POD_READY}]
    meta: dict[str, Any] = {
        "name": pod,
        "namespace": namespace(statefulset),
        "labels": pod_labels,
        "annotations": annotations,
        "ownerReferences": [STATEFULSET_KIND.reference(statefulset)],
    }
    if finalizers:  # GetPodFromTemplate copies them
        meta["finalizers"] = finalizers
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": pod_spec}


def identity_matches(statefulset: KubeObject, pod: KubeObject, *, pod_index_label: bool = True) -> bool:
    """``identityMatches``: name, namespace and the pod-name label (and pod-index with its gate)."""
    parent, ordinal = parent_and_ordinal(name(pod))
    ok = (
        ordinal >= 0
        and parent == name(statefulset)
        and namespace(pod) == namespace(statefulset)
        and labels(pod).get(POD_NAME_LABEL) == name(pod)
    )
    return ok and (not pod_index_label or labels(pod).get(POD_INDEX_LABEL) == str(ordinal))


def storage_matches(statefulset: KubeObject, pod: KubeObject) -> bool:
    """``storageMatches``: the pod mounts each claim template's PVC under the template's name."""
    ordinal = ordinal_of(pod)
    if ordinal < 0:
        return False
    volumes = {str(mapping(v).get("name")): mapping(v) for v in sequence(spec(pod).get("volumes"))}
    for wanted in _claim_volumes(statefulset, ordinal):
        found = volumes.get(wanted["name"])
        claim = mapping(mapping(found).get("persistentVolumeClaim"))
        if found is None or claim.get("claimName") != wanted["persistentVolumeClaim"]["claimName"]:
            return False
    return True


def current_revision_needed(
    statefulset: KubeObject,
    update_revision: str,
    ordinal: int,
    slots: Sequence[KubeObject | None],
    start: int,
) -> bool:
    """``isCurrentRevisionNeeded``: should the new pod at ``ordinal`` keep the current revision?

    ``slots`` are the replica slots (``ordinal - start`` -> pod or ``None``) as far as known.
    """
    strategy = mapping(spec(statefulset).get("updateStrategy"))
    if strategy.get("type") not in (None, "RollingUpdate"):
        return False
    rolling = strategy.get("rollingUpdate")
    if not isinstance(rolling, Mapping):
        current = int(mapping(statefulset.get("status")).get("currentReplicas") or 0)
        return ordinal < start + current
    partition = int(rolling.get("partition") or 0)
    if rolling.get("unorderedUpdate") is None:
        preceding = sum(1 for pod in slots[: ordinal - start] if pod is not None)
        return preceding + 1 <= partition
    not_updated = sum(
        1
        for pod in slots
        if pod is not None and ordinal_of(pod) != ordinal and not is_pod_update(pod, update_revision)
    )
    return not_updated < partition
