"""GitOps fight detection on the workload fields a release writes (pure): kruise's addition.

Neither Kruise Rollouts nor Argo Rollouts detects a second writer; a GitOps syncer (Argo CD with
self-heal, Flux) that applies the workload's manifest sets ``spec.updateStrategy.partition`` (or
``paused``) back, the BatchRelease writes it again on the next event, and the two fight silently.
Here:

- **What we wrote.** After each accepted patch of the workload the BatchRelease controller keeps the
  ``spec`` leaves of the patch (:func:`spec_leaves`, e.g. ``spec.updateStrategy.partition = 4``),
  tied to the workload's pod template (:func:`template_key`): a new template (a continuous release,
  the hold re-forcing ``100%``) forgets them.
- **Reverted** (:func:`judge`): a kept leaf whose live value differs (``None``, ``0`` and ``"0%"``
  all mean "no partition"; ``None`` and ``False`` both mean "not paused"). The **writer** is the
  field manager other than ours whose ``metadata.managedFields[].fieldsV1`` owns the leaf
  (``f:spec`` -> ``f:updateStrategy`` -> ``f:partition``), the latest by ``time`` when several
  do. A leaf no other manager owns was moved by one of our own controllers (the Rollout's
  finalisation, an abort): not a fight.
- **Backoff** (:func:`step`): the first revert is not answered at once; re-asserting waits
  ``BASE_SECONDS`` (1 s), then doubles per revert up to ``CAP_SECONDS`` (60 s), so a syncer that
  reverts every 2 s sees at most 6 writes in the first minute and one a minute after that. The
  fight ends (condition cleared, backoff reset) once the value has held ``HOLD_SECONDS`` (10 s)
  since the last revert was seen.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from kruise.core import ownership
from kruise.rollouts.release.views import ConditionView

FieldPath = tuple[str, ...]

BASE_SECONDS = 1.0
CAP_SECONDS = 60.0
HOLD_SECONDS = 10.0
UNKNOWN_WRITER = "unknown"
CONDITION_TYPE = "Conflict"
CONDITION_REASON = "ReconciliationConflict"
EVENT_REASON = "WorkloadFieldReverted"


def _released(value: Any) -> bool:
    return value is None or (not isinstance(value, bool) and value in (0, "0%", "0"))


def _unpaused(value: Any) -> bool:
    return value is None or value is False


def spec_leaves(patch: Mapping[str, Any] | None) -> dict[FieldPath, Any]:
    """The leaves under ``spec`` of a merge patch, by path (``("spec", "updateStrategy",
    "partition")``); lists and ``metadata`` are left out."""
    out: dict[FieldPath, Any] = {}

    def walk(node: Mapping[str, Any], path: FieldPath) -> None:
        for key, value in node.items():
            if isinstance(value, Mapping):
                walk(value, (*path, key))
            elif not isinstance(value, list):
                out[(*path, key)] = value

    spec = (patch or {}).get("spec")
    if isinstance(spec, Mapping):
        walk(spec, ("spec",))
    return out


def template_key(workload: Mapping[str, Any]) -> str:
    """A digest of ``spec.template`` (what we wrote is forgotten when it changes)."""
    template = (workload.get("spec") or {}).get("template") or {}
    return hashlib.sha256(json.dumps(template, sort_keys=True).encode()).hexdigest()[:16]


def live_value(obj: Mapping[str, Any], path: FieldPath) -> Any:
    node: Any = obj
    for key in path:
        if not isinstance(node, Mapping):
            return None
        node = node.get(key)
    return node


def same(wanted: Any, live: Any) -> bool:
    """Equal as the workload reads them (see the module docstring)."""
    if (_released(wanted) and _released(live)) or (_unpaused(wanted) and _unpaused(live)):
        return True
    return bool(wanted == live and type(wanted) is type(live))


def owns(fields_v1: Mapping[str, Any] | None, path: FieldPath) -> bool:
    """Whether a ``fieldsV1`` set owns ``path`` (:func:`kruise.core.ownership.owns`)."""
    return ownership.owns(fields_v1, None, path)


def field_writer(managed_fields: Sequence[Mapping[str, Any]], path: FieldPath, ours: str) -> str:
    """The field manager other than ``ours`` owning ``path`` (latest ``time`` first)."""
    return ownership.writer(managed_fields, None, path, ours) or UNKNOWN_WRITER


@dataclass(frozen=True)
class Revert:
    """Fields set back by ``writer`` (dotted paths, sorted)."""

    writer: str
    fields: tuple[str, ...]


def differs(written: Mapping[FieldPath, Any], live: Mapping[str, Any]) -> list[FieldPath]:
    """The kept leaves whose value on ``live`` is not what we wrote (sorted)."""
    return sorted(path for path, value in written.items() if not same(value, live_value(live, path)))


def judge(written: Mapping[FieldPath, Any], live: Mapping[str, Any], ours: str) -> Revert | None:
    """The revert of what we ``written`` on ``live`` (None: every kept leaf holds, or only our own
    controllers moved them). ``live`` must carry its ``managedFields`` (informer caches drop
    them: read the object from the API server once :func:`differs` finds something)."""
    reverted = differs(written, live)
    if not reverted:
        return None
    managed = (live.get("metadata") or {}).get("managedFields") or []
    writer = field_writer(managed, reverted[0], ours)
    if writer == UNKNOWN_WRITER:  # we own it ourselves: another of our controllers moved it
        return None
    return Revert(writer, tuple(".".join(path) for path in reverted))


@dataclass(frozen=True)
class Fight:
    """An ongoing fight: who, what, how many re-asserts so far, when the next may go out, when a
    revert was last seen, and whether the revert seen now was already counted."""

    revert: Revert
    attempts: int
    next_at: float
    last_revert: float
    counted: bool


@dataclass(frozen=True)
class Step:
    """What to do this round: the fight state after it, whether the workload patch may go out,
    whether a new revert is to be counted (and a first one announced), and when to look again."""

    fight: Fight | None
    write: bool
    new_revert: bool
    started: bool
    recheck: float | None


def delay(attempts: int) -> float:
    """Seconds to wait before re-assert number ``attempts + 1`` (1, 2, 4, ... capped at 60)."""
    return float(min(CAP_SECONDS, BASE_SECONDS * 2 ** min(attempts, 16)))


def step(fight: Fight | None, revert: Revert | None, now: float) -> Step:
    """One round of the backoff (see the module docstring); ``now`` in monotonic seconds."""
    if revert is None:
        if fight is None:
            return Step(None, True, False, False, None)
        held = now - fight.last_revert
        if held >= HOLD_SECONDS:
            return Step(None, True, False, False, None)
        return Step(replace(fight, counted=False), True, False, False, HOLD_SECONDS - held)
    if fight is None:
        new = Fight(revert, 0, now + delay(0), now, True)
        return Step(new, False, True, True, delay(0))
    counted = fight.counted
    fight = replace(fight, revert=revert, last_revert=now, counted=True)
    if now >= fight.next_at:
        attempts = fight.attempts + 1
        after = replace(fight, attempts=attempts, next_at=now + delay(attempts), counted=False)
        return Step(after, True, not counted, False, delay(attempts))
    return Step(fight, False, not counted, False, fight.next_at - now)


def condition_message(revert: Revert, kind: str, name: str) -> str:
    """The ``Conflict`` condition's and the event's message."""
    more = len(revert.fields) - 3
    fields = ", ".join(revert.fields[:3]) + (f" (+{more} more)" if more > 0 else "")
    return (
        f"field manager {revert.writer} set {fields} of {kind} {name} back; re-asserting with a "
        f"capped backoff (see docs/gitops.md to end the fight)"
    )


_KIND = re.compile(r" of (\S+) \S+ back; ")


def conflict_kind(condition: Mapping[str, Any]) -> str:
    """The object kind a ``Conflict`` condition's message names ("" when it names none): the
    workload guard and the traffic guard each clear only the condition they set."""
    found = _KIND.search(str(condition.get("message") or ""))
    return found.group(1) if found else ""


def conflict_conditions(
    conditions: Sequence[Mapping[str, Any]],
    revert: Revert | None,
    message: str,
    now: str,
    mine: Callable[[Mapping[str, Any]], bool] = lambda condition: True,
) -> list[ConditionView]:
    """The Rollout's ``status.conditions`` with the ``Conflict`` condition (True, reason
    ``ReconciliationConflict``, ``message``) while ``revert`` is set; without it otherwise, unless
    ``mine`` says another guard set it (then it stays); the other conditions as they are.
    ``now``: the RFC 3339 time of a transition."""
    old = next((c for c in conditions if c.get("type") == CONDITION_TYPE), None)
    if revert is None and old is not None and not mine(old):
        return [ConditionView(**c) for c in conditions]  # type: ignore[typeddict-item]
    out = [ConditionView(**c) for c in conditions if c.get("type") != CONDITION_TYPE]  # type: ignore[typeddict-item]
    if revert is None:
        return out
    since = str(old.get("lastTransitionTime") or now) if old and old.get("status") == "True" else now
    same_text = old is not None and old.get("message") == message
    out.append(
        ConditionView(
            type=CONDITION_TYPE,
            status="True",
            reason=CONDITION_REASON,
            message=message,
            lastUpdateTime=str(old.get("lastUpdateTime") or now) if old and same_text else now,
            lastTransitionTime=since,
        )
    )
    return out
