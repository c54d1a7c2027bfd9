"""The data the Rollout state machine decides on, and what it decides (pure value objects).

Observations are read by the controller shell from the cache: the workload
(:class:`WorkloadInfo`, as Kruise Rollouts' ``ControllerFinder`` builds it) and the
BatchRelease (:class:`BatchView`). Decisions are :class:`Action` values the shell
executes idempotently; each reports whether it had to change anything, and a
state advances only once its actions changed nothing (converged) and the
traffic grace period has passed.
"""

from __future__ import annotations

import datetime
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

JSON = dict[str, Any]


@dataclass(frozen=True)
class WorkloadInfo:
    """What the engine needs to know about the workload (``util.Workload`` upstream).

    Revisions are the short hashes pods carry in ``pod-template-hash``.
    """

    kind: str
    api_version: str
    name: str
    namespace: str
    uid: str
    replicas: int
    stable_revision: str
    canary_revision: str
    pod_template_hash: str
    in_progressing: bool
    in_rollback: bool
    status_consistent: bool = True
    updated_replicas: int = 0
    updated_ready_replicas: int = 0
    generation: int = 0
    revision_label_key: str = "pod-template-hash"
    rollout_id: str = ""


@dataclass(frozen=True)
class BatchView:
    """The BatchRelease as observed (None fields when absent)."""

    exists: bool
    generation: int = 0
    observed_generation: int = 0
    observed_plan_hash: str = ""
    phase: str = ""
    current_batch: int = 0
    batch_state: str = ""
    updated_replicas: int = 0
    updated_ready_replicas: int = 0
    deleting: bool = False

    @classmethod
    def absent(cls) -> BatchView:
        return cls(exists=False)


@dataclass(frozen=True)
class Observed:
    """Everything a decision depends on besides the Rollout itself."""

    now: datetime.datetime
    workload: WorkloadInfo | None
    batch: BatchView
    deleting: bool = False


class ActionKind(StrEnum):
    ENSURE_BATCH_RELEASE = "EnsureBatchRelease"
    FINALIZE_BATCH_RELEASE = "FinalizeBatchRelease"
    DELETE_BATCH_RELEASE = "DeleteBatchRelease"
    PIN_STABLE_SERVICE = "PinStableService"
    RESTORE_STABLE_SERVICE = "RestoreStableService"
    ENSURE_CANARY_SERVICE = "EnsureCanaryService"
    DELETE_CANARY_SERVICE = "DeleteCanaryService"
    ENSURE_ROUTES = "EnsureRoutes"
    RESTORE_ROUTES = "RestoreRoutes"
    RELEASE_WORKLOAD = "ReleaseWorkload"


@dataclass(frozen=True)
class Action:
    """One idempotent effect; ``payload`` is data (a BatchRelease spec, a revision, an intent)."""

    kind: ActionKind
    payload: JSON = field(default_factory=dict)


@dataclass(frozen=True)
class Event:
    type: str  # Normal | Warning
    reason: str
    message: str


@dataclass(frozen=True)
class Decision:
    """The new ``status``, the actions to run, when to look again, and events to emit."""

    status: JSON
    actions: tuple[Action, ...] = ()
    requeue_after: float | None = None
    events: tuple[Event, ...] = ()
    remove_finalizer: bool = False
