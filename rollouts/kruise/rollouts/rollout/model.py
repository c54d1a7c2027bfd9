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
from collections.abc import Mapping
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
    # earlier names of ``canary_revision`` (a provisional Deployment revision, see
    # ``rollout/podtemplate.py``): a status recording one of them is updated, not restarted
    canary_revision_aliases: tuple[str, ...] = ()

    @property
    def observed_rollout_id(self) -> str:
        """``getRolloutID``: the ``rollouts.kruise.io/rollout-id`` label, else the canary revision
        (``rollback-<revision>`` while rolling back)."""
        if self.rollout_id:
            return self.rollout_id
        return f"rollback-{self.canary_revision}" if self.in_rollback else self.canary_revision


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
    # ``releasePlan.batches[batchPartition].canaryReplicas`` (None when unset): what the plan in
    # force released, for recalculating the step after a plan change
    partition_replicas: int | str | None = None
    # ``releasePlan.rolloutID`` (None: not known, nothing to keep in sync)
    rollout_id: str | None = None

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
    analysis: Mapping[str, str] = field(default_factory=dict)  # AnalysisRun name -> phase


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
    ENSURE_ANALYSIS_RUN = "EnsureAnalysisRun"
    TERMINATE_ANALYSIS_RUNS = "TerminateAnalysisRuns"
    REVERT_WORKLOAD = "RevertWorkload"
    SYNC_BATCH_RELEASE_ID = "SyncBatchReleaseID"  # releasePlan.rolloutID := payload["rolloutID"]
    HOLD_STABLE_PODS = "HoldStablePods"  # a held abort: partition at every replica, canary pods recreated


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
    """The new ``status``, the actions to run, when to look again, and events to emit.

    ``sequential``: run ``actions`` in order and stop after the first one that changed something
    (upstream's "modified, wait the grace period and come back" between teardown steps); the
    second ``decide`` then gets the outcomes of the actions that ran, a prefix of ``actions``.
    """

    status: JSON
    actions: tuple[Action, ...] = ()
    requeue_after: float | None = None
    events: tuple[Event, ...] = ()
    remove_finalizer: bool = False
    sequential: bool = False
