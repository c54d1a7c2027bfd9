"""Rollout ``rollouts.kruise.io/v1alpha1``: served for old manifests, never stored.

Mirrors Kruise Rollouts' ``api/v1alpha1/rollout_types.go`` as its CRD serves it (chart 0.6):

- the workload is ``spec.objectRef.workloadRef`` (v1beta1: ``spec.workloadRef``);
- the rolling style and the TrafficRouting link are annotations
  (``rollouts.kruise.io/rolling-style``, ``rollouts.kruise.io/trafficrouting``);
- a step's traffic is an integer ``weight`` and matches are header-only;
- there is no blue-green strategy, and status carries only ``canaryStatus``.

:mod:`kruise.rollouts.api.conversion` converts to and from v1beta1.
"""

from __future__ import annotations

from typing import Annotated, ClassVar

from pydantic import Field

from kruise.core.api import Bool, Int32, Int64, IntOrString, KubeModel, KubeObject, SchemaRequired, Time
from kruise.rollouts.api.common import GROUP, V1ALPHA1, PatchPodTemplateMetadata, RolloutCondition
from kruise.rollouts.api.rollout_status import NEXT_STEP_INDEX_DESCRIPTION
from kruise.rollouts.api.trafficrouting import TrafficRoutingRefV1alpha1, TrafficRoutingStrategyV1alpha1

__all__ = [
    "CanaryStatusV1alpha1",
    "CanaryStepV1alpha1",
    "CanaryStrategyV1alpha1",
    "ObjectRefV1alpha1",
    "RolloutPauseV1alpha1",
    "RolloutSpecV1alpha1",
    "RolloutStatusV1alpha1",
    "RolloutStrategyV1alpha1",
    "RolloutV1alpha1",
    "WorkloadRef",
]

_REQUIRED = SchemaRequired()


class WorkloadRef(KubeModel):
    """WorkloadRef holds a references to the Kubernetes object

    Mirrors v1alpha1 ``WorkloadRef``: ``apiVersion``, ``kind`` and ``name`` are required.
    """

    api_version: Annotated[str, _REQUIRED] = Field(default="", description="API Version of the referent")
    kind: Annotated[str, _REQUIRED] = Field(default="", description="Kind of the referent")
    name: Annotated[str, _REQUIRED] = Field(default="", description="Name of the referent")


class ObjectRefV1alpha1(KubeModel):
    """ObjectRef indicates workload

    Mirrors v1alpha1 ``ObjectRef``; only ``workloadRef`` is defined.
    """

    workload_ref: WorkloadRef | None = Field(
        default=None,
        description="WorkloadRef contains enough information to let you identify a workload for Rollout "
        "Batch release of the bypass",
    )


class RolloutPauseV1alpha1(KubeModel):
    """RolloutPause defines a pause stage for a rollout

    Mirrors v1alpha1 ``RolloutPause``: a nil ``duration`` waits for manual approval.
    """

    duration: Int32 | None = Field(
        default=None, description="Duration the amount of time to wait before moving to the next step."
    )


class CanaryStepV1alpha1(TrafficRoutingStrategyV1alpha1):
    """CanaryStep defines a step of a canary workload.

    Mirrors v1alpha1 ``CanaryStep``: ``weight`` (traffic percent), matches, replicas and pause.
    """

    replicas: IntOrString | None = Field(
        default=None,
        description="Replicas is the number of expected canary pods in this batch it can be an absolute "
        "number (ex: 5) or a percentage of total pods.",
    )
    pause: RolloutPauseV1alpha1 = Field(
        default_factory=RolloutPauseV1alpha1,
        description="Pause defines a pause stage for a rollout, manual or auto",
    )


class CanaryStrategyV1alpha1(KubeModel):
    """CanaryStrategy defines parameters for a Replica Based Canary

    Mirrors v1alpha1 ``CanaryStrategy`` (no extra-workload flag, no TrafficRouting name: both are
    annotations in v1alpha1).
    """

    steps: list[CanaryStepV1alpha1] | None = Field(
        default=None,
        description="Steps define the order of phases to execute release in batches(20%, 40%, 60%, 80%, "
        "100%)",
    )
    traffic_routings: list[TrafficRoutingRefV1alpha1] | None = Field(
        default=None,
        description="TrafficRoutings hosts all the supported service meshes supported to enable more "
        "fine-grained traffic routing and current only support one TrafficRouting",
    )
    failure_threshold: IntOrString | None = Field(
        default=None,
        description="FailureThreshold indicates how many failed pods can be tolerated in all upgraded pods. "
        "Only when FailureThreshold are satisfied, Rollout can enter ready state. If FailureThreshold is "
        "nil, Rollout will use the MaxUnavailable of workload as its FailureThreshold. Defaults to nil.",
    )
    patch_pod_template_metadata: PatchPodTemplateMetadata | None = Field(
        default=None,
        description="PatchPodTemplateMetadata indicates patch configuration(e.g. labels, annotations) to the "
        "canary deployment podTemplateSpec.metadata only support for canary deployment",
    )
    disable_generate_canary_service: Bool | None = Field(
        default=None,
        description="canary service will not be generated if DisableGenerateCanaryService is true",
    )


class RolloutStrategyV1alpha1(KubeModel):
    """RolloutStrategy defines strategy to apply during next rollout

    Mirrors v1alpha1 ``RolloutStrategy``: canary only.
    """

    paused: Bool | None = Field(
        default=None, description="Paused indicates that the Rollout is paused. Default value is false"
    )
    canary: CanaryStrategyV1alpha1 | None = Field(
        default=None, description="CanaryStrategy defines parameters for a Replica Based Canary"
    )


class RolloutSpecV1alpha1(KubeModel):
    """RolloutSpec defines the desired state of Rollout

    Mirrors v1alpha1 ``RolloutSpec``: ``objectRef`` and ``strategy`` are required in the CRD.
    """

    object_ref: Annotated[ObjectRefV1alpha1, _REQUIRED] = Field(
        default_factory=ObjectRefV1alpha1, description="ObjectRef indicates workload"
    )
    strategy: Annotated[RolloutStrategyV1alpha1, _REQUIRED] = Field(
        default_factory=RolloutStrategyV1alpha1, description="rollout strategy"
    )
    disabled: Bool = Field(
        default=False,
        description="if a rollout disabled, then the rollout would not watch changes of workload",
    )
    rollout_id: str | None = Field(
        default=None,
        alias="rolloutID",
        description="DeprecatedRolloutID is the deprecated field. It is recommended that configure "
        "RolloutId in workload.annotations[rollouts.kruise.io/rollout-id]. RolloutID should be changed "
        "before each workload revision publication. It is to distinguish consecutive multiple workload "
        "publications and rollout progress.",
    )


class CanaryStatusV1alpha1(KubeModel):
    """CanaryStatus status fields that only pertain to the canary rollout

    Mirrors v1alpha1 ``CanaryStatus`` (the v1beta1 ``CommonStatus`` fields plus the canary ones).
    """

    observed_workload_generation: Int64 | None = Field(
        default=None,
        description="observedWorkloadGeneration is the most recent generation observed for this Rollout "
        "ref workload generation.",
    )
    observed_rollout_id: str | None = Field(
        default=None,
        alias="observedRolloutID",
        description="ObservedRolloutID will record the newest spec.RolloutID if status.canaryRevision "
        "equals to workload.updateRevision",
    )
    rollout_hash: str | None = Field(default=None, description="RolloutHash from rollout.spec object")
    stable_revision: str | None = Field(
        default=None, description="StableRevision indicates the revision of stable pods"
    )
    canary_revision: Annotated[str, _REQUIRED] = Field(
        default="",
        description="CanaryRevision is calculated by rollout based on podTemplateHash, and the internal "
        "logic flow uses It may be different from rs podTemplateHash in different k8s versions, so it "
        "cannot be used as service selector label",
    )
    pod_template_hash: Annotated[str, _REQUIRED] = Field(
        default="", description="pod template hash is used as service selector label"
    )
    canary_replicas: Annotated[Int32, _REQUIRED] = Field(
        default=0, description="CanaryReplicas the numbers of canary revision pods"
    )
    canary_ready_replicas: Annotated[Int32, _REQUIRED] = Field(
        default=0, description="CanaryReadyReplicas the numbers of ready canary revision pods"
    )
    next_step_index: Annotated[Int32, _REQUIRED] = Field(default=0, description=NEXT_STEP_INDEX_DESCRIPTION)
    current_step_index: Int32 = Field(
        default=0, description="CurrentStepIndex defines the current step of the rollout is on."
    )
    current_step_state: Annotated[str, _REQUIRED] = Field(
        default="", description="CurrentStepState is the state of the current step."
    )
    message: str | None = Field(default=None, description="Message describes the current step.")
    last_update_time: Time | None = Field(
        default=None, description="LastUpdateTime is when the current step state last changed."
    )
    finalising_step: Annotated[str, _REQUIRED] = Field(
        default="", description="FinalisingStep the step of finalising"
    )


class RolloutStatusV1alpha1(KubeModel):
    """RolloutStatus defines the observed state of Rollout

    Mirrors v1alpha1 ``RolloutStatus``: no top-level step mirrors, no blue-green sub-status.
    """

    observed_generation: Int64 | None = Field(
        default=None,
        description="observedGeneration is the most recent generation observed for this Rollout.",
    )
    canary_status: CanaryStatusV1alpha1 | None = Field(
        default=None, description="Canary describes the state of the canary rollout"
    )
    conditions: list[RolloutCondition] | None = Field(
        default=None, description="Conditions a list of conditions a rollout can have."
    )
    phase: str | None = Field(default=None, description="Phase is the rollout phase.")
    message: str | None = Field(
        default=None, description="Message provides details on why the rollout is in its current phase"
    )


class RolloutV1alpha1(KubeObject):
    """Rollout is the Schema for the rollouts API

    Mirrors Kruise Rollouts' v1alpha1 ``Rollout`` (served, converted to v1beta1 for storage).
    """

    API_VERSION: ClassVar[str] = f"{GROUP}/{V1ALPHA1}"
    KIND: ClassVar[str] = "Rollout"

    spec: Annotated[RolloutSpecV1alpha1, SchemaRequired(False)] = Field(default_factory=RolloutSpecV1alpha1)
    status: RolloutStatusV1alpha1 | None = None
