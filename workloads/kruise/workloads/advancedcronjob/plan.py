"""The AdvancedCronJob's pure core: ``next_action(acj, children, now) -> Action``.

One round of upstream's ``ReconcileAdvancedCronJob`` (``reconcileJob`` / ``reconcileBroadcastJob``,
v1.8), decided from data alone; the controller writes the status, deletes and creates, and
requeues after ``Action.requeue_after``.

1. ``status.type`` is the template kind (:func:`template_kind`: jobTemplate, else
   imageListPullJobTemplate, else BroadcastJob). Children (the caller lists the objects of that
   kind whose controller reference is this ACJ) are *finished* when a ``Complete`` or ``Failed``
   condition is True (an ImageListPullJob: when ``status.completionTime`` is set, successful
   when ``succeeded == desired``, else failed), else active. ``status.active`` references the active ones;
   ``status.lastScheduleTime`` is the newest ``apps.kruise.io/scheduled-at`` annotation among
   all children (none: unset).
2. History: failed and successful children are each sorted by ``status.startTime`` (unset
   first) and the oldest beyond ``failedJobsHistoryLimit`` / ``successfulJobsHistoryLimit`` are
   deleted (a limit left unset keeps all, as upstream; the webhook defaults them to 1 and 3).
3. ``spec.paused``: nothing more, no requeue.
4. Missed runs: from ``lastScheduleTime`` (else the ACJ's creation), moved up to
   ``now - startingDeadlineSeconds`` when that is later, every activation up to ``now`` is a
   missed run and the latest one is the run to start. More than 100 missed activations is an
   error (upstream's "Too many missed start times (> 100). Set or decrease
   .spec.startingDeadlineSeconds or check clock skew."): nothing is created and no requeue is
   asked (upstream waits for the next change). An unparseable schedule likewise.
5. Otherwise the requeue is at the next activation after ``now`` in the chain of activations
   from ``lastScheduleTime`` (for a cron schedule the same time as upstream's
   ``schedule.Next(now)``; for ``@every`` it is the last scheduled time plus the interval, so a
   round that ran late does not delay every later run: upstream requeues ``Next(now)`` and
   carries the delay over, skipping a run once it falls an interval behind). No missed run, or a run older
   than ``startingDeadlineSeconds``: nothing to create. ``Forbid`` with an active child: skip
   this run. ``Replace``: delete every active child, then create. ``Allow``: create.
6. The child is named ``<acj>-<scheduled time in unix seconds>`` (so a run is never created twice),
   takes the template's labels and annotations, the annotation
   ``apps.kruise.io/scheduled-at: <RFC 3339 time>`` and a controller owner reference to the ACJ.
"""

from __future__ import annotations

import datetime
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from kruise.core.api import ObjectReference
from kruise.workloads.advancedcronjob.cron import CronError, parse_standard
from kruise.workloads.api.advancedcronjob import (
    AdvancedCronJob,
    AdvancedCronJobSpec,
    AdvancedCronJobStatus,
    ConcurrencyPolicy,
    TemplateKind,
)
from kruise.workloads.objects import (
    KubeObject,
    annotations_of,
    format_time,
    mapping,
    name,
    namespace,
    parse_time,
    sequence,
    status,
    uid,
)
from kruise.workloads.revisions import ControllerKind

__all__ = [
    "MAX_MISSED_STARTS",
    "SCHEDULED_AT_ANNOTATION",
    "TOO_MANY_MISSED",
    "Action",
    "child_name",
    "format_schedule",
    "next_action",
    "template_kind",
]

SCHEDULED_AT_ANNOTATION = "apps.kruise.io/scheduled-at"
MAX_MISSED_STARTS = 100
TOO_MANY_MISSED = (
    "Too many missed start times (> 100). Set or decrease .spec.startingDeadlineSeconds or check clock skew."
)
ACJ_KIND = ControllerKind("apps.kruise.io/v1alpha1", "AdvancedCronJob")

_CHILD_API_VERSION = {
    TemplateKind.JOB: "batch/v1",
    TemplateKind.BROADCAST_JOB: "apps.kruise.io/v1alpha1",
    TemplateKind.IMAGE_LIST_PULL_JOB: "apps.kruise.io/v1alpha1",
}


@dataclass
class Action:
    """What one round does.

    - ``status``: the status to write (type, active references, lastScheduleTime);
    - ``delete``: names of children to delete (history pruning first, then Replace's active
      ones), with background propagation;
    - ``create``: the child object to create (a JSON dict of ``status.type``'s kind), or None;
    - ``scheduled_time``: the run ``create`` is for;
    - ``requeue_after``: seconds until the next activation, or None (paused, unparseable schedule,
      too many missed starts: wait for a change);
    - ``error``: why no schedule could be computed (logged/evented by the controller).
    """

    status: AdvancedCronJobStatus
    delete: list[str] = field(default_factory=list)
    create: dict[str, Any] | None = None
    scheduled_time: datetime.datetime | None = None
    requeue_after: float | None = None
    error: str | None = None


def template_kind(spec: AdvancedCronJobSpec) -> TemplateKind:
    """Upstream's ``FindTemplateKind``: Job when ``jobTemplate`` is set, else ImageListPullJob when
    ``imageListPullJobTemplate`` is, else BroadcastJob."""
    if spec.template.job_template is not None:
        return TemplateKind.JOB
    if spec.template.image_list_pull_job_template is not None:
        return TemplateKind.IMAGE_LIST_PULL_JOB
    return TemplateKind.BROADCAST_JOB


def format_schedule(spec: AdvancedCronJobSpec) -> str:
    """Upstream's ``formatSchedule``: a schedule mentioning ``TZ`` is used as is; otherwise a
    loadable ``timeZone`` is prefixed as ``TZ=<zone> ``."""
    if "TZ" in spec.schedule or not spec.time_zone:
        return spec.schedule
    try:
        parse_standard(f"TZ={spec.time_zone} @hourly")
    except CronError:
        return spec.schedule
    return f"TZ={spec.time_zone} {spec.schedule}"


def child_name(acj_name: str, scheduled: datetime.datetime) -> str:
    """``<acj>-<unix seconds of the scheduled time>``, e.g. ``nightly-1717200000``."""
    return f"{acj_name}-{int(scheduled.timestamp())}"


def _finished(child: KubeObject, kind: TemplateKind) -> str:
    if kind == TemplateKind.IMAGE_LIST_PULL_JOB:
        st = status(child)
        if not st.get("completionTime"):
            return ""
        return "Complete" if (st.get("succeeded") or 0) == (st.get("desired") or 0) else "Failed"
    for cond in sequence(status(child).get("conditions")):
        c = mapping(cond)
        if c.get("type") in ("Complete", "Failed") and c.get("status") == "True":
            return str(c["type"])
    return ""


def _start_key(child: KubeObject) -> tuple[int, datetime.datetime]:
    started = parse_time(status(child).get("startTime"))
    return (0, datetime.datetime.min.replace(tzinfo=datetime.UTC)) if started is None else (1, started)


def _prune(children: list[KubeObject], limit: int | None) -> list[str]:
    if limit is None:
        return []
    ordered = sorted(children, key=_start_key)
    return [name(c) for c in ordered[: max(0, len(ordered) - limit)]]


def _reference(child: KubeObject, kind: TemplateKind) -> ObjectReference:
    meta = mapping(child.get("metadata"))
    return ObjectReference(
        api_version=str(child.get("apiVersion") or _CHILD_API_VERSION[kind]),
        kind=str(child.get("kind") or kind.value),
        name=name(child),
        namespace=namespace(child),
        uid=uid(child) or None,
        resource_version=meta.get("resourceVersion"),
    )


def _build_child(acj: AdvancedCronJob, kind: TemplateKind, scheduled: datetime.datetime) -> dict[str, Any]:
    assert acj.spec is not None
    tmpl = acj.spec.template
    source = {
        TemplateKind.JOB: tmpl.job_template,
        TemplateKind.BROADCAST_JOB: tmpl.broadcast_job_template,
        TemplateKind.IMAGE_LIST_PULL_JOB: tmpl.image_list_pull_job_template,
    }[kind] or {}
    meta = mapping(source.get("metadata"))
    owner = {"metadata": {"name": acj.metadata.name, "uid": acj.metadata.uid}}
    return {
        "apiVersion": _CHILD_API_VERSION[kind],
        "kind": kind.value,
        "metadata": {
            "name": child_name(acj.metadata.name or "", scheduled),
            "namespace": acj.metadata.namespace,
            "labels": dict(mapping(meta.get("labels"))),
            "annotations": {
                **mapping(meta.get("annotations")),
                SCHEDULED_AT_ANNOTATION: format_time(scheduled),
            },
            "ownerReferences": [ACJ_KIND.reference(owner)],
        },
        "spec": dict(mapping(source.get("spec"))),
    }


def next_action(acj: AdvancedCronJob, children: Sequence[KubeObject], now: datetime.datetime) -> Action:
    """Decide one round for ``acj`` (a parsed AdvancedCronJob with ``spec``) given its children
    (objects of ``template_kind``'s kind controlled by it) at ``now`` (aware). See the module doc
    for the steps mirrored from upstream."""
    spec = acj.spec
    if spec is None:
        raise ValueError("AdvancedCronJob without spec")
    kind = template_kind(spec)
    active: list[KubeObject] = []
    succeeded: list[KubeObject] = []
    failed: list[KubeObject] = []
    latest: datetime.datetime | None = None
    for child in children:
        {"": active, "Complete": succeeded, "Failed": failed}[_finished(child, kind)].append(child)
        scheduled = parse_time(annotations_of(child).get(SCHEDULED_AT_ANNOTATION))
        if scheduled is not None and (latest is None or scheduled > latest):
            latest = scheduled
    new_status = AdvancedCronJobStatus(
        type=kind,
        active=[_reference(c, kind) for c in active] or None,
        last_schedule_time=latest,
    )
    action = Action(status=new_status)
    action.delete += _prune(failed, spec.failed_jobs_history_limit)
    action.delete += _prune(succeeded, spec.successful_jobs_history_limit)
    if spec.paused:
        return action

    try:
        schedule = parse_standard(format_schedule(spec))
    except CronError as exc:
        action.error = f'Unparseable schedule "{spec.schedule}": {exc}'
        return action
    created = acj.metadata.creation_timestamp
    earliest = latest or created or now
    if spec.starting_deadline_seconds is not None:
        deadline = now - datetime.timedelta(seconds=spec.starting_deadline_seconds)
        earliest = max(earliest, deadline)
    missed: datetime.datetime | None = None
    if earliest > now:
        upcoming = schedule.next(now)
    else:
        starts = 0
        t = schedule.next(earliest)
        while t is not None and t <= now:
            missed = t
            starts += 1
            if starts > MAX_MISSED_STARTS:
                action.error = TOO_MANY_MISSED
                return action
            t = schedule.next(t)
        # the next activation of the chain the runs are named by (a cron schedule: the same as
        # next(now); ``@every``: last scheduled + the interval, so a late round does not push
        # every later run back, where upstream's next(now) does)
        upcoming = t
    action.requeue_after = None if upcoming is None else max(0.0, (upcoming - now).total_seconds())
    if missed is None:
        return action
    if (
        spec.starting_deadline_seconds is not None
        and missed + datetime.timedelta(seconds=spec.starting_deadline_seconds) < now
    ):
        return action
    policy = spec.concurrency_policy or ConcurrencyPolicy.ALLOW
    if policy == ConcurrencyPolicy.FORBID and active:
        return action
    if policy == ConcurrencyPolicy.REPLACE:
        action.delete += [name(c) for c in active]
    action.create = _build_child(acj, kind, missed)
    action.scheduled_time = missed
    return action
