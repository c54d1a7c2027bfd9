"""When to measure: Argo Rollouts' measurement schedule as pure functions of the run and ``now``.

- A metric is measured first when the run starts, or ``initialDelay`` after ``status.startedAt``.
- Then every ``interval`` after the previous measurement *finished*, until the effective count
  of non-error measurements is reached (no interval, no count: one measurement; interval only:
  until the run terminates).
- After an Error measurement the next try comes ``DEFAULT_ERROR_RETRY_INTERVAL`` (10 s) later,
  whatever the interval (Argo ``DefaultErrorRetryInterval``).
- A terminating run takes no new measurements; in-flight ones are still completed.

Durations are Go duration strings (``time.ParseDuration``): ``300ms``, ``1.5h``, ``2h45m``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from kruise.analysis.api import AnalysisPhase, AnalysisRun, Metric, MetricResult
from kruise.analysis.evaluate import is_terminating, limits

__all__ = ["DEFAULT_ERROR_RETRY_INTERVAL", "Task", "due_tasks", "next_reconcile", "parse_duration"]

DEFAULT_ERROR_RETRY_INTERVAL = timedelta(seconds=10)
"""How soon an errored measurement is retried (Argo ``DefaultErrorRetryInterval``)."""

_UNITS = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "μs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}
_PART = re.compile(r"(\d+\.?\d*|\.\d+)(ns|us|µs|μs|ms|s|m|h)")


def parse_duration(text: str) -> timedelta:
    """Parse a Go duration string (``time.ParseDuration``) into a ``timedelta``.

    ``"30s"`` -> 30 s, ``"1h30m"`` -> 90 min, ``"1.5h"``, ``"-5m"``, ``"0"``. Units: ns, us (µs),
    ms, s, m, h; a unit is required except for ``0``. Raises ``ValueError`` with Go's messages:
    ``time: invalid duration "x"``, ``time: missing unit in duration "5"``,
    ``time: unknown unit "d" in duration "1d"``.
    """
    raw = text
    sign = 1.0
    if text[:1] in "+-" and text:
        sign = -1.0 if text[0] == "-" else 1.0
        text = text[1:]
    if text == "0":
        return timedelta(0)
    if not text:
        raise ValueError(f'time: invalid duration "{raw}"')
    seconds = 0.0
    position = 0
    for match in _PART.finditer(text):
        if match.start() != position:
            break
        seconds += float(match.group(1)) * _UNITS[match.group(2)]
        position = match.end()
    if position != len(text):
        rest = re.match(r"(\d+\.?\d*|\.\d+)([^\d.]*)", text[position:])
        if rest is None:
            raise ValueError(f'time: invalid duration "{raw}"')
        if not rest.group(2):
            raise ValueError(f'time: missing unit in duration "{raw}"')
        raise ValueError(f'time: unknown unit "{rest.group(2)}" in duration "{raw}"')
    return timedelta(seconds=sign * seconds)


@dataclass(frozen=True)
class Task:
    """A measurement due now: the metric's ``name``; ``resume`` when it completes an in-flight one."""

    name: str
    resume: bool = False


def _result(results: Sequence[MetricResult], name: str) -> MetricResult | None:
    return next((r for r in results if r.name == name), None)


def _retry_interval(metric: Metric, last_phase: AnalysisPhase) -> timedelta | None:
    if last_phase is AnalysisPhase.ERROR:
        return DEFAULT_ERROR_RETRY_INTERVAL
    if metric.interval:
        return parse_duration(metric.interval)
    return None


def due_tasks(run: AnalysisRun, metrics: Sequence[Metric], now: datetime) -> list[Task]:
    """The measurements to take at ``now`` (Argo ``generateMetricTasks``).

    ``metrics`` are the run's metrics with arguments resolved. Completed metrics are skipped; an
    in-flight last measurement is resumed once its ``resumeAt`` passed; a terminating run starts
    nothing new; a first measurement waits for ``initialDelay`` after ``status.startedAt`` (and
    for the run to have started at all when a delay is set); later ones wait ``interval`` (or the
    error retry interval) after the previous one finished, until the effective count is reached.
    Raises ``ValueError`` for an unparseable duration (prevented by validation).
    """
    status = run.status
    results = list(status.metric_results or []) if status else []
    started = status.started_at if status else None
    terminating = is_terminating(bool(run.spec.terminate), results)
    tasks: list[Task] = []
    for metric in metrics:
        result = _result(results, metric.name)
        if result is not None and result.phase.completed:
            continue
        measurements = (result.measurements or []) if result else []
        last = measurements[-1] if measurements else None
        if last is not None and last.finished_at is None:
            if last.resume_at is None or last.resume_at <= now:
                tasks.append(Task(metric.name, resume=True))
            continue
        if terminating:
            continue
        if last is None:
            delay = parse_duration(metric.initial_delay) if metric.initial_delay else None
            if delay is not None and (started is None or started + delay > now):
                continue
            tasks.append(Task(metric.name))
            continue
        count = limits(metric).count
        if count is not None and result is not None and (result.count or 0) >= count:
            continue
        interval = _retry_interval(metric, last.phase) or DEFAULT_ERROR_RETRY_INTERVAL
        assert last.finished_at is not None
        if now >= last.finished_at + interval:
            tasks.append(Task(metric.name))
    return tasks


def next_reconcile(run: AnalysisRun, metrics: Sequence[Metric], now: datetime) -> datetime | None:
    """The earliest time a metric needs attention again, or None (Argo ``calculateNextReconcileTime``).

    Per unfinished metric: the end of its ``initialDelay`` before the first measurement; the
    ``resumeAt`` of an in-flight measurement; else the previous finish plus the interval (the
    error retry interval after an Error). Metrics that reached their count need nothing.
    """
    status = run.status
    results = list(status.metric_results or []) if status else []
    started = (status.started_at if status else None) or now
    times: list[datetime] = []
    for metric in metrics:
        result = _result(results, metric.name)
        if result is not None and result.phase.completed:
            continue
        measurements = (result.measurements or []) if result else []
        last = measurements[-1] if measurements else None
        if last is None:
            if metric.initial_delay:
                times.append(started + parse_duration(metric.initial_delay))
            continue
        if last.finished_at is None:
            if last.resume_at is not None:
                times.append(last.resume_at)
            continue
        count = limits(metric).count
        if count is not None and result is not None and (result.count or 0) >= count:
            continue
        interval = _retry_interval(metric, last.phase)
        if interval is not None:
            times.append(last.finished_at + interval)
    return min(times) if times else None
