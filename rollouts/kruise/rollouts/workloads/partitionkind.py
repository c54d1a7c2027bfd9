"""What a partition kind gets for free beside the BatchRelease control (pure): the hold of the
workload webhook (:func:`partition_hold`), the Rollout engine's info (:func:`partition_info`), the
hand-back without a BatchRelease (:func:`partition_resume`), its release style
(:class:`PartitionRelease`) and its registry entry (:func:`partition_kind`). A kind supplies only
its :class:`~kruise.rollouts.workloads.port.PartitionWorkload`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from kruise.core.kube.resources import Resource
from kruise.core.webhook.conditions import entry_changed, field_changed, operation_or
from kruise.rollouts.api.common import RollingStyle
from kruise.rollouts.release.constants import (
    BATCH_RELEASE_CONTROL_ANNOTATION,
    IN_PROGRESSING_ANNOTATION,
    ROLLOUT_ID_LABEL,
)
from kruise.rollouts.release.objects import meta
from kruise.rollouts.release.rolloutid import workload_rollout_id
from kruise.rollouts.workloads.hold import rollout_for, traffic_routed
from kruise.rollouts.workloads.info import WorkloadInfo
from kruise.rollouts.workloads.ops import ControlDecision, label_pod, patch
from kruise.rollouts.workloads.partition import decide_partition, merged
from kruise.rollouts.workloads.port import (
    Gates,
    HandsBack,
    Observation,
    PartitionWorkload,
    RecordsStableRevision,
    ReleaseStyle,
    WorkloadHold,
    WorkloadKind,
    self_route,
)

JSON = dict[str, Any]


def template_or_id_changed(new: Mapping[str, Any], old: Mapping[str, Any]) -> bool:
    """Whether an update can start a release at all: its pod template or its rollout-id changed
    (the hold webhook's cheap filter before it reads anything; :data:`TEMPLATE_OR_ID_CHANGED` is
    the same test in CEL for the API server)."""
    template_changed = (new.get("spec") or {}).get("template") != (old.get("spec") or {}).get("template")
    return template_changed or workload_rollout_id(new) != workload_rollout_id(old)


TEMPLATE_OR_ID_CHANGED = operation_or(
    field_changed("spec.template"),
    entry_changed("metadata.labels", ROLLOUT_ID_LABEL),
    entry_changed("metadata.annotations", ROLLOUT_ID_LABEL),
    name="template-or-rollout-id-changed",
)
"""The hold's ``matchConditions`` (:func:`template_or_id_changed` in CEL, a superset: an id moved
from the label to the annotation counts as a change): the partition patches, status-free spec
writes and label edits of a release never call the webhook, which upstream's configuration does
for every UPDATE of the kind."""


def partition_hold(
    w: PartitionWorkload,
    new: Mapping[str, Any],
    old: Mapping[str, Any],
    rollouts: Sequence[Mapping[str, Any]],
    *,
    blue_green: bool = False,
) -> JSON | None:
    """The workload webhook's hold (``workload_update_handler.go``): on an UPDATE that changes the
    pod template (or the rollout-id: label, else annotation) of a workload an enabled Rollout in the
    namespace references, set the partition to :attr:`~PartitionWorkload.held_partition` (no pod
    moves until the Rollout releases a batch) and stamp ``rollouts.kruise.io/in-progressing:
    {"rolloutName": ...}``. None: admit ``new`` unchanged.

    Entry conditions as upstream: replicas > 0 and a holdable update strategy; a blue-green Rollout
    only on a kind that serves it (``blue_green``); with traffic routing a workload known to run
    several revisions does not enter (silently), except one already in progress; a workload in
    progress is held again on every template change (continuous release). A kind that
    :class:`~kruise.rollouts.workloads.port.RecordsStableRevision` gets its record added when a
    release starts (``old`` not in progress)."""
    ro = rollout_for(new, rollouts)
    if ro is None:
        return None
    strategy = (ro.get("spec") or {}).get("strategy") or {}
    if strategy.get("blueGreen") and not blue_green:
        return None
    replicas = (new.get("spec") or {}).get("replicas", 1)
    if (replicas is not None and int(replicas) == 0) or not w.holdable(new):
        return None
    if not template_or_id_changed(new, old):
        return None
    in_progress = IN_PROGRESSING_ANNOTATION in (meta(new).get("annotations") or {})
    if (
        traffic_routed(ro)
        and w.single_version(old) is False
        and (not in_progress or strategy.get("blueGreen"))
    ):
        # upstream never re-holds a multi-version workload; for blue-green (whose surge pods make
        # it multi-version) that is what lets a rollback proceed instead of freezing at 100%
        return None
    held: JSON = merged(new, w.partition_patch(w.held_partition))
    if isinstance(w, RecordsStableRevision) and IN_PROGRESSING_ANNOTATION not in (
        meta(old).get("annotations") or {}
    ):
        held = merged(held, w.stable_record(old))
    held.setdefault("metadata", {}).setdefault("annotations", {})[IN_PROGRESSING_ANNOTATION] = json.dumps(
        {"rolloutName": meta(ro).get("name")}, separators=(",", ":")
    )
    return held


def partition_info(w: PartitionWorkload, resource: Resource, obs: Observation) -> WorkloadInfo:
    """The Rollout engine's view (``ControllerFinder``): stable and canary revisions as the pods
    carry them (also ``podTemplateHash``, the canary Service's selector value); in a rollout while
    ``rollouts.kruise.io/in-progressing`` is there; rolling back when the update revision is the
    stable one again but not every pod is updated; the status trusted once it observed the
    current generation."""
    workload = obs.workload
    info_meta = meta(workload)
    state = w.state(workload, obs.pods)
    in_progressing = IN_PROGRESSING_ANNOTATION in (info_meta.get("annotations") or {})
    return WorkloadInfo(
        kind=resource.kind,
        api_version=str(workload.get("apiVersion") or resource.api_version),
        name=str(info_meta.get("name")),
        namespace=str(info_meta.get("namespace")),
        uid=str(info_meta.get("uid") or ""),
        replicas=state.replicas,
        stable_revision=state.stable_revision,
        canary_revision=state.update_revision,
        pod_template_hash=state.update_revision,
        in_progressing=in_progressing,
        in_rollback=in_progressing
        and bool(state.stable_revision)
        and state.stable_revision == state.update_revision
        and state.updated != state.current,
        status_consistent=state.consistent,
        updated_replicas=state.updated,
        updated_ready_replicas=state.updated_ready,
        generation=int(info_meta.get("generation") or 0),
        revision_label_key=w.revision_label_key,
        rollout_id=workload_rollout_id(workload),
    )


def partition_resume(w: PartitionWorkload, workload: Mapping[str, Any]) -> JSON | None:
    """Hand the workload back when no BatchRelease is left to do it (a Rollout finalising after
    its BatchRelease went first, e.g. deleted by the garbage collector under ``Foreground``
    propagation): partition cleared, pause lifted (a kind that
    :class:`~kruise.rollouts.workloads.port.HandsBack`: its own hand-back), the control
    annotation removed and a recorded stable revision dropped
    (:class:`~kruise.rollouts.workloads.port.RecordsStableRevision`), as the BatchRelease's own
    finalisation would. None: nothing left to write."""
    held = w.partition(workload) not in (None, 0, "0%") or w.paused(workload)
    controlled = BATCH_RELEASE_CONTROL_ANNOTATION in (meta(workload).get("annotations") or {})
    if isinstance(w, HandsBack):
        release = w.hand_back(workload, keep=False)
    else:
        release = merged(w.partition_patch(None), w.unpause_patch()) if held else None
    patch_ = merged(
        release,
        {"metadata": {"annotations": {BATCH_RELEASE_CONTROL_ANNOTATION: None}}} if controlled else None,
        w.stable_forget(workload) if isinstance(w, RecordsStableRevision) else None,
    )
    return patch_ or None


@dataclass(frozen=True)
class PartitionRelease:
    """The partition :class:`~kruise.rollouts.workloads.port.ReleaseStyle` of a partition kind."""

    workload: PartitionWorkload
    resource: Resource
    rollback_in_batches: bool = True
    style: RollingStyle = field(default=RollingStyle.PARTITION)

    def info(self, rollout: Mapping[str, Any], obs: Observation) -> WorkloadInfo:
        return partition_info(self.workload, self.resource, obs)

    def control(self, br: Mapping[str, Any], obs: Observation | None, gates: Gates) -> ControlDecision:
        if meta(br).get("deletionTimestamp"):  # nothing to undo: the Rollout finalised it already
            return ControlDecision((), dict(br.get("status") or {}))
        workload = None if obs is None else obs.workload
        pods = () if obs is None else obs.pods
        d = decide_partition(
            self.workload, br, workload, pods, keep_paused_on_cancel=gates.keep_paused_on_cancel
        )
        ops = [patch(self.resource, workload, d.workload_patch)] if d.workload_patch and workload else []
        ops += [label_pod(p.name, p.labels) for p in d.pod_patches]
        return ControlDecision(tuple(ops), d.status, d.requeue_after)

    def needs_hpas(self, br: Mapping[str, Any], obs: Observation | None) -> bool:
        return False


def partition_kind(
    w: PartitionWorkload,
    resource: Resource,
    *,
    webhook: str,
    path: str,
    versions: tuple[str, ...],
    blue_green: ReleaseStyle | None = None,
) -> WorkloadKind:
    """The registry entry of a partition kind: its partition style (and ``blue_green`` when it has
    one), the partition hold served as mutating webhook ``webhook`` at ``path`` for UPDATEs of
    ``resource`` in ``versions``, its own events as its route, and the partition resume."""
    styles: dict[RollingStyle, ReleaseStyle] = {RollingStyle.PARTITION: PartitionRelease(w, resource)}
    if blue_green is not None:
        styles[RollingStyle.BLUE_GREEN] = blue_green

    def decide(new: JSON, old: JSON, rollouts: Sequence[JSON], _related: Sequence[JSON]) -> JSON | None:
        return partition_hold(w, new, old, rollouts, blue_green=blue_green is not None)

    hold = WorkloadHold(
        name=webhook,
        path=path,
        group=resource.group,
        versions=versions,
        plural=resource.plural,
        decide=decide,
        worth_a_look=template_or_id_changed,
        match_conditions=(TEMPLATE_OR_ID_CHANGED,),
    )
    return WorkloadKind(
        resource=resource,
        styles=styles,
        hold=hold,
        routes=(self_route(resource),),
        resume=lambda workload: partition_resume(w, workload),
    )
