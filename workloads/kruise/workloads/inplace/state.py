"""The in-place update annotations on a pod, and the "has it finished?" check.

``apps.kruise.io/inplace-update-state`` records what the last in-place update did (revision,
time, the imageIDs containers had before, lower-priority batches still to go);
``apps.kruise.io/inplace-update-grace`` holds an update spec waiting for its grace period.
Both fall back to their legacy keys (``inplace-update-state`` / ``inplace-update-grace``).
The JSON shapes follow upstream ``apps/pub/inplace_update.go`` field names and ``omitempty``.

Completion mirrors ``DefaultCheckInPlaceUpdateCompleted``. The runtime-containers-meta hash
comparisons are a ``hashes_consistent`` callable (:func:`runtime_hashes_consistent` by
default: the env-from-metadata hash the daemon reports; the kubelet's plain hash is not
computed, so the imageID comparison decides there).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from kruise.core.containermeta import RUNTIME_CONTAINERS_META_KEY, env_hashes_consistent
from kruise.workloads.objects import (
    KubeObject,
    annotations_of,
    as_utc,
    format_time,
    mapping,
    parse_time,
    sequence,
    spec,
    status,
)
from kruise.workloads.pods import IN_PLACE_UPDATE_READY, get_condition

STATE_KEY = "apps.kruise.io/inplace-update-state"
STATE_KEY_OLD = "inplace-update-state"
GRACE_KEY = "apps.kruise.io/inplace-update-grace"
GRACE_KEY_OLD = "inplace-update-grace"


@dataclass(frozen=True)
class InPlaceUpdateState:
    """The ``apps.kruise.io/inplace-update-state`` annotation (upstream ``InPlaceUpdateState``).

    ``last_container_statuses`` maps container name to its imageID before the update;
    ``container_batches_record`` holds ``(timestamp, container names)`` per patched batch.
    """

    revision: str = ""
    update_timestamp: datetime | None = None
    last_container_statuses: Mapping[str, str] = field(default_factory=dict)
    update_env_from_metadata: bool = False
    update_images: bool = False
    update_resources: bool = False
    next_container_images: Mapping[str, str] = field(default_factory=dict)
    next_container_ref_metadata: Mapping[str, Mapping[str, Mapping[str, str]]] = field(default_factory=dict)
    containers_required_ready: Sequence[str] | None = None
    container_batches_record: Sequence[tuple[datetime | None, Sequence[str]]] = ()

    @property
    def has_next_batch(self) -> bool:
        """Lower-priority containers remain to be updated in a later batch."""
        return bool(self.next_container_images or self.next_container_ref_metadata)

    def to_json(self) -> str:
        """Serialise with Go's field names, order and ``omitempty`` rules."""
        body: dict[str, Any] = {
            "revision": self.revision,
            "updateTimestamp": format_time(self.update_timestamp) if self.update_timestamp else None,
            "lastContainerStatuses": {
                k: {"imageID": v} if v else {} for k, v in self.last_container_statuses.items()
            }
            or None,
        }
        optional: dict[str, Any] = {
            "updateEnvFromMetadata": self.update_env_from_metadata,
            "updateResources": self.update_resources,
            "updateImages": self.update_images,
            "nextContainerImages": dict(self.next_container_images),
            "nextContainerRefMetadata": {k: dict(v) for k, v in self.next_container_ref_metadata.items()},
            "preCheckBeforeNext": None
            if self.containers_required_ready is None
            else (
                {"containersRequiredReady": list(self.containers_required_ready)}
                if self.containers_required_ready
                else {}
            ),
            "containerBatchesRecord": [
                {"timestamp": format_time(t) if t else None, "containers": list(c)}
                for t, c in self.container_batches_record
            ],
        }
        body.update({k: v for k, v in optional.items() if v or (k == "preCheckBeforeNext" and v is not None)})
        return json.dumps(body, separators=(",", ":"))

    @classmethod
    def from_json(cls, text: str) -> InPlaceUpdateState:
        """Parse the annotation value. Raises ``ValueError`` on malformed JSON."""
        body = mapping(json.loads(text))
        pre_check = body.get("preCheckBeforeNext")
        return cls(
            revision=str(body.get("revision") or ""),
            update_timestamp=parse_time(body.get("updateTimestamp")),
            last_container_statuses={
                str(k): str(mapping(v).get("imageID") or "")
                for k, v in mapping(body.get("lastContainerStatuses")).items()
            },
            update_env_from_metadata=bool(body.get("updateEnvFromMetadata")),
            update_images=bool(body.get("updateImages")),
            update_resources=bool(body.get("updateResources")),
            next_container_images=dict(mapping(body.get("nextContainerImages"))),
            next_container_ref_metadata={
                k: dict(mapping(v)) for k, v in mapping(body.get("nextContainerRefMetadata")).items()
            },
            containers_required_ready=None
            if pre_check is None
            else [str(c) for c in sequence(mapping(pre_check).get("containersRequiredReady"))],
            container_batches_record=[
                (
                    parse_time(mapping(r).get("timestamp")),
                    [str(c) for c in sequence(mapping(r).get("containers"))],
                )
                for r in sequence(body.get("containerBatchesRecord"))
            ],
        )


def state_annotation(pod: KubeObject) -> str | None:
    """The in-place update state JSON (new key, else the legacy ``inplace-update-state``)."""
    values = annotations_of(pod)
    value = values.get(STATE_KEY, values.get(STATE_KEY_OLD))
    return value if isinstance(value, str) else None


def grace_annotation(pod: KubeObject) -> str | None:
    """The pending grace-period spec JSON (new key, else the legacy ``inplace-update-grace``)."""
    values = annotations_of(pod)
    value = values.get(GRACE_KEY, values.get(GRACE_KEY_OLD))
    return value if isinstance(value, str) else None


def parse_state(pod: KubeObject) -> InPlaceUpdateState | None:
    """The pod's :class:`InPlaceUpdateState`; ``None`` without the annotation.

    Raises:
        ValueError: the annotation is not valid JSON.
    """
    text = state_annotation(pod)
    return None if text is None else InPlaceUpdateState.from_json(text)


def _spec_image(image: str) -> str:
    return image if ":" in image else f"{image}:latest"


#: ``(pod, runtime containers meta, "PlainHash" | "ExtractedEnvFromMetadataHash") -> consistent``.
HashCheck = Callable[[KubeObject, Mapping[str, Any], str], bool]


def runtime_hashes_consistent(pod: KubeObject, meta: Mapping[str, Any], kind: str) -> bool:
    """The default :data:`HashCheck`: ``ExtractedEnvFromMetadataHash`` as upstream checks it
    (:func:`kruise.core.containermeta.env_hashes_consistent`: the daemon's hash of every
    container's running env equals the hash of what the pod's metadata now asks for, for the
    current container IDs); ``PlainHash`` is never confirmed (the kubelet's container hash is not
    computed here), so the imageID rule decides."""
    return kind == "ExtractedEnvFromMetadataHash" and env_hashes_consistent(pod, meta)


def containers_update_completed(
    pod: KubeObject, state: InPlaceUpdateState, *, hashes_consistent: HashCheck = runtime_hashes_consistent
) -> bool:
    """Whether the last batch's containers run their new images.

    Mirrors ``defaultCheckContainersInPlaceUpdateCompleted``.

    With ``updateEnvFromMetadata`` the runtime-containers-meta annotation must exist (and pass
    ``hashes_consistent``). If ``hashes_consistent`` confirms the plain hashes, done.
    Otherwise each container recorded in ``lastContainerStatuses`` must report a different
    imageID, or the same imageID with ``status.image`` equal to the spec image (``:latest``
    appended when the spec image has no tag); a recorded container without status is not done.
    """
    raw_meta = annotations_of(pod).get(RUNTIME_CONTAINERS_META_KEY)
    try:
        meta = mapping(json.loads(raw_meta)) if isinstance(raw_meta, str) else None
    except ValueError:
        return False
    if state.update_env_from_metadata:
        if meta is None:
            return False
        if not hashes_consistent(pod, meta, "ExtractedEnvFromMetadataHash"):
            return False
    if meta is not None and hashes_consistent(pod, meta, "PlainHash"):
        return True
    spec_images = {
        str(mapping(c).get("name") or ""): _spec_image(str(mapping(c).get("image") or ""))
        for c in sequence(spec(pod).get("containers"))
    }
    remaining = dict(state.last_container_statuses)
    for entry in sequence(status(pod).get("containerStatuses")):
        entry_map = mapping(entry)
        cname = str(entry_map.get("name") or "")
        if cname not in remaining:
            continue
        if remaining[cname] == str(entry_map.get("imageID") or "") and spec_images.get(
            cname, ""
        ) != entry_map.get("image"):
            return False
        del remaining[cname]
    return not remaining


def check_in_place_update_completed(
    pod: KubeObject, *, hashes_consistent: HashCheck = runtime_hashes_consistent
) -> bool:
    """Whether the pod's in-place update has finished (``DefaultCheckInPlaceUpdateCompleted``).

    Not complete while the grace annotation exists, the state JSON is malformed, or a next
    batch remains; complete when there is no state annotation at all; otherwise
    :func:`containers_update_completed` decides.
    """
    if grace_annotation(pod) is not None:
        return False
    try:
        state = parse_state(pod)
    except ValueError:
        return False
    if state is None:
        return True
    if state.has_next_batch:
        return False
    return containers_update_completed(pod, state, hashes_consistent=hashes_consistent)


def in_place_update_seconds(pod: KubeObject, now: datetime) -> float | None:
    """Seconds since ``pod``'s in-place update started (the state annotation's
    ``updateTimestamp``), while its ``InPlaceUpdateReady`` condition is False, i.e. the update is
    still under way; None otherwise (a new pod, an already Ready one, no or a broken state)."""
    condition = get_condition(pod, IN_PLACE_UPDATE_READY)
    if condition is None or condition.get("status") != "False":
        return None
    try:
        state = parse_state(pod)
    except ValueError:
        return None
    if state is None or state.update_timestamp is None:
        return None
    return max(0.0, (as_utc(now) - as_utc(state.update_timestamp)).total_seconds())
