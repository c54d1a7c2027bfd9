"""Batch pacing: a batch reports ``Ready`` no sooner than upstream's BatchRelease would.

Upstream's BatchRelease executor (``batchrelease_executor.go``) walks each batch through
``Upgrading -> Verifying -> Ready``, one state per reconcile, and requeues
``DefaultDuration`` (2 s) after each; its watch ignores the BatchRelease's own status writes
(only a generation change or a deletion enqueues it), so ``Verifying -> Ready`` happens on the
first of: that 2 s requeue, a workload whose generation or status changed, a pod whose
revision or readiness changed. A batch that moves no pod (a step jumped back to one already
satisfied) therefore stays un-Ready for 2 s, and upstream's e2e suite relies on seeing the Rollout
leave ``StepPaused`` for a moment after a ``nextStepIndex`` jump.

Our release styles are pure and idempotent and report ``Ready`` in the very round the pods
satisfy the batch. :class:`BatchPacer` keeps the upstream pacing on top of them without a
``Verifying`` round trip of its own: it remembers, per BatchRelease, when the current batch was
entered and what the workload and its pods looked like then (:func:`fingerprint`); a round that
would newly report ``Ready`` reports ``Verifying`` instead until 2 s have passed or the
fingerprint has changed (what would have woken upstream). Memory is per process: after a restart
a batch simply verifies for 2 s again.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import orjson

from kruise.rollouts.api.batchrelease import BatchReleaseBatchState
from kruise.rollouts.release.constants import DEFAULT_DURATION_SECONDS
from kruise.rollouts.workloads.port import Observation

VERIFY_SECONDS = DEFAULT_DURATION_SECONDS
"""Upstream's ``DefaultDuration``: the requeue after ``Upgrading`` and after ``Verifying``."""

_REVISION_LABELS = ("pod-template-hash", "controller-revision-hash")


def fingerprint(obs: Observation | None) -> str:
    """A digest of what would wake upstream's BatchRelease: each workload's (and canary
    Deployment's and ReplicaSet's) generation and status, each pod's uid, revision labels and
    ``Ready`` condition. Label-only pod changes (our own batch labels) do not count."""
    if obs is None:
        return ""
    owners = [obs.workload, *obs.canaries, *obs.replicasets]
    pods = sorted(
        (
            str((p.get("metadata") or {}).get("uid") or ""),
            [((p.get("metadata") or {}).get("labels") or {}).get(k) for k in _REVISION_LABELS],
            _ready(p),
        )
        for p in obs.pods
    )
    body = orjson.dumps(
        [
            [((o.get("metadata") or {}).get("generation"), o.get("status")) for o in owners],
            pods,
        ],
        option=orjson.OPT_SORT_KEYS,
    )
    return hashlib.blake2b(body, digest_size=16).hexdigest()


def _ready(pod: Mapping[str, Any]) -> bool:
    return any(
        c.get("type") == "Ready" and c.get("status") == "True"
        for c in ((pod.get("status") or {}).get("conditions") or [])
    )


@dataclass(frozen=True)
class _Entered:
    batch: tuple[Any, ...]  # (generation, currentBatch): a jump or any spec change is a new batch
    at: float  # monotonic seconds
    seen: str  # fingerprint when entered


@dataclass(frozen=True)
class Paced:
    """The status to write (``batchState`` possibly ``Verifying``) and a requeue to add (s)."""

    status: Mapping[str, Any]
    requeue_after: float | None


class BatchPacer:
    """Per-BatchRelease memory of the batch being verified (see the module docstring)."""

    def __init__(self, verify_seconds: float = VERIFY_SECONDS) -> None:
        self.verify_seconds = verify_seconds
        self._entered: dict[str, _Entered] = {}

    def forget(self, key: str) -> None:
        self._entered.pop(key, None)

    def pace(
        self, key: str, br: Mapping[str, Any], status: Mapping[str, Any], seen: str, now: float
    ) -> Paced:
        """``status``: the round's new BatchRelease status; ``br``: the object as read (its
        ``status`` is the previous one); ``seen``: this round's :func:`fingerprint`; ``now``:
        monotonic seconds. Returns the status with ``canaryStatus.batchState`` ``Verifying`` while
        a newly Ready batch must wait, and the seconds left to wait."""
        canary = status.get("canaryStatus")
        if not isinstance(canary, Mapping) or "currentBatch" not in canary:
            self.forget(key)
            return Paced(status, None)
        batch = ((br.get("metadata") or {}).get("generation"), canary.get("currentBatch"))
        entered = self._entered.get(key)
        if entered is None or entered.batch != batch:
            entered = _Entered(batch, now, seen)
            self._entered[key] = entered
        if canary.get("batchState") != BatchReleaseBatchState.READY:
            return Paced(status, None)
        before = ((br.get("status") or {}).get("canaryStatus")) or {}
        if before.get("batchState") == BatchReleaseBatchState.READY and before.get(
            "currentBatch"
        ) == canary.get("currentBatch"):
            return Paced(status, None)  # already Ready: stays so
        waited = now - entered.at
        if waited >= self.verify_seconds or seen != entered.seen:
            return Paced(status, None)
        verifying = {**canary, "batchState": BatchReleaseBatchState.VERIFYING}
        return Paced({**status, "canaryStatus": verifying}, self.verify_seconds - waited)
