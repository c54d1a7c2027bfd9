"""What a BatchRelease control asks the shell to write (pure value objects).

The Deployment and blue-green controls change several objects per round (the workload, its
stable ReplicaSet, a canary Deployment, an HPA), so they answer with a list of :class:`Op`
instead of one workload patch. The shell runs them in order; a merge patch carrying
``metadata.resourceVersion`` is a conditional write (a conflict just means "look again").
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Any

JSON = dict[str, Any]


class OpKind(StrEnum):
    PATCH = "Patch"  # JSON merge patch ``body`` on ``resource``/``name``
    CREATE = "Create"  # create ``body`` (may use ``metadata.generateName``)
    REMOVE_FINALIZER = "RemoveFinalizer"  # drop ``body["finalizer"]`` from ``resource``/``name``
    ADD_FINALIZER = "AddFinalizer"


class Target(StrEnum):
    """The resources the controls touch (the shell maps them to API resources)."""

    DEPLOYMENT = "deployments"
    REPLICASET = "replicasets"
    CLONESET = "clonesets"
    BATCH_RELEASE = "batchreleases"
    HPA_V2 = "horizontalpodautoscalers.v2"
    HPA_V1 = "horizontalpodautoscalers.v1"


@dataclass(frozen=True)
class Op:
    kind: OpKind
    target: Target
    name: str
    body: JSON


@dataclass(frozen=True)
class ControlDecision:
    """The writes of one round, the BatchRelease's new ``status``, and when to look again."""

    ops: tuple[Op, ...]
    status: JSON
    requeue_after: float | None = None


def patch(target: Target, obj: dict[str, Any] | Any, body: JSON, *, guarded: bool = True) -> Op:
    """A merge patch on ``obj``; ``guarded`` adds its ``resourceVersion`` as precondition."""
    meta = (obj or {}).get("metadata") or {}
    if guarded and meta.get("resourceVersion"):
        body = {
            **body,
            "metadata": {**(body.get("metadata") or {}), "resourceVersion": meta["resourceVersion"]},
        }
    return Op(OpKind.PATCH, target, str(meta.get("name")), body)
