"""BroadcastJob (``apps.kruise.io/v1alpha1``, short name ``bcj``): models and CRD description.

Field names, types and descriptions follow OpenKruise's ``apis/apps/v1alpha1/broadcastjob_types.go``
(v1.8 line). As upstream:

- ``template`` is required; upstream's CRD leaves it schemaless, ours types it as the other
  workloads do (:class:`~kruise.core.api.pod.PodTemplateSpec`, unknown fields kept);
- defaults (``completionPolicy.type`` Always, ``parallelism`` 2147483647, ``failurePolicy.type``
  FailFast, ``template.spec.restartPolicy`` OnFailure) are *not* in the model or the CRD: the
  mutating webhook applies them (``SetDefaultsBroadcastJob``);
- ``status.phase`` takes the lowercase values of :class:`BroadcastJobPhase`;
- printer columns Desired, Active, Succeeded, Failed, AGE.
"""

from __future__ import annotations

from enum import StrEnum
from typing import ClassVar

from pydantic import Field

from kruise.core.api import (
    Bool,
    CompletionPolicy,
    Int32,
    IntOrString,
    JobCondition,
    KubeModel,
    KubeObject,
    Time,
)
from kruise.core.api.pod import PodTemplateSpec
from kruise.core.crdgen import AGE_COLUMN, CRDSpec, CRDVersion, PrinterColumn

__all__ = [
    "BROADCASTJOB_CRD",
    "BroadcastJob",
    "BroadcastJobPhase",
    "BroadcastJobSpec",
    "BroadcastJobStatus",
    "FailurePolicy",
    "FailurePolicyType",
]

GROUP = "apps.kruise.io"
VERSION = "v1alpha1"


class BroadcastJobPhase(StrEnum):
    """Values of ``status.phase`` (lowercase, as upstream)."""

    RUNNING = "running"
    PAUSED = "paused"
    COMPLETED = "completed"
    FAILED = "failed"


class FailurePolicyType(StrEnum):
    """Values of ``failurePolicy.type``: on a failed pod, fail the job and delete its active pods
    (FailFast, the default), carry on (Continue), or set ``spec.paused`` (Pause)."""

    FAIL_FAST = "FailFast"
    CONTINUE = "Continue"
    PAUSE = "Pause"


class FailurePolicy(KubeModel):
    """FailurePolicy defines the behavior of the job, when failed pod is found."""

    type: str | None = Field(default=None, description="Type indicates the type of FailurePolicyType.")
    restart_limit: Int32 | None = Field(
        default=None,
        description="RestartLimit specifies the number of retries before marking the pod failed.",
    )


class BroadcastJobSpec(KubeModel):
    """BroadcastJobSpec defines the desired state of BroadcastJob"""

    parallelism: IntOrString | None = Field(
        default=None,
        description="Parallelism specifies the maximum desired number of pods the job should run at any "
        "given time. The actual number of pods running in steady state will be less than this number "
        "when the work left to do is less than max parallelism. Not setting this value means no limit.",
    )
    template: PodTemplateSpec = Field(
        description="Template describes the pod that will be created when executing a job."
    )
    completion_policy: CompletionPolicy | None = Field(
        default=None,
        description="CompletionPolicy indicates the completion policy of the job. Default is Always "
        "CompletionPolicyType.",
    )
    paused: Bool | None = Field(default=None, description="Paused will pause the job.")
    failure_policy: FailurePolicy | None = Field(
        default=None,
        description="FailurePolicy indicates the behavior of the job, when failed pod is found.",
    )


class BroadcastJobStatus(KubeModel):
    """BroadcastJobStatus defines the observed state of BroadcastJob"""

    conditions: list[JobCondition] | None = Field(
        default=None, description="The latest available observations of an object's current state."
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
    active: Int32 = Field(default=0, description="The number of actively running pods.")
    succeeded: Int32 = Field(default=0, description="The number of pods which reached phase Succeeded.")
    failed: Int32 = Field(default=0, description="The number of pods which reached phase Failed.")
    desired: Int32 = Field(
        default=0,
        description="The desired number of pods, this is typically equal to the number of nodes "
        "satisfied to run pods.",
    )
    phase: str = Field(default="", description="The phase of the job.")


class BroadcastJob(KubeObject):
    """BroadcastJob is the Schema for the broadcastjobs API"""

    API_VERSION: ClassVar[str] = f"{GROUP}/{VERSION}"
    KIND: ClassVar[str] = "BroadcastJob"

    spec: BroadcastJobSpec | None = None
    status: BroadcastJobStatus | None = None


BROADCASTJOB_CRD = CRDSpec(
    group=GROUP,
    kind="BroadcastJob",
    plural="broadcastjobs",
    singular="broadcastjob",
    short_names=("bcj",),
    scope="Namespaced",
    versions=(
        CRDVersion(
            name=VERSION,
            model=BroadcastJob,
            served=True,
            storage=True,
            status_subresource=True,
            printer_columns=(
                PrinterColumn.integer(
                    "Desired",
                    ".status.desired",
                    "The desired number of pods. This is typically equal to the number of nodes satisfied "
                    "to run pods.",
                ),
                PrinterColumn.integer("Active", ".status.active", "The number of actively running pods."),
                PrinterColumn.integer(
                    "Succeeded", ".status.succeeded", "The number of pods which reached phase Succeeded."
                ),
                PrinterColumn.integer(
                    "Failed", ".status.failed", "The number of pods which reached phase Failed."
                ),
                AGE_COLUMN,
            ),
        ),
    ),
)
"""The BroadcastJob CRD: namespaced, short name ``bcj``, a status subresource, upstream's printer
columns (Desired, Active, Succeeded, Failed, AGE)."""
