"""GitOps fight handling of the BatchRelease controller (I/O shell over
:mod:`kruise.rollouts.workloads.fight`).

Per BatchRelease (in memory: a restarted manager starts with a clean slate and learns again from its
next write):

- after a round's workload patch is accepted, its ``spec`` leaves are what we wrote;
- before a round runs, the cached workload is compared with them; when a value differs the
  workload is read from the API server (the cache drops ``managedFields``) and judged: on a first
  revert one Warning event ``WorkloadFieldReverted`` on the Rollout (message naming the writer
  and the fields), the Rollout's ``Conflict`` condition (reason ``ReconciliationConflict``), and
  ``kruise_rollout_conflicts_total{namespace,name,writer}`` counted per revert; the round's
  workload patch is held back until the backoff allows a re-assert (the rest of the round, pod
  labels and the BatchRelease status, goes on);
- once the value has held long enough the condition is removed.

The condition is written with the Rollout's ``resourceVersion`` as precondition (a conflict: the
next round writes it again); the Rollout controller keeps conditions it does not own.
"""

from __future__ import annotations

import contextlib
import dataclasses
import datetime
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from kruise.core.errors import ConflictError, NotFoundError
from kruise.core.events import EventRecorder
from kruise.core.kube.client import FIELD_MANAGER, KubeClient
from kruise.core.metrics import ROLLOUT_CONFLICTS
from kruise.rollouts.release.timefmt import fmt_time
from kruise.rollouts.resources import ROLLOUTS
from kruise.rollouts.workloads.fight import (
    EVENT_REASON,
    FieldPath,
    Fight,
    Revert,
    condition_message,
    conflict_conditions,
    conflict_kind,
    differs,
    judge,
    spec_leaves,
    step,
    template_key,
)
from kruise.rollouts.workloads.ops import ControlDecision, Op, OpKind
from kruise.rollouts.workloads.registry import resources

WORKLOAD_RESOURCES = resources()
"""Every released workload kind's resource (what :meth:`FightGuard._fresh` may read)."""
WORKLOAD_KINDS = frozenset(r.kind for r in WORKLOAD_RESOURCES)


def workload_conflict(condition: Mapping[str, Any]) -> bool:
    """Whether this guard set a ``Conflict`` condition (it names a workload kind, or none): the
    Rollout controller's traffic guard sets the same condition type for the network objects."""
    return conflict_kind(condition) in WORKLOAD_KINDS | {""}


JSON = dict[str, Any]


@dataclass
class _Memory:
    template: str = ""
    written: dict[FieldPath, Any] = field(default_factory=dict)
    fight: Fight | None = None


def _is_workload_patch(op: Op, kind: str, workload: Mapping[str, Any]) -> bool:
    """A patch of the workload itself (cached objects carry no ``kind``: the BatchRelease's
    ``workloadRef`` gives it)."""
    meta = workload.get("metadata") or {}
    return op.kind == OpKind.PATCH and op.name == meta.get("name") and op.target.kind == kind


class FightGuard:
    """Judges each round of a BatchRelease controller against what it wrote before."""

    def __init__(
        self,
        kube: KubeClient,
        recorder: EventRecorder | None,
        *,
        ours: str = FIELD_MANAGER,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.kube = kube
        self.recorder = recorder
        self.ours = ours
        self.clock = clock
        self._memory: dict[str, _Memory] = {}

    async def forget(self, key: str, rollout: JSON | None) -> None:
        """The BatchRelease is gone (the release ended): drop its memory and the condition."""
        self._memory.pop(key, None)
        if rollout is not None:
            await self._sync_condition(rollout, None, "", "")

    async def guard(
        self, key: str, kind: str, rollout: JSON | None, workload: JSON | None, decision: ControlDecision
    ) -> ControlDecision:
        """``decision`` with its workload patch held back while the backoff says wait, and a
        recheck no later than the backoff's next moment; events, condition and metric as above."""
        if workload is None:
            return decision
        memory = self._memory.setdefault(key, _Memory())
        if memory.template != template_key(workload):  # a new template: what we wrote is moot
            memory.template, memory.written, memory.fight = template_key(workload), {}, None
        revert = None
        if differs(memory.written, workload):  # the cache has no managedFields: read them
            revert = judge(memory.written, await self._fresh(kind, workload), self.ours)
        s = step(memory.fight, revert, self.clock())
        memory.fight = s.fight
        name = str((workload.get("metadata") or {}).get("name") or "")
        if revert is not None and s.new_revert:
            ns = str((workload.get("metadata") or {}).get("namespace") or "")
            ROLLOUT_CONFLICTS.labels(ns, key.split("/")[-1], revert.writer).inc()
        if revert is not None and s.started and self.recorder is not None:
            message = condition_message(revert, kind, name)
            self.recorder.event(rollout or workload, "Warning", EVENT_REASON, message)
        shown = s.fight.revert if s.fight is not None else None
        if rollout is not None:
            await self._sync_condition(rollout, shown, kind, name)
        ops = decision.ops
        if not s.write:
            ops = tuple(o for o in ops if not _is_workload_patch(o, kind, workload))
        requeue = decision.requeue_after
        if s.recheck is not None:
            requeue = s.recheck if requeue is None else min(requeue, s.recheck)
        return dataclasses.replace(decision, ops=ops, requeue_after=requeue)

    def applied(self, key: str, kind: str, workload: JSON | None, ops: list[Op]) -> None:
        """Record the ``spec`` leaves of the workload patches that were accepted."""
        if workload is None or key not in self._memory:
            return
        for op in ops:
            if _is_workload_patch(op, kind, workload):
                self._memory[key].written.update(spec_leaves(op.body))

    async def _fresh(self, kind: str, workload: JSON) -> JSON:
        """The workload as the API server has it (with ``managedFields``); the cached one if gone."""
        meta = workload.get("metadata") or {}
        resource = next((r for r in WORKLOAD_RESOURCES if r.kind == kind), None)
        if resource is None:
            return workload
        try:
            return await self.kube.get(resource, str(meta.get("name")), str(meta.get("namespace")))
        except NotFoundError:
            return workload

    async def _sync_condition(self, rollout: JSON, revert: Revert | None, kind: str, name: str) -> None:
        status = rollout.get("status") or {}
        conditions = list(status.get("conditions") or [])
        message = condition_message(revert, kind, name) if revert is not None else ""
        now = fmt_time(datetime.datetime.now(datetime.UTC))
        wanted = conflict_conditions(conditions, revert, message, now, workload_conflict)
        if wanted == conditions:
            return
        meta = rollout["metadata"]
        body = {"metadata": {"resourceVersion": meta["resourceVersion"]}, "status": {"conditions": wanted}}
        with contextlib.suppress(ConflictError, NotFoundError):
            await self.kube.patch(
                ROLLOUTS, meta["name"], body, meta["namespace"], patch_type="merge", subresource="status"
            )
