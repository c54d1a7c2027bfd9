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
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from kruise.rollouts.release.views import CanaryStatusView, RolloutStatusView
from kruise.rollouts.workloads.info import WorkloadInfo

JSON = dict[str, Any]


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

    @property
    def key(self) -> str:
        """The action's identity: its kind and its payload as canonical JSON. Deciding again on
        the same state yields actions with the same keys, so outcomes are matched by key."""
        payload = json.dumps(self.payload, sort_keys=True, separators=(",", ":"), default=str)
        return f"{self.kind}:{payload}"


def delete_batch_release(batch: BatchView) -> tuple[Action, ...]:
    """The action that removes the Rollout's BatchRelease: none while the observed BatchRelease
    already carries a ``deletionTimestamp`` (its finalizer is running; another DELETE would change
    nothing), as upstream's ``removeBatchRelease`` waits for a terminating BatchRelease instead of
    deleting it again. Absent from the cache, the DELETE is still sent (it may not show a new
    BatchRelease yet; a missing one answers 404 and counts as no change)."""
    return () if batch.deleting else (Action(ActionKind.DELETE_BATCH_RELEASE),)


class Outcomes:
    """What the actions of a first decision reported when the shell ran them, matched by action.

    ``changed(action)`` is True when running it had to change the world, False when the world was
    already as wanted, None when it did not run (a sequential decision stops after the first
    change). The second call of the machine recomputes its actions and looks each one up, so an
    outcome can never be credited to another action by its position in a list."""

    def __init__(self, reports: Iterable[tuple[Action, bool]] = ()) -> None:
        self._changed: dict[str, bool] = {}
        for action, changed in reports:
            self._changed[action.key] = self._changed.get(action.key, False) or changed

    @classmethod
    def of(cls, actions: Iterable[Action], changed: Iterable[bool]) -> Outcomes:
        """Outcomes of the first actions, one flag each (fewer flags: the rest did not run)."""
        return cls(zip(actions, changed, strict=False))

    def changed(self, action: Action) -> bool | None:
        return self._changed.get(action.key)

    def any_changed(self, actions: Iterable[Action]) -> bool:
        """Whether any of ``actions`` changed something."""
        return any(self._changed.get(a.key) for a in actions)

    def __repr__(self) -> str:
        return f"Outcomes({self._changed!r})"


@dataclass
class Round:
    """One call of the machine: the Rollout, its status being decided (mutated in place), what was
    observed and, on the second call, the outcomes of the first call's actions (None on the first).

    State handlers are functions ``Round -> Decision`` looked up in tables by phase, Progressing
    reason and step state; on the first call they return the actions of their state, on the second
    they advance the state (or not) from the outcomes."""

    rollout: Mapping[str, Any]
    status: RolloutStatusView
    obs: Observed
    outcomes: Outcomes | None = None

    @property
    def now(self) -> datetime.datetime:
        return self.obs.now

    @property
    def cs(self) -> CanaryStatusView:
        """The sub-status (``canaryStatus``; blue-green's is shown under this name too)."""
        return self.status.setdefault("canaryStatus", {})


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
    second ``decide`` then gets the outcomes of the actions that ran (:class:`Outcomes`).
    """

    status: RolloutStatusView
    actions: tuple[Action, ...] = ()
    requeue_after: float | None = None
    events: tuple[Event, ...] = ()
    remove_finalizer: bool = False
    sequential: bool = False
