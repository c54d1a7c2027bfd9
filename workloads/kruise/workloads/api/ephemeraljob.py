"""EphemeralJob (``apps.kruise.io/v1alpha1``, short name ``ejob``): models and CRD description.

Field names, types and JSON names follow OpenKruise's ``apis/apps/v1alpha1/ephemeraljob_types.go``
(v1.8 line). As upstream:

- ``selector`` and ``template`` are required; ``template.ephemeralContainers`` (required) is
  schemaless with unknown fields preserved (``core/v1`` EphemeralContainers, judged by the
  validating webhook and, at injection, by the API server's ``ephemeralcontainers`` subresource);
- no defaults in the schema: ``parallelism`` 1 and ``ttlSecondsAfterFinished`` 1800 are the
  controller's when unset (:mod:`kruise.workloads.ephemeraljob.plan`);
- the status counters are always present (no ``omitempty``), and the matched-pod count is
  ``status.match`` (the Go field ``Matches``);
- ``status.phase`` takes the values of :class:`EphemeralJobPhase`, conditions the types of
  :class:`EphemeralJobConditionType` (each with ``lastProbeTime``, the shape of
  :class:`~kruise.core.api.JobCondition`);
- printer columns STATUS, MATCH, SUCCEED, FAILED, RUNNING, WAITING, AGE.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated, Any, ClassVar

from pydantic import Field

from kruise.core.api import Bool, Int32, Int64, JobCondition, KubeModel, KubeObject, LabelSelector, Time
from kruise.core.api.base import Schemaless
from kruise.core.crdgen import AGE_COLUMN, CRDSpec, CRDVersion, PrinterColumn

__all__ = [
    "EJOB_ENV_KEY",
    "EPHEMERALJOB_CRD",
    "EphemeralContainerTemplateSpec",
    "EphemeralJob",
    "EphemeralJobConditionType",
    "EphemeralJobPhase",
    "EphemeralJobSpec",
    "EphemeralJobStatus",
]

GROUP = "apps.kruise.io"
VERSION = "v1alpha1"

EJOB_ENV_KEY = "KRUISE_EJOB_ID"
"""The env var each injected container carries, valued with the job's UID
(``EphemeralContainerEnvKey``): an ephemeral container of the template's name is the job's only
when it carries this var with the job's UID."""


class EphemeralJobPhase(StrEnum):
    """Values of ``status.phase`` (upstream's ``EphemeralJobPhase``)."""

    SUCCEEDED = "Succeeded"
    FAILED = "Failed"
    WAITING = "Waiting"
    RUNNING = "Running"
    PAUSED = "Paused"
    ERROR = "Error"
    UNKNOWN = "Unknown"


class EphemeralJobConditionType(StrEnum):
    """Types of ``status.conditions`` (upstream's ``EphemeralJobConditionType``)."""

    SUCCEEDED = "JobSucceeded"
    FAILED = "JobFailed"
    ERROR = "JobError"
    INITIALIZED = "Initialized"
    MATCHED_EMPTY = "MatchedEmpty"


class EphemeralContainerTemplateSpec(KubeModel):
    """EphemeralContainerTemplateSpec describes template spec of ephemeral containers"""

    ephemeral_containers: Annotated[list[dict[str, Any]], Schemaless] = Field(
        description="EphemeralContainers defines ephemeral container list in match pods."
    )


class EphemeralJobSpec(KubeModel):
    """EphemeralJobSpec defines the desired state of EphemeralJob"""

    selector: LabelSelector = Field(
        description="Selector is a label query over pods that should match the pod labels."
    )
    replicas: Int32 | None = Field(
        default=None,
        description="Replicas indicates a part of the quantity from matched pods by selector. Usually it is "
        "used for gray scale working. if Replicas exceeded the matched number by selector or not be set, "
        "replicas will not work.",
    )
    parallelism: Int32 | None = Field(
        default=None,
        description="Parallelism specifies the maximum desired number of pods which matches running "
        "ephemeral containers.",
    )
    template: EphemeralContainerTemplateSpec = Field(
        description="Template describes the ephemeral container that will be created."
    )
    paused: Bool | None = Field(default=None, description="Paused will pause the ephemeral job.")
    active_deadline_seconds: Int64 | None = Field(
        default=None,
        description="ActiveDeadlineSeconds specifies the duration in seconds relative to the startTime that "
        "the job may be active before the system tries to terminate it; value must be positive integer. "
        "Only works for Always type.",
    )
    ttl_seconds_after_finished: Int32 | None = Field(
        default=None,
        description="ttlSecondsAfterFinished limits the lifetime of a Job that has finished execution "
        "(either Complete or Failed). If this field is set, ttlSecondsAfterFinished after the eJob "
        "finishes, it is eligible to be automatically deleted. When the Job is being deleted, its "
        "lifecycle guarantees (e.g. finalizers) will be honored. If this field is unset, default value "
        "is 1800 If this field is set to zero, the Job becomes eligible to be deleted immediately after "
        "it finishes.",
    )


class EphemeralJobStatus(KubeModel):
    """EphemeralJobStatus defines the observed state of EphemeralJob"""

    conditions: list[JobCondition] | None = Field(
        default=None, description="The latest available observations of the job's current state."
    )
    start_time: Time | None = Field(
        default=None,
        description="Represents time when the job was acknowledged by the job controller. It is not "
        "guaranteed to be set in happens-before order across separate operations. It is represented in "
        "RFC3339 form and is in UTC.",
    )
    completion_time: Time | None = Field(
        default=None,
        description="Represents time when the job was completed. It is not guaranteed to be set in "
        "happens-before order across separate operations. It is represented in RFC3339 form and is in "
        "UTC.",
    )
    phase: str = Field(default="", description="The phase of the job.")
    match: Int32 = Field(default=0, description="The number of total matched pods.")
    running: Int32 = Field(default=0, description="The number of actively running pods.")
    succeeded: Int32 = Field(default=0, description="The number of pods which reached phase Succeeded.")
    waiting: Int32 = Field(default=0, description="The number of waiting pods.")
    failed: Int32 = Field(default=0, description="The number of pods which reached phase Failed.")


class EphemeralJob(KubeObject):
    """EphemeralJob is the Schema for the ephemeraljobs API"""

    API_VERSION: ClassVar[str] = f"{GROUP}/{VERSION}"
    KIND: ClassVar[str] = "EphemeralJob"

    spec: EphemeralJobSpec | None = None
    status: EphemeralJobStatus | None = None


EPHEMERALJOB_CRD = CRDSpec(
    group=GROUP,
    kind="EphemeralJob",
    plural="ephemeraljobs",
    singular="ephemeraljob",
    short_names=("ejob",),
    scope="Namespaced",
    versions=(
        CRDVersion(
            name=VERSION,
            model=EphemeralJob,
            served=True,
            storage=True,
            status_subresource=True,
            printer_columns=(
                PrinterColumn(
                    name="STATUS",
                    type="string",
                    json_path=".status.phase",
                    description="The status of ephemeral job",
                ),
                PrinterColumn.integer(
                    "MATCH", ".status.match", "Number of ephemeral container matched by this job"
                ),
                PrinterColumn.integer(
                    "SUCCEED", ".status.succeeded", "Number of succeed ephemeral containers"
                ),
                PrinterColumn.integer("FAILED", ".status.failed", "Number of failed ephemeral containers"),
                PrinterColumn.integer("RUNNING", ".status.running", "Number of running ephemeral containers"),
                PrinterColumn.integer("WAITING", ".status.waiting", "Number of waiting ephemeral containers"),
                AGE_COLUMN,
            ),
        ),
    ),
)
"""The EphemeralJob CRD: namespaced, short name ``ejob``, a status subresource, upstream's printer
columns (STATUS, MATCH, SUCCEED, FAILED, RUNNING, WAITING, AGE)."""
