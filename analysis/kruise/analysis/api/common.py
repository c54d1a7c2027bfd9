"""Types shared by AnalysisTemplate, ClusterAnalysisTemplate and AnalysisRun.

Mirrors Argo Rollouts' ``pkg/apis/rollouts/v1alpha1/analysis_types.go`` (arguments, dry-run and
measurement-retention rules, the metric itself) so that an Argo manifest is accepted after
changing only its ``apiVersion``. Our kinds live in ``rollouts.kruise.io/v1alpha1``.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated

from pydantic import Field

from kruise.analysis.api.providers import MetricProvider
from kruise.core.api import Int32, IntOrString, KubeModel, SchemaOverride

__all__ = [
    "GROUP",
    "V1ALPHA1",
    "AnalysisPhase",
    "Argument",
    "DryRun",
    "FieldRef",
    "MeasurementRetention",
    "Metric",
    "SecretKeyRef",
    "ValueFrom",
]

GROUP = "rollouts.kruise.io"
"""API group of the analysis kinds (shared with Rollout and BatchRelease)."""
V1ALPHA1 = "v1alpha1"
"""The only version of the analysis kinds, as Argo's ``argoproj.io/v1alpha1``."""


class AnalysisPhase(StrEnum):
    """Phase of an AnalysisRun, a MetricResult or a Measurement (Argo AnalysisPhase).

    ``Successful``, ``Failed``, ``Error`` and ``Inconclusive`` are completed phases.
    """

    PENDING = "Pending"
    RUNNING = "Running"
    SUCCESSFUL = "Successful"
    FAILED = "Failed"
    ERROR = "Error"
    INCONCLUSIVE = "Inconclusive"

    @property
    def completed(self) -> bool:
        """Whether the phase is final (Argo ``AnalysisPhase.Completed``)."""
        return self in _COMPLETED


_COMPLETED = frozenset(
    {AnalysisPhase.SUCCESSFUL, AnalysisPhase.FAILED, AnalysisPhase.ERROR, AnalysisPhase.INCONCLUSIVE}
)

Phase = Annotated[AnalysisPhase, SchemaOverride({"type": "string"})]
"""A phase field: a plain string in the CRD (as upstream), an :class:`AnalysisPhase` in Python."""


class SecretKeyRef(KubeModel):
    """SecretKeyRef selects a key of a Secret in the AnalysisRun's namespace."""

    name: str = Field(description="Name of the Secret.")
    key: str = Field(description="Key of the Secret's data whose value becomes the argument.")


class FieldRef(KubeModel):
    """FieldRef reads an argument from a field of the object that creates the run."""

    field_path: str = Field(
        description="Path of the field, e.g. metadata.labels['env'] or status.stableRS; "
        "resolved against the Rollout that creates the run (or the run itself when created by hand)."
    )


class ValueFrom(KubeModel):
    """ValueFrom is the source of an argument's value when it is not given inline."""

    secret_key_ref: SecretKeyRef | None = Field(
        default=None, description="Secret is a reference to where a secret is stored."
    )
    field_ref: FieldRef | None = Field(
        default=None, description="FieldRef is a reference to a field of the creating object."
    )


class Argument(KubeModel):
    """Argument is a named input of a template, referenced in metrics as {{args.<name>}}."""

    name: str = Field(description="Name of the argument.")
    value: str | None = Field(default=None, description="Value of the argument.")
    value_from: ValueFrom | None = Field(
        default=None, description="ValueFrom is a reference to where a value is stored."
    )


class DryRun(KubeModel):
    """DryRun marks metrics whose outcome never fails the run (Argo DryRun)."""

    metric_name: str = Field(
        description="Name of the metric to evaluate in dry-run mode; a regular expression, '.*' for all."
    )


class MeasurementRetention(KubeModel):
    """MeasurementRetention sets how many measurements are kept for matching metrics (default 10)."""

    metric_name: str = Field(
        description="Name of the metric this retention rule applies to; a regular expression."
    )
    limit: Int32 = Field(description="Maximum number of measurements kept for the metric.")


class Metric(KubeModel):
    """Metric defines one query, how often it runs and how its result is judged.

    Mirrors Argo's ``Metric``: ``interval``/``initialDelay`` are Go duration strings (``30s``,
    ``5m``, ``1h30m``); ``count`` and the limits are int-or-string so that ``{{args.x}}`` can fill
    them. Defaults: no interval and no count -> one measurement; interval only -> measure until
    the run is terminated; ``failureLimit`` 0 (-1 disables it), ``inconclusiveLimit`` 0,
    ``consecutiveErrorLimit`` 4, ``consecutiveSuccessLimit`` 0 (off).
    """

    name: str = Field(description="Name of the metric, unique within the run.")
    interval: str | None = Field(
        default=None,
        description="Interval between measurements (e.g. 30s, 5m, 1h). If omitted, one measurement.",
    )
    initial_delay: str | None = Field(
        default=None, description="How long after the run starts to wait before the first measurement."
    )
    count: IntOrString | None = Field(
        default=None,
        description="Number of measurements to take. Omitted with no interval means 1; with only an "
        "interval, the metric is measured until the run is terminated. Count > 1 needs an interval.",
    )
    success_condition: str | None = Field(
        default=None,
        description="Expression over `result` deciding a successful measurement, e.g. result[0] >= 0.95.",
    )
    failure_condition: str | None = Field(
        default=None,
        description="Expression over `result` deciding a failed measurement. When both conditions are "
        "set and neither holds, the measurement is Inconclusive.",
    )
    failure_limit: IntOrString | None = Field(
        default=None,
        description="Maximum number of failed measurements before the metric fails (default 0; -1 "
        "disables the limit).",
    )
    inconclusive_limit: IntOrString | None = Field(
        default=None,
        description="Maximum number of inconclusive measurements before the metric is Inconclusive "
        "(default 0).",
    )
    consecutive_error_limit: IntOrString | None = Field(
        default=None,
        description="Maximum number of consecutive measurement errors before the metric errors (default 4).",
    )
    consecutive_success_limit: IntOrString | None = Field(
        default=None,
        description="Number of consecutive successful measurements that make the metric Successful "
        "(default 0: off).",
    )
    provider: MetricProvider = Field(description="Provider is the system the measurement is taken from.")
