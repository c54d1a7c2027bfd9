"""What the image puller should be doing, decided from the NodeImage alone (pure).

Upstream's daemon (``K:pkg/daemon/imagepuller``) keeps one pull worker per ``repo:tag`` listed
in its node's ``NodeImage.spec.images[repo].tags[]`` and rebuilds the whole
``NodeImage.status`` from the workers' states after every change:

- a tag is **finished** when the status already holds an entry with the same ``tag`` and
  ``version`` and a ``completionTime``: it is not pulled again (so a restarted daemon resumes
  from the object, and a manager that bumps ``version`` asks for a new pull);
- every other tag is **active**: it gets a worker, which first reports ``Waiting`` (queued
  behind ``--max-workers-for-pull-image``), then ``Pulling``, then ``Succeeded``/``Failed``
  with a ``completionTime``;
- a worker whose tag left the spec, or whose spec ``version`` changed, is stopped;
- ``status.desired`` counts the spec's tags; ``succeeded``/``failed``/``pulling``/``waiting``
  count the reported phases; each image's tags are sorted by tag; images with no reported tag
  are left out, and an empty map is omitted; ``firstSyncStatus`` is kept as it was.

:func:`tag_jobs`, :func:`finished_states`, :func:`plan_workers` and :func:`node_status` are that
rule as data in, data out; :mod:`kruise.daemon.imagepuller.controller` executes it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

__all__ = [
    "DEFAULT_BACKOFF_LIMIT",
    "DEFAULT_TIMEOUT_SECONDS",
    "FAILED",
    "PULLING",
    "SUCCEEDED",
    "WAITING",
    "TagJob",
    "TagKey",
    "TagState",
    "WorkerPlan",
    "finished_states",
    "in_pulling",
    "node_status",
    "plan_workers",
    "tag_jobs",
]

WAITING = "Waiting"
PULLING = "Pulling"
SUCCEEDED = "Succeeded"
FAILED = "Failed"
DEFAULT_TIMEOUT_SECONDS = 600
"""A pull attempt's limit when the tag's ``pullPolicy.timeoutSeconds`` is unset (upstream 10 min)."""
DEFAULT_BACKOFF_LIMIT = 3
"""Retries after the first attempt when ``pullPolicy.backoffLimit`` is unset or negative."""

TagKey = tuple[str, str]
"""``(repo, tag)``: ``repo`` is the NodeImage's ``spec.images`` key (``kruise.local/busybox``)."""


@dataclass(frozen=True)
class TagJob:
    """One tag to pull, from ``spec.images[repo]`` and its ``tags[]`` entry.

    ``timeout`` bounds one attempt (seconds); ``backoff_limit`` is the retries after the first;
    ``active_deadline`` bounds all attempts from the worker's start (seconds, None: none);
    ``pull_secrets`` are ``(namespace, name)`` of Secrets to authenticate with;
    ``sandbox_config`` is the image's ``sandboxConfig`` (``labels``, ``annotations``);
    ``owners`` are the tag's ``ownerReferences`` (the ImagePullJobs that asked for it).
    """

    repo: str
    tag: str
    version: int = 0
    timeout: float = DEFAULT_TIMEOUT_SECONDS
    backoff_limit: int = DEFAULT_BACKOFF_LIMIT
    active_deadline: float | None = None
    image_pull_policy: str = "IfNotPresent"
    pull_secrets: tuple[tuple[str, str], ...] = ()
    sandbox_config: Mapping[str, Any] | None = None
    owners: tuple[Mapping[str, Any], ...] = ()

    @property
    def key(self) -> TagKey:
        return (self.repo, self.tag)

    @property
    def image(self) -> str:
        """``repo:tag``, what CRI is asked to pull."""
        return f"{self.repo}:{self.tag}"


@dataclass(frozen=True)
class TagState:
    """A tag's reported state: one ``status.imageStatuses[repo].tags[]`` entry.

    Times are RFC 3339 strings as the API carries them; ``progress`` is 0-100; ``image_id`` is
    ``repo@<image id>`` as upstream reports it.
    """

    tag: str
    phase: str
    version: int = 0
    progress: int = 0
    start_time: str | None = None
    completion_time: str | None = None
    image_id: str = ""
    message: str = ""

    @property
    def finished(self) -> bool:
        return self.completion_time is not None

    def to_dict(self) -> dict[str, Any]:
        """The API shape (omitempty fields left out, as upstream serialises them)."""
        out: dict[str, Any] = {"tag": self.tag, "phase": self.phase}
        optional = (
            ("progress", self.progress),
            ("startTime", self.start_time),
            ("completionTime", self.completion_time),
            ("version", self.version),
            ("imageID", self.image_id),
            ("message", self.message),
        )
        out.update((name, value) for name, value in optional if value)
        return out

    @classmethod
    def from_dict(cls, raw: Mapping[str, Any]) -> TagState:
        return cls(
            tag=str(raw.get("tag", "")),
            phase=str(raw.get("phase", "")),
            version=int(raw.get("version") or 0),
            progress=int(raw.get("progress") or 0),
            start_time=raw.get("startTime"),
            completion_time=raw.get("completionTime"),
            image_id=str(raw.get("imageID") or ""),
            message=str(raw.get("message") or ""),
        )


def _int(value: Any, default: int) -> int:
    return default if value is None else int(value)


def tag_jobs(spec: Mapping[str, Any]) -> dict[TagKey, TagJob]:
    """Every tag ``spec`` (a NodeImage ``spec``) lists, keyed by ``(repo, tag)``.

    A negative ``backoffLimit`` means the default, as upstream's worker reads it."""
    jobs: dict[TagKey, TagJob] = {}
    for repo, image in (spec.get("images") or {}).items():
        refs = image.get("pullSecrets") or ()
        secrets = tuple((str(ref.get("namespace") or ""), str(ref.get("name") or "")) for ref in refs)
        sandbox = image.get("sandboxConfig")
        for entry in image.get("tags") or ():
            policy = entry.get("pullPolicy") or {}
            backoff = _int(policy.get("backoffLimit"), DEFAULT_BACKOFF_LIMIT)
            deadline = policy.get("activeDeadlineSeconds")
            job = TagJob(
                repo=repo,
                tag=str(entry["tag"]),
                version=int(entry.get("version") or 0),
                timeout=float(_int(policy.get("timeoutSeconds"), DEFAULT_TIMEOUT_SECONDS)),
                backoff_limit=backoff if backoff >= 0 else DEFAULT_BACKOFF_LIMIT,
                active_deadline=None if deadline is None else float(deadline),
                image_pull_policy=str(entry.get("imagePullPolicy") or "IfNotPresent"),
                pull_secrets=secrets,
                sandbox_config=sandbox,
                owners=tuple(entry.get("ownerReferences") or ()),
            )
            jobs[job.key] = job
    return jobs


def finished_states(jobs: Mapping[TagKey, TagJob], status: Mapping[str, Any]) -> dict[TagKey, TagState]:
    """The tags of ``jobs`` that ``status`` (a NodeImage ``status``) already reports finished for
    the same ``version``: they need no worker."""
    out: dict[TagKey, TagState] = {}
    for repo, image in (status.get("imageStatuses") or {}).items():
        for raw in image.get("tags") or ():
            state = TagState.from_dict(raw)
            job = jobs.get((repo, state.tag))
            if job is not None and state.version == job.version and state.finished:
                out[job.key] = state
    return out


@dataclass(frozen=True)
class WorkerPlan:
    """Workers to start (``start``) and to stop (``stop``: their tags left the spec, finished, or
    changed ``version``; a stopped worker reports nothing more)."""

    start: tuple[TagJob, ...] = ()
    stop: tuple[TagKey, ...] = ()

    @property
    def empty(self) -> bool:
        return not self.start and not self.stop


def plan_workers(
    jobs: Mapping[TagKey, TagJob], finished: Mapping[TagKey, TagState], running: Mapping[TagKey, int]
) -> WorkerPlan:
    """Compare the active tags (in ``jobs``, not in ``finished``) with ``running`` (key -> the
    version its worker pulls). A version change stops the old worker and starts a new one."""
    active = {key: job for key, job in jobs.items() if key not in finished}
    stop = tuple(
        sorted(key for key, version in running.items() if key not in active or active[key].version != version)
    )
    start = tuple(
        job for key, job in sorted(active.items()) if key not in running or running[key] != job.version
    )
    return WorkerPlan(start=start, stop=stop)


def node_status(
    spec: Mapping[str, Any], states: Mapping[TagKey, TagState], previous: Mapping[str, Any]
) -> dict[str, Any]:
    """The NodeImage ``status`` reporting ``states`` (finished tags and the workers' latest) for
    the tags ``spec`` lists; ``previous`` (the current status) gives ``firstSyncStatus``."""
    counts = {SUCCEEDED: 0, FAILED: 0, PULLING: 0, WAITING: 0}
    desired = 0
    images: dict[str, Any] = {}
    for repo, image in (spec.get("images") or {}).items():
        tags = [str(t["tag"]) for t in image.get("tags") or ()]
        desired += len(tags)
        reported = [states[(repo, tag)] for tag in tags if (repo, tag) in states]
        if not reported:
            continue
        reported.sort(key=lambda s: s.tag)
        images[repo] = {"tags": [s.to_dict() for s in reported]}
        for state in reported:
            if state.phase in counts:
                counts[state.phase] += 1
    status: dict[str, Any] = {
        "desired": desired,
        "succeeded": counts[SUCCEEDED],
        "failed": counts[FAILED],
        "pulling": counts[PULLING],
        "waiting": counts[WAITING],
    }
    if images:
        status["imageStatuses"] = images
    if previous.get("firstSyncStatus"):
        status["firstSyncStatus"] = previous["firstSyncStatus"]
    return status


def in_pulling(jobs: Iterable[TagJob], status: Mapping[str, Any]) -> bool:
    """Upstream's ``isImageInPulling``: some tag is unfinished, or reported for another version."""
    if int(status.get("succeeded") or 0) + int(status.get("failed") or 0) < int(status.get("desired") or 0):
        return True
    versions = {job.key: job.version for job in jobs}
    for repo, image in (status.get("imageStatuses") or {}).items():
        for raw in image.get("tags") or ():
            key = (repo, str(raw.get("tag")))
            if key in versions and versions[key] != int(raw.get("version") or 0):
                return True
    return False
