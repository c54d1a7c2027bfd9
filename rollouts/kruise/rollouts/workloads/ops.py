"""What a BatchRelease control asks the shell to write (pure value objects).

A control may change several objects per round (the workload, its pods' batch labels, a
Deployment's stable ReplicaSet, a canary Deployment, an HPA), so it answers with a list of
:class:`Op`. The shell runs them in order; a merge patch carrying ``metadata.resourceVersion`` is a
conditional write (a conflict just means "look again"); a patch of an object that is gone is
skipped (a pod deleted meanwhile).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, MutableMapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from kruise.core.kube.resources import DEPLOYMENTS, PODS, REPLICASETS, Resource
from kruise.rollouts.api.common import BatchReleaseBatchState
from kruise.rollouts.release.batchplan import IntOrStr
from kruise.rollouts.resources import BATCH_RELEASES, HPAS_V1, HPAS_V2

JSON = dict[str, Any]


class OpKind(StrEnum):
    PATCH = "Patch"  # JSON merge patch ``body`` on ``resource``/``name``
    CREATE = "Create"  # create ``body`` (may use ``metadata.generateName``)
    REMOVE_FINALIZER = "RemoveFinalizer"  # drop ``body["finalizer"]`` from ``resource``/``name``
    ADD_FINALIZER = "AddFinalizer"


class Target:
    """The resources the controls write besides the workloads of the registry."""

    DEPLOYMENT = DEPLOYMENTS
    REPLICASET = REPLICASETS
    POD = PODS
    BATCH_RELEASE = BATCH_RELEASES
    HPA_V2 = HPAS_V2
    HPA_V1 = HPAS_V1


@dataclass(frozen=True)
class Op:
    kind: OpKind
    target: Resource
    name: str
    body: JSON


@dataclass(frozen=True)
class ControlDecision:
    """The writes of one round, the BatchRelease's new ``status``, and when to look again."""

    ops: tuple[Op, ...]
    status: Mapping[str, Any]
    requeue_after: float | None = None


def patch(target: Resource, obj: dict[str, Any] | Any, body: JSON, *, guarded: bool = True) -> Op:
    """A merge patch on ``obj``; ``guarded`` adds its ``resourceVersion`` as precondition."""
    meta = (obj or {}).get("metadata") or {}
    if guarded and meta.get("resourceVersion"):
        body = {
            **body,
            "metadata": {**(body.get("metadata") or {}), "resourceVersion": meta["resourceVersion"]},
        }
    return Op(OpKind.PATCH, target, str(meta.get("name")), body)


def label_pod(name: str, labels: dict[str, str]) -> Op:
    """Merge ``labels`` onto pod ``name`` (unguarded: labels only, a pod gone is skipped)."""
    return Op(OpKind.PATCH, PODS, name, {"metadata": {"labels": dict(labels)}})


def owner_reference(br: Mapping[str, Any]) -> JSON:
    """``br`` as the controller owner reference of what it creates (canary Deployments)."""
    meta = br.get("metadata") or {}
    return {
        "apiVersion": br.get("apiVersion", "rollouts.kruise.io/v1beta1"),
        "kind": "BatchRelease",
        "name": meta.get("name"),
        "uid": meta.get("uid"),
        "controller": True,
        "blockOwnerDeletion": True,
    }


def control_info(br: Mapping[str, Any]) -> str:
    """``batchrelease.rollouts.kruise.io/control-info``: the owner reference as compact JSON
    (``BuildReleaseControlInfo``), the mark of the BatchRelease that controls a workload."""
    return json.dumps(owner_reference(br), separators=(",", ":"))


def enter_batch(batch: MutableMapping[str, Any], plan: Mapping[str, Any], index: int) -> IntOrStr:
    """The ``canaryReplicas`` of batch ``index`` of ``plan`` (clamped to its batches; ``"100%"``
    without any); ``batch`` (a BatchRelease's ``status.canaryStatus``) moves to it, Upgrading, when
    it was at another batch."""
    batches = plan.get("batches") or []
    index = max(0, min(int(index), len(batches) - 1)) if batches else 0
    if batch.get("currentBatch") != index:
        batch["currentBatch"] = index
        batch["batchState"] = BatchReleaseBatchState.UPGRADING
    replicas: IntOrStr = batches[index].get("canaryReplicas", "100%") if batches else "100%"
    return replicas
