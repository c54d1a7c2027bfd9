"""AnalysisRun: one instantiation of templates, measured by the AnalysisRun controller.

Mirrors Argo Rollouts' ``AnalysisRun``: the spec is written by its creator (a Rollout, or a
person), the status by the controller. Status shape::

    status:
      phase: Running            # Pending|Running|Successful|Failed|Error|Inconclusive
      message: ...
      startedAt: ...
      metricResults:
      - name: success-rate
        phase: Running
        count: 2                # measurements that did not error (successful+failed+inconclusive)
        successful: 2
        measurements:           # the latest ones, 10 unless measurementRetention says otherwise
        - {phase: Successful, value: "[0.99]", startedAt: ..., finishedAt: ...}
      runSummary: {count: 1, successful: 0, failed: 0, inconclusive: 0, error: 0}
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, ClassVar

from pydantic import Field

from kruise.analysis.api.common import (
    GROUP,
    V1ALPHA1,
    AnalysisPhase,
    Argument,
    DryRun,
    MeasurementRetention,
    Metric,
    Phase,
)
from kruise.core.api import Bool, Int32, KubeModel, KubeObject, SchemaRequired, Time
from kruise.core.crdgen import CRDSpec, CRDVersion, PrinterColumn

__all__ = [
    "ANALYSISRUN_CRD",
    "AnalysisRun",
    "AnalysisRunSpec",
    "AnalysisRunStatus",
    "Measurement",
    "MetricResult",
    "RunSummary",
    "TTLStrategy",
]


class TTLStrategy(KubeModel):
    """TTLStrategy limits how long a completed run is kept (seconds; accepted, not yet enforced)."""

    seconds_after_completion: Int32 | None = Field(
        default=None, description="Delete the run this many seconds after it completes."
    )
    seconds_after_failure: Int32 | None = Field(
        default=None, description="Delete the run this many seconds after it fails or errors."
    )
    seconds_after_success: Int32 | None = Field(
        default=None, description="Delete the run this many seconds after it succeeds."
    )


class AnalysisRunSpec(KubeModel):
    """AnalysisRunSpec is the metrics and resolved arguments of one run."""

    metrics: list[Metric] = Field(
        description="Metrics contains the list of metrics to query as part of an analysis run."
    )
    args: list[Argument] | None = Field(
        default=None, description="Args are the list of arguments used in this run."
    )
    terminate: Bool | None = Field(
        default=None,
        description="Terminate is used to prematurely stop the run (e.g. rollout completed and analysis "
        "is no longer desired).",
    )
    dry_run: list[DryRun] | None = Field(
        default=None,
        description="DryRun object contains the settings for running the analysis in Dry-Run mode.",
    )
    measurement_retention: list[MeasurementRetention] | None = Field(
        default=None,
        description="MeasurementRetention object contains the settings for retaining the number of "
        "measurements during the analysis.",
    )
    ttl_strategy: TTLStrategy | None = Field(
        default=None, description="TTLStrategy object contains the strategy for the time to live."
    )


class Measurement(KubeModel):
    """Measurement is one point-in-time result of a metric.

    ``value`` is the provider's result as text (``"0.99"``, ``"[0.99,0.5]"``, ``"NaN"``, JSON for
    web metrics); ``message`` explains an Error. ``finishedAt`` is unset while in flight;
    ``resumeAt`` is when an in-flight measurement should be checked again.
    """

    phase: Annotated[Phase, SchemaRequired()] = Field(
        default=AnalysisPhase.PENDING, description="Phase is the status of this single measurement."
    )
    message: str | None = Field(
        default=None,
        description="Message contains a message describing current condition (e.g. error messages).",
    )
    started_at: Time | None = Field(
        default=None,
        description="StartedAt is the timestamp in which this measurement started to be measured.",
    )
    finished_at: Time | None = Field(
        default=None,
        description="FinishedAt is the timestamp in which this measurement completed and value was "
        "collected.",
    )
    value: str | None = Field(default=None, description="Value is the measured value of the metric.")
    metadata: dict[str, str] | None = Field(
        default=None,
        description="Metadata stores additional metadata about this metric result (e.g. warnings).",
    )
    resume_at: Time | None = Field(
        default=None,
        description="ResumeAt is the timestamp when the analysisRun should try to resume the measurement.",
    )

    @property
    def completed(self) -> bool:
        """Whether the measurement is final (its phase is completed)."""
        return self.phase.completed


class MetricResult(KubeModel):
    """MetricResult holds the latest measurements of one metric and counters over all of them."""

    name: str = Field(description="Name is the name of the metric.")
    phase: Annotated[Phase, SchemaRequired()] = Field(
        default=AnalysisPhase.RUNNING, description="Phase is the overall aggregate status of the metric."
    )
    measurements: list[Measurement] | None = Field(
        default=None, description="Measurements holds the most recent measurements collected for the metric."
    )
    message: str | None = Field(
        default=None,
        description="Message contains a message describing current condition (e.g. error messages).",
    )
    count: Int32 | None = Field(
        default=None,
        description="Count is the number of times the metric was measured without Error. This is equal to "
        "the sum of Successful, Failed, Inconclusive.",
    )
    successful: Int32 | None = Field(
        default=None, description="Successful is the number of times the metric was measured Successful."
    )
    failed: Int32 | None = Field(
        default=None, description="Failed is the number of times the metric was measured Failed."
    )
    inconclusive: Int32 | None = Field(
        default=None, description="Inconclusive is the number of times the metric was measured Inconclusive."
    )
    error: Int32 | None = Field(
        default=None, description="Error is the number of times an error was encountered during measurement."
    )
    consecutive_error: Int32 | None = Field(
        default=None,
        description="ConsecutiveError is the number of times an error was encountered during measurement in "
        "succession. Resets to zero when non-errors are encountered.",
    )
    consecutive_success: Int32 | None = Field(
        default=None,
        description="ConsecutiveSuccess is the number of times a measurement was Successful in succession. "
        "Resets to zero on a Failed or Inconclusive measurement.",
    )
    dry_run: Bool | None = Field(
        default=None, description="DryRun indicates whether this metric is running in a dry-run mode or not."
    )
    metadata: dict[str, str] | None = Field(
        default=None, description="Metadata stores additional metadata about this metric."
    )


class RunSummary(KubeModel):
    """RunSummary counts the metrics of a run by their final phase."""

    count: Int32 | None = Field(
        default=None, description="This is equal to the sum of Successful, Failed, Inconclusive."
    )
    successful: Int32 | None = Field(
        default=None, description="Successful is the number of times the metric was measured Successful."
    )
    failed: Int32 | None = Field(
        default=None, description="Failed is the number of times the metric was measured Failed."
    )
    inconclusive: Int32 | None = Field(
        default=None, description="Inconclusive is the number of times the metric was measured Inconclusive."
    )
    error: Int32 | None = Field(
        default=None, description="Error is the number of times an error was encountered during measurement."
    )


class AnalysisRunStatus(KubeModel):
    """AnalysisRunStatus is the observed state of a run, written by the AnalysisRun controller."""

    phase: Annotated[Phase, SchemaRequired()] = Field(
        default=AnalysisPhase.PENDING, description="Phase is the status of the analysis run."
    )
    message: str | None = Field(default=None, description="Message is a message explaining current status.")
    metric_results: list[MetricResult] | None = Field(
        default=None, description="MetricResults contains the metrics collected during the run."
    )
    started_at: Time | None = Field(
        default=None, description="StartedAt indicates when the analysisRun first started."
    )
    completed_at: Time | None = Field(
        default=None, description="CompletedAt indicates when the analysisRun completed."
    )
    run_summary: RunSummary | None = Field(
        default=None, description="RunSummary contains the final results from the metric executions."
    )
    dry_run_summary: RunSummary | None = Field(
        default=None,
        description="DryRunSummary contains the final results from the metric executions in the "
        "dry-run mode.",
    )

    def result(self, name: str) -> MetricResult | None:
        """The MetricResult named ``name``, or None."""
        for result in self.metric_results or []:
            if result.name == name:
                return result
        return None


class AnalysisRun(KubeObject):
    """AnalysisRun is an instantiation of an AnalysisTemplate."""

    API_VERSION: ClassVar[str] = f"{GROUP}/{V1ALPHA1}"
    KIND: ClassVar[str] = "AnalysisRun"

    spec: AnalysisRunSpec = Field(description="Spec of the run.")
    status: AnalysisRunStatus | None = None

    @property
    def key(self) -> str:
        """``namespace/name`` of the run."""
        return f"{self.metadata.namespace}/{self.metadata.name}"

    def started_at(self) -> datetime | None:
        """``status.startedAt`` (None before the first reconcile)."""
        return self.status.started_at if self.status else None


ANALYSISRUN_CRD = CRDSpec(
    group=GROUP,
    kind="AnalysisRun",
    plural="analysisruns",
    singular="analysisrun",
    scope="Namespaced",
    versions=(
        CRDVersion(
            name=V1ALPHA1,
            model=AnalysisRun,
            printer_columns=(
                PrinterColumn("STATUS", "string", ".status.phase", "AnalysisRun status"),
                PrinterColumn(
                    "AGE", "date", ".metadata.creationTimestamp", "Time since resource was created"
                ),
            ),
        ),
    ),
)
"""The AnalysisRun CRD: namespaced, status subresource, STATUS and AGE columns."""
