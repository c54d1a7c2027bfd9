"""The EphemeralJob's pure core: ``plan(job, pods, now) -> Plan``.

One round of upstream's ``ReconcileEphemeralJob.Reconcile`` (v1.8), decided from data alone; the
controller executes it (finalizer, injections, one status write, the TTL delete) and requeues.

1. A job being deleted only loses its finalizer ``apps.kruise.io/ephemeralcontainers-cleanup``
   (ephemeral containers cannot be removed from a pod, so upstream's cleanup removes nothing); a
   live job without it gets it first.
2. A finished job (``status.completionTime`` set) only waits ``ttlSecondsAfterFinished`` (default
   1800) past it, then is deleted.
3. ``startTime`` is set on the first round.
4. Targets (``filterPods``): the job's namespace's pods matching ``selector``, oldest first (then
   by name), active (not Succeeded/Failed, not being deleted), and holding no ephemeral container
   of a template name that is not this job's (:func:`~.containers.conflicts`); at most ``replicas`` of them.
   ``status.match`` counts them.
5. Each target's state is read from its ``ephemeralContainerStatuses`` of the template's names
   (:func:`~.containers.pod_state`): any container failed (non-zero exit, or waiting with
   ``RunContainerError``) -> Failed; all terminated with exit 0 -> Succeeded; any running ->
   Running; any waiting -> Waiting; else not counted.
6. The phase (``calculateStatus``), with ``replicas`` = ``spec.replicas`` or the match count:
   no match -> Waiting (condition ``MatchedEmpty``); succeeded == replicas > 0 -> Succeeded
   (``JobSucceeded``, completionTime); any running -> Running; failed == replicas -> Failed
   (``JobFailed``, completionTime); waiting == replicas -> Waiting; else Unknown. ``paused`` ->
   Paused. Any failed pod sets ``JobFailed``/``CreateFailed``. Waiting, Unknown or Running past
   ``activeDeadlineSeconds`` after ``startTime`` -> Failed (``DeadlineExceeded``, completionTime).
   A template without containers -> Error (``JobError``). The first round adds ``Initialized``.
7. Unless paused (or in Error), the targets without this job's containers get them
   (:func:`~.containers.injection_patch`), the first ``parallelism - in_flight`` of them
   (``parallelism`` default 1).

Two deliberate differences, both about not deciding on timing:

- ``in_flight`` counts the targets whose job containers are injected but not finished (running,
  waiting, or not reported yet), where upstream counts ``status.running`` only and relies on the
  moment the kubelet reports a waiting state, and caps the new ones at
  ``min(parallelism, len(to_inject)) - running``: so ``parallelism`` really bounds the pods
  working at once, a round taken before the kubelet reports cannot inject one pod too many, and
  the last pods are not held back while one is still running.
- A condition keeps its ``lastProbeTime``/``lastTransitionTime`` while its status, reason and
  message are unchanged (upstream stamps it anew each round), so a steady job's status does not
  change, and is not rewritten, every round. A template without containers is an Error phase
  whether or not pods match (upstream fails the round with an error when pods match).
"""

from __future__ import annotations

import datetime
from collections.abc import Sequence
from dataclasses import dataclass, field

from kruise.core.api import JobCondition
from kruise.workloads.api.ephemeraljob import EphemeralJobConditionType, EphemeralJobPhase, EphemeralJobStatus
from kruise.workloads.ephemeraljob.containers import (
    ContainerState,
    Settings,
    has_job_containers,
    pod_state,
    target_pods,
)
from kruise.workloads.objects import KubeObject, finalizers, is_being_deleted, name, namespace, status
from kruise.workloads.requeue import seconds_left

__all__ = ["FINALIZER", "Plan", "plan"]

FINALIZER = "apps.kruise.io/ephemeralcontainers-cleanup"
"""Upstream's ``EphemeralContainerFinalizer``, added to every live job."""


@dataclass(frozen=True)
class Plan:
    """What one round decided.

    Attributes:
        status: the job's status to write, or ``None`` to leave it.
        inject: names of the pods to give the template's containers now, in order.
        add_finalizer: add :data:`FINALIZER` before anything else.
        remove_finalizer: the job is being deleted: remove :data:`FINALIZER`, nothing else.
        delete_job: the TTL after finishing has passed: delete the job.
        requeue_after: seconds until a time-based change (deadline, TTL), or ``None``.
        targets: names of the target pods (``status.match`` counts them).
    """

    status: EphemeralJobStatus | None
    inject: tuple[str, ...] = ()
    add_finalizer: bool = False
    remove_finalizer: bool = False
    delete_job: bool = False
    requeue_after: float | None = None
    targets: tuple[str, ...] = field(default_factory=tuple)


def _set_condition(
    st: EphemeralJobStatus, kind: EphemeralJobConditionType, reason: str, message: str, now: datetime.datetime
) -> None:
    """``addConditions``: replace the condition of that type (keeping its times when nothing but
    the times would change), or append it."""
    conditions = list(st.conditions or ())
    for i, old in enumerate(conditions):
        if old.type == kind:
            if old.status == "True" and old.reason == reason and (old.message or "") == message:
                return
            conditions[i] = _condition(kind, reason, message, now)
            st.conditions = conditions
            return
    st.conditions = [*conditions, _condition(kind, reason, message, now)]


def _condition(
    kind: EphemeralJobConditionType, reason: str, message: str, now: datetime.datetime
) -> JobCondition:
    return JobCondition(
        type=kind,
        status="True",
        last_probe_time=now,
        last_transition_time=now,
        reason=reason,
        message=message,
    )


def _phase(job: KubeObject, settings: Settings, st: EphemeralJobStatus, now: datetime.datetime) -> None:
    """``calculateStatus`` once the counters are in ``st``; see the module docstring, step 6."""
    replicas = st.match if settings.replicas is None else settings.replicas
    ref = f"{namespace(job)}/{name(job)}"
    if st.match == 0:
        st.phase = EphemeralJobPhase.WAITING
        _set_condition(st, EphemeralJobConditionType.MATCHED_EMPTY, "MatchEmpty", "job match no pods", now)
    elif st.succeeded == replicas and st.succeeded > 0:
        st.completion_time, st.phase = now, EphemeralJobPhase.SUCCEEDED
        _set_condition(
            st, EphemeralJobConditionType.SUCCEEDED, "JobSucceeded", "job success to run all tasks", now
        )
    elif st.running > 0:
        st.phase = EphemeralJobPhase.RUNNING
    elif st.failed == replicas:
        st.completion_time, st.phase = now, EphemeralJobPhase.FAILED
        _set_condition(st, EphemeralJobConditionType.FAILED, "JobFailed", "job failed to run all tasks", now)
    elif st.waiting == replicas:
        st.phase = EphemeralJobPhase.WAITING
    else:
        st.phase = EphemeralJobPhase.UNKNOWN
    if settings.paused:
        st.phase = EphemeralJobPhase.PAUSED
    if st.failed > 0:
        message = f"EphemeralJob {ref} failed to create ephemeral container"
        _set_condition(st, EphemeralJobConditionType.FAILED, "CreateFailed", message, now)
    unfinished = (EphemeralJobPhase.WAITING, EphemeralJobPhase.UNKNOWN, EphemeralJobPhase.RUNNING)
    left = seconds_left(st.start_time, settings.active_deadline_seconds, now)
    if st.phase in unfinished and left is not None and left <= 0:
        st.completion_time, st.phase = now, EphemeralJobPhase.FAILED
        message = f"EphemeralJob {ref} was active longer than specified deadline"
        _set_condition(st, EphemeralJobConditionType.FAILED, "DeadlineExceeded", message, now)
    if not settings.containers:
        st.phase = EphemeralJobPhase.ERROR
        _set_condition(st, EphemeralJobConditionType.ERROR, "Error", "job spec invalid fields.", now)


def plan(job: KubeObject, pods: Sequence[KubeObject], now: datetime.datetime) -> Plan:
    """Decide one round for ``job`` (an EphemeralJob dict) over candidate ``pods`` (at least the
    job's namespace's; others are ignored) at ``now`` (aware UTC). See the module docstring."""
    if is_being_deleted(job):
        return Plan(None, remove_finalizer=FINALIZER in finalizers(job))
    add_finalizer = FINALIZER not in finalizers(job)
    settings = Settings.of(job)
    old = EphemeralJobStatus.model_validate(dict(status(job)))
    if old.completion_time is not None:
        left = settings.ttl_seconds_after_finished - (now - old.completion_time).total_seconds()
        if left <= 0:
            return Plan(None, add_finalizer=add_finalizer, delete_job=True)
        return Plan(None, add_finalizer=add_finalizer, requeue_after=left)
    st = old.model_copy(deep=True)
    st.start_time = st.start_time or now
    if st.conditions is None:
        st.conditions = [_condition(EphemeralJobConditionType.INITIALIZED, "Initialized", "", now)]
    targets = target_pods(job, settings, pods)
    states = [pod_state(settings, p) for p in targets] if settings.containers else []
    st.match = len(targets)
    st.succeeded = states.count(ContainerState.SUCCEEDED)
    st.failed = states.count(ContainerState.FAILED)
    st.running = states.count(ContainerState.RUNNING)
    st.waiting = states.count(ContainerState.WAITING)
    _phase(job, settings, st, now)

    requeue: float | None = None
    deadline_left = seconds_left(st.start_time, settings.active_deadline_seconds, now)
    if deadline_left is not None and deadline_left > 0:
        requeue = deadline_left
    if st.completion_time is not None:
        requeue = float(max(settings.ttl_seconds_after_finished, 1))  # then the TTL branch decides
        return Plan(st, add_finalizer=add_finalizer, requeue_after=requeue, targets=tuple(map(name, targets)))
    inject: tuple[str, ...] = ()
    if st.phase not in (EphemeralJobPhase.PAUSED, EphemeralJobPhase.ERROR):
        to_inject = [p for p in targets if not has_job_containers(settings, p)]
        in_flight = sum(
            1
            for p, state in zip(targets, states, strict=True)
            if has_job_containers(settings, p)
            and state not in (ContainerState.SUCCEEDED, ContainerState.FAILED)
        )
        budget = min(settings.parallelism - in_flight, len(to_inject))
        inject = tuple(name(p) for p in to_inject[: max(budget, 0)])
    return Plan(
        st,
        inject=inject,
        add_finalizer=add_finalizer,
        requeue_after=requeue,
        targets=tuple(map(name, targets)),
    )
