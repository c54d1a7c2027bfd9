"""What the NodeImage controller should do, decided from a Node and its NodeImage (pure).

Mirrors OpenKruise v1.8 ``pkg/controller/nodeimage``:

- one NodeImage per Node, same name, cluster-scoped: created once the Node has been ``Ready``
  for ``--nodeimage-creation-delay`` (30 s; counted from the Ready condition's
  ``lastTransitionTime``), deleted when the Node is gone or being deleted (unless labelled
  ``apps.kruise.io/fake-nodeimage``); Nodes labelled ``type=virtual-kubelet`` get none;
- its labels follow the Node's;
- a tag leaves ``spec`` when it has no ``createdAt``, when all its ImagePullJob owners are gone
  (not found, or found with another UID), or when its ``pullPolicy.ttlSecondsAfterFinished``
  passed since the status (same tag and version) reported ``completionTime``; an image with no
  tag left goes too;
- ``status``: a tag the daemon has not answered (no status entry of its version) 10 min after
  ``createdAt`` is marked ``Failed`` with ``node has not responded for a long time``; an
  unfinished tag past ``activeDeadlineSeconds + 10 min`` since ``createdAt`` is ``Failed`` with
  ``pulling exceeds the activeDeadlineSeconds``; each such failure is a ``PullImageFailed``
  Warning on the NodeImage and on every owner job.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from kruise.core.api import format_time, parse_time

__all__ = [
    "DEFAULT_CREATION_DELAY",
    "FAKE_LABEL",
    "RESPONSE_TIMEOUT",
    "Failure",
    "SpecChange",
    "StatusChange",
    "creation_wait",
    "prune_spec",
    "timeout_status",
]

JSON = dict[str, Any]
DEFAULT_CREATION_DELAY = 30.0
"""Seconds a Node must have been Ready before its NodeImage is created (``--nodeimage-creation-delay``)."""
RESPONSE_TIMEOUT = 600.0
"""Seconds the daemon has to report a tag before it is marked Failed."""
FAKE_LABEL = "apps.kruise.io/fake-nodeimage"
VIRTUAL_KUBELET = ("type", "virtual-kubelet")
JobUid = Callable[[str, str], str | None]
"""``(namespace, name)`` -> the UID of that ImagePullJob, None when it does not exist."""


def creation_wait(
    node: Mapping[str, Any], now: datetime, delay: float = DEFAULT_CREATION_DELAY
) -> float | None:
    """None when ``node`` is not Ready (no NodeImage yet); else seconds left before its NodeImage
    may be created (0: now)."""
    if (node["metadata"].get("labels") or {}).get(VIRTUAL_KUBELET[0]) == VIRTUAL_KUBELET[1]:
        return None
    for cond in (node.get("status") or {}).get("conditions") or ():
        if cond.get("type") == "Ready":
            if cond.get("status") != "True":
                return None
            since = parse_time(cond.get("lastTransitionTime"))
            left = delay - (now - since).total_seconds() if since is not None else 0.0
            return max(left, 0.0)
    return None


@dataclass(frozen=True)
class SpecChange:
    """The NodeImage's new labels and spec (None: unchanged), the reasons, and when a TTL ends."""

    labels: dict[str, str] | None
    spec: JSON | None
    messages: tuple[str, ...] = ()
    requeue_after: float | None = None

    @property
    def modified(self) -> bool:
        return self.labels is not None or self.spec is not None


def _live_owners(owners: list[JSON], job_uid: JobUid) -> list[JSON]:
    live = []
    for ref in owners:
        group = str(ref.get("apiVersion", "")).partition("/")[0]
        if group != "apps.kruise.io" or ref.get("kind") != "ImagePullJob":
            live.append(ref)
            continue
        uid = job_uid(str(ref.get("namespace", "")), str(ref.get("name", "")))
        if uid is not None and uid == ref.get("uid"):
            live.append(ref)
    return live


def prune_spec(
    nodeimage: Mapping[str, Any], node: Mapping[str, Any] | None, job_uid: JobUid, now: datetime
) -> SpecChange:
    """``doUpdateNodeImage``: labels from ``node`` and the tags still wanted (module docstring)."""
    labels = None
    if node is not None:
        node_labels = dict(node["metadata"].get("labels") or {})
        if node_labels != (nodeimage["metadata"].get("labels") or {}):
            labels = node_labels
    statuses = (nodeimage.get("status") or {}).get("imageStatuses") or {}
    images = (nodeimage.get("spec") or {}).get("images") or {}
    modified = False
    messages: list[str] = []
    wait: float | None = None
    new_images: JSON = {}
    for name, image in images.items():
        kept: list[JSON] = []
        for tag in image.get("tags") or ():
            full = f"{name}:{tag.get('tag')}"
            if not tag.get("createdAt"):
                modified = True
                messages.append(f"image {full} has no createAt field")
                continue
            owners = list(tag.get("ownerReferences") or [])
            live = _live_owners(owners, job_uid)
            if len(live) != len(owners):
                modified = True
                messages.append(f"image {full} owners changed")
                if not live:
                    continue
                tag = {**tag, "ownerReferences": live}
            ttl = (tag.get("pullPolicy") or {}).get("ttlSecondsAfterFinished")
            if ttl is not None:
                done = next(
                    (
                        parse_time(s.get("completionTime"))
                        for s in (statuses.get(name) or {}).get("tags") or ()
                        if s.get("tag") == tag.get("tag") and s.get("version", 0) == tag.get("version", 0)
                    ),
                    None,
                )
                if done is not None:
                    left = ttl - (now - done).total_seconds()
                    if left <= 0:
                        modified = True
                        messages.append(
                            f"image {full} has exceeded TTL ({ttl})s since {format_time(done)} completed"
                        )
                        continue
                    wait = left if wait is None else min(wait, left)
            kept.append(tag)
        if kept:
            new_images[name] = {**image, "tags": sorted(kept, key=lambda t: str(t.get("tag", "")))}
        else:
            modified = True
            messages.append(f"no longer has {name} image spec")
    spec = None
    if modified:
        spec = {**(nodeimage.get("spec") or {}), "images": new_images}
    return SpecChange(labels, spec, tuple(messages), wait)


@dataclass(frozen=True)
class Failure:
    """A tag the controller failed: ``image`` is ``name:tag``; ``owners`` its job references."""

    image: str
    message: str
    owners: tuple[JSON, ...]


@dataclass(frozen=True)
class StatusChange:
    """The NodeImage's new ``status`` (None: unchanged), tags failed now, and when to look again."""

    status: JSON | None
    failures: tuple[Failure, ...] = ()
    requeue_after: float | None = None


def timeout_status(nodeimage: Mapping[str, Any], now: datetime) -> StatusChange:
    """``updateNodeImageStatus``: fail tags the daemon left unanswered or past their deadline and
    recount ``desired``/``pulling``/``succeeded``/``failed`` (only when something changed)."""
    spec_images = (nodeimage.get("spec") or {}).get("images") or {}
    old = nodeimage.get("status") or {}
    statuses: JSON = {
        k: {**v, "tags": [dict(t) for t in v.get("tags") or ()]}
        for k, v in (old.get("imageStatuses") or {}).items()
    }
    wanted: set[str] = set()
    failures: list[Failure] = []
    wait: float | None = None
    changed = False
    stamp = format_time(now)
    for name, image in spec_images.items():
        entry = statuses.setdefault(name, {"tags": []})
        for tag in image.get("tags") or ():
            full = f"{name}:{tag.get('tag')}"
            wanted.add(full)
            created = parse_time(tag.get("createdAt"))
            if created is None:
                continue
            age = (now - created).total_seconds()
            version = tag.get("version", 0)
            state = next((s for s in entry["tags"] if s.get("tag") == tag.get("tag")), None)
            failed_message = None
            if state is None or state.get("version", 0) != version:
                if age < RESPONSE_TIMEOUT:
                    left = RESPONSE_TIMEOUT - age
                    wait = left if wait is None else min(wait, left)
                    continue
                failed_message = "node has not responded for a long time"
            elif not state.get("completionTime"):
                deadline = (tag.get("pullPolicy") or {}).get("activeDeadlineSeconds")
                if deadline is None:
                    continue
                left = deadline + RESPONSE_TIMEOUT - age
                if left > 0:
                    wait = left if wait is None else min(wait, left)
                    continue
                failed_message = "pulling exceeds the activeDeadlineSeconds"
            else:
                continue
            if state is None:
                state = {"tag": tag.get("tag")}
                entry["tags"].append(state)
            state.update(phase="Failed", completionTime=stamp, version=version, message=failed_message)
            changed = True
            failures.append(Failure(full, failed_message, tuple(tag.get("ownerReferences") or ())))
    if not changed:
        return StatusChange(None, (), wait)
    counts = {"Succeeded": 0, "Pulling": 0, "Failed": 0}
    new_statuses: JSON = {}
    for name, entry in statuses.items():
        if name not in spec_images:
            continue
        tags = sorted(
            (t for t in entry["tags"] if f"{name}:{t.get('tag')}" in wanted),
            key=lambda t: str(t.get("tag", "")),
        )
        for t in tags:
            if t.get("phase") in counts:
                counts[t["phase"]] += 1
        if tags:
            new_statuses[name] = {**entry, "tags": tags}
    status = {
        **old,
        "imageStatuses": new_statuses,
        "desired": len(wanted),
        "pulling": counts["Pulling"],
        "succeeded": counts["Succeeded"],
        "failed": counts["Failed"],
    }
    return StatusChange(status, tuple(failures), wait)
