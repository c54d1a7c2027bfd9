"""Names, enumerations and small types shared by the ``rollouts.kruise.io`` kinds.

Mirrors the constants and helper types of Kruise Rollouts' ``api/v1beta1`` package
(``rollout_types.go``, ``batchrelease_plan_types.go``, ``deployment_types.go``) and the
v1alpha1 annotations that v1beta1 replaced with fields. Enumerations are ``StrEnum`` for the
code that writes them; the models keep plain strings, as upstream's CRD does.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated

from pydantic import Field

from kruise.core.api import KubeModel, SchemaRequired, Time

__all__ = [
    "GROUP",
    "ROLLBACK_IN_BATCH_ANNOTATION",
    "ROLLING_STYLE_ANNOTATION",
    "ROLLOUT_BATCH_ID_LABEL",
    "ROLLOUT_ID_LABEL",
    "TRAFFIC_ROUTING_ANNOTATION",
    "V1ALPHA1",
    "V1BETA1",
    "BatchReleaseBatchState",
    "CanaryStepState",
    "FinaliseReason",
    "FinalisingStepType",
    "FinalizingPolicyType",
    "ObjectRef",
    "PatchPodTemplateMetadata",
    "ProgressingReason",
    "RollingStyle",
    "RolloutCondition",
    "RolloutConditionType",
    "RolloutPhase",
    "TerminatingReason",
]

GROUP = "rollouts.kruise.io"
"""API group of Rollout, BatchRelease and TrafficRouting."""
V1ALPHA1 = "v1alpha1"
V1BETA1 = "v1beta1"

ROLLOUT_ID_LABEL = "rollouts.kruise.io/rollout-id"
"""Workload key (label or annotation) distinguishing each workload release (``RolloutIDLabel``)."""
ROLLOUT_BATCH_ID_LABEL = "rollouts.kruise.io/rollout-batch-id"
"""Pod label: the batch a pod was upgraded in, set only when a rollout-id is set."""
ROLLBACK_IN_BATCH_ANNOTATION = "rollouts.kruise.io/rollback-in-batch"
"""Rollout annotation: roll back step by step instead of at once (``RollbackInBatchAnnotation``)."""
ROLLING_STYLE_ANNOTATION = "rollouts.kruise.io/rolling-style"
"""v1alpha1 Rollout/BatchRelease annotation ``partition``/``canary`` (``RolloutStyleAnnotation``);
v1beta1 uses ``canary.enableExtraWorkloadForCanary`` / ``releasePlan.rollingStyle`` instead."""
TRAFFIC_ROUTING_ANNOTATION = "rollouts.kruise.io/trafficrouting"
"""v1alpha1 Rollout annotation naming a TrafficRouting; v1beta1 uses ``canary.trafficRoutingRef``."""


class RolloutPhase(StrEnum):
    """``RolloutPhase`` values; BatchRelease adds Preparing, Finalizing and Completed."""

    INITIAL = "Initial"
    HEALTHY = "Healthy"
    PROGRESSING = "Progressing"
    TERMINATING = "Terminating"
    DISABLED = "Disabled"
    DISABLING = "Disabling"
    PREPARING = "Preparing"
    FINALIZING = "Finalizing"
    COMPLETED = "Completed"


class CanaryStepState(StrEnum):
    """``CanaryStepState``: the state of the current step (``BeforeStepUpgrade`` is v1beta1 only)."""

    BEFORE_STEP_UPGRADE = "BeforeStepUpgrade"
    STEP_UPGRADE = "StepUpgrade"
    STEP_TRAFFIC_ROUTING = "StepTrafficRouting"
    STEP_METRICS_ANALYSIS = "StepMetricsAnalysis"
    STEP_PAUSED = "StepPaused"
    STEP_READY = "StepReady"
    COMPLETED = "Completed"


class FinalisingStepType(StrEnum):
    """``FinalisingStepType``: progress of finalisation, stored in ``status.*.finalisingStep``
    (``RevertWorkload`` is kruise's: an aborted analysis puts the stable template back)."""

    ROUTE_TRAFFIC_TO_NEW = "FinalisingStepRouteTrafficToNew"
    ROUTE_TRAFFIC_TO_STABLE = "FinalisingStepRouteTrafficToStable"
    RESTORE_STABLE_SERVICE = "RestoreStableService"
    REMOVE_CANARY_SERVICE = "RemoveCanaryService"
    RESUME_WORKLOAD = "ResumeWorkload"
    RELEASE_WORKLOAD_CONTROL = "ReleaseWorkloadControl"
    REVERT_WORKLOAD = "RevertWorkload"
    END = "END"
    WAIT_ENDLESS = "WaitEndless"


class ProgressingReason(StrEnum):
    """Reasons of the ``Progressing`` condition (``ProgressingReason*``)."""

    INITIALIZING = "Initializing"
    IN_ROLLING = "InRolling"
    FINALISING = "Finalising"
    COMPLETED = "Completed"
    CANCELLING = "Cancelling"
    PAUSED = "Paused"


class TerminatingReason(StrEnum):
    """Reasons of the ``Terminating`` condition (``TerminatingReason*``)."""

    IN_TERMINATING = "InTerminating"
    COMPLETED = "Completed"


class FinaliseReason(StrEnum):
    """Why a release is finalised (``FinaliseReason*``; ``Abort`` is kruise's failed analysis)."""

    SUCCESS = "Success"
    ROLLBACK = "Rollback"
    ABORT = "Abort"
    DISABLED = "RolloutDisabled"
    DELETING = "RolloutDeleting"


class BatchReleaseBatchState(StrEnum):
    """``BatchReleaseBatchStateType``: the state of the current batch of a BatchRelease."""

    UPGRADING = "Upgrading"
    VERIFYING = "Verifying"
    READY = "Ready"


class RollingStyle(StrEnum):
    """``RollingStyleType``: how a release is carried out (``BatchRelease.releasePlan.rollingStyle``)."""

    PARTITION = "Partition"
    CANARY = "Canary"
    BLUE_GREEN = "BlueGreen"


class FinalizingPolicyType(StrEnum):
    """``FinalizingPolicyType`` of a BatchRelease; upstream's documented default is Immediate."""

    WAIT_RESUME = "WaitResume"
    IMMEDIATE = "Immediate"


class RolloutConditionType(StrEnum):
    """Condition types of Rollout status (``RolloutConditionType``)."""

    PROGRESSING = "Progressing"
    SUCCEEDED = "Succeeded"
    TERMINATING = "Terminating"


class ObjectRef(KubeModel):
    """ObjectRef holds a references to the Kubernetes object

    Mirrors v1beta1 ``ObjectRef``: ``apiVersion``, ``kind`` and ``name`` are required in the CRD
    (Go fields without ``omitempty``); the model defaults them to ``""`` as Go's decoder would.
    """

    api_version: Annotated[str, SchemaRequired()] = Field(
        default="", description="API Version of the referent"
    )
    kind: Annotated[str, SchemaRequired()] = Field(default="", description="Kind of the referent")
    name: Annotated[str, SchemaRequired()] = Field(default="", description="Name of the referent")


class PatchPodTemplateMetadata(KubeModel):
    """PatchPodTemplateMetadata holds labels and annotations patched onto the canary pod template.

    Mirrors ``PatchPodTemplateMetadata``; only honoured for the extra canary Deployment.
    """

    annotations: dict[str, str] | None = Field(default=None, description="annotations")
    labels: dict[str, str] | None = Field(default=None, description="labels")


class RolloutCondition(KubeModel):
    """RolloutCondition describes the state of a rollout at a certain point.

    Mirrors ``RolloutCondition`` (also used by BatchRelease): ``type``, ``status``, ``reason`` and
    ``message`` are required in the CRD; the two times are optional.
    """

    type: Annotated[str, SchemaRequired()] = Field(default="", description="Type of rollout condition.")
    status: Annotated[str, SchemaRequired()] = Field(
        default="", description="Phase of the condition, one of True, False, Unknown."
    )
    last_update_time: Time | None = Field(
        default=None, description="The last time this condition was updated."
    )
    last_transition_time: Time | None = Field(
        default=None, description="Last time the condition transitioned from one status to another."
    )
    reason: Annotated[str, SchemaRequired()] = Field(
        default="", description="The reason for the condition's last transition."
    )
    message: Annotated[str, SchemaRequired()] = Field(
        default="", description="A human readable message indicating details about the transition."
    )
