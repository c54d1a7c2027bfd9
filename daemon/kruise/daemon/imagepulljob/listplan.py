"""What an ImageListPullJob should do, decided from it and its ImagePullJobs (pure).

Mirrors OpenKruise v1.8 ``pkg/controller/imagelistpulljob``:

- one ImagePullJob per ``spec.images`` entry, ``generateName: <list>-``, controlled by the list
  (``ownerReferences`` with ``controller: true``), labelled ``controller-revision-hash`` with
  the hash of the shared template (the list's spec without ``images``), its spec the template
  plus ``image``;
- a child whose image left the list is deleted; a child whose hash differs (the template
  changed) is replaced;
- status: ``desired`` = number of images; among started children (``status.startTime`` set)
  ``active`` counts those with ``active > 0``, ``completed`` those with ``desired == succeeded +
  failed``, ``succeeded`` those with ``desired == succeeded``; ``failedImageStatuses`` lists the
  children with failures; ``completionTime`` when every image completed (Always only);
- a completed list is deleted ``ttlSecondsAfterFinished`` after ``completionTime``.

The template hash is FNV-32a over the template's canonical JSON, encoded with Kubernetes'
``SafeEncodeString`` alphabet; upstream hashes Go's spew dump instead, so a list adopted from an
upstream manager gets its children replaced once.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import orjson

from kruise.core.api import format_time
from kruise.daemon.imagepulljob.admission import NEVER

__all__ = ["HASH_LABEL", "ListPlan", "list_plan", "new_child", "template_hash"]

JSON = dict[str, Any]
HASH_LABEL = "controller-revision-hash"
_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"


def template_hash(lst: Mapping[str, Any]) -> str:
    """The hash of the list's ImagePullJob template (its spec without ``images``)."""
    template = {k: v for k, v in (lst.get("spec") or {}).items() if k != "images"}
    h = 0x811C9DC5
    for byte in orjson.dumps(template, option=orjson.OPT_SORT_KEYS):
        h = ((h ^ byte) * 0x01000193) & 0xFFFFFFFF
    return "".join(_ALPHABET[int(c) % len(_ALPHABET)] for c in str(h))


def new_child(lst: Mapping[str, Any], image: str, hash_: str) -> JSON:
    """The ImagePullJob the list creates for ``image``."""
    meta = lst["metadata"]
    template = {k: v for k, v in (lst.get("spec") or {}).items() if k != "images"}
    return {
        "apiVersion": "apps.kruise.io/v1alpha1",
        "kind": "ImagePullJob",
        "metadata": {
            "generateName": f"{meta['name']}-",
            "namespace": meta["namespace"],
            "labels": {HASH_LABEL: hash_},
            "ownerReferences": [
                {
                    "apiVersion": "apps.kruise.io/v1alpha1",
                    "kind": "ImageListPullJob",
                    "name": meta["name"],
                    "uid": meta["uid"],
                    "controller": True,
                    "blockOwnerDeletion": True,
                }
            ],
        },
        "spec": {**template, "image": image},
    }


@dataclass(frozen=True)
class ListPlan:
    """Children to create (bodies), to delete (``namespace/name`` keys), and the new status."""

    create: tuple[JSON, ...]
    delete: tuple[str, ...]
    status: JSON


def list_plan(lst: Mapping[str, Any], children: Iterable[JSON], now: datetime) -> ListPlan:
    """One round of a not yet completed list; ``children`` are its ImagePullJobs."""
    hash_ = template_hash(lst)
    spec = lst.get("spec") or {}
    images = list(spec.get("images") or [])
    by_image: dict[str, JSON] = {}
    for child in children:
        if not child["metadata"].get("deletionTimestamp"):
            by_image[(child.get("spec") or {}).get("image", "")] = child
    active = completed = succeeded = 0
    failed_statuses: list[JSON] = []
    for child in by_image.values():
        st = child.get("status") or {}
        if not st.get("startTime"):
            continue
        if st.get("active", 0) > 0:
            active += 1
        if st.get("failed", 0) > 0:
            name = child["metadata"]["name"]
            failed_statuses.append(
                {
                    "imagePullJob": name,
                    "name": child["spec"]["image"],
                    "message": "Please check for details which nodes failed by "
                    f"'kubectl get ImagePullJob {name}'.",
                }
            )
        if st.get("desired", 0) == st.get("failed", 0) + st.get("succeeded", 0):
            completed += 1
        if st.get("desired", 0) == st.get("succeeded", 0):
            succeeded += 1
    status: JSON = {
        "desired": len(images),
        "startTime": (lst.get("status") or {}).get("startTime") or format_time(now),
    }
    for key, value in (("active", active), ("completed", completed), ("succeeded", succeeded)):
        if value:
            status[key] = value
    if failed_statuses:
        status["failedImageStatuses"] = sorted(failed_statuses, key=lambda f: f["name"])
    if (spec.get("completionPolicy") or {}).get("type") != NEVER and status["desired"] == completed:
        status["completionTime"] = format_time(now)
    create: list[JSON] = []
    delete: list[str] = []
    for image in images:
        current = by_image.get(image)
        if current is None:
            create.append(new_child(lst, image, hash_))
        elif (current["metadata"].get("labels") or {}).get(HASH_LABEL) != hash_:
            delete.append(f"{current['metadata']['namespace']}/{current['metadata']['name']}")
            create.append(new_child(lst, image, hash_))
    for image, child in by_image.items():
        if image not in images:
            delete.append(f"{child['metadata']['namespace']}/{child['metadata']['name']}")
    return ListPlan(tuple(create), tuple(delete), status)
