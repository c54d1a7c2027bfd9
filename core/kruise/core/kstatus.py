"""kstatus conditions: ``Ready``, ``Reconciling`` and ``Stalled`` (pure).

Flux's health checks, ``kstatus`` (``sigs.k8s.io/cli-utils/pkg/kstatus``), ``kubectl wait
--for=condition=Ready`` and Argo CD's generic rules read these, so a controller that sets them
tells every GitOps tool when a change is really done. kstatus computes an object's status as:

1. ``metadata.deletionTimestamp`` set -> Terminating;
2. ``status.observedGeneration`` present and != ``metadata.generation`` -> InProgress;
3. a ``Reconciling`` condition True -> InProgress; a ``Stalled`` condition True -> Failed;
4. (built-in kinds have type-specific rules; custom resources have none);
5. a ``Ready`` condition: True -> Current, False/Unknown -> InProgress;
6. otherwise Current.

The conditions follow the "abnormal-true" polarity kstatus recommends: ``Reconciling`` and
``Stalled`` are present only while True and removed otherwise; ``Ready`` is always present.
They are additive: every other condition of the object is kept as it is, in its place.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any


class KStatusCondition(StrEnum):
    """The condition types kstatus reads."""

    READY = "Ready"
    RECONCILING = "Reconciling"
    STALLED = "Stalled"


KSTATUS_TYPES = frozenset(KStatusCondition)


@dataclass(frozen=True)
class Health:
    """What the object's kstatus conditions must say.

    ``ready``: the desired state is reached (``Ready=True``); otherwise ``Ready=False`` with the
    same ``reason``/``message``. ``reconciling``: the controller is working towards it
    (``Reconciling=True``). ``stalled``: it failed or made no progress in time (``Stalled=True``;
    kstatus reads Reconciling first, so a stalled object is never also reconciling).
    """

    ready: bool
    reason: str
    message: str
    reconciling: bool = False
    stalled: bool = False


def _wanted(health: Health) -> list[tuple[KStatusCondition, str]]:
    out = [(KStatusCondition.READY, "True" if health.ready else "False")]
    if health.stalled:
        out.append((KStatusCondition.STALLED, "True"))
    elif health.reconciling and not health.ready:
        out.append((KStatusCondition.RECONCILING, "True"))
    return out


def with_kstatus(
    conditions: Sequence[Mapping[str, Any]] | None,
    health: Health,
    now: str,
    *,
    update_time: bool = False,
) -> list[dict[str, Any]]:
    """``conditions`` with the kstatus ones set to ``health`` (a new list; the input is untouched).

    ``now`` is the RFC 3339 time written into ``lastTransitionTime`` when a condition appears or
    flips (and into ``lastUpdateTime`` when its reason or message changes, if ``update_time``:
    Rollout conditions carry that field). An unchanged condition keeps its timestamps, so
    deciding twice on the same world yields the same list and no status write.
    """
    wanted: dict[str, str] = {str(t): v for t, v in _wanted(health)}
    out: list[dict[str, Any]] = []
    seen: set[str] = set()
    for cond in conditions or []:
        ctype = str(cond.get("type") or "")
        if ctype not in KSTATUS_TYPES:
            out.append(dict(cond))
            continue
        if ctype not in wanted or ctype in seen:
            continue
        seen.add(ctype)
        out.append(_updated(cond, wanted[ctype], health, now, update_time))
    for ctype, status in wanted.items():
        if ctype not in seen:
            out.append(_updated({"type": ctype}, status, health, now, update_time))
    return out


def _updated(
    cond: Mapping[str, Any], status: str, health: Health, now: str, update_time: bool
) -> dict[str, Any]:
    new = dict(cond)
    changed = new.get("reason") != health.reason or new.get("message") != health.message
    if new.get("status") != status or not new.get("lastTransitionTime"):
        new["lastTransitionTime"] = now
        changed = True
    if update_time and (changed or not new.get("lastUpdateTime")):
        new["lastUpdateTime"] = now
    new.update(status=status, reason=health.reason, message=health.message)
    return new


def kstatus_changed(old: Sequence[Mapping[str, Any]] | None, new: Sequence[Mapping[str, Any]] | None) -> bool:
    """Whether the kstatus conditions differ in type, status, reason or message (times ignored)."""

    def key(conds: Sequence[Mapping[str, Any]] | None) -> set[tuple[str, str, str, str]]:
        return {
            (str(c.get("type")), str(c.get("status")), str(c.get("reason")), str(c.get("message")))
            for c in conds or []
            if c.get("type") in KSTATUS_TYPES
        }

    return key(old) != key(new)
