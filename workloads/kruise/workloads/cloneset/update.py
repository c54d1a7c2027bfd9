"""Which pods to update this round, and how (Update steps 3-7 of the reference §2.3).

Upstream ``Update`` first refreshes every pod (see :mod:`.inplace_apply` and
:func:`.lifecycle.refresh_transition`) and returns if that patched anything; the shell does
that before calling :func:`decide_updates`. This module then picks the candidates, orders and
limits them, and for each one decides: in-place update, a lifecycle hop to PreparingUpdate
(the inPlaceUpdate hook holds the pod), nothing yet (still hooked), recreate by labelling
``apps.kruise.io/specified-delete: "true"`` (the next Scale deletes it), or an error. Like
upstream, the first error ends the round: no action follows an error action.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import Any

from kruise.workloads.cloneset.diffs import Diffs
from kruise.workloads.cloneset.sorting import limit_update_indexes, sort_for_update
from kruise.workloads.inplace import (
    InPlaceUpdateSpec,
    calculate_in_place_update_spec,
    grace_annotation,
)
from kruise.workloads.lifecycle import LifecycleTransition, in_place_gate
from kruise.workloads.objects import KubeObject, labels, mapping, name, spec
from kruise.workloads.pods import (
    POD_TEMPLATE_HASH_LABEL,
    SPECIFIED_DELETE_LABEL,
    LifecycleState,
    equal_to_revision_hash,
    lifecycle_state,
    revision_hash,
    short_hash,
)
from kruise.workloads.revisions import template_of_revision

RECREATE = "ReCreate"
IN_PLACE_IF_POSSIBLE = "InPlaceIfPossible"
IN_PLACE_ONLY = "InPlaceOnly"


class UpdateKind(StrEnum):
    """The kind of :class:`PodUpdateAction`."""

    IN_PLACE = "InPlace"
    LIFECYCLE = "Lifecycle"
    RECREATE = "Recreate"
    ERROR = "Error"


@dataclass(frozen=True)
class PodUpdateAction:
    """One decision for one pod.

    Attributes:
        pod_name: the pod's name; ``index`` its position in the input ``pods``.
        kind: see :class:`UpdateKind`.
        target_revision: the revision name the pod moves to.
        spec: the in-place spec (``IN_PLACE``); write it with
            :func:`~kruise.workloads.inplace.apply.in_place_update_pod`.
        transition: the lifecycle patch (``LIFECYCLE``); build it with
            :func:`~kruise.workloads.lifecycle.lifecycle_patch`.
        error: the upstream error text (``ERROR``).
    """

    pod_name: str
    index: int
    kind: UpdateKind
    target_revision: str
    spec: InPlaceUpdateSpec | None = None
    transition: LifecycleTransition | None = None
    error: str | None = None


def recreate_patch() -> dict[str, Any]:
    """Strategic-merge patch marking a pod for recreation (``PatchPodSpecifiedDelete(pod, "true")``)."""
    return {"metadata": {"labels": {SPECIFIED_DELETE_LABEL: "true"}}}


def template_hash_label_patch(pod: KubeObject) -> dict[str, Any] | None:
    """Patch adding ``pod-template-hash`` to pods created before Kruise v1.1 (``fixPodTemplateHashLabel``).

    The value is the short form of the pod's ``controller-revision-hash``; ``None`` when the
    label is already present. Upstream applies it during the refresh step, before updating.
    """
    if POD_TEMPLATE_HASH_LABEL in labels(pod):
        return None
    return {"metadata": {"labels": {POD_TEMPLATE_HASH_LABEL: short_hash(revision_hash(pod))}}}


def update_candidates(pods: Sequence[KubeObject], update_revision: str, update_num: int) -> list[int]:
    """Indexes of pods that may move this round (Update step 3).

    Forward (``update_num > 0``): pods not at ``update_revision``; rollback: pods at it. Pods in
    PreparingDelete and pods whose in-place grace period is pending are skipped; pods in
    Updated are eligible.
    """
    chosen: list[int] = []
    for i, pod in enumerate(pods):
        at_update = equal_to_revision_hash(pod, update_revision)
        if at_update == (update_num > 0):
            continue
        state = lifecycle_state(pod)
        if state == LifecycleState.PREPARING_DELETE:
            continue
        if state != LifecycleState.UPDATED and grace_annotation(pod) is not None:
            continue
        chosen.append(i)
    return chosen


def _find_revision(pod: KubeObject, revisions_by_name: Mapping[str, KubeObject]) -> KubeObject | None:
    for rev_name, revision in revisions_by_name.items():
        if equal_to_revision_hash(pod, rev_name):
            return revision
    return None


def decide_pod_update(
    cloneset: KubeObject,
    pod: KubeObject,
    index: int,
    target_revision: str,
    revisions_by_name: Mapping[str, KubeObject],
    *,
    env_from_metadata: bool = True,
) -> PodUpdateAction | None:
    """How to move one selected pod to ``target_revision`` (upstream ``updatePod``); ``None`` = wait."""
    strategy = mapping(spec(cloneset).get("updateStrategy"))
    kind = str(strategy.get("type") or RECREATE)
    pod_name = name(pod)
    if kind in (IN_PLACE_IF_POSSIBLE, IN_PLACE_ONLY):
        old, new = _find_revision(pod, revisions_by_name), revisions_by_name.get(target_revision)
        grace = int(mapping(strategy.get("inPlaceUpdateStrategy")).get("gracePeriodSeconds") or 0)
        in_place = None
        if old is not None and new is not None:
            in_place = calculate_in_place_update_spec(
                template_of_revision(old),
                template_of_revision(new),
                revision=target_revision,
                grace_seconds=grace,
                env_from_metadata=env_from_metadata,
            )
        if in_place is not None:
            gate = in_place_gate(cloneset, pod, updated_needs_hook=True)
            if gate.transition is not None:
                return PodUpdateAction(
                    pod_name, index, UpdateKind.LIFECYCLE, target_revision, transition=gate.transition
                )
            if gate.error is not None:
                return PodUpdateAction(pod_name, index, UpdateKind.ERROR, target_revision, error=gate.error)
            if not gate.proceed:
                return None
            return PodUpdateAction(pod_name, index, UpdateKind.IN_PLACE, target_revision, spec=in_place)
        if kind == IN_PLACE_ONLY:
            error = f"find Pod {pod_name} update strategy is InPlaceOnly but can not update in-place"
            return PodUpdateAction(pod_name, index, UpdateKind.ERROR, target_revision, error=error)
    return PodUpdateAction(pod_name, index, UpdateKind.RECREATE, target_revision)


def decide_updates(
    cloneset: KubeObject,
    pods: Sequence[KubeObject],
    current_revision: str,
    update_revision: str,
    revisions_by_name: Mapping[str, KubeObject],
    diffs: Diffs,
    now: datetime,
    *,
    env_from_metadata: bool = True,
) -> list[PodUpdateAction]:
    """The update actions for this round (upstream ``Update`` after the refresh step).

    Args:
        cloneset: the CloneSet dict.
        pods: its active pods.
        current_revision / update_revision: revision names.
        revisions_by_name: ControllerRevision dicts by name, in ascending revision order (the
            pod's old revision is the first whose name matches its revision label).
        diffs: :func:`~kruise.workloads.cloneset.diffs.calculate_diffs` over the same pods
            *without* ``preparing_update_as_update``.
        now: the instant availability is judged at.
        env_from_metadata: gate ``InPlaceUpdateEnvFromMetadata`` (default on).

    Returns nothing while ``updateStrategy.paused`` or when ``diffs.update_num == 0``.
    """
    if mapping(spec(cloneset).get("updateStrategy")).get("paused") or diffs.update_num == 0:
        return []
    target = update_revision if diffs.update_num > 0 else current_revision
    strategy = mapping(spec(cloneset).get("updateStrategy"))
    min_ready = int(spec(cloneset).get("minReadySeconds") or 0)
    indexes = update_candidates(pods, update_revision, diffs.update_num)
    indexes = sort_for_update(pods, indexes, strategy)
    indexes = limit_update_indexes(pods, indexes, diffs, target, now, min_ready_seconds=min_ready)
    actions: list[PodUpdateAction] = []
    for i in indexes:
        action = decide_pod_update(
            cloneset, pods[i], i, target, revisions_by_name, env_from_metadata=env_from_metadata
        )
        if action is None:
            continue
        actions.append(action)
        if action.kind == UpdateKind.ERROR:
            break
    return actions
