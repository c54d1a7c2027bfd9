"""An EphemeralJob's containers in pods: the job's settings, which pods it targets, which of
a pod's ephemeral containers are its own, their states, and the patch that injects them
(upstream's ``ephemeraljob_utils.go`` and ``econtainer``, v1.8). Pure functions over dicts; the
phase is :mod:`.plan`'s.

- An ephemeral container is the job's when it has a template container's name and carries
  ``KRUISE_EJOB_ID`` = the job's UID (``isCreatedByEJob``); one of a template name that is not
  the job's makes the pod no target (``existDuplicatedEphemeralContainer``).
- Targets (``filterPods``): the job's namespace's pods its selector matches, oldest first then
  by name, active, without such a conflict, at most ``replicas``.
- States (``parseEphemeralContainerStatus``/``parseEphemeralPodStatus``) read the pod's
  ``ephemeralContainerStatuses`` of the template's names.
"""

from __future__ import annotations

import datetime
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, TypedDict, cast

from kruise.workloads.api.ephemeraljob import EJOB_ENV_KEY, EphemeralJobSpec
from kruise.workloads.objects import KubeObject, creation_time, labels, name, namespace, spec, status, uid
from kruise.workloads.pods import is_active
from kruise.workloads.selector import selector_matches

__all__ = [
    "DEFAULT_PARALLELISM",
    "DEFAULT_TTL_SECONDS",
    "ContainerState",
    "ContainerStatusView",
    "EphemeralContainerView",
    "Settings",
    "conflicts",
    "container_state",
    "has_job_containers",
    "injection_patch",
    "pod_state",
    "target_pods",
]

DEFAULT_PARALLELISM = 1
"""``defaultParallelism``: pods injected at once when ``parallelism`` is unset."""
DEFAULT_TTL_SECONDS = 1800
"""``ttlSecondsAfterFinished`` when unset."""


class EnvVarView(TypedDict, total=False):
    """One ``env`` entry of a container."""

    name: str
    value: str


class EphemeralContainerView(TypedDict, total=False):
    """The part of a ``core/v1`` EphemeralContainer read here (the rest is carried verbatim)."""

    name: str
    env: list[EnvVarView]


class ContainerStatusView(TypedDict, total=False):
    """One ``status.ephemeralContainerStatuses`` entry: ``state`` holds one of ``waiting``
    (``reason``), ``running`` or ``terminated`` (``exitCode``, ``finishedAt``)."""

    name: str
    state: dict[str, dict[str, Any]]


class ContainerState(StrEnum):
    """One ephemeral container's state (``parseEphemeralContainerStatus``) and, for a pod, the
    combined state of the job's containers in it (``parseEphemeralPodStatus``)."""

    SUCCEEDED = "Succeeded"
    FAILED = "Failed"
    WAITING = "Waiting"
    RUNNING = "Running"
    UNKNOWN = "Unknown"


@dataclass(frozen=True)
class Settings:
    """The job's spec with the controller's defaults.

    Attributes:
        uid: the job's UID (the value of ``KRUISE_EJOB_ID`` in its containers).
        selector: ``spec.selector`` (``None`` matches nothing).
        replicas: ``spec.replicas`` (``None``: every matching pod).
        parallelism: ``spec.parallelism`` or 1.
        active_deadline_seconds: seconds after ``startTime`` the job may stay unfinished.
        ttl_seconds_after_finished: seconds after ``completionTime`` the job is kept (1800).
        paused: ``spec.paused``.
        containers: ``spec.template.ephemeralContainers`` as written.
    """

    uid: str
    selector: Mapping[str, Any] | None
    replicas: int | None
    parallelism: int
    active_deadline_seconds: int | None
    ttl_seconds_after_finished: int
    paused: bool
    containers: tuple[EphemeralContainerView, ...]

    @classmethod
    def of(cls, job: KubeObject) -> Settings:
        """Read from an EphemeralJob dict; raises ``pydantic.ValidationError`` on a spec the CRD
        schema would not admit."""
        raw = spec(job)
        parsed = EphemeralJobSpec.model_validate(dict(raw))
        selector = raw.get("selector")
        return cls(
            uid=uid(job),
            selector=selector if isinstance(selector, Mapping) else None,
            replicas=parsed.replicas,
            parallelism=DEFAULT_PARALLELISM if parsed.parallelism is None else parsed.parallelism,
            active_deadline_seconds=parsed.active_deadline_seconds,
            ttl_seconds_after_finished=(
                DEFAULT_TTL_SECONDS
                if parsed.ttl_seconds_after_finished is None
                else parsed.ttl_seconds_after_finished
            ),
            paused=bool(parsed.paused),
            containers=tuple(cast(EphemeralContainerView, c) for c in parsed.template.ephemeral_containers),
        )

    @property
    def names(self) -> frozenset[str]:
        """The template's container names."""
        return frozenset(str(c.get("name") or "") for c in self.containers)


def _pod_ephemeral_containers(pod: KubeObject) -> list[EphemeralContainerView]:
    return [cast(EphemeralContainerView, c) for c in spec(pod).get("ephemeralContainers") or ()]


def _owned(container: EphemeralContainerView, job_uid: str) -> bool:
    """``isCreatedByEJob``: the container carries ``KRUISE_EJOB_ID`` = the job's UID."""
    return any(
        e.get("name") == EJOB_ENV_KEY and e.get("value") == job_uid for e in container.get("env") or ()
    )


def conflicts(settings: Settings, pod: KubeObject) -> bool:
    """``existDuplicatedEphemeralContainer``: the pod holds an ephemeral container named like one
    of the template's that is not this job's (another job's, or ``kubectl debug``'s)."""
    names = settings.names
    return any(c.get("name") in names and not _owned(c, settings.uid) for c in _pod_ephemeral_containers(pod))


def has_job_containers(settings: Settings, pod: KubeObject) -> bool:
    """The pod already holds one of the template's containers injected by this job (then it is
    not injected again, ``getSyncPods``)."""
    names = settings.names
    return any(c.get("name") in names and _owned(c, settings.uid) for c in _pod_ephemeral_containers(pod))


def _sort_key(pod: KubeObject) -> tuple[datetime.datetime, str]:
    created = creation_time(pod) or datetime.datetime.min.replace(tzinfo=datetime.UTC)
    return created, name(pod)


def target_pods(job: KubeObject, settings: Settings, pods: Iterable[KubeObject]) -> list[KubeObject]:
    """``filterPods``: of ``pods`` (any namespace), the job's namespace's pods its selector
    matches, oldest first then by name, active and without a conflicting container
    (:func:`conflicts`), at most ``replicas``."""
    ns = namespace(job)
    chosen: list[KubeObject] = []
    for pod in sorted((p for p in pods if namespace(p) == ns), key=_sort_key):
        if not selector_matches(settings.selector, labels(pod)) or not is_active(pod):
            continue
        if conflicts(settings, pod):
            continue
        if settings.replicas is not None and len(chosen) >= settings.replicas:
            break
        chosen.append(pod)
    return chosen


def container_state(entry: ContainerStatusView) -> ContainerState:
    """``parseEphemeralContainerStatus``: terminated with exit 0 and a ``finishedAt`` ->
    Succeeded, with a non-zero exit -> Failed; running -> Running; waiting -> Waiting, or Failed
    for reason ``RunContainerError`` (the command could not start); else Unknown."""
    state = entry.get("state") or {}
    terminated = state.get("terminated")
    if isinstance(terminated, Mapping):
        code = terminated.get("exitCode") or 0
        if terminated.get("finishedAt") and code == 0:
            return ContainerState.SUCCEEDED
        if code != 0:
            return ContainerState.FAILED
    if isinstance(state.get("running"), Mapping):
        return ContainerState.RUNNING
    waiting = state.get("waiting")
    if isinstance(waiting, Mapping):
        return (
            ContainerState.FAILED if waiting.get("reason") == "RunContainerError" else ContainerState.WAITING
        )
    return ContainerState.UNKNOWN


def pod_state(settings: Settings, pod: KubeObject) -> ContainerState:
    """``parseEphemeralPodStatus`` over the pod's ``ephemeralContainerStatuses`` of the
    template's names: any Failed -> Failed; every template container Succeeded -> Succeeded; any
    Running -> Running; any Waiting -> Waiting; else Unknown (not reported yet)."""
    names = settings.names
    counts = dict.fromkeys(ContainerState, 0)
    for raw in status(pod).get("ephemeralContainerStatuses") or ():
        entry = cast(ContainerStatusView, raw)
        if entry.get("name") not in names:
            continue
        state = container_state(entry)
        if state is ContainerState.FAILED:
            return ContainerState.FAILED
        counts[state] += 1
    if counts[ContainerState.SUCCEEDED] and counts[ContainerState.SUCCEEDED] == len(names):
        return ContainerState.SUCCEEDED
    for state in (ContainerState.RUNNING, ContainerState.WAITING):
        if counts[state]:
            return state
    return ContainerState.UNKNOWN


def injection_patch(settings: Settings) -> dict[str, Any]:
    """The strategic merge patch of a pod's ``ephemeralcontainers`` subresource that adds the
    template's containers, each with ``KRUISE_EJOB_ID`` = the job's UID appended to its ``env``
    (``CreateEphemeralContainer``); containers merge by name, so the pod's others stay."""
    containers: list[dict[str, Any]] = []
    for template in settings.containers:
        container: dict[str, Any] = dict(template)
        container["env"] = [*(template.get("env") or ()), {"name": EJOB_ENV_KEY, "value": settings.uid}]
        containers.append(container)
    return {"spec": {"ephemeralContainers": containers}}
