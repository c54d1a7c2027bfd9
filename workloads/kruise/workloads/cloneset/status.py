"""The CloneSet status a reconcile writes (pure), as ``cloneset_status.go``.

- ``replicas``: active owned pods; ``readyReplicas``: Running, Ready and
  ``InPlaceUpdateReady`` not False; ``availableReplicas``: additionally lifecycle
  ``""``/``Normal`` and available for ``minReadySeconds``;
- ``updated*``: the same counts among pods at ``updateRevision``;
- ``expectedUpdatedReplicas = replicas - partition`` (calculated);
- ``currentRevision`` becomes ``updateRevision`` once
  ``updatedReplicas == status.replicas == spec.replicas`` (readiness not needed);
- ``labelSelector``: the selector in ``metav1.FormatLabelSelector`` form.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from kruise.workloads.cloneset.arith import strategy_numbers
from kruise.workloads.cloneset.objects import KubeObject, mapping, metadata, sequence, spec, status
from kruise.workloads.cloneset.podstate import (
    equal_to_revision_hash,
    is_cloneset_available,
    is_pod_update_ready,
)

COUNTERS = (
    "replicas",
    "readyReplicas",
    "availableReplicas",
    "updatedReplicas",
    "updatedReadyReplicas",
    "updatedAvailableReplicas",
    "expectedUpdatedReplicas",
)


def format_label_selector(selector: Mapping[str, Any] | None) -> str:
    """``metav1.FormatLabelSelector``: ``a=b,c in (d,e),!f``; requirements sorted by key."""
    sel = mapping(selector)
    reqs: list[tuple[str, str]] = []
    for key, value in sorted(mapping(sel.get("matchLabels")).items()):
        reqs.append((str(key), f"{key}={value}"))
    for expr in sequence(sel.get("matchExpressions")):
        e = mapping(expr)
        key, op = str(e.get("key")), str(e.get("operator"))
        values = ",".join(sorted(str(v) for v in sequence(e.get("values"))))
        text = {
            "In": f"{key} in ({values})",
            "NotIn": f"{key} notin ({values})",
            "Exists": key,
            "DoesNotExist": f"!{key}",
        }.get(op, f"{key} {op} ({values})")
        reqs.append((key, text))
    if not reqs:
        return ""
    return ",".join(text for _, text in sorted(reqs, key=lambda r: r[0]))


def calculate_status(
    cloneset: KubeObject,
    active_pods: Sequence[KubeObject],
    *,
    update_revision: str,
    current_revision: str,
    collision_count: int,
    now: datetime,
) -> dict[str, Any]:
    """The new ``status`` (conditions carried over from the old one)."""
    min_ready = int(spec(cloneset).get("minReadySeconds") or 0)
    numbers = strategy_numbers(cloneset)
    new: dict[str, Any] = {
        "observedGeneration": int(metadata(cloneset).get("generation") or 0),
        "replicas": len(active_pods),
        "readyReplicas": 0,
        "availableReplicas": 0,
        "updatedReplicas": 0,
        "updatedReadyReplicas": 0,
        "updatedAvailableReplicas": 0,
        "expectedUpdatedReplicas": max(numbers.replicas - numbers.partition, 0),
        "updateRevision": update_revision,
        "collisionCount": collision_count,
        "labelSelector": format_label_selector(mapping(spec(cloneset).get("selector"))),
    }
    for pod in active_pods:
        ready = is_pod_update_ready(pod, 0, now)
        available = is_cloneset_available(pod, min_ready, now)
        updated = equal_to_revision_hash(pod, update_revision)
        new["readyReplicas"] += ready
        new["availableReplicas"] += available
        if updated:
            new["updatedReplicas"] += 1
            new["updatedReadyReplicas"] += ready
            new["updatedAvailableReplicas"] += available
    if new["updatedReplicas"] == new["replicas"] == numbers.replicas:
        new["currentRevision"] = update_revision
    else:
        new["currentRevision"] = current_revision
    old_conditions = sequence(status(cloneset).get("conditions"))
    if old_conditions:
        new["conditions"] = [dict(c) for c in old_conditions]
    return new


def status_changed(old: Mapping[str, Any], new: Mapping[str, Any]) -> bool:
    """Whether writing ``new`` would change anything (upstream writes only then)."""
    return any(old.get(k) != v for k, v in new.items())


def set_condition(status_: dict[str, Any], cond_type: str, message: str, now: datetime) -> None:
    """Set a FailedScale/FailedUpdate style condition (status True, message = the error)."""
    from kruise.workloads.cloneset.objects import format_time

    conditions = [c for c in status_.get("conditions") or [] if c.get("type") != cond_type]
    conditions.append(
        {"type": cond_type, "status": "True", "lastTransitionTime": format_time(now), "message": message}
    )
    status_["conditions"] = conditions


def clear_condition(status_: dict[str, Any], cond_type: str) -> None:
    conditions = [c for c in status_.get("conditions") or [] if c.get("type") != cond_type]
    if conditions:
        status_["conditions"] = conditions
    else:
        status_.pop("conditions", None)
