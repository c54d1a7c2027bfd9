"""The pod an upgrade, a hot-upgrade flip or an upgradability verdict writes (pure).

- :func:`upgraded_pod` (``updatePodSidecarContainer``): each sidecar whose image differs gets the
  SidecarSet's image (a hot-upgrade one in its idle container, which becomes the working one,
  with the version annotations set to the SidecarSet's resourceVersion); the pod's hash entry is
  renewed (time, sidecar list, ControllerRevision); the imageIDs the changed containers run now
  are recorded in ``kruise.io/sidecarset-inplace-update-state`` (an existing entry keeps its
  revision and time, as upstream); a pod without an injected list gets one; ``patchPodMetadata``
  is applied again (only ``Overwrite``/``MergePatchJson`` change existing keys).
- :func:`flipped_pod` (``flipPodSidecarContainerDo``): the idle container of each hot-upgrade
  sidecar back on the empty image (versions ``0``), recorded in the update state.
- :func:`upgradable_condition` (``updatePodSidecarSetUpgradableCondition``): the
  ``SidecarSetUpgradable`` condition with this SidecarSet's verdict merged into its JSON message.

Only container images and annotations change, so the write is the shared engine's
:func:`~kruise.workloads.inplace.pod_patch` (with the read resourceVersion as precondition).
"""

from __future__ import annotations

import copy
import json
from collections.abc import Collection, Mapping, Sequence
from datetime import datetime
from typing import Any

from kruise.workloads.inplace.state import InPlaceUpdateState
from kruise.workloads.objects import (
    KubeObject,
    annotations_of,
    format_time,
    mapping,
    metadata,
    sequence,
    spec,
)
from kruise.workloads.pods import get_condition
from kruise.workloads.sidecarset.hashing import is_native_sidecar
from kruise.workloads.sidecarset.hotupgrade import (
    container_names,
    empty_image,
    is_hot_upgrade,
    pick_container_to_upgrade,
    working_and_idle,
)
from kruise.workloads.sidecarset.inject import patch_pod_annotations
from kruise.workloads.sidecarset.keys import (
    HASH_ANNOTATION,
    INJECTED_LIST_ANNOTATION,
    INPLACE_UPDATE_STATE_ANNOTATION,
    NOT_UPGRADABLE_REASON,
    UPGRADABLE_CONDITION,
    UPGRADABLE_REASON,
    WORKING_HOT_UPGRADE_ANNOTATION,
    version_alt_annotation,
    version_annotation,
)
from kruise.workloads.sidecarset.podinfo import (
    UpgradeSpec,
    dump_json,
    dump_specs,
    dump_states,
    specs_of,
    states_of,
    working_containers,
)
from kruise.workloads.sidecarset.podstate import is_state_consistent

__all__ = ["flipped_pod", "sidecar_list", "upgradable_condition", "upgraded_pod"]

JSON = dict[str, Any]


def _name(obj: KubeObject) -> str:
    return str(metadata(obj).get("name") or "")


def sidecar_list(sidecarset: KubeObject) -> tuple[str, ...]:
    """The containers and native-sidecar init containers, sorted (``listSidecarNameInSidecarSet``)."""
    body = spec(sidecarset)
    names = {str(mapping(c).get("name")) for c in sequence(body.get("containers"))}
    names.update(
        str(mapping(c).get("name"))
        for c in sequence(body.get("initContainers"))
        if is_native_sidecar(mapping(c))
    )
    return tuple(sorted(names))


def _containers(pod: JSON) -> dict[str, JSON]:
    return {str(c.get("name")): c for c in pod.get("spec", {}).get("containers", []) if isinstance(c, dict)}


def _record_states(sidecarset: KubeObject, pod: JSON, changed: Sequence[str], now: datetime) -> None:
    """``UpdatePodAnnotationsInUpgrade``: remember the imageIDs the changed containers run now."""
    states = states_of(pod)
    name = _name(sidecarset)
    state = states.get(name) or InPlaceUpdateState(
        revision=str(annotations_of(sidecarset).get(HASH_ANNOTATION) or ""), update_timestamp=now
    )
    ids = {**state.last_container_statuses}
    current = {
        str(mapping(s).get("name")): str(mapping(s).get("imageID") or "")
        for s in sequence(mapping(pod.get("status")).get("containerStatuses"))
    }
    for container in changed:
        ids[container] = current.get(container, "")
    states[name] = InPlaceUpdateState(
        revision=state.revision, update_timestamp=state.update_timestamp, last_container_statuses=ids
    )
    pod["metadata"]["annotations"][INPLACE_UPDATE_STATE_ANNOTATION] = dump_states(states)


def _upgrade_hot(sidecarset: KubeObject, sidecar: Mapping[str, Any], pod: JSON) -> str | None:
    containers = _containers(pod)
    pair = container_names(str(sidecar.get("name") or ""))
    consistent = {n: is_state_consistent(sidecarset, pod, {n}) for n in pair}
    target, other = pick_container_to_upgrade(sidecar, pod, consistent)
    if (
        target not in containers
        or other not in containers
        or sidecar.get("image") == containers[other].get("image")
    ):
        return None
    containers[target]["image"] = sidecar.get("image")
    annotations = pod["metadata"]["annotations"]
    working = working_containers(pod)
    working[str(sidecar.get("name"))] = target
    annotations[WORKING_HOT_UPGRADE_ANNOTATION] = dump_json(dict(sorted(working.items())))
    version = str(metadata(sidecarset).get("resourceVersion") or "")
    annotations[version_annotation(target)] = version
    annotations[version_alt_annotation(target)] = annotations.get(version_annotation(other), "")
    annotations[version_alt_annotation(other)] = version
    return target


def upgraded_pod(
    sidecarset: KubeObject, pod: KubeObject, now: datetime, *, matched_names: Collection[str] = ()
) -> JSON:
    """The pod after the SidecarSet's in-place upgrade (see the module docstring).

    ``matched_names`` are the SidecarSets selecting the pod, written as its injected list when
    the pod has none (pods injected by old versions).
    """
    out = copy.deepcopy(dict(pod))
    meta = out.setdefault("metadata", {})
    meta["annotations"] = dict(mapping(meta.get("annotations")))
    changed: list[str] = []
    for raw in sequence(spec(sidecarset).get("containers")):
        sidecar = mapping(raw)
        if is_hot_upgrade(sidecar):
            target = _upgrade_hot(sidecarset, sidecar, out)
            if target is not None:
                changed.append(target)
            continue
        container = _containers(out).get(str(sidecar.get("name")))
        if container is not None and container.get("image") != sidecar.get("image"):
            container["image"] = sidecar.get("image")
            changed.append(str(sidecar.get("name")))
    specs = specs_of(out)
    specs[_name(sidecarset)] = UpgradeSpec(
        hash=str(annotations_of(sidecarset).get(HASH_ANNOTATION) or ""),
        sidecarset=_name(sidecarset),
        update_timestamp=now,
        sidecar_list=sidecar_list(sidecarset),
        controller_revision=str(mapping(sidecarset.get("status")).get("latestRevision") or ""),
    )
    meta["annotations"][HASH_ANNOTATION] = dump_specs(specs)
    _record_states(sidecarset, out, changed, now)
    if not meta["annotations"].get(INJECTED_LIST_ANNOTATION):
        meta["annotations"][INJECTED_LIST_ANNOTATION] = ",".join(matched_names)
    patch_pod_annotations(meta["annotations"], sequence(spec(sidecarset).get("patchPodMetadata")))
    return out


def flipped_pod(sidecarset: KubeObject, pod: KubeObject, now: datetime) -> JSON:
    """The pod with each hot-upgrade sidecar's idle container back on the empty image."""
    out = copy.deepcopy(dict(pod))
    meta = out.setdefault("metadata", {})
    meta["annotations"] = dict(mapping(meta.get("annotations")))
    containers = _containers(out)
    changed: list[str] = []
    for raw in sequence(spec(sidecarset).get("containers")):
        sidecar = mapping(raw)
        if not is_hot_upgrade(sidecar):
            continue
        working, idle = working_and_idle(str(sidecar.get("name")), out)
        empty = empty_image(sidecar)
        if idle not in containers or containers[idle].get("image") == empty:
            continue
        containers[idle]["image"] = empty
        changed.append(idle)
        meta["annotations"][version_annotation(idle)] = "0"
        meta["annotations"][version_alt_annotation(working)] = "0"
    _record_states(sidecarset, out, changed, now)
    return out


def upgradable_condition(pod: KubeObject, sidecarset: str, upgradable: bool, now: datetime) -> JSON | None:
    """The ``SidecarSetUpgradable`` condition with ``sidecarset``'s verdict, or ``None`` when the
    pod's condition already says so. The message is a JSON map SidecarSet -> verdict; the status
    is True (``AllSidecarsetUpgradable``) only when every verdict is, else False
    (``UpdateImmutableField``); the transition time moves only with the status."""
    old = get_condition(pod, UPGRADABLE_CONDITION) or {}
    try:
        verdicts = dict(mapping(json.loads(str(old.get("message") or "{}"))))
    except ValueError:
        verdicts = {}
    verdicts[sidecarset] = upgradable
    status = "True" if all(v is True for v in verdicts.values()) else "False"
    condition = {
        "type": UPGRADABLE_CONDITION,
        "status": status,
        "reason": UPGRADABLE_REASON if status == "True" else NOT_UPGRADABLE_REASON,
        "message": json.dumps(dict(sorted(verdicts.items())), separators=(",", ":")),
        "lastTransitionTime": old.get("lastTransitionTime")
        if old.get("status") == status
        else format_time(now),
    }
    if all(old.get(k) == condition[k] for k in ("status", "reason", "message")):
        return None
    return condition
