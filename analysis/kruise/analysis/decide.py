"""The AnalysisRun controller's pure core: from a run and the measurements just taken to its
next status, events and requeue time (DESIGN §3).

One round, as Argo's ``reconcileAnalysisRun``::

    prepared = prepare(run)                      # args resolved (secrets as placeholders), validated
    tasks = due_tasks(run, prepared.metrics, now)   # kruise.analysis.schedule
    taken = [Taken(task.name, await provider.measure(...), task.resume) for task in tasks]
    decision = decide(run, prepared, taken, now)    # status to write, events, requeue_after

Deciding twice on the same run with nothing new taken yields the same status and no events.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime

from kruise.analysis.api import (
    AnalysisPhase,
    AnalysisRun,
    AnalysisRunStatus,
    Measurement,
    Metric,
    MetricResult,
)
from kruise.analysis.args import ArgumentError, placeholder_values, resolve_metric
from kruise.analysis.evaluate import assess_run, int_value, is_terminating, limits, record
from kruise.analysis.rules import dry_run_metrics, retention_limits, trim_measurements
from kruise.analysis.schedule import next_reconcile, parse_duration

__all__ = [
    "REASON_PREFIX_METRIC",
    "REASON_PREFIX_RUN",
    "Decision",
    "EventSpec",
    "Prepared",
    "SpecError",
    "Taken",
    "decide",
    "errored",
    "prepare",
    "validate_metrics",
]

REASON_PREFIX_RUN = "AnalysisRun"
"""Run events are ``AnalysisRun<Phase>`` (``AnalysisRunFailed``...), as Argo's."""
REASON_PREFIX_METRIC = "Metric"
"""Metric events are ``Metric<Phase>`` (``MetricSuccessful``...), as Argo's."""


class SpecError(ValueError):
    """The run cannot be measured as written; its status becomes Error with this message."""


@dataclass(frozen=True)
class Prepared:
    """A run ready to schedule: metrics with arguments resolved (secrets as placeholders), the
    dry-run metric names and the measurement retention limits."""

    metrics: tuple[Metric, ...]
    dry_run: frozenset[str]
    retention: dict[str, int]


@dataclass(frozen=True)
class Taken:
    """A measurement taken this round for metric ``name``; ``resumed`` when it completes the
    metric's in-flight last measurement (which it then replaces)."""

    name: str
    measurement: Measurement
    resumed: bool = False


@dataclass(frozen=True)
class EventSpec:
    """A Kubernetes Event to record on the run: ``type`` Normal or Warning."""

    type: str
    reason: str
    message: str


@dataclass(frozen=True)
class Decision:
    """The status to write, the events to record and when to look again (seconds; None: only on
    a change of the run)."""

    status: AnalysisRunStatus
    events: tuple[EventSpec, ...] = field(default_factory=tuple)
    requeue_after: float | None = None


def validate_metrics(metrics: Sequence[Metric]) -> None:
    """Argo's ``ValidateMetrics`` on resolved metrics; raises ``ValueError`` with its messages.

    At least one metric; unique names; count >= failureLimit and >= inconclusiveLimit; an interval
    when count > 1; parseable durations; failureLimit >= -1; the other limits >= 0; exactly one
    provider.
    """
    if not metrics:
        raise ValueError("no metrics specified")
    seen: set[str] = set()
    for index, metric in enumerate(metrics):
        if metric.name in seen:
            raise ValueError(f"metrics[{index}]: duplicate name '{metric.name}'")
        seen.add(metric.name)
        try:
            _validate_metric(metric)
        except ValueError as err:
            raise ValueError(f"metrics[{index}]: {err}") from None


def _validate_metric(metric: Metric) -> None:
    lim = limits(metric)
    count = int_value(metric.count, 0)
    if count > 0:
        if count < lim.failure:
            raise ValueError("count must be >= failureLimit")
        if count < lim.inconclusive:
            raise ValueError("count must be >= inconclusiveLimit")
    if count > 1 and not metric.interval:
        raise ValueError("interval must be specified when count > 1")
    if metric.interval:
        try:
            parse_duration(metric.interval)
        except ValueError as err:
            raise ValueError(f"invalid interval string: {err}") from None
    if metric.initial_delay:
        try:
            parse_duration(metric.initial_delay)
        except ValueError as err:
            raise ValueError(f"invalid startDelay string: {err}") from None
    if lim.failure < -1:
        raise ValueError("failureLimit must be >= -1")
    if lim.inconclusive < 0:
        raise ValueError("inconclusiveLimit must be >= 0")
    if lim.consecutive_error < 0:
        raise ValueError("consecutiveErrorLimit must be >= 0")
    if lim.consecutive_success < 0:
        raise ValueError("consecutiveSuccessLimit must be >= 0")
    kinds = metric.provider.kinds()
    if not kinds:
        raise ValueError("no provider specified")
    if len(kinds) > 1:
        raise ValueError("multiple providers specified")


def prepare(run: AnalysisRun) -> Prepared:
    """Resolve and validate ``run`` for scheduling. Raises :class:`SpecError` with Argo's
    messages: ``Unable to resolve metric arguments: ...`` or ``Analysis spec invalid: ...``."""
    try:
        values = placeholder_values(run.spec.args)
        metrics = tuple(resolve_metric(m, values) for m in run.spec.metrics)
    except ArgumentError as err:
        raise SpecError(f"Unable to resolve metric arguments: {err}") from None
    names = [m.name for m in metrics]
    try:
        validate_metrics(metrics)
        dry_run = dry_run_metrics(run.spec.dry_run, names)
        retention = retention_limits(run.spec.measurement_retention, names)
    except ValueError as err:
        raise SpecError(f"Analysis spec invalid: {err}") from None
    return Prepared(metrics, dry_run, retention)


def _event(prefix: str, phase: AnalysisPhase, message: str) -> EventSpec:
    warning = phase in (AnalysisPhase.ERROR, AnalysisPhase.FAILED)
    return EventSpec("Warning" if warning else "Normal", f"{prefix}{phase}", message)


def errored(run: AnalysisRun, message: str, now: datetime) -> Decision:
    """The decision for a run that cannot be measured: phase Error with ``message``."""
    status = (run.status or AnalysisRunStatus()).model_copy(deep=True)
    if status.phase.completed:
        return Decision(status)
    status.phase, status.message = AnalysisPhase.ERROR, message
    status.started_at = status.started_at or now
    status.completed_at = now
    return Decision(status, (_event(REASON_PREFIX_RUN, status.phase, "Analysis Completed. Result: Error"),))


def _apply(results: list[MetricResult], taken: Taken, dry_run: frozenset[str], now: datetime) -> None:
    measurement = taken.measurement.model_copy(deep=True)
    if measurement.phase.completed and measurement.finished_at is None:
        measurement.finished_at = now
    measurement.started_at = measurement.started_at or now
    for index, result in enumerate(results):
        if result.name == taken.name:
            results[index] = record(result, measurement, replaces_last=taken.resumed)
            return
    fresh = MetricResult(name=taken.name, phase=AnalysisPhase.RUNNING, dry_run=taken.name in dry_run or None)
    results.append(record(fresh, measurement))


def decide(run: AnalysisRun, prepared: Prepared, taken: Sequence[Taken], now: datetime) -> Decision:
    """The run's next status after recording ``taken`` at ``now`` (Argo ``reconcileAnalysisRun``).

    Records each measurement (counters, ``dryRun`` flag on new results), sets ``startedAt``,
    assesses metrics and run (:func:`~kruise.analysis.evaluate.assess_run`), sets ``completedAt``
    and emits ``AnalysisRun<Phase>`` / ``Metric<Phase>`` events on transitions, trims the history
    to the retention limits, and asks to be requeued at the next due measurement (immediately
    when a metric just failed while others still run, so the run terminates without waiting).
    A completed run is returned unchanged.
    """
    status = (run.status or AnalysisRunStatus()).model_copy(deep=True)
    if status.phase.completed:
        return Decision(status)
    results = list(status.metric_results or [])
    for item in taken:
        _apply(results, item, prepared.dry_run, now)
    status.started_at = status.started_at or now
    assessment = assess_run(prepared.metrics, results, prepared.dry_run, bool(run.spec.terminate))
    events = [
        _event(REASON_PREFIX_METRIC, t.new, f"Metric '{t.name}' Completed. Result: {t.new}")
        for t in assessment.transitions
        if t.new.completed
    ]
    old_phase = status.phase
    if assessment.phase != old_phase:
        status.phase, status.message = assessment.phase, assessment.message or None
        if assessment.phase.completed:
            status.completed_at = now
            events.append(
                _event(REASON_PREFIX_RUN, assessment.phase, f"Analysis Completed. Result: {assessment.phase}")
            )
        elif assessment.phase is AnalysisPhase.RUNNING:
            events.append(EventSpec("Normal", f"{REASON_PREFIX_RUN}Running", "Analysis Started"))
    status.metric_results = trim_measurements(assessment.results, prepared.retention) or None
    status.run_summary = assessment.run_summary
    status.dry_run_summary = assessment.dry_run_summary if prepared.dry_run else None
    return Decision(status, tuple(events), _requeue(run, status, prepared, now))


def _requeue(run: AnalysisRun, status: AnalysisRunStatus, prepared: Prepared, now: datetime) -> float | None:
    if status.phase.completed:
        return None
    if is_terminating(bool(run.spec.terminate), status.metric_results or []):
        return 0.0
    after = AnalysisRun(metadata=run.metadata, spec=run.spec, status=status)
    due = next_reconcile(after, prepared.metrics, now)
    if due is None:
        return None
    return max(0.0, (due - now).total_seconds())
