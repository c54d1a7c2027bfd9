"""Applying an in-place update to a pod dict, and the per-reconcile refresh decision.

Everything returns a *new* pod dict (the input is never mutated) for the shell to write with
an Update carrying the observed ``resourceVersion``, as upstream ``updatePodInPlace`` /
``finishGracePeriod`` / ``updateNextBatch`` do with retry-on-conflict.

Container launch priority: a container whose env ``KRUISE_CONTAINER_BARRIER`` has a
``configMapKeyRef.key`` of ``p_<n>`` has priority ``n``; only the highest-priority containers
(plus containers without priority, plus containers sharing changed metadata keys) are updated
in one batch, the rest are recorded as ``next*`` in the state.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Mapping
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from enum import StrEnum
from typing import Any

from kruise.core.patches import merge_patch
from kruise.workloads.inplace.spec import InPlaceUpdateSpec
from kruise.workloads.inplace.state import (
    GRACE_KEY,
    GRACE_KEY_OLD,
    STATE_KEY,
    STATE_KEY_OLD,
    InPlaceUpdateState,
    containers_update_completed,
    grace_annotation,
    state_annotation,
)
from kruise.workloads.objects import KubeObject, as_utc, format_time, mapping, sequence, spec
from kruise.workloads.pods import (
    IN_PLACE_UPDATE_READY,
    LIFECYCLE_STATE_LABEL,
    LIFECYCLE_TIMESTAMP_ANNOTATION,
    LifecycleState,
    container_status,
    equal_to_revision_hash,
    get_condition,
)

BARRIER_ENV = "KRUISE_CONTAINER_BARRIER"
_ATOI = re.compile(r"[+-]?[0-9]+")


def container_priority(container: KubeObject) -> int | None:
    """Launch priority from the ``KRUISE_CONTAINER_BARRIER`` env; ``None`` if absent.

    Mirrors ``GetContainerPriority``: the env's ``configMapKeyRef.key`` is ``p_<n>``; a
    malformed number counts as 0.
    """
    for env in sequence(container.get("env")):
        env_map = mapping(env)
        if env_map.get("name") == BARRIER_ENV:
            key = str(mapping(mapping(env_map.get("valueFrom")).get("configMapKeyRef")).get("key") or "")
            return int(key[2:]) if _ATOI.fullmatch(key[2:]) else 0
    return None


def _apply_merge_patch(target: dict[str, Any], patch: KubeObject) -> None:
    for key, value in patch.items():
        if value is None:
            target.pop(key, None)
        elif isinstance(value, dict) and isinstance(target.get(key), dict):
            _apply_merge_patch(target[key], value)
        elif isinstance(value, dict):
            target[key] = {}
            _apply_merge_patch(target[key], value)
        else:
            target[key] = copy.deepcopy(value)


def _add_metadata_sharing(to_update: set[str], ref_metadata: KubeObject) -> None:
    """Pull in containers that read any label/annotation key an updating container changes."""
    newly = set(to_update)
    keys: dict[str, set[str]] = {"labels": set(), "annotations": set()}
    while newly:
        for cname in newly:
            for kind in keys:
                keys[kind] |= set(mapping(mapping(ref_metadata.get(cname)).get(kind)))
        newly = set()
        for cname, meta in ref_metadata.items():
            if cname in to_update:
                continue
            if any(keys[kind] & set(mapping(mapping(meta).get(kind))) for kind in keys):
                to_update.add(cname)
                newly.add(cname)


def _meta(pod: dict[str, Any], key: str) -> dict[str, Any]:
    metadata = pod.setdefault("metadata", {})
    if not isinstance(metadata.get(key), dict):
        metadata[key] = {}
    result: dict[str, Any] = metadata[key]
    return result


def apply_update_spec(
    pod: KubeObject, update_spec: InPlaceUpdateSpec, state: InPlaceUpdateState, now: datetime
) -> tuple[dict[str, Any], InPlaceUpdateState]:
    """Patch one batch of ``update_spec`` into a copy of ``pod`` (``defaultPatchUpdateSpecToPod``).

    Applies the metadata merge patch, sets the new images of this batch's containers, records
    their current imageIDs in ``lastContainerStatuses``, applies their env-referenced metadata,
    leaves lower-priority containers in ``next*`` with a ``preCheckBeforeNext`` on this batch,
    appends a batch record at ``now`` and writes the state annotation. Returns the new pod and state.
    """
    new_pod: dict[str, Any] = copy.deepcopy(dict(pod))
    pod_labels, pod_annotations = _meta(new_pod, "labels"), _meta(new_pod, "annotations")
    if update_spec.metadata_patch:
        _apply_merge_patch(new_pod, update_spec.metadata_patch)
        pod_labels, pod_annotations = _meta(new_pod, "labels"), _meta(new_pod, "annotations")
    images, ref_metadata = update_spec.container_images, update_spec.container_ref_metadata
    containers = [c for c in sequence(spec(new_pod).get("containers")) if isinstance(c, dict)]

    to_update: set[str] = set()
    highest: int | None = None
    with_highest: list[str] = []
    for container in containers:
        cname = str(container.get("name") or "")
        if cname not in images and cname not in ref_metadata:
            continue
        priority = container_priority(container)
        if priority is None:
            to_update.add(cname)
        elif highest is None or highest < priority:
            highest, with_highest = priority, [cname]
        elif highest == priority:
            with_highest.append(cname)
    to_update |= set(with_highest)
    _add_metadata_sharing(to_update, ref_metadata)

    next_images: dict[str, str] = {}
    changed: set[str] = set()
    for container in containers:
        cname = str(container.get("name") or "")
        if cname not in images:
            continue
        if cname in to_update:
            container["image"] = images[cname]
            changed.add(cname)
        else:
            next_images[cname] = images[cname]
    last = dict(state.last_container_statuses)
    for cname in changed:
        entry = container_status(pod, cname)
        if entry is not None:
            last[cname] = str(entry.get("imageID") or "")
    next_meta: dict[str, Any] = {}
    for cname, meta in ref_metadata.items():
        if cname in to_update:
            pod_labels.update(mapping(meta.get("labels")))
            pod_annotations.update(mapping(meta.get("annotations")))
        else:
            next_meta[cname] = meta
    batch = sorted(to_update)
    new_state = replace(
        state,
        last_container_statuses=last,
        next_container_images=next_images,
        next_container_ref_metadata=next_meta,
        containers_required_ready=batch if next_images or next_meta else None,
        container_batches_record=[*state.container_batches_record, (as_utc(now), batch)],
    )
    pod_annotations[STATE_KEY] = new_state.to_json()
    return new_pod, new_state


def start_in_place_update_condition(now: datetime) -> dict[str, Any]:
    """The ``InPlaceUpdateReady=False`` condition (reason ``StartInPlaceUpdate``) set before patching."""
    return {
        "type": IN_PLACE_UPDATE_READY,
        "status": "False",
        "reason": "StartInPlaceUpdate",
        "lastTransitionTime": format_time(now),
    }


def has_in_place_readiness_gate(pod: KubeObject) -> bool:
    """``spec.readinessGates`` contains ``InPlaceUpdateReady``."""
    return any(
        mapping(g).get("conditionType") == IN_PLACE_UPDATE_READY
        for g in sequence(spec(pod).get("readinessGates"))
    )


def in_place_update_pod(
    pod: KubeObject,
    update_spec: InPlaceUpdateSpec,
    now: datetime,
    *,
    revision_labels: Mapping[str, str],
    lifecycle_updating: bool = True,
) -> dict[str, Any]:
    """The pod to write for an in-place update to ``update_spec.revision`` (``updatePodInPlace``).

    Writes ``revision_labels`` (the workload's ``WriteRevisionHash``: a CloneSet writes
    ``controller-revision-hash`` and ``pod-template-hash``, an Advanced StatefulSet only the
    former), lifecycle ``Updating`` with its timestamp (unless not ``lifecycle_updating``: the
    StatefulSet leaves a pod without lifecycle state as it is), a fresh state annotation; then
    either applies the spec now (``grace_seconds <= 0``) or stores it in the grace annotation.
    """
    new_pod: dict[str, Any] = copy.deepcopy(dict(pod))
    pod_labels, pod_annotations = _meta(new_pod, "labels"), _meta(new_pod, "annotations")
    revision = update_spec.revision
    pod_labels.update(revision_labels)
    if lifecycle_updating:
        pod_labels[LIFECYCLE_STATE_LABEL] = str(LifecycleState.UPDATING)
        pod_annotations[LIFECYCLE_TIMESTAMP_ANNOTATION] = format_time(now)
    state = InPlaceUpdateState(
        revision=revision,
        update_timestamp=as_utc(now),
        update_env_from_metadata=update_spec.update_env_from_metadata,
        update_images=bool(update_spec.container_images),
    )
    pod_annotations[STATE_KEY] = state.to_json()
    pod_annotations.pop(STATE_KEY_OLD, None)
    if update_spec.grace_seconds <= 0:
        new_pod, _ = apply_update_spec(new_pod, update_spec, state, now)
        for key in (GRACE_KEY, GRACE_KEY_OLD):
            _meta(new_pod, "annotations").pop(key, None)
    else:
        pod_annotations[GRACE_KEY] = update_spec.to_json()
    return new_pod


class RefreshKind(StrEnum):
    """What :func:`refresh_in_place_update` wants done to the pod."""

    NONE = "None"
    WAIT_GRACE = "WaitGrace"
    FINISH_GRACE = "FinishGrace"
    DROP_GRACE = "DropGrace"
    NEXT_BATCH = "NextBatch"
    MARK_READY = "MarkReady"
    ERROR = "Error"


@dataclass(frozen=True)
class RefreshDecision:
    """Result of :func:`refresh_in_place_update`.

    ``pod`` is the pod to write (FinishGrace, DropGrace, NextBatch), ``condition`` the
    ``InPlaceUpdateReady=True`` condition to set through the status subresource (MarkReady),
    ``requeue_after`` the remaining grace (WaitGrace), ``error`` a message (Error).
    """

    kind: RefreshKind
    pod: dict[str, Any] | None = None
    condition: dict[str, Any] | None = None
    requeue_after: timedelta | None = None
    error: str | None = None


def _without_grace(pod: KubeObject) -> dict[str, Any]:
    new_pod: dict[str, Any] = copy.deepcopy(dict(pod))
    for key in (GRACE_KEY, GRACE_KEY_OLD):
        _meta(new_pod, "annotations").pop(key, None)
    return new_pod


def _refresh_grace(pod: KubeObject, grace_text: str, now: datetime) -> RefreshDecision:
    try:
        update_spec = InPlaceUpdateSpec.from_json(grace_text)
    except ValueError as exc:
        return RefreshDecision(RefreshKind.ERROR, error=f"invalid {GRACE_KEY}: {exc}")
    state_text = state_annotation(pod)
    if state_text is None:
        return RefreshDecision(RefreshKind.ERROR, error=f"pod has {GRACE_KEY} but {STATE_KEY} not found")
    try:
        state = InPlaceUpdateState.from_json(state_text)
    except ValueError:
        return RefreshDecision(RefreshKind.NONE)
    if not equal_to_revision_hash(pod, update_spec.revision):
        return RefreshDecision(RefreshKind.DROP_GRACE, pod=_without_grace(pod))
    grace = timedelta(seconds=update_spec.grace_seconds)
    elapsed = as_utc(now) - state.update_timestamp if state.update_timestamp else grace
    if elapsed < grace:
        remaining = grace - elapsed
        seconds = int(remaining.total_seconds()) + (0 if remaining.total_seconds().is_integer() else 1)
        return RefreshDecision(RefreshKind.WAIT_GRACE, requeue_after=timedelta(seconds=seconds))
    new_pod, _ = apply_update_spec(pod, update_spec, state, now)
    return RefreshDecision(RefreshKind.FINISH_GRACE, pod=_without_grace(new_pod))


def refresh_in_place_update(pod: KubeObject, now: datetime) -> RefreshDecision:
    """Per-reconcile in-place bookkeeping for one pod (upstream ``Refresh``).

    1. Grace annotation present: drop it if the pod's revision moved on, wait out the grace
       period (rounded up to whole seconds), or apply the stored spec.
    2. State present but containers not done: nothing. Done with a next batch pending and the
       previous batch's containers Ready: patch the next batch.
    3. Otherwise, with the ``InPlaceUpdateReady`` readiness gate, set that condition True
       (unless it already is, with empty reason and message).
    """
    grace_text = grace_annotation(pod)
    if grace_text is not None:
        return _refresh_grace(pod, grace_text, now)
    state_text = state_annotation(pod)
    if state_text is not None:
        try:
            state = InPlaceUpdateState.from_json(state_text)
        except ValueError as exc:
            return RefreshDecision(RefreshKind.ERROR, error=f"invalid {STATE_KEY}: {exc}")
        if not containers_update_completed(pod, state):
            return RefreshDecision(RefreshKind.NONE)
        if state.has_next_batch:
            for cname in state.containers_required_ready or ():
                entry = container_status(pod, cname)
                if entry is None or not entry.get("ready"):
                    return RefreshDecision(RefreshKind.NONE)
            next_spec = InPlaceUpdateSpec(
                container_images=state.next_container_images,
                container_ref_metadata=state.next_container_ref_metadata,
                update_env_from_metadata=state.update_env_from_metadata,
            )
            new_pod, _ = apply_update_spec(pod, next_spec, state, now)
            return RefreshDecision(RefreshKind.NEXT_BATCH, pod=new_pod)
    if not has_in_place_readiness_gate(pod):
        return RefreshDecision(RefreshKind.NONE)
    current = get_condition(pod, IN_PLACE_UPDATE_READY)
    if (
        current is not None
        and current.get("status") == "True"
        and not current.get("reason")
        and not current.get("message")
    ):
        return RefreshDecision(RefreshKind.NONE)
    condition = {"type": IN_PLACE_UPDATE_READY, "status": "True", "lastTransitionTime": format_time(now)}
    return RefreshDecision(RefreshKind.MARK_READY, condition=condition)


def pod_patch(old_pod: KubeObject, new_pod: KubeObject) -> dict[str, Any]:
    """Strategic-merge patch turning ``old_pod`` into ``new_pod`` for what in-place updates change.

    Covers ``metadata.labels`` / ``metadata.annotations`` (removed keys map to ``None``) and
    container images (a ``spec.containers`` list keyed by ``name``). ``metadata.resourceVersion``
    of ``old_pod`` is included as an optimistic-concurrency precondition when known. Returns
    ``{}`` when nothing differs.
    """
    patch: dict[str, Any] = {}
    meta: dict[str, Any] = {}
    for key in ("labels", "annotations"):
        diff = merge_patch(
            mapping(mapping(old_pod.get("metadata")).get(key)),
            mapping(mapping(new_pod.get("metadata")).get(key)),
        )
        if diff:
            meta[key] = diff
    old_images = {
        mapping(c).get("name"): mapping(c).get("image") for c in sequence(spec(old_pod).get("containers"))
    }
    containers = [
        {"name": mapping(c).get("name"), "image": mapping(c).get("image")}
        for c in sequence(spec(new_pod).get("containers"))
        if old_images.get(mapping(c).get("name")) != mapping(c).get("image")
    ]
    if containers:
        patch["spec"] = {"containers": containers}
    if meta:
        patch["metadata"] = meta
    version = mapping(old_pod.get("metadata")).get("resourceVersion")
    if patch and version:
        patch.setdefault("metadata", {})["resourceVersion"] = version
    return patch
