"""Read a workload into :class:`WorkloadInfo` (pure), as Kruise Rollouts' ``ControllerFinder``.

CloneSet: revisions are the short hashes (the last ``-`` segment) of
``status.currentRevision`` (stable) and ``status.updateRevision`` (canary, also
``podTemplateHash``); the Service selector key is ``pod-template-hash``; it is in a
rollout while it carries ``rollouts.kruise.io/in-progressing``, and rolling back when
``currentRevision == updateRevision`` but not every pod is updated. The status is
only trusted once it observed the current generation. The rollout-id is the
``rollouts.kruise.io/rollout-id`` label, else the annotation (:mod:`.rolloutid`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kruise.rollouts.release.constants import IN_PROGRESSING_ANNOTATION
from kruise.rollouts.release.rolloutid import workload_rollout_id
from kruise.rollouts.workloads.info import WorkloadInfo
from kruise.workloads.pods import short_hash


def cloneset_info(cs: Mapping[str, Any]) -> WorkloadInfo:
    meta = cs.get("metadata") or {}
    spec = cs.get("spec") or {}
    status = cs.get("status") or {}
    current = str(status.get("currentRevision") or "")
    update = str(status.get("updateRevision") or "")
    in_progressing = IN_PROGRESSING_ANNOTATION in (meta.get("annotations") or {})
    consistent = int(meta.get("generation") or 0) == int(status.get("observedGeneration") or -1)
    return WorkloadInfo(
        kind="CloneSet",
        api_version=str(cs.get("apiVersion") or "apps.kruise.io/v1alpha1"),
        name=str(meta.get("name")),
        namespace=str(meta.get("namespace")),
        uid=str(meta.get("uid") or ""),
        replicas=int(spec.get("replicas", 1)),
        stable_revision=short_hash(current),
        canary_revision=short_hash(update),
        pod_template_hash=short_hash(update),
        in_progressing=in_progressing,
        in_rollback=in_progressing
        and bool(current)
        and current == update
        and int(status.get("updatedReplicas") or 0) != int(status.get("replicas") or 0),
        status_consistent=consistent,
        updated_replicas=int(status.get("updatedReplicas") or 0),
        updated_ready_replicas=int(status.get("updatedReadyReplicas") or 0),
        generation=int(meta.get("generation") or 0),
        rollout_id=workload_rollout_id(cs),
    )


def workload_info(ref: Mapping[str, Any], obj: Mapping[str, Any] | None) -> WorkloadInfo | None:
    """Info for the object ``ref`` names (None when absent or of a kind not served yet)."""
    if obj is None:
        return None
    if ref.get("kind") == "CloneSet" and str(ref.get("apiVersion", "")).startswith("apps.kruise.io/"):
        return cloneset_info(obj)
    return None
