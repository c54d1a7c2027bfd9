"""How many pods to create, delete and update: upstream ``calculateDiffsWithExpectation``.

This is "the most important algorithm in cloneset-controller" (upstream's words). Scale and
Update each call it with the same observed pods and act on different fields, and the
controller never scales and updates in the same reconcile; that is why a single surge number
serves both replacing specified-delete pods and rolling the revision.

Pods are counted in two revisions ("new" = at ``update_revision``, "old" = anything else), and
within each revision as PreparingDelete, specified-delete or unavailable. Formulas are the
reference §2.2 ones; comments below only name the upstream variable each line computes.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, fields
from datetime import datetime

from kruise.workloads.cloneset.arith import strategy_numbers
from kruise.workloads.cloneset.podstate import (
    SCALING_EXCLUDE_PREPARING_DELETE_LABEL,
    is_cloneset_available,
)
from kruise.workloads.objects import KubeObject, labels, mapping, name, sequence, spec
from kruise.workloads.pods import (
    LifecycleState,
    is_pod_update,
    is_specified_delete,
    lifecycle_state,
)


@dataclass(frozen=True)
class Diffs:
    """Result of :func:`calculate_diffs`; every field is a pod count.

    Attributes:
        scale_surge: surge wanted to replace specified-delete pods (before the maxSurge cap).
        scale_surge_old_revision: the part of ``scale_surge`` that replaces old-revision pods.
        scale_up_num: pods to create (>= 0).
        scale_up_num_old_revision: of those, how many at the *current* revision; may exceed
            ``scale_up_num`` (the controller creates at most ``scale_up_num``).
        scale_down_num: pods to delete by scale-in, excluding those already specified to delete.
        scale_down_num_old_revision: of those, how many from the old revision (may exceed).
        scale_up_limit: creations allowed now by ``scaleStrategy.maxUnavailable``.
        delete_ready_limit: ready pods that may be deleted now (``updateStrategy.maxUnavailable``).
        use_surge: pods temporarily above ``replicas`` (``<= maxSurge``).
        use_surge_old_revision: the part of ``use_surge`` that should be old-revision pods.
        update_num: > 0 update that many pods to the update revision; < 0 roll back that many
            to the current revision (partition rollback); 0 nothing to update.
        update_max_unavailable: maximum unavailable pods while updating (0 when no update).
    """

    scale_surge: int = 0
    scale_surge_old_revision: int = 0
    scale_up_num: int = 0
    scale_up_num_old_revision: int = 0
    scale_down_num: int = 0
    scale_down_num_old_revision: int = 0
    scale_up_limit: int = 0
    delete_ready_limit: int = 0
    use_surge: int = 0
    use_surge_old_revision: int = 0
    update_num: int = 0
    update_max_unavailable: int = 0

    @property
    def is_empty(self) -> bool:
        """True when every field is 0 (nothing to scale or update)."""
        return all(getattr(self, f.name) == 0 for f in fields(self))


def is_specified_delete_in(cloneset: KubeObject, pod: KubeObject) -> bool:
    """Specified-delete label or name listed in ``scaleStrategy.podsToDelete`` (``isSpecifiedDelete``)."""
    if is_specified_delete(pod):
        return True
    to_delete = sequence(mapping(spec(cloneset).get("scaleStrategy")).get("podsToDelete"))
    return name(pod) in to_delete


def scaling_excludes_preparing_delete(cloneset: KubeObject, *, flag: bool = False) -> bool:
    """Whether PreparingDelete pods are left out of the scale counts.

    True with the manager flag ``--cloneset-scaling-exclude-preparing-delete`` (``flag``), the
    CloneSet label ``apps.kruise.io/cloneset-scaling-exclude-preparing-delete: "true"`` or the
    v1beta1 field ``scaleStrategy.excludePreparingDelete``.
    """
    if mapping(spec(cloneset).get("scaleStrategy")).get("excludePreparingDelete") is True:
        return True
    return flag or labels(cloneset).get(SCALING_EXCLUDE_PREPARING_DELETE_LABEL) == "true"


def _sign_differs(a: int, b: int) -> bool:
    return (a < 0 < b) or (b < 0 < a)


def calculate_diffs(
    cloneset: KubeObject,
    pods: Sequence[KubeObject],
    current_revision: str,
    update_revision: str,
    now: datetime,
    *,
    partition_rollback: bool = False,
    exclude_preparing_delete: bool = False,
    preparing_update_as_update: bool = False,
) -> Diffs:
    """Compute scale and update numbers for ``cloneset`` over its active ``pods``.

    Args:
        cloneset: the CloneSet dict (spec.replicas, updateStrategy, scaleStrategy, minReadySeconds).
        pods: the active pods owned by it.
        current_revision / update_revision: revision names (``status.currentRevision`` and the
            revision of the current template).
        now: the instant availability (``minReadySeconds``) is judged at.
        partition_rollback: feature gate ``CloneSetPartitionRollback``; without it (or when both
            revisions are equal) updates only go forward.
        exclude_preparing_delete: the manager flag; see :func:`scaling_excludes_preparing_delete`.
        preparing_update_as_update: count PreparingUpdate pods as updated (``revision.IsPodUpdate``
            with gate ``PreparingUpdateAsUpdate``). Upstream Scale passes it, Update does not.

    Mirrors upstream ``calculateDiffsWithExpectation`` including ``useSurgeOldRevision``:
    replacing specified-delete pods surges old pods for the old share beyond the new ones;
    an update surge is old-revision when the old side is short (rolling back) or the new side
    is in excess.
    """
    numbers = strategy_numbers(cloneset)
    replicas, partition = numbers.replicas, numbers.partition
    max_surge, max_unavailable = numbers.max_surge, numbers.max_unavailable
    min_ready = int(spec(cloneset).get("minReadySeconds") or 0)

    counts = {"new": 0, "old": 0, "new_active": 0, "old_active": 0}
    unavailable = {"new": 0, "old": 0}
    to_delete = {"new": 0, "old": 0}
    pre_deleting = {"new": 0, "old": 0}
    for pod in pods:
        updated = is_pod_update(pod, update_revision, preparing_update_as_update=preparing_update_as_update)
        side = "new" if updated else "old"
        counts[side] += 1
        if lifecycle_state(pod) == LifecycleState.PREPARING_DELETE:
            pre_deleting[side] += 1
            continue
        counts[side + "_active"] += 1
        if is_specified_delete_in(cloneset, pod):
            to_delete[side] += 1
        elif not is_cloneset_available(pod, min_ready, now):
            unavailable[side] += 1

    update_old_diff = counts["old_active"] - partition
    update_new_diff = counts["new_active"] - (replicas - partition)
    total_unavailable = pre_deleting["new"] + pre_deleting["old"] + unavailable["new"] + unavailable["old"]
    if update_revision == current_revision or not partition_rollback:
        update_old_diff = max(update_old_diff, 0)
        update_new_diff = min(update_new_diff, 0)

    scale_surge = scale_surge_old = use_surge = use_surge_old = 0
    if max_surge > 0:
        to_delete_count = to_delete["new"] + to_delete["old"]
        if to_delete_count > 0:
            scale_surge = min(max(total_unavailable + to_delete_count - max_unavailable, 0), to_delete_count)
            if scale_surge > to_delete["new"]:
                scale_surge_old = scale_surge - to_delete["new"]
        update_surge = update_surge_old = 0
        if _sign_differs(update_old_diff, update_new_diff):
            if abs(update_old_diff) <= abs(update_new_diff):
                update_surge = abs(update_old_diff)
                if update_old_diff < 0:
                    update_surge_old = update_surge
            else:
                update_surge = abs(update_new_diff)
                if update_new_diff > 0:
                    update_surge_old = update_surge
        # The controller never scales and updates in one reconcile: one surge serves both.
        if scale_surge >= update_surge:
            use_surge = min(max_surge, scale_surge)
            use_surge_old = min(use_surge, scale_surge_old)
        else:
            use_surge = min(max_surge, update_surge)
            use_surge_old = min(use_surge, update_surge_old)

    current_total, current_old = len(pods), counts["old"]
    if scaling_excludes_preparing_delete(cloneset, flag=exclude_preparing_delete):
        current_total -= pre_deleting["old"] + pre_deleting["new"]
        current_old -= pre_deleting["old"]
    expected_total = replicas + use_surge
    expected_old = partition + use_surge_old

    scale_up_num = scale_up_old = scale_up_limit = 0
    if expected_total - current_total > 0:
        scale_up_num = expected_total - current_total
        scale_up_old = max(expected_old - current_old, 0)
        scale_up_limit = min(scale_up_num, max(numbers.scale_max_unavailable - total_unavailable, 0))

    scale_down_num = scale_down_old = 0
    to_delete_total = to_delete["old"] + to_delete["new"]
    if current_total - to_delete_total - expected_total > 0:
        scale_down_num = current_total - to_delete_total - expected_total
        scale_down_old = max(current_old - to_delete["old"] - expected_old, 0)

    delete_ready_limit = 0
    if to_delete_total > 0 or scale_down_num > 0:
        delete_ready_limit = max(max_unavailable + (len(pods) - replicas) - total_unavailable, 0)

    update_num = update_old_diff if abs(update_old_diff) <= abs(update_new_diff) else -update_new_diff
    update_max_unavailable = max_unavailable + len(pods) - replicas if update_num != 0 else 0

    return Diffs(
        scale_surge=scale_surge,
        scale_surge_old_revision=scale_surge_old,
        scale_up_num=scale_up_num,
        scale_up_num_old_revision=scale_up_old,
        scale_down_num=scale_down_num,
        scale_down_num_old_revision=scale_down_old,
        scale_up_limit=scale_up_limit,
        delete_ready_limit=delete_ready_limit,
        use_surge=use_surge,
        use_surge_old_revision=use_surge_old,
        update_num=update_num,
        update_max_unavailable=update_max_unavailable,
    )
