"""Rollout status (v1beta1): phase, conditions and the canary or blue-green sub-status.

Mirrors ``RolloutStatus``, ``CommonStatus``, ``CanaryStatus`` and ``BlueGreenStatus`` of
``api/v1beta1/rollout_types.go``. Go fields without ``omitempty`` (``podTemplateHash``,
``nextStepIndex``, ``finalisingStep``, ``currentStepState``, the replica counters, the top-level
``currentStepIndex``/``currentStepState``) default to their zero value here, are always written,
and are listed as required in the CRD, as controller-gen does. ``currentStepIndex`` inside the
sub-status is ``+optional`` upstream, so it is written but not required.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from kruise.core.api import Int32, Int64, KubeModel, SchemaRequired, Time
from kruise.rollouts.api.common import RolloutCondition

__all__ = ["BlueGreenStatus", "CanaryStatus", "CommonStatus", "RolloutStatus"]

_REQUIRED = SchemaRequired()

NEXT_STEP_INDEX_DESCRIPTION = (
    "NextStepIndex defines the next step of the rollout is on. In normal case, NextStepIndex is equal to "
    "CurrentStepIndex + 1 If the current step is the last step, NextStepIndex is equal to -1 Before the "
    "release, NextStepIndex is also equal to -1 0 is not used and won't appear in any case It is allowed "
    "to patch NextStepIndex by design, e.g. if CurrentStepIndex is 2, user can patch NextStepIndex to 3 "
    "(if exists) to achieve batch jump, or patch NextStepIndex to 1 to implement a re-execution of step 1 "
    "Patching it with a non-positive value is useless and meaningless, which will be corrected in the "
    "next reconciliation"
)


class CommonStatus(KubeModel):
    """CommonStatus holds the fields shared by the canary and the blue-green sub-status.

    Mirrors ``CommonStatus`` (inlined upstream). Indexes are 1-based; ``nextStepIndex`` is
    ``current + 1``, ``-1`` on the last step, and may be patched by users to jump.
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
    pod_template_hash: Annotated[str, _REQUIRED] = Field(
        default="", description="pod template hash is used as service selector label"
    )
    current_step_index: Int32 = Field(
        default=0, description="CurrentStepIndex defines the current step of the rollout is on."
    )
    next_step_index: Annotated[Int32, _REQUIRED] = Field(default=0, description=NEXT_STEP_INDEX_DESCRIPTION)
    finalising_step: Annotated[str, _REQUIRED] = Field(
        default="", description="FinalisingStep the step of finalising"
    )
    current_step_state: Annotated[str, _REQUIRED] = Field(
        default="", description="CurrentStepState is the state of the current step."
    )
    message: str | None = Field(default=None, description="Message describes the current step.")
    last_update_time: Time | None = Field(
        default=None, description="LastUpdateTime is when the current step state last changed."
    )


class CanaryStatus(CommonStatus):
    """CanaryStatus status fields that only pertain to the canary rollout

    Mirrors ``CanaryStatus``: :class:`CommonStatus` plus the canary revision and its replica counts.
    """

    canary_revision: Annotated[str, _REQUIRED] = Field(
        default="",
        description="CanaryRevision is calculated by rollout based on podTemplateHash, and the internal "
        "logic flow uses It may be different from rs podTemplateHash in different k8s versions, so it "
        "cannot be used as service selector label",
    )
    canary_replicas: Annotated[Int32, _REQUIRED] = Field(
        default=0, description="CanaryReplicas the numbers of canary revision pods"
    )
    canary_ready_replicas: Annotated[Int32, _REQUIRED] = Field(
        default=0, description="CanaryReadyReplicas the numbers of ready canary revision pods"
    )


class BlueGreenStatus(CommonStatus):
    """BlueGreenStatus status fields that only pertain to the blueGreen rollout

    Mirrors ``BlueGreenStatus``: :class:`CommonStatus` plus the updated revision and its counts.
    """

    updated_revision: Annotated[str, _REQUIRED] = Field(
        default="",
        description="UpdatedRevision is calculated by rollout based on podTemplateHash, and the internal "
        "logic flow uses It may be different from rs podTemplateHash in different k8s versions, so it "
        "cannot be used as service selector label",
    )
    updated_replicas: Annotated[Int32, _REQUIRED] = Field(
        default=0, description="UpdatedReplicas the numbers of updated pods"
    )
    updated_ready_replicas: Annotated[Int32, _REQUIRED] = Field(
        default=0, description="UpdatedReadyReplicas the numbers of updated ready pods"
    )


class RolloutStatus(KubeModel):
    """RolloutStatus defines the observed state of Rollout

    Mirrors v1beta1 ``RolloutStatus``. At most one of ``canaryStatus``/``blueGreenStatus`` is set;
    the top-level ``currentStepIndex``/``currentStepState`` mirror it for ``kubectl get``.
    """

    observed_generation: Int64 | None = Field(
        default=None,
        description="observedGeneration is the most recent generation observed for this Rollout.",
    )
    canary_status: CanaryStatus | None = Field(
        default=None, description="Canary describes the state of the canary rollout"
    )
    blue_green_status: BlueGreenStatus | None = Field(
        default=None, description="BlueGreen describes the state of the blueGreen rollout"
    )
    conditions: list[RolloutCondition] | None = Field(
        default=None, description="Conditions a list of conditions a rollout can have."
    )
    phase: str | None = Field(default=None, description="Phase is the rollout phase.")
    message: str | None = Field(
        default=None, description="Message provides details on why the rollout is in its current phase"
    )
    current_step_index: Annotated[Int32, _REQUIRED] = Field(
        default=0,
        description="These two values will be synchronized with the same fileds in CanaryStatus or "
        "BlueGreeenStatus mainly used to provide info for kubectl get command",
    )
    current_step_state: Annotated[str, _REQUIRED] = Field(
        default="", description="CurrentStepState mirrors the sub-status' currentStepState."
    )

    def sub_status(self) -> CommonStatus | None:
        """The canary or blue-green sub-status (``GetSubStatus``), canary first; ``None`` if neither."""
        if self.canary_status is not None:
            return self.canary_status
        return self.blue_green_status
