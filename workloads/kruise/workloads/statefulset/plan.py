"""``plan(world) -> Plan``: everything one Advanced StatefulSet round decides, pure.

The shell (:mod:`.controller`) executes the plan as upstream's ``updateStatefulSet`` acts:

1. the scale actions, in order (:mod:`.scale`);
2. the per-pod refresh (in-place bookkeeping and lifecycle, the shared
   :class:`~kruise.workloads.inplace.writer.PodWriter`) of every live pod;
3. unless the scale phase ended the round (``scale.exit``), a refresh wrote something, or the
   update strategy is ``OnDelete``, the update actions (:mod:`.update`);
4. the status (:func:`~.status.compute_status`), with the counts the moved pods take away.

Deciding twice on an unchanged world gives the same plan, and a world where every replica is
created, ready and at the update revision gives no action.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from kruise.workloads.statefulset.actions import Action
from kruise.workloads.statefulset.round import Options, World, build_round
from kruise.workloads.statefulset.scale import plan_scale
from kruise.workloads.statefulset.status import compute_status
from kruise.workloads.statefulset.update import plan_update

__all__ = ["Plan", "plan"]


@dataclass(frozen=True)
class Plan:
    """One round's decisions.

    Attributes:
        scale: scale-phase actions, in order.
        update: update-phase actions; to run only when nothing in the scale phase or the refresh
            ended the round.
        scale_exit: the scale phase ended the round (no update phase).
        status: the status to write after the update phase ran (the counts lowered for the
            pods ``update`` moves).
        status_without_update: the status to write when the update phase did not run.
        requeue_after: seconds until something time-based changes (minReadySeconds, grace).
        errors: reasons the round stopped early (reported as the reconcile's error).
    """

    scale: tuple[Action, ...]
    update: tuple[Action, ...]
    scale_exit: bool
    status: dict[str, Any]
    status_without_update: dict[str, Any]
    requeue_after: float | None = None
    errors: tuple[str, ...] = field(default_factory=tuple)


def _soonest(*delays: float | None) -> float | None:
    found = [d for d in delays if d is not None]
    return min(found) if found else None


def plan(world: World, options: Options = Options()) -> Plan:
    """Decide one round over ``world`` (see the module docstring)."""
    r = build_round(world, options)
    scale = plan_scale(r)
    before = compute_status(r)
    if scale.exit:
        return Plan(tuple(scale.actions), (), True, before, before, scale.requeue_after, tuple(scale.errors))
    update = plan_update(r)
    status = compute_status(r, current_gone=update.current_gone, updated_gone=update.updated_gone)
    return Plan(
        tuple(scale.actions),
        tuple(update.actions),
        False,
        status,
        before,
        _soonest(scale.requeue_after, update.requeue_after),
        (*scale.errors, *update.errors),
    )
