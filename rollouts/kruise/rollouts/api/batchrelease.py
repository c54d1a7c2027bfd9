"""BatchRelease (``rollouts.kruise.io/v1beta1`` stored, ``v1alpha1`` served): models and CRD.

Mirrors Kruise Rollouts' ``api/v1beta1/batchrelease_types.go``/``batchrelease_plan_types.go``
and their v1alpha1 twins. A BatchRelease ("release N pods of this workload") is created by the
Rollout controller with the Rollout's name, one batch per step; ``batchPartition`` (0-based)
says how far to go. The two versions differ only in where the workload is named
(v1beta1 ``spec.workloadRef``, v1alpha1 ``spec.targetReference.workloadRef``) and in
``status.message`` (v1beta1 only).

As upstream, ``releasePlan.enableExtraWorkloadForCanary`` has no ``omitempty`` and is therefore
required by the CRD; the model always writes it (``false`` by default).
"""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated, ClassVar

from pydantic import Field

from kruise.core.api import Bool, Int32, Int64, IntOrString, KubeModel, KubeObject, SchemaRequired, Time
from kruise.core.crdgen import CRDSpec, CRDVersion, PrinterColumn
from kruise.rollouts.api.common import (
    GROUP,
    V1ALPHA1,
    V1BETA1,
    ObjectRef,
    PatchPodTemplateMetadata,
    RolloutCondition,
)
from kruise.rollouts.api.rollout import AGE_COLUMN
from kruise.rollouts.api.rollout_v1alpha1 import WorkloadRef

__all__ = [
    "BATCHRELEASE_CRD",
    "BatchRelease",
    "BatchReleaseBatchState",
    "BatchReleaseCanaryStatus",
    "BatchReleaseSpec",
    "BatchReleaseSpecV1alpha1",
    "BatchReleaseStatus",
    "BatchReleaseStatusV1alpha1",
    "BatchReleaseV1alpha1",
    "ReleaseBatch",
    "ReleasePlan",
    "TargetReference",
]

_REQUIRED = SchemaRequired()


class BatchReleaseBatchState(StrEnum):
    """``BatchReleaseBatchStateType``: Upgrading -> Verifying -> Ready."""

    UPGRADING = "Upgrading"
    VERIFYING = "Verifying"
    READY = "Ready"


class ReleaseBatch(KubeModel):
    """ReleaseBatch is used to describe how each batch release should be

    Mirrors ``ReleaseBatch``: ``canaryReplicas`` (required) is a number or a percentage of the
    workload's replicas; batches must be non-decreasing.
    """

    canary_replicas: Annotated[IntOrString, _REQUIRED] = Field(
        default=0,
        description="CanaryReplicas is the number of upgraded pods that should have in this batch. it can be "
        "an absolute number (ex: 5) or a percentage of workload replicas. batches[i].canaryReplicas should "
        "less than or equal to batches[j].canaryReplicas if i < j.",
    )


class ReleasePlan(KubeModel):
    """ReleasePlan fines the details of the release plan

    Mirrors ``ReleasePlan`` (identical in v1alpha1 and v1beta1).
    """

    batches: list[ReleaseBatch] | None = Field(
        default=None,
        description="Batches is the details on each batch of the ReleasePlan. Users can specify their batch "
        "plan in this field, such as: batches: - canaryReplicas: 1  # batches 0 - canaryReplicas: 2  # "
        "batches 1 - canaryReplicas: 5  # batches 2 Not that these canaryReplicas should be a "
        "non-decreasing sequence.",
    )
    batch_partition: Int32 | None = Field(
        default=None,
        description="All pods in the batches up to the batchPartition (included) will have the target "
        "resource specification while the rest still is the stable revision. This is designed for the "
        "operators to manually rollout. Default is nil, which means no partition and will release all "
        "batches. BatchPartition start from 0.",
    )
    rollout_id: str | None = Field(
        default=None, alias="rolloutID", description="RolloutID indicates an id for each rollout progress"
    )
    failure_threshold: IntOrString | None = Field(
        default=None,
        description="FailureThreshold indicates how many failed pods can be tolerated in all upgraded pods. "
        "Only when FailureThreshold are satisfied, Rollout can enter ready state. If FailureThreshold is "
        "nil, Rollout will use the MaxUnavailable of workload as its FailureThreshold. Defaults to nil.",
    )
    finalizing_policy: str | None = Field(
        default=None,
        description="FinalizingPolicy define the behavior of controller when phase enter Finalizing Defaults "
        'to "Immediate"',
    )
    patch_pod_template_metadata: PatchPodTemplateMetadata | None = Field(
        default=None,
        description="PatchPodTemplateMetadata indicates patch configuration(e.g. labels, annotations) to the "
        "canary deployment podTemplateSpec.metadata only support for canary deployment",
    )
    rolling_style: str | None = Field(
        default=None, description='RollingStyle can be "Canary", "Partiton" or "BlueGreen"'
    )
    enable_extra_workload_for_canary: Annotated[Bool, _REQUIRED] = Field(
        default=False,
        description="EnableExtraWorkloadForCanary indicates whether to create extra workload for canary True "
        'corresponds to RollingStyle "Canary". False corresponds to RollingStyle "Partiton". Ignored in '
        "BlueGreen-style. This field is about to deprecate, use RollingStyle instead. If both of them are "
        "set, controller will only consider this filed when RollingStyle is empty",
    )


class BatchReleaseCanaryStatus(KubeModel):
    """BatchReleaseCanaryStatus is the progress of the current batch.

    Mirrors ``BatchReleaseCanaryStatus``: ``currentBatch`` (0-based, required) and ``batchState``.
    """

    batch_state: str | None = Field(
        default=None, description="CurrentBatchState indicates the release state of the current batch."
    )
    current_batch: Annotated[Int32, _REQUIRED] = Field(
        default=0, description="The current batch the rollout is working on/blocked, it starts from 0"
    )
    batch_ready_time: Time | None = Field(
        default=None,
        description="BatchReadyTime is the ready timestamp of the current batch or the last batch. This "
        "field is updated once a batch ready, and the batches[x].pausedSeconds relies on this field to "
        "calculate the real-time duration.",
    )
    updated_replicas: Int32 | None = Field(
        default=None, description="UpdatedReplicas is the number of upgraded Pods."
    )
    updated_ready_replicas: Int32 | None = Field(
        default=None,
        description="UpdatedReadyReplicas is the number upgraded Pods that have a Ready Condition.",
    )
    no_need_update_replicas: Int32 | None = Field(
        default=None, description="the number of pods that no need to rollback in rollback scene."
    )


class BatchReleaseStatusV1alpha1(KubeModel):
    """BatchReleaseStatus defines the observed state of a release plan

    Mirrors v1alpha1 ``BatchReleaseStatus`` (v1beta1 adds ``message``).
    """

    conditions: list[RolloutCondition] | None = Field(
        default=None,
        description="Conditions represents the observed process state of each phase during executing the "
        "release plan.",
    )
    canary_status: BatchReleaseCanaryStatus = Field(
        default_factory=BatchReleaseCanaryStatus,
        description="CanaryStatus describes the state of the canary rollout.",
    )
    stable_revision: str | None = Field(
        default=None, description="StableRevision is the pod-template-hash of stable revision pod template."
    )
    update_revision: str | None = Field(
        default=None, description="UpdateRevision is the pod-template-hash of update revision pod template."
    )
    observed_generation: Int64 | None = Field(
        default=None,
        description="ObservedGeneration is the most recent generation observed for this BatchRelease. It "
        "corresponds to this BatchRelease's generation, which is updated on mutation by the API Server, and "
        "only if BatchRelease Spec was changed, its generation will increase 1.",
    )
    observed_rollout_id: str | None = Field(
        default=None,
        alias="observedRolloutID",
        description="ObservedRolloutID is the most recent rollout-id observed for this BatchRelease. If "
        "RolloutID was changed, we will restart to roll out from batch 0, to ensure the batch-id and "
        "rollout-id labels of Pods are correct.",
    )
    observed_workload_replicas: Int32 | None = Field(
        default=None,
        description="ObservedWorkloadReplicas is observed replicas of target referenced workload. This field "
        "is designed to deal with scaling event during rollout, if this field changed, it means that the "
        "workload is scaling during rollout.",
    )
    collision_count: Int32 | None = Field(
        default=None,
        description="Count of hash collisions for creating canary Deployment. The controller uses this field "
        "as a collision avoidance mechanism when it needs to create the name for the newest canary "
        "Deployment.",
    )
    observed_release_plan_hash: str | None = Field(
        default=None,
        description="ObservedReleasePlanHash is a hash code of observed itself spec.releasePlan.",
    )
    phase: str | None = Field(
        default=None,
        description="Phase is the release plan phase, which indicates the current state of release plan "
        "state machine in BatchRelease controller.",
    )


class BatchReleaseStatus(BatchReleaseStatusV1alpha1):
    """BatchReleaseStatus defines the observed state of a release plan

    Mirrors v1beta1 ``BatchReleaseStatus``: phase Preparing -> Progressing -> Finalizing -> Completed.
    """

    message: str | None = Field(
        default=None, description="Message provides details on why the rollout is in its current phase"
    )


class BatchReleaseSpec(KubeModel):
    """BatchReleaseSpec defines how to describe an update between different compRevision

    Mirrors v1beta1 ``BatchReleaseSpec``: only ``releasePlan`` is required by the CRD.
    """

    workload_ref: ObjectRef = Field(
        default_factory=ObjectRef,
        description="WorkloadRef contains enough information to let you identify a workload for Rollout "
        "Batch release of the bypass",
    )
    release_plan: Annotated[ReleasePlan, _REQUIRED] = Field(
        default_factory=ReleasePlan, description="ReleasePlan is the details on how to rollout the resources"
    )


class TargetReference(KubeModel):
    """TargetReference names the workload of a v1alpha1 BatchRelease (v1alpha1 ``ObjectRef``)."""

    workload_ref: WorkloadRef | None = Field(
        default=None,
        description="WorkloadRef contains enough information to let you identify a workload for Rollout "
        "Batch release of the bypass",
    )


class BatchReleaseSpecV1alpha1(KubeModel):
    """BatchReleaseSpec defines how to describe an update between different compRevision

    Mirrors v1alpha1 ``BatchReleaseSpec``: ``targetReference`` and ``releasePlan`` are required.
    """

    target_reference: Annotated[TargetReference, _REQUIRED] = Field(
        default_factory=TargetReference,
        description="TargetRef contains the GVK and name of the workload that we need to upgrade to.",
    )
    release_plan: Annotated[ReleasePlan, _REQUIRED] = Field(
        default_factory=ReleasePlan, description="ReleasePlan is the details on how to rollout the resources"
    )


class BatchRelease(KubeObject):
    """BatchRelease is the Schema for the batchreleases API

    Mirrors Kruise Rollouts' v1beta1 ``BatchRelease`` (the storage version).
    """

    API_VERSION: ClassVar[str] = f"{GROUP}/{V1BETA1}"
    KIND: ClassVar[str] = "BatchRelease"

    spec: Annotated[BatchReleaseSpec, SchemaRequired(False)] = Field(default_factory=BatchReleaseSpec)
    status: BatchReleaseStatus | None = None


class BatchReleaseV1alpha1(KubeObject):
    """BatchRelease is the Schema for the batchreleases API

    Mirrors Kruise Rollouts' v1alpha1 ``BatchRelease`` (served, converted to v1beta1 for storage).
    """

    API_VERSION: ClassVar[str] = f"{GROUP}/{V1ALPHA1}"
    KIND: ClassVar[str] = "BatchRelease"

    spec: Annotated[BatchReleaseSpecV1alpha1, SchemaRequired(False)] = Field(
        default_factory=BatchReleaseSpecV1alpha1
    )
    status: BatchReleaseStatusV1alpha1 | None = None


_BATCHRELEASE_COLUMNS = (
    # upstream declares the v1alpha1 path for both versions, so KIND is empty for v1beta1 objects
    PrinterColumn("KIND", "string", ".spec.targetReference.workloadRef.kind"),
    PrinterColumn("PHASE", "string", ".status.phase"),
    PrinterColumn("BATCH", "integer", ".status.canaryStatus.currentBatch"),
    PrinterColumn("BATCH-STATE", "string", ".status.canaryStatus.batchState"),
    AGE_COLUMN,
)

BATCHRELEASE_CRD = CRDSpec(
    group=GROUP,
    kind="BatchRelease",
    plural="batchreleases",
    singular="batchrelease",
    scope="Namespaced",
    versions=(
        CRDVersion(
            name=V1ALPHA1,
            model=BatchReleaseV1alpha1,
            served=True,
            storage=False,
            printer_columns=_BATCHRELEASE_COLUMNS,
        ),
        CRDVersion(
            name=V1BETA1,
            model=BatchRelease,
            served=True,
            storage=True,
            printer_columns=_BATCHRELEASE_COLUMNS,
        ),
    ),
)
"""The BatchRelease CRD: v1alpha1 served, v1beta1 served and stored, status subresource and
upstream's KIND/PHASE/BATCH/BATCH-STATE/AGE columns (KIND reads the v1alpha1 path in both)."""
