"""GitOps fight handling of the Rollout's traffic writes (I/O shell over
:mod:`kruise.rollouts.rollout.trafficfight` and the backoff of :mod:`kruise.rollouts.workloads.fight`).

Per network object (in memory: a restarted manager starts clean and learns again from its next write):

- :meth:`TrafficFights.guarded` wraps one traffic action (routes, the stable pin, the canary
  Service): once we wrote an object before, it is read (with ``managedFields``) and judged; while
  the backoff says wait, the action is not run and answers "changed" (the step keeps waiting, not
  converged); otherwise it runs, and what it changed is remembered with the action itself;
- :meth:`TrafficFights.conflict`, once per Rollout reconcile, judges the Rollout's remembered
  objects in whatever step state (a revert during a pause is seen too; an object not in a fight
  is read at most every ``CHECK_SECONDS``), re-runs the remembered
  action when the backoff allows a re-assert, posts one Warning event ``TrafficFieldReverted`` per
  fight on the Rollout, counts ``kruise_rollout_conflicts_total{namespace,name,writer}`` per revert,
  and answers the revert for the Rollout's ``Conflict`` condition, which the controller writes
  with its status (None once every value held ``HOLD_SECONDS``);
- :meth:`TrafficFights.forget` drops the objects a restore or delete hands back.
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from kruise.core.errors import KruiseError, NotFoundError
from kruise.core.events import EventRecorder
from kruise.core.kube.client import FIELD_MANAGER, KubeClient
from kruise.core.kube.recorded import recorded_writes
from kruise.core.metrics import ROLLOUT_CONFLICTS
from kruise.rollouts.rollout.trafficfight import (
    EVENT_REASON,
    TARGET_RESOURCES,
    Target,
    Written,
    differs,
    judge,
    rollout_target_keys,
    written_after,
)
from kruise.rollouts.workloads.fight import Fight, Revert, condition_message, step

log = logging.getLogger(__name__)
READS = TARGET_RESOURCES
"""What :meth:`TrafficFights._read` may GET (with ``managedFields``, to name who reverted a value)."""
JSON = dict[str, Any]
Write = Callable[[], Awaitable[bool]]
CHECK_SECONDS = 2.0
"""How often :meth:`TrafficFights.conflict` reads an object that is not in a fight (a GET each)."""


@dataclass
class _Action:
    """A traffic action as last asked for: its objects and the call that writes them."""

    targets: tuple[Target, ...]
    write: Write


@dataclass
class _Memory:
    written: Written = field(default_factory=dict)
    fight: Fight | None = None
    action: _Action | None = None
    counts: list[str] = field(default_factory=list)  # writers of reverts not counted yet
    checked: float | None = None  # when it was last judged (clock seconds)
    announce: Revert | None = None  # a fight that started, not announced yet
    look_at: float | None = None  # in a fight: when the backoff wants it judged again (clock seconds)


@dataclass(frozen=True)
class TrafficConflict:
    """The fight to show on the Rollout: who set back what, on which object."""

    revert: Revert
    target: Target

    @property
    def message(self) -> str:
        return condition_message(self.revert, self.target.resource.kind, self.target.name)


class TrafficFights:
    """Judges the traffic writes of every Rollout of this manager against what they wrote before."""

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

    async def _read(self, target: Target) -> JSON | None:
        with contextlib.suppress(NotFoundError):
            return await self.kube.get(target.resource, target.name, target.namespace)
        return None

    async def _judge(self, target: Target, memory: _Memory) -> tuple[bool, Revert | None, JSON | None]:
        """One backoff round for ``target``: (may we write, the revert seen, the object read)."""
        memory.checked = self.clock()
        live = await self._read(target)
        revert = None
        if live is not None and differs(memory.written, live):
            revert = judge(memory.written, live, self.ours)
        s = step(memory.fight, revert, self.clock())
        memory.fight = s.fight
        memory.look_at = None if s.fight is None or s.recheck is None else self.clock() + s.recheck
        if revert is not None and s.new_revert:
            memory.counts.append(revert.writer)
        if revert is not None and s.started:
            memory.announce = revert
        return s.write, revert, live

    async def guarded(self, targets: Sequence[Target], write: Write) -> bool:
        """Run ``write`` (a traffic action answering "changed") unless a fight over one of
        ``targets`` holds it back (then True without writing); remember what it changed."""
        action = _Action(tuple(targets), write)
        allowed = True
        before: dict[str, JSON | None] = {}
        for target in targets:
            memory = self._memory.setdefault(target.key, _Memory())
            memory.action = action
            if memory.written:
                may, _, before[target.key] = await self._judge(target, memory)
                allowed = allowed and may
        if not allowed:
            return True
        return await self._run(action, before)

    async def _run(self, action: _Action, before: dict[str, JSON | None]) -> bool:
        """Run the action; what it changed on each target (read ``before`` unless given) is kept.

        "After" is the API server's answer to our own write of the target, never a read once the
        action is done: a syncer reverting us in between would make a read show its values, and we
        would remember them as ours and stop answering the fight. A target the action did not
        write keeps what was remembered."""
        for target in action.targets:
            if target.key not in before:
                before[target.key] = await self._read(target)
        with recorded_writes() as stored:
            changed = await action.write()
        if changed:
            for target in action.targets:
                memory = self._memory.setdefault(target.key, _Memory(action=action))
                after = stored.get(target.key)
                if after is not None:
                    memory.written = written_after(target, before[target.key], after, memory.written)
        return changed

    def forget(self, targets: Sequence[Target]) -> None:
        """The objects were handed back (restored, deleted): what we wrote there is moot."""
        for target in targets:
            self._memory.pop(target.key, None)

    def wake_in(self, rollout: Mapping[str, Any]) -> float | None:
        """Seconds until a fight over one of the Rollout's objects is due to be judged again (the
        next re-assert the backoff allows, or the end of the hold that clears it); ``None``
        outside a fight. Changes of the traffic objects do not wake the Rollout, so its
        controller requeues by this: a step paused for minutes still answers a revert on time."""
        now = self.clock()
        due = [
            memory.look_at - now
            for key in rollout_target_keys(rollout) & self._memory.keys()
            if (memory := self._memory[key]).fight is not None and memory.look_at is not None
        ]
        return max(0.05, min(due)) if due else None

    async def conflict(self, rollout: Mapping[str, Any]) -> TrafficConflict | None:
        """Judge the Rollout's objects (see the module docstring); the first fight by object key."""
        meta = rollout.get("metadata") or {}
        shown: TrafficConflict | None = None
        for key in sorted(rollout_target_keys(rollout) & self._memory.keys()):
            memory = self._memory[key]
            target = next((t for t in memory.action.targets if t.key == key), None) if memory.action else None
            if target is None or not memory.written:
                continue
            checked = memory.checked
            if memory.fight is None and checked is not None and self.clock() - checked < CHECK_SECONDS:
                continue  # judged a moment ago and calm
            try:
                may, revert, live = await self._judge(target, memory)
                if revert is not None and may and memory.action is not None:
                    await self._run(memory.action, {key: live})  # the re-assert the backoff allows now
            except KruiseError as err:  # the status still gets written; the next round tries again
                log.warning("traffic fight check of %s failed: %s", key, err)
            for writer in memory.counts:
                ROLLOUT_CONFLICTS.labels(str(meta.get("namespace")), str(meta.get("name")), writer).inc()
            memory.counts.clear()
            if memory.announce is not None and self.recorder is not None:
                message = TrafficConflict(memory.announce, target).message
                self.recorder.event(rollout, "Warning", EVENT_REASON, message)
            memory.announce = None
            if memory.fight is not None and shown is None:
                shown = TrafficConflict(memory.fight.revert, target)
        return shown
