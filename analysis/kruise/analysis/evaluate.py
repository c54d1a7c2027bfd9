"""Judging measurements, metrics and runs: Argo Rollouts' analysis rules as pure functions.

- :func:`evaluate_result` is Argo's ``EvaluateResult``: one measured value against the metric's
  ``successCondition``/``failureCondition``.
- :func:`record` is the bookkeeping of ``runMeasurements``: counters per completed measurement.
- :func:`assess_metric` is ``assessMetricStatus``: a metric's phase from its counters and limits.
- :func:`assess_run` is ``assessRunStatus``: the run's phase is the worst completed metric phase
  once every metric completed (dry-run metrics never count), with Argo's messages and summaries.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from typing import Any

from kruise.analysis.api import AnalysisPhase, Measurement, Metric, MetricResult, RunSummary
from kruise.analysis.condition import ConditionError, evaluate_condition

__all__ = [
    "DEFAULT_CONSECUTIVE_ERROR_LIMIT",
    "Limits",
    "MetricTransition",
    "RunAssessment",
    "assess_metric",
    "assess_run",
    "evaluate_result",
    "failure_verdict",
    "int_value",
    "is_terminating",
    "is_worse",
    "limits",
    "record",
]

DEFAULT_CONSECUTIVE_ERROR_LIMIT = 4
"""Argo's ``DefaultConsecutiveErrorLimit``: a fifth error in a row errors the metric."""

_ORDER = (
    AnalysisPhase.SUCCESSFUL,
    AnalysisPhase.RUNNING,
    AnalysisPhase.PENDING,
    AnalysisPhase.INCONCLUSIVE,
    AnalysisPhase.ERROR,
    AnalysisPhase.FAILED,
)
"""Best to worst (Argo ``analysisStatusOrder``)."""
_FAILING = (AnalysisPhase.FAILED, AnalysisPhase.ERROR, AnalysisPhase.INCONCLUSIVE)


def is_worse(current: AnalysisPhase, new: AnalysisPhase) -> bool:
    """Whether ``new`` is worse than ``current``: Successful < Running < Pending < Inconclusive
    < Error < Failed (Argo ``IsWorse``)."""
    return _ORDER.index(new) > _ORDER.index(current)


def evaluate_result(metric: Metric, result: Any) -> tuple[AnalysisPhase, str | None]:
    """Judge one measured ``result`` by the metric's conditions; ``(phase, error message)``.

    Mirrors Argo's ``EvaluateResult``:

    - neither condition set: Successful (there is nothing to fail);
    - only ``successCondition``: Successful when it holds, else Failed;
    - only ``failureCondition``: Failed when it holds, else Successful;
    - both: Failed when the failure condition holds (even if the success one holds too),
      Successful when only the success condition holds, Inconclusive when neither does.

    A condition that cannot be evaluated (syntax error, ``result[0]`` on an empty vector, a
    type mismatch, a non-boolean value) yields ``(Error, message)``, never Successful.
    """
    success_expr = metric.success_condition or ""
    failure_expr = metric.failure_condition or ""
    success = failure = False
    try:
        if success_expr:
            success = evaluate_condition(success_expr, result)
        if failure_expr:
            failure = evaluate_condition(failure_expr, result)
    except ConditionError as err:
        return AnalysisPhase.ERROR, str(err)
    if not success_expr and not failure_expr:
        return AnalysisPhase.SUCCESSFUL, None
    if success_expr and not failure_expr:
        failure = not success
    elif failure_expr and not success_expr:
        success = not failure
    if failure:
        return AnalysisPhase.FAILED, None
    if not success:
        return AnalysisPhase.INCONCLUSIVE, None
    return AnalysisPhase.SUCCESSFUL, None


def int_value(value: int | str | None, default: int) -> int:
    """An int-or-string limit as a number: ``3`` or ``"3"`` -> 3; None -> ``default``.

    Raises ``ValueError`` for a string that is not an integer (``"{{args.x}}"`` left unresolved).
    """
    if value is None:
        return default
    if isinstance(value, str):
        try:
            return int(value.strip())
        except ValueError:
            raise ValueError(f"{value!r} is not an integer") from None
    return value


@dataclass(frozen=True)
class Limits:
    """A metric's limits with Argo's defaults applied.

    ``count`` is the effective count (None: measure until terminated); ``failure`` -1 disables
    the failure limit; ``consecutive_success`` 0 is off.
    """

    count: int | None
    failure: int = 0
    inconclusive: int = 0
    consecutive_error: int = DEFAULT_CONSECUTIVE_ERROR_LIMIT
    consecutive_success: int = 0


def limits(metric: Metric) -> Limits:
    """The :class:`Limits` of ``metric`` (Argo ``EffectiveCount`` and the limit defaults).

    No count and no interval -> count 1; interval only -> None. Raises ``ValueError`` when a
    limit is a non-integer string.
    """
    count = int_value(metric.count, 0)
    effective: int | None = count
    if count == 0:
        effective = None if metric.interval else 1
    return Limits(
        count=effective,
        failure=int_value(metric.failure_limit, 0),
        inconclusive=int_value(metric.inconclusive_limit, 0),
        consecutive_error=int_value(metric.consecutive_error_limit, DEFAULT_CONSECUTIVE_ERROR_LIMIT),
        consecutive_success=int_value(metric.consecutive_success_limit, 0),
    )


def record(result: MetricResult, measurement: Measurement, *, replaces_last: bool = False) -> MetricResult:
    """``result`` with ``measurement`` appended (or replacing an in-flight last one), counted.

    Completed measurements update the counters as Argo's ``runMeasurements``: Successful, Failed
    and Inconclusive add to ``count`` and reset ``consecutiveError``; Error adds to ``error`` and
    ``consecutiveError`` only. ``consecutiveSuccess`` grows with each Successful measurement and
    resets on Failed or Inconclusive ones. The input is not modified.
    """
    out = result.model_copy(deep=True)
    measurements = list(out.measurements or [])
    if replaces_last and measurements:
        measurements[-1] = measurement
    else:
        measurements.append(measurement)
    out.measurements = measurements
    phase = measurement.phase
    if not phase.completed:
        return out
    if phase is AnalysisPhase.ERROR:
        out.error = (out.error or 0) + 1
        out.consecutive_error = (out.consecutive_error or 0) + 1
        return out
    out.count = (out.count or 0) + 1
    out.consecutive_error = 0
    if phase is AnalysisPhase.SUCCESSFUL:
        out.successful = (out.successful or 0) + 1
        out.consecutive_success = (out.consecutive_success or 0) + 1
    elif phase is AnalysisPhase.FAILED:
        out.failed = (out.failed or 0) + 1
        out.consecutive_success = 0
    else:
        out.inconclusive = (out.inconclusive or 0) + 1
        out.consecutive_success = 0
    return out


def failure_verdict(metric: Metric, result: MetricResult) -> tuple[AnalysisPhase | None, str]:
    """Whether a limit was crossed: ``(Failed|Inconclusive|Error, reason)`` or ``(None, "")``.

    Mirrors ``assessMetricFailureInconclusiveOrError``; when several limits are crossed the last
    check wins (failed, then inconclusive, then consecutive errors). Reasons read
    ``failed (2) > failureLimit (1)``, ``inconclusive (1) > inconclusiveLimit (0)``,
    ``consecutiveErrors (5) > consecutiveErrorLimit (4)``.
    """
    lim = limits(metric)
    phase: AnalysisPhase | None = None
    reason = ""
    failed, inconclusive, errors = result.failed or 0, result.inconclusive or 0, result.consecutive_error or 0
    if lim.failure >= 0 and failed > lim.failure:
        phase, reason = AnalysisPhase.FAILED, f"failed ({failed}) > failureLimit ({lim.failure})"
    if inconclusive > lim.inconclusive:
        phase = AnalysisPhase.INCONCLUSIVE
        reason = f"inconclusive ({inconclusive}) > inconclusiveLimit ({lim.inconclusive})"
    if errors > lim.consecutive_error:
        phase = AnalysisPhase.ERROR
        reason = f"consecutiveErrors ({errors}) > consecutiveErrorLimit ({lim.consecutive_error})"
    return phase, reason


def assess_metric(metric: Metric, result: MetricResult, terminating: bool) -> AnalysisPhase:
    """The phase of one metric (Argo ``assessMetricStatus``).

    A completed phase is final. No measurement yet: Pending (Successful when the run is
    terminating). An in-flight last measurement: Running. Then, in order: a crossed limit
    (:func:`failure_verdict`); ``consecutiveSuccessLimit`` reached -> Successful; count reached ->
    Successful, except that with a consecutive-success limit it is Inconclusive when the failure
    limit also applies and Failed when it is disabled (-1); otherwise Running, or Successful when
    the run is terminating.
    """
    if result.phase.completed:
        return result.phase
    measurements = result.measurements or []
    if not measurements:
        return AnalysisPhase.SUCCESSFUL if terminating else AnalysisPhase.PENDING
    if not measurements[-1].completed:
        return AnalysisPhase.RUNNING
    verdict, _ = failure_verdict(metric, result)
    if verdict is not None:
        return verdict
    lim = limits(metric)
    if lim.consecutive_success > 0 and (result.consecutive_success or 0) >= lim.consecutive_success:
        return AnalysisPhase.SUCCESSFUL
    if lim.count is not None and (result.count or 0) >= lim.count:
        if lim.consecutive_success > 0:
            return AnalysisPhase.INCONCLUSIVE if lim.failure >= 0 else AnalysisPhase.FAILED
        return AnalysisPhase.SUCCESSFUL
    return AnalysisPhase.SUCCESSFUL if terminating else AnalysisPhase.RUNNING


def is_terminating(terminate: bool, results: Sequence[MetricResult]) -> bool:
    """Argo ``IsTerminating``: ``spec.terminate`` or a non-dry-run metric Failed/Error/Inconclusive."""
    return terminate or any(r.phase in _FAILING and not r.dry_run for r in results)


@dataclass(frozen=True)
class MetricTransition:
    """A metric whose phase changed during an assessment."""

    name: str
    old: AnalysisPhase
    new: AnalysisPhase


@dataclass
class RunAssessment:
    """What :func:`assess_run` concluded: the run phase and message, updated metric results,
    run and dry-run summaries, and the metric phase transitions (for events)."""

    phase: AnalysisPhase
    message: str
    results: list[MetricResult]
    run_summary: RunSummary
    dry_run_summary: RunSummary
    transitions: list[MetricTransition] = field(default_factory=list)


def _count(summary: dict[str, int], phase: AnalysisPhase | None) -> None:
    key = {
        AnalysisPhase.ERROR: "error",
        AnalysisPhase.FAILED: "failed",
        AnalysisPhase.INCONCLUSIVE: "inconclusive",
    }.get(phase or AnalysisPhase.SUCCESSFUL, "successful")
    summary[key] += 1


def assess_run(
    metrics: Sequence[Metric], results: Sequence[MetricResult], dry_run: Collection[str], terminate: bool
) -> RunAssessment:
    """Assess every metric and the run (Argo ``assessRunStatus``).

    ``metrics`` are the run's metrics (arguments resolved), ``results`` its current metric
    results, ``dry_run`` the names of dry-run metrics, ``terminate`` ``spec.terminate``. The run is
    Running until every metric completed, then takes the worst non-dry-run metric phase
    (Successful when all metrics are dry-run); a terminating run completes with the worst phase
    so far (Successful if none). The message names the worst metric, e.g. ``Metric
    "success-rate" assessed Failed due to failed (1) > failureLimit (0)``, with ``: "Error Message:
    ..."`` appended from the metric's last measurement; ``Run Terminated`` on termination.
    """
    by_name = {r.name: r.model_copy(deep=True) for r in results}
    terminating = is_terminating(terminate, list(by_name.values()))
    worst: AnalysisPhase | None = None
    message = "Run Terminated" if terminate else ""
    summary = {"count": 0, "successful": 0, "failed": 0, "inconclusive": 0, "error": 0}
    dry_summary = dict(summary)
    transitions: list[MetricTransition] = []
    everything_completed = True
    for metric in metrics:
        is_dry = metric.name in dry_run
        (dry_summary if is_dry else summary)["count"] += 1
        result = by_name.get(metric.name)
        if result is None:
            everything_completed = False  # not started yet (initialDelay)
            continue
        phase = assess_metric(metric, result, terminating)
        if phase != result.phase:
            transitions.append(MetricTransition(metric.name, result.phase, phase))
            last = result.measurements[-1] if result.measurements else None
            if last is not None:
                result.message = last.message
            result.phase = phase
        if not phase.completed:
            everything_completed = False
            continue
        verdict, reason = failure_verdict(metric, result)
        if is_dry:
            worst = worst or AnalysisPhase.SUCCESSFUL
            if reason:
                result.message = f"Metric assessed {phase} due to {reason}"
            _count(dry_summary, verdict)
            continue
        if worst is None or is_worse(worst, phase):
            worst = phase
            if reason:
                message = f'Metric "{metric.name}" assessed {phase} due to {reason}'
                if result.message:
                    message += f': "Error Message: {result.message}"'
        _count(summary, verdict)
    ordered = [by_name[r.name] for r in results]
    run_summary, dry_run_summary = RunSummary(**summary), RunSummary(**dry_summary)
    if terminating:
        phase = worst or AnalysisPhase.SUCCESSFUL
    elif not everything_completed or worst is None:
        phase, message = AnalysisPhase.RUNNING, ""
    else:
        phase = worst
    return RunAssessment(phase, message.strip(), ordered, run_summary, dry_run_summary, transitions)
