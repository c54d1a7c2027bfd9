"""What an ImagePullJob should do next, decided from the job, NodeImages and pods alone (pure).

Mirrors OpenKruise v1.8 ``pkg/controller/imagepulljob`` and ``pkg/util/imagejob``:

- **Targets** (``GetNodeImagesForJob``): with ``podSelector``, the NodeImages of the nodes of the
  job's namespace's active, scheduled pods that match (in pod order, each node once); with no
  ``selector``, every NodeImage; with ``selector.names``, those that exist; else the NodeImages
  whose labels (the Node's, copied by the NodeImage controller) match.
- **Status** (``calculateStatus``): a target is *not synced* until its
  ``spec.images[<name>].tags[]`` holds the job's tag with the job's UID among its
  ``ownerReferences`` and every pull-secret reference; then it is *pulling* until
  ``status.imageStatuses[<name>].tags[]`` reports that tag with the **same version** as
  ``Succeeded`` (succeeded) or ``Failed`` (failed). ``desired`` counts targets, ``active`` the
  pulling ones, ``failedNodes`` the failed ones (sorted). ``message`` is ``job is running,
  progress 66.7%`` / ``job is running, no progress`` / ``job has completed``.
- **Completion** (only ``completionPolicy.type: Always``): when every target finished, or when
  ``activeDeadlineSeconds`` passed since ``startTime`` (then the pulling and not-synced targets
  count as failed and ``message`` is ``job exceeds activeDeadlineSeconds``). A ``Never`` job
  never completes and keeps adding new nodes.
- **Parallelism**: at most ``parallelism - active`` not-synced targets get the tag per round
  (default 1). Divergence: upstream reads a percentage with ``IntValue()``, which yields 0 (the
  job never starts); here ``"50%"`` is that share of ``desired``, rounded up.
- **Tag entries** (``syncNodeImages``): ``{tag, version, createdAt, ownerReferences: [job],
  imagePullPolicy, pullPolicy{timeoutSeconds, backoffLimit, ttlSecondsAfterFinished,
  activeDeadlineSeconds}}``; a tag another job already asked for gets this job appended to its
  owners, ``version + 1`` (a new round of pulling) and a fresh ``createdAt``; a new tag's version
  is one more than the version the status last reported for it (0 when none). The image entry
  takes the job's ``sandboxConfig`` and gains the pull-secret references (the copies in
  ``kruise-daemon-config``). ``ttlSecondsAfterFinished`` of a tag: Always jobs take the job's
  ``ttlSecondsAfterFinished``, else its ``activeDeadlineSeconds``, else ``timeoutSeconds *
  backoffLimit``, plus ``--default-ttlseconds-for-always-nodeimage`` (300) and a random 0-299 s;
  Never jobs 24 h plus a random -600..599 s, with ``activeDeadlineSeconds`` max(1800,
  timeoutSeconds).

Upstream removes no tag itself: finished tags leave the NodeImage at their TTL and tags of a
deleted job when it is gone (both :mod:`.nodeimage_core`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from kruise.core.api import format_time, parse_time
from kruise.daemon.imagepulljob.admission import DEFAULT_BACKOFF_LIMIT, DEFAULT_TIMEOUT_SECONDS, NEVER
from kruise.daemon.imagepulljob.imageref import name_and_tag
from kruise.daemon.imagepulljob.selectors import matches

__all__ = [
    "DEFAULT_TTL_FOR_ALWAYS",
    "JobPlan",
    "Reference",
    "add_tag",
    "after_completion",
    "owner_reference",
    "plan",
    "tag_pull_policy",
    "targets",
]

JSON = dict[str, Any]
Reference = tuple[str, str]
"""A Secret as ``(namespace, name)``."""
Rng = Callable[[int], int]
"""``rng(n)``: a random integer in ``[0, n)`` (Go's ``rand.Int31n``)."""
DEFAULT_TTL_FOR_ALWAYS = 300
DEFAULT_TTL_FOR_NEVER = 24 * 3600
DEFAULT_DEADLINE_FOR_NEVER = 1800
DEFAULT_PARALLELISM = 1
MIN_REQUEUE = 1.0
API_VERSION = "apps.kruise.io/v1alpha1"


def _pod_active(pod: Mapping[str, Any]) -> bool:
    phase = (pod.get("status") or {}).get("phase")
    return phase not in ("Succeeded", "Failed") and not pod["metadata"].get("deletionTimestamp")


def targets(job: Mapping[str, Any], nodeimages: Iterable[JSON], pods: Iterable[JSON] = ()) -> list[JSON]:
    """The NodeImages ``job`` pulls on (see the module docstring); ``pods`` are the job's
    namespace's pods (read only with ``podSelector``)."""
    spec = job.get("spec") or {}
    by_name = {n["metadata"]["name"]: n for n in nodeimages}
    if spec.get("podSelector") is not None:
        chosen: list[JSON] = []
        seen: set[str] = set()
        for pod in pods:
            node = (pod.get("spec") or {}).get("nodeName")
            if not node or node in seen or not _pod_active(pod):
                continue
            if not matches(spec["podSelector"], pod["metadata"].get("labels")):
                continue
            seen.add(node)
            if node in by_name:
                chosen.append(by_name[node])
        return chosen
    selector = spec.get("selector")
    if selector is None:
        return [by_name[n] for n in sorted(by_name)]
    if selector.get("names") is not None:
        return [by_name[n] for n in selector["names"] if n in by_name]
    return [by_name[n] for n in sorted(by_name) if matches(selector, by_name[n]["metadata"].get("labels"))]


def owner_reference(job: Mapping[str, Any]) -> JSON:
    """The ``ObjectReference`` a tag entry names its job by."""
    meta = job["metadata"]
    return {
        "apiVersion": API_VERSION,
        "kind": "ImagePullJob",
        "name": meta["name"],
        "namespace": meta.get("namespace", ""),
        "uid": meta.get("uid", ""),
    }


def _int(value: Any, default: int) -> int:
    return default if value is None else int(value)


def tag_pull_policy(
    job: Mapping[str, Any], rng: Rng, *, ttl_for_always: int = DEFAULT_TTL_FOR_ALWAYS
) -> JSON:
    """The tag's ``pullPolicy`` (``getImagePullPolicy``); ``rng`` draws the TTL's jitter."""
    spec = job.get("spec") or {}
    pull = spec.get("pullPolicy") or {}
    policy = spec.get("completionPolicy") or {}
    out: JSON = {}
    if pull.get("timeoutSeconds") is not None:
        out["timeoutSeconds"] = pull["timeoutSeconds"]
    if pull.get("backoffLimit") is not None:
        out["backoffLimit"] = pull["backoffLimit"]
    if policy.get("type") == NEVER:
        out["ttlSecondsAfterFinished"] = DEFAULT_TTL_FOR_NEVER + rng(1200) - 600
        timeout = pull.get("timeoutSeconds")
        out["activeDeadlineSeconds"] = (
            int(timeout)
            if timeout is not None and timeout > DEFAULT_DEADLINE_FOR_NEVER
            else DEFAULT_DEADLINE_FOR_NEVER
        )
        return out
    if policy.get("ttlSecondsAfterFinished") is not None:
        ttl = int(policy["ttlSecondsAfterFinished"])
    elif policy.get("activeDeadlineSeconds") is not None:
        ttl = int(policy["activeDeadlineSeconds"])
    else:
        ttl = _int(pull.get("timeoutSeconds"), DEFAULT_TIMEOUT_SECONDS) * _int(
            pull.get("backoffLimit"), DEFAULT_BACKOFF_LIMIT
        )
    out["ttlSecondsAfterFinished"] = ttl + ttl_for_always + rng(ttl_for_always)
    if policy.get("activeDeadlineSeconds") is not None:
        out["activeDeadlineSeconds"] = policy["activeDeadlineSeconds"]
    return out


def _parallelism(job: Mapping[str, Any], desired: int) -> int:
    value = (job.get("spec") or {}).get("parallelism")
    if value is None:
        return DEFAULT_PARALLELISM
    if isinstance(value, str):
        if value.endswith("%"):
            return math.ceil(desired * int(value[:-1]) / 100)
        return int(value)
    return int(value)


def _has_ref(refs: Sequence[Mapping[str, Any]], ref: Reference) -> bool:
    return any((r.get("namespace"), r.get("name")) == ref for r in refs)


@dataclass(frozen=True)
class JobPlan:
    """One round: the job's new ``status``, the NodeImages to write its tag into (in order, at
    most ``parallelism - active``), and when to look again (seconds; None: on events only)."""

    status: JSON
    sync: tuple[str, ...]
    requeue_after: float | None


def plan(
    job: Mapping[str, Any],
    nodeimages: Iterable[JSON],
    pods: Iterable[JSON],
    now: datetime,
    secrets: Sequence[Reference] = (),
) -> JobPlan:
    """Decide a running (not completed, not deleted) job's round; ``secrets`` are the pull-secret
    references its tag entries must carry. Raises ``InvalidReferenceError`` for a bad image."""
    spec = job.get("spec") or {}
    status = job.get("status") or {}
    chosen = targets(job, nodeimages, pods)
    start = status.get("startTime") or format_time(now)
    name, tag = name_and_tag(spec["image"])
    uid = job["metadata"].get("uid")
    not_synced: list[str] = []
    pulling: list[str] = []
    succeeded: list[str] = []
    failed: list[str] = []
    for nodeimage in chosen:
        node = nodeimage["metadata"]["name"]
        image_spec = ((nodeimage.get("spec") or {}).get("images") or {}).get(name)
        version = -1
        if image_spec is not None:
            if not all(_has_ref(image_spec.get("pullSecrets") or [], s) for s in secrets):
                not_synced.append(node)
                continue
            for tag_spec in image_spec.get("tags") or ():
                if tag_spec.get("tag") != tag:
                    continue
                if any(r.get("uid") == uid for r in tag_spec.get("ownerReferences") or ()):
                    version = int(tag_spec.get("version") or 0)
                break
        if version < 0:
            not_synced.append(node)
            continue
        image_status = ((nodeimage.get("status") or {}).get("imageStatuses") or {}).get(name)
        reported = next((t for t in (image_status or {}).get("tags") or () if t.get("tag") == tag), None)
        if reported is None or int(reported.get("version") or 0) != version:
            pulling.append(node)
        elif reported.get("phase") == "Succeeded":
            succeeded.append(node)
        elif reported.get("phase") == "Failed":
            failed.append(node)
        else:
            pulling.append(node)

    policy = spec.get("completionPolicy") or {}
    always = policy.get("type") != NEVER
    deadline = policy.get("activeDeadlineSeconds")
    desired = len(chosen)
    new: JSON = {"startTime": start, "desired": desired}
    started = parse_time(start) or now
    unfinished = desired != len(succeeded) + len(failed)
    if always and deadline is not None and unfinished and (now - started).total_seconds() >= deadline:
        failed_nodes = failed + pulling + not_synced
        new.update(
            completionTime=format_time(now),
            succeeded=len(succeeded),
            failed=len(failed_nodes),
            failedNodes=failed_nodes,
            message="job exceeds activeDeadlineSeconds",
        )
        return JobPlan(_compact(new), (), None)
    new.update(active=len(pulling), succeeded=len(succeeded), failed=len(failed), failedNodes=sorted(failed))
    if always and desired - len(succeeded) - len(failed) == 0:
        new["completionTime"] = format_time(now)
    new["message"] = _message(new)
    sync: tuple[str, ...] = ()
    if not_synced:
        room = _parallelism(job, desired) - len(pulling)
        sync = tuple(not_synced[: max(room, 0)])
    requeue = None
    if always and deadline is not None and "completionTime" not in new:
        requeue = max(deadline - (now - started).total_seconds(), MIN_REQUEUE)
    return JobPlan(_compact(new), sync, requeue)


def _compact(status: JSON) -> JSON:
    """Drop what Go's ``omitempty`` leaves out (zero counts, empty lists), keeping ``desired``."""
    return {k: v for k, v in status.items() if k == "desired" or v not in (0, [], None, "")}


def _message(status: Mapping[str, Any]) -> str:
    if status.get("completionTime"):
        return "job has completed"
    if not status["desired"]:
        return "job is running, no progress"
    done = status.get("succeeded", 0) + status.get("failed", 0)
    return f"job is running, progress {100.0 * done / status['desired']:.1f}%"


def after_completion(job: Mapping[str, Any], now: datetime) -> tuple[bool, float | None]:
    """A completed job: ``(delete now, requeue after seconds)`` from ``ttlSecondsAfterFinished``."""
    ttl = ((job.get("spec") or {}).get("completionPolicy") or {}).get("ttlSecondsAfterFinished")
    done = parse_time((job.get("status") or {}).get("completionTime"))
    if ttl is None or done is None:
        return False, None
    left = ttl - (now - done).total_seconds()
    return (True, None) if left <= 0 else (False, left)


def add_tag(
    nodeimage: Mapping[str, Any],
    job: Mapping[str, Any],
    now: datetime,
    pull_policy: Mapping[str, Any],
    secrets: Sequence[Reference] = (),
) -> JSON | None:
    """The NodeImage's new ``spec`` with the job's tag (see the module docstring), or None when
    the tag already names the job (nothing to write)."""
    spec = job.get("spec") or {}
    name, tag = name_and_tag(spec["image"])
    owner = owner_reference(job)
    node_spec: JSON = dict(nodeimage.get("spec") or {})
    images: JSON = dict(node_spec.get("images") or {})
    image: JSON = dict(images.get(name) or {})
    if spec.get("sandboxConfig") is not None:
        image["sandboxConfig"] = spec["sandboxConfig"]
    else:
        image.pop("sandboxConfig", None)
    refs = list(image.get("pullSecrets") or [])
    for ns, secret in secrets:
        if not _has_ref(refs, (ns, secret)):
            refs.append({"namespace": ns, "name": secret})
    if refs:
        image["pullSecrets"] = refs
    tags = [dict(t) for t in image.get("tags") or ()]
    existing = next((t for t in tags if t.get("tag") == tag), None)
    if existing is not None:
        owners = list(existing.get("ownerReferences") or [])
        if any(o.get("uid") == owner["uid"] for o in owners):
            return None
        existing.update(
            version=int(existing.get("version") or 0) + 1,
            ownerReferences=[*owners, owner],
            createdAt=format_time(now),
        )
        if spec.get("imagePullPolicy"):
            existing["imagePullPolicy"] = spec["imagePullPolicy"]
    else:
        image_status = ((nodeimage.get("status") or {}).get("imageStatuses") or {}).get(name) or {}
        last = next(
            (int(t.get("version") or 0) for t in image_status.get("tags") or () if t.get("tag") == tag), -1
        )
        entry: JSON = {
            "tag": tag,
            "version": last + 1,
            "pullPolicy": dict(pull_policy),
            "ownerReferences": [owner],
            "createdAt": format_time(now),
        }
        if spec.get("imagePullPolicy"):
            entry["imagePullPolicy"] = spec["imagePullPolicy"]
        tags.append(entry)
    tags.sort(key=lambda t: str(t.get("tag", "")))
    image["tags"] = tags
    images[name] = image
    node_spec["images"] = images
    return node_spec
