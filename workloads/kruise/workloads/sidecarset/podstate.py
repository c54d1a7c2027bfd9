"""Where an injected pod stands with one SidecarSet (pure; ``sidecarcontrol`` common control).

- *consistent with* the SidecarSet (:func:`has_sidecars`): the pod has every sidecar container
  (both ``-1``/``-2`` and the working-container entry for a hot-upgrade one);
- *updated* (:func:`is_updated`): its recorded hash is the SidecarSet's current hash;
- *state consistent* (:func:`is_state_consistent`): the kubelet runs what the spec says for the
  sidecar containers: with digest images, the status imageIDs name those digests; otherwise
  every container recorded in ``kruise.io/sidecarset-inplace-update-state`` reports a new
  imageID, or the same one with ``status.image`` equal to the spec image (a re-tag);
- *ready* (:func:`is_ready_for`): Running, Ready, not being deleted, and every idle hot-upgrade
  container on its empty image;
- *upgradable* (:func:`upgradability`): only images changed since injection (same
  ``-without-image`` hash), and no ready sidecar is still being upgraded.

Unlike the CloneSet engine's completion check, a recorded container without status is not a
reason to wait, and the spec image is compared as written (no ``:latest`` appended).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from kruise.workloads.objects import (
    KubeObject,
    annotations_of,
    is_being_deleted,
    mapping,
    sequence,
    spec,
    status,
)
from kruise.workloads.pods import is_ready, is_running
from kruise.workloads.sidecarset.hotupgrade import (
    container_names,
    empty_image,
    is_hot_upgrade,
    working_and_idle,
)
from kruise.workloads.sidecarset.keys import (
    HASH_ANNOTATION,
    HASH_WITHOUT_IMAGE_ANNOTATION,
    INPLACE_UPDATE_STATE_ANNOTATION,
)
from kruise.workloads.sidecarset.podinfo import (
    hash_of,
    hash_without_image_of,
    injected_names,
    parse_states,
    working_containers,
)

__all__ = [
    "Upgradability",
    "container_images",
    "has_sidecars",
    "image_ids",
    "is_image_digest",
    "is_injected",
    "is_ready_for",
    "is_state_consistent",
    "is_updated",
    "parse_image",
    "sidecar_containers_in_pod",
    "sidecar_update_completed",
    "upgradability",
]


def _name(obj: KubeObject) -> str:
    return str(mapping(obj.get("metadata")).get("name") or "")


def _sidecars(sidecarset: KubeObject) -> Sequence[Mapping[str, Any]]:
    return [mapping(c) for c in sequence(spec(sidecarset).get("containers"))]


def sidecar_containers_in_pod(sidecarset: KubeObject) -> set[str]:
    """The pod container names the SidecarSet's containers become (``GetSidecarContainersInPod``)."""
    names: set[str] = set()
    for sidecar in _sidecars(sidecarset):
        name = str(sidecar.get("name") or "")
        names.update(container_names(name) if is_hot_upgrade(sidecar) else (name,))
    return names


def container_images(pod: KubeObject) -> dict[str, str]:
    """``spec.containers`` name -> image."""
    return {
        str(mapping(c).get("name")): str(mapping(c).get("image") or "")
        for c in sequence(spec(pod).get("containers"))
    }


def _container_names_of(pod: KubeObject) -> set[str]:
    return {str(mapping(c).get("name")) for c in sequence(spec(pod).get("containers"))}


def is_injected(pod: KubeObject, sidecarset: KubeObject) -> bool:
    """The SidecarSet is in the pod's ``kruise.io/sidecarset-injected-list``."""
    return _name(sidecarset) in injected_names(pod)


def has_sidecars(pod: KubeObject, sidecarset: KubeObject) -> bool:
    """Every sidecar container is in the pod (``IsPodConsistentWithSidecarSet``)."""
    names = _container_names_of(pod)
    working = working_containers(pod)
    for sidecar in _sidecars(sidecarset):
        name = str(sidecar.get("name") or "")
        if is_hot_upgrade(sidecar):
            first, second = container_names(name)
            if name not in working or first not in names or second not in names:
                return False
        elif name not in names:
            return False
    return True


def is_updated(sidecarset: KubeObject, pod: KubeObject) -> bool:
    """The pod carries the SidecarSet's current hash (``IsPodSidecarUpdated``)."""
    return str(annotations_of(sidecarset).get(HASH_ANNOTATION) or "") == hash_of(pod, _name(sidecarset))


def parse_image(image: str) -> tuple[str, str, str] | None:
    """``(repository, tag, digest)`` of an image reference (``util.ParseImage``), ``None`` if malformed.

    A ``@digest`` suffix is the digest; a ``:tag`` in the last path component is the tag.
    """
    if not image or any(c.isspace() for c in image):
        return None
    name, _, digest = image.partition("@")
    if digest and ":" not in digest:
        return None
    head, _, last = name.rpartition("/")
    repo, tag = name, ""
    if ":" in last:
        last, _, tag = last.rpartition(":")
        repo = f"{head}/{last}" if head else last
    if not repo or repo != repo.lower():
        return None
    return repo, tag, digest


def is_image_digest(image: str) -> bool:
    """The image names a digest (``repo@sha256:...``)."""
    parsed = parse_image(image)
    return parsed is not None and bool(parsed[2])


def _images_equal(first: str, second: str) -> bool:
    """``util.IsContainerImageEqual``: repo+digest for two digests, else repo+tag."""
    one, two = parse_image(first), parse_image(second)
    if one is None or two is None:
        return False
    if one[2] and two[2]:
        return one[0] == two[0] and one[2] == two[2]
    return one[0] == two[0] and one[1] == two[1]


def image_ids(pod: KubeObject) -> dict[str, str]:
    """``status.containerStatuses`` name -> imageID without a ``scheme://`` prefix."""
    out: dict[str, str] = {}
    for entry in sequence(status(pod).get("containerStatuses")):
        image_id = str(mapping(entry).get("imageID") or "")
        out[str(mapping(entry).get("name"))] = image_id.split("://", 1)[1] if "://" in image_id else image_id
    return out


def sidecar_update_completed(
    pod: KubeObject, sidecarsets: Collection[str], containers: Collection[str]
) -> bool:
    """``IsSidecarContainerUpdateCompleted`` for ``containers`` after upgrades by ``sidecarsets``."""
    if INPLACE_UPDATE_STATE_ANNOTATION not in annotations_of(pod):
        return True  # injected, never upgraded
    states = parse_states(pod)
    if states is None:
        return False  # malformed: upstream waits
    recorded: dict[str, str] = {}
    for name in sorted(sidecarsets):
        if name in states:
            recorded.update(states[name].last_container_statuses)
    images = container_images(pod)
    for entry in sequence(status(pod).get("containerStatuses")):
        cs = mapping(entry)
        cname = str(cs.get("name"))
        if cname not in containers or cname not in recorded:
            continue
        if recorded[cname] == str(cs.get("imageID") or "") and images.get(cname) != cs.get("image"):
            return False
    return True


def is_state_consistent(sidecarset: KubeObject, pod: KubeObject, containers: Collection[str] = ()) -> bool:
    """The kubelet runs the spec's images for ``containers`` (default: every sidecar container)
    (``IsPodStateConsistent``)."""
    if len(sequence(spec(pod).get("containers"))) != len(sequence(status(pod).get("containerStatuses"))):
        return False
    wanted = set(containers) or sidecar_containers_in_pod(sidecarset)
    ids = image_ids(pod)
    all_digest = True
    for name, image in container_images(pod).items():
        if name not in wanted:
            continue
        if not is_image_digest(image):
            all_digest = False
            break
        if name not in ids or not _images_equal(image, ids[name]):
            return False
    if all_digest:
        return True
    return sidecar_update_completed(pod, {_name(sidecarset)}, wanted)


def is_ready_for(sidecarset: KubeObject, pod: KubeObject) -> bool:
    """Running and Ready, not being deleted, idle hot-upgrade containers on their empty image
    (``commonControl.IsPodReady``)."""
    images = container_images(pod)
    for sidecar in _sidecars(sidecarset):
        if is_hot_upgrade(sidecar):
            _, idle = working_and_idle(str(sidecar.get("name") or ""), pod)
            empty = empty_image(sidecar)
            if empty and idle in images and images[idle] != empty:
                return False
    return is_running(pod) and is_ready(pod) and not is_being_deleted(pod)


@dataclass(frozen=True)
class Upgradability:
    """``IsSidecarSetUpgradable``: ``can_upgrade`` False when more than images changed;
    ``consistent`` False while a ready sidecar is still being upgraded (wait for it)."""

    can_upgrade: bool
    consistent: bool


def upgradability(sidecarset: KubeObject, pod: KubeObject) -> Upgradability:
    """Whether the SidecarSet can upgrade ``pod`` in place now (see :class:`Upgradability`)."""
    wanted = str(annotations_of(sidecarset).get(HASH_WITHOUT_IMAGE_ANNOTATION) or "")
    if hash_without_image_of(pod, _name(sidecarset)) != wanted:
        return Upgradability(False, False)
    ready = {
        str(mapping(s).get("name")): bool(mapping(s).get("ready"))
        for s in sequence(status(pod).get("containerStatuses"))
    }
    for name in sorted(sidecar_containers_in_pod(sidecarset)):
        if ready.get(name) and not is_state_consistent(sidecarset, pod, {name}):
            return Upgradability(True, False)
    return Upgradability(True, True)
