"""Deployment -> CloneSet migration (pure): the CloneSet to create, and each scaling move.

As kruise-tools' ``migrate`` (``conversion/cloneset_convertion.go``,
``migration/cloneset/cloneset_migration.go``):

- the CloneSet copies the Deployment's labels, annotations (not the Deployment's own
  bookkeeping), finalizers, selector, template, ``revisionHistoryLimit``, ``minReadySeconds``,
  ``paused`` and ``rollingUpdate`` numbers, with ``updateStrategy.type: ReCreate``, and 0
  replicas unless ``--copy`` ("Create dst workload with replicas=0 from src workload");
- migrating ``replicas`` pods moves at most ``maxSurge`` ahead: scale the CloneSet out by up to
  ``maxSurge - (out - in)``, then, once every CloneSet replica is available, scale the
  Deployment in by as many as the CloneSet gained; both controllers must have observed the
  last change (``observedGeneration``) before the next move.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

JSON = dict[str, Any]
_DEPLOYMENT_ANNOTATIONS = (
    "deployment.kubernetes.io/revision",
    "kubectl.kubernetes.io/last-applied-configuration",
)


def cloneset_from_deployment(deployment: Mapping[str, Any], name: str, *, copy_replicas: bool) -> JSON:
    meta, spec = deployment["metadata"], deployment.get("spec") or {}
    annotations = {
        k: v for k, v in (meta.get("annotations") or {}).items() if k not in _DEPLOYMENT_ANNOTATIONS
    }
    new_meta: JSON = {"name": name, "namespace": meta.get("namespace")}
    for key, value in (
        ("labels", meta.get("labels")),
        ("annotations", annotations),
        ("finalizers", meta.get("finalizers")),
    ):
        if value:
            new_meta[key] = value
    strategy: JSON = {"type": "ReCreate", "paused": bool(spec.get("paused"))}
    rolling = (spec.get("strategy") or {}).get("rollingUpdate") or {}
    for key in ("maxUnavailable", "maxSurge"):
        if rolling.get(key) is not None:
            strategy[key] = rolling[key]
    new_spec: JSON = {
        "replicas": int(spec.get("replicas", 1)) if copy_replicas else 0,
        "selector": spec.get("selector"),
        "template": spec.get("template"),
        "updateStrategy": strategy,
    }
    for key in ("revisionHistoryLimit", "minReadySeconds"):
        if spec.get(key) is not None:
            new_spec[key] = spec[key]
    return {
        "apiVersion": "apps.kruise.io/v1alpha1",
        "kind": "CloneSet",
        "metadata": new_meta,
        "spec": new_spec,
    }


@dataclass(frozen=True)
class Move:
    """``out``: CloneSet replicas to add; ``in_``: Deployment replicas to remove; ``done``."""

    out: int = 0
    in_: int = 0
    done: bool = False


def next_move(
    target: int,
    max_surge: int,
    migrated_in: int,
    migrated_out: int,
    *,
    src_replicas: int,
    dst_replicas: int,
    dst_available: int,
) -> Move:
    """The next step of a migration of ``target`` replicas, ``migrated_in`` taken from the
    Deployment and ``migrated_out`` added to the CloneSet so far (both workloads observed)."""
    if migrated_in >= target and migrated_out >= target:
        return Move(done=True)
    if migrated_out < target:
        out = min(max_surge - (migrated_out - migrated_in), target - migrated_out)
        if out > 0:
            return Move(out=out)
    if migrated_in < target:
        in_ = min(src_replicas, target - migrated_in, migrated_out - migrated_in)
        if in_ > 0 and dst_replicas == dst_available:
            return Move(in_=in_)
    return Move()
