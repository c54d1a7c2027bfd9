"""Typed views of the Rollout and BatchRelease status the engine reads and writes (pure).

The engine works on the wire form (camelCase JSON dicts, so a status written by another version
of the controller, or patched by ``kubectl kruise rollout approve``, round-trips untouched); these
``TypedDict`` views give those dicts their field names and types, so mypy rejects a misspelt field
(``cs["canaryRevison"]``) or a wrong type. Every field is optional (``total=False``), as in a
status being built. Fields mirror ``api/v1beta1`` (``RolloutStatus``, ``CommonStatus``,
``CanaryStatus``, ``BatchReleaseStatus``, ``BatchReleaseCanaryStatus``); the pydantic models of
:mod:`kruise.rollouts.api` stay the schema.
"""

from __future__ import annotations

from typing import Any, TypedDict


class ConditionView(TypedDict, total=False):
    """``RolloutCondition`` (also a BatchRelease's)."""

    type: str
    status: str
    reason: str
    message: str
    lastUpdateTime: str
    lastTransitionTime: str


class CanaryStatusView(TypedDict, total=False):
    """``status.canaryStatus`` (``CommonStatus`` + canary counts); blue-green's sub-status is shown
    to the machine in this shape too (``rollout/bluegreen.py`` renames it)."""

    observedWorkloadGeneration: int
    observedRolloutID: str
    rolloutHash: str
    stableRevision: str
    podTemplateHash: str
    currentStepIndex: int
    nextStepIndex: int
    currentStepState: str
    finalisingStep: str
    message: str
    lastUpdateTime: str
    canaryRevision: str
    canaryReplicas: int
    canaryReadyReplicas: int


class RolloutStatusView(TypedDict, total=False):
    """``Rollout.status``."""

    observedGeneration: int
    phase: str
    message: str
    conditions: list[ConditionView]
    canaryStatus: CanaryStatusView
    blueGreenStatus: dict[str, Any]
    currentStepIndex: int
    currentStepState: str


class BatchCanaryStatusView(TypedDict, total=False):
    """``BatchRelease.status.canaryStatus``."""

    currentBatch: int
    batchState: str
    batchReadyTime: str
    updatedReplicas: int
    updatedReadyReplicas: int
    noNeedUpdateReplicas: int


class BatchReleaseStatusView(TypedDict, total=False):
    """``BatchRelease.status``."""

    observedGeneration: int
    observedReleasePlanHash: str
    observedRolloutID: str
    observedWorkloadReplicas: int
    phase: str
    message: str
    conditions: list[ConditionView]
    canaryStatus: BatchCanaryStatusView
    stableRevision: str
    updateRevision: str
    collisionCount: int
