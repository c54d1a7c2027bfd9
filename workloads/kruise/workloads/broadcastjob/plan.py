"""The BroadcastJob's pure core: ``plan(job, nodes, pods, now) -> Plan``.

One round of upstream's ``ReconcileBroadcastJob.Reconcile`` (v1.8), decided from data alone; the
controller executes the plan (creates, deletes, one status write, the events) and requeues.

1. A finished job (completion type Always and a ``Complete`` or ``Failed`` condition True) only
   waits for ``ttlSecondsAfterFinished`` past ``status.completionTime``, then is deleted.
2. ``startTime`` is set on the first round; phase "" becomes ``running``.
3. Pods are counted (:func:`~.jobpods.classify`) and nodes sorted by name are split
   (``getNodesToRunPod``): a node with a pod for it is *desired*, unless the pod no longer fits
   the node and is not terminating: then the node is not desired and an active pod is deleted;
   a node without one is desired and still to run when it fits (:func:`~.nodes.node_misfit`).
   A node with any pod for it, finished or terminating, never gets another: a finished node
   never runs again (unless its pod is deleted, as upstream). (Upstream also deletes a
   *finished* pod whose node no longer fits and counts it failed and one fewer active; we keep
   it, so the node stays done and a finished pod never frees a parallelism slot.)
4. A ``failed`` job only refreshes its counters. ``spec.paused`` turns a running job ``paused``
   and nothing else happens; unpausing emits ``Continue``.
5. Failed pods: failurePolicy ``Pause`` pauses the job (phase ``paused``; upstream sets
   ``spec.paused`` only in memory, so the phase stays paused while a failed pod exists);
   ``FailFast`` fails the job; ``Continue`` carries on.
6. Completion type Always: past ``activeDeadlineSeconds`` after ``startTime`` the job fails
   (``DeadlineExceeded``).
7. A failing job deletes its active pods (each counted failed), gets phase ``failed``, a
   ``Failed`` condition and ``completionTime``. Otherwise misfit pods are deleted (counted
   failed, as upstream), and pods are created on the first nodes still to run, so that active
   pods reach at most ``parallelism`` (int or percent of desired, rounded up; default
   2147483647). The job completes (Always only) when every desired node has a pod that is no
   longer active; a job with no desired node stays running. Completion type Never never
   finishes, so a node that joins later gets its pod.

Expectations (pods created but not yet in the cache) are the controller's: it does not plan while
any is unmet, so no node gets two pods.
"""

from __future__ import annotations

import datetime
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace

from kruise.core.api import CompletionPolicy, CompletionPolicyType, JobCondition, JobConditionType
from kruise.core.api.base import IntOrPercentError
from kruise.workloads.api.broadcastjob import (
    BroadcastJobPhase,
    BroadcastJobStatus,
    FailurePolicy,
    FailurePolicyType,
)
from kruise.workloads.broadcastjob.jobpods import assigned_node, classify
from kruise.workloads.broadcastjob.nodes import node_misfit
from kruise.workloads.intorpercent import MAX_INT32, legacy_scaled_value
from kruise.workloads.objects import KubeObject, is_being_deleted, mapping, name, namespace, spec, status
from kruise.workloads.pods import is_active
from kruise.workloads.requeue import seconds_left

__all__ = ["Event", "Plan", "Settings", "plan"]

NORMAL, WARNING = "Normal", "Warning"


@dataclass(frozen=True)
class Settings:
    """The job's spec with upstream's defaults (``SetDefaultsBroadcastJob``) applied, so the
    controller behaves the same whether or not the mutating webhook ran."""

    parallelism: int | str = MAX_INT32
    completion: str = CompletionPolicyType.ALWAYS
    active_deadline_seconds: int | None = None
    ttl_seconds_after_finished: int | None = None
    failure: str = FailurePolicyType.FAIL_FAST
    restart_limit: int = 0
    paused: bool = False

    @classmethod
    def of(cls, job: KubeObject) -> Settings:
        s = spec(job)
        completion = CompletionPolicy.model_validate(mapping(s.get("completionPolicy")))
        failure = FailurePolicy.model_validate(mapping(s.get("failurePolicy")))
        parallelism = s.get("parallelism")
        return cls(
            parallelism=parallelism if isinstance(parallelism, int | str) else MAX_INT32,
            completion=completion.type or CompletionPolicyType.ALWAYS,
            active_deadline_seconds=completion.active_deadline_seconds,
            ttl_seconds_after_finished=completion.ttl_seconds_after_finished,
            failure=failure.type or FailurePolicyType.FAIL_FAST,
            restart_limit=failure.restart_limit or 0,
            paused=bool(s.get("paused")),
        )

    @property
    def never(self) -> bool:
        return self.completion == CompletionPolicyType.NEVER


@dataclass(frozen=True)
class Event:
    """One Kubernetes Event on the job: ``type`` Normal|Warning, ``reason``, ``message``."""

    type: str
    reason: str
    message: str


@dataclass(frozen=True)
class Plan:
    """What one round decided.

    Attributes:
        status: the job's status to write, or ``None`` to leave it (a finished job).
        create_on: nodes to create a pod on, in order (slow-start batches are the shell's).
        delete: names of pods to delete.
        delete_job: the job's TTL after finishing has passed: delete the job.
        desired_nodes: every desired node (with or without a pod), by name.
        requeue_after: seconds until a time-based change (deadline, TTL), or ``None``.
        events: to emit on the job.
        parallelism: the parallelism in pods this round was allowed.
    """

    status: BroadcastJobStatus | None
    create_on: tuple[str, ...] = ()
    delete: tuple[str, ...] = ()
    delete_job: bool = False
    desired_nodes: frozenset[str] = frozenset()
    requeue_after: float | None = None
    events: tuple[Event, ...] = field(default_factory=tuple)
    parallelism: int = 0


def is_finished(job: KubeObject) -> bool:
    """``IsJobFinished``: completion type Always and a Complete or Failed condition True."""
    if Settings.of(job).never:
        return False
    return any(
        mapping(c).get("type") in (JobConditionType.COMPLETE, JobConditionType.FAILED)
        and mapping(c).get("status") == "True"
        for c in status(job).get("conditions") or ()
    )


def _finish(st: BroadcastJobStatus, kind: JobConditionType, message: str, now: datetime.datetime) -> None:
    st.conditions = [
        *(st.conditions or ()),
        JobCondition(
            type=kind,
            status="True",
            last_probe_time=now,
            last_transition_time=now,
            reason=str(kind),
            message=message,
        ),
    ]
    st.completion_time = now


def _parallelism(settings: Settings, desired: int) -> int:
    try:
        return legacy_scaled_value(settings.parallelism, desired, round_up=True)
    except IntOrPercentError:
        return 0


def plan(
    job: KubeObject, nodes: Iterable[KubeObject], pods: Sequence[KubeObject], now: datetime.datetime
) -> Plan:
    """Decide one round for ``job`` (a BroadcastJob dict) over every Node and the job's own pods
    (already filtered by controller reference), at ``now`` (aware UTC). See the module docstring."""
    settings = Settings.of(job)
    old = BroadcastJobStatus.model_validate(dict(status(job)))
    if is_finished(job):
        left = seconds_left(old.completion_time, settings.ttl_seconds_after_finished, now)
        if left is None:
            return Plan(None)
        return Plan(None, delete_job=left <= 0, requeue_after=left if left > 0 else None)
    st = old.model_copy(deep=True)
    events: list[Event] = []
    st.start_time = st.start_time or now
    deadline_left = (
        None if settings.never else seconds_left(st.start_time, settings.active_deadline_seconds, now)
    )
    requeue = deadline_left if deadline_left is not None and deadline_left > 0 else None
    st.phase = st.phase or BroadcastJobPhase.RUNNING

    counts = classify(pods, settings.restart_limit)
    by_node: dict[str, KubeObject] = {}
    for pod in pods:
        target = assigned_node(pod)
        if target in by_node:
            events.append(
                Event(
                    WARNING,
                    "DuplicatePodCreatedOnSameNode",
                    f"Duplicated pod {name(pod)} found on same node {target}",
                )
            )
        by_node[target] = pod
    template_spec = dict(mapping(mapping(spec(job).get("template")).get("spec")))
    desired: dict[str, KubeObject | None] = {}
    to_run: list[str] = []
    misfits: list[KubeObject] = []
    active_names = {name(p) for p in counts.active}
    for node in sorted(nodes, key=name):
        node_name = name(node)
        existing = by_node.get(node_name)
        if existing is not None:
            if node_misfit(spec(existing), node) is not None and not is_being_deleted(existing):
                if name(existing) in active_names:
                    misfits.append(existing)
                continue
            desired[node_name] = existing
        elif node_misfit({**template_spec, "nodeName": node_name}, node) is None:
            desired[node_name] = None
            to_run.append(node_name)
    active, failed, succeeded = len(counts.active), len(counts.failed), len(counts.succeeded)
    st.desired, st.succeeded = len(desired), succeeded
    st.active, st.failed = active, failed
    base = Plan(st, desired_nodes=frozenset(desired), requeue_after=requeue)

    if st.phase == BroadcastJobPhase.FAILED:
        return replace(base, events=tuple(events))
    paused_by_failure = failed > 0 and settings.failure == FailurePolicyType.PAUSE
    if settings.paused and st.phase in (BroadcastJobPhase.RUNNING, BroadcastJobPhase.PAUSED):
        st.phase = BroadcastJobPhase.PAUSED
        return replace(base, events=tuple(events))
    if st.phase == BroadcastJobPhase.PAUSED and not paused_by_failure:
        st.phase = BroadcastJobPhase.RUNNING
        events.append(Event(NORMAL, "Continue", "continue to process job"))

    failure: tuple[str, str] | None = None
    if paused_by_failure:
        if st.phase != BroadcastJobPhase.PAUSED:
            events.append(Event(WARNING, "Paused", "job is paused, due to failed pod"))
        st.phase = BroadcastJobPhase.PAUSED
        return replace(base, events=tuple(events))
    if failed > 0 and settings.failure == FailurePolicyType.FAIL_FAST:
        failure = (
            "failed pod is found",
            "failure policy is FailurePolicyTypeFailFast and failed pod is found",
        )
    elif deadline_left is not None and deadline_left <= 0:
        failure = (
            "DeadlineExceeded",
            f"Job {namespace(job)}/{name(job)} was active longer than specified deadline",
        )

    ttl = settings.ttl_seconds_after_finished
    if failure is not None:
        reason, message = failure
        st.active, st.failed = 0, failed + active
        st.phase = BroadcastJobPhase.FAILED
        _finish(st, JobConditionType.FAILED, message, now)
        events.append(
            Event(WARNING, reason, f"{message}: {succeeded} pods succeeded, {st.failed} pods failed")
        )
        return replace(
            base,
            requeue_after=None if ttl is None else ttl + 1,
            delete=tuple(name(p) for p in counts.active),
            events=tuple(events),
        )

    deleting = tuple(name(p) for p in misfits)
    active -= len(misfits)  # upstream's counters: each deleted pod leaves active and counts failed
    failed += len(misfits)
    parallelism = _parallelism(settings, len(desired))
    create_on: tuple[str, ...] = ()
    if active > parallelism:
        events.append(Event(WARNING, "TooManyActivePods", "Number of active pods exceed parallelism limit"))
    elif active < parallelism and not is_being_deleted(job):
        create_on = tuple(to_run[: parallelism - active])
    st.active, st.failed = active + len(create_on), failed
    if not settings.never and desired and all(p is not None and not is_active(p) for p in desired.values()):
        message = f"Job completed, {succeeded} pods succeeded, {failed} pods failed"
        st.phase = BroadcastJobPhase.COMPLETED
        _finish(st, JobConditionType.COMPLETE, message, now)
        events.append(
            Event(
                NORMAL,
                "JobComplete",
                f"Job {namespace(job)}/{name(job)} is completed, "
                f"{succeeded} pods succeeded, {failed} pods failed",
            )
        )
        base = replace(base, requeue_after=None if ttl is None else ttl + 1)
    return replace(
        base,
        create_on=create_on,
        delete=deleting,
        events=tuple(events),
        parallelism=parallelism,
    )
