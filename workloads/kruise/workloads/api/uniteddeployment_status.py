"""UnitedDeployment status models (``apis/apps/v1alpha1/uniteddeployment_types.go``'s status half).

Kept apart from :mod:`.uniteddeployment` (the spec and the CRD) for size. The Adaptive strategy
reads a subset's ``Schedulable`` condition from ``subsetStatuses`` (when it last turned False), so
this status is part of the allocator's input, not only a report.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from kruise.core.api import Int32, Int64, KubeModel, SchemaRequired, Time

__all__ = [
    "SUBSET_SCHEDULABLE",
    "UnitedDeploymentCondition",
    "UnitedDeploymentStatus",
    "UnitedDeploymentSubsetCondition",
    "UnitedDeploymentSubsetStatus",
    "UpdateStatus",
]

SUBSET_SCHEDULABLE = "Schedulable"
"""The subset condition type the Adaptive strategy writes (``UnitedDeploymentSubsetSchedulable``)."""


class UnitedDeploymentCondition(KubeModel):
    """UnitedDeploymentCondition describes current state of a UnitedDeployment.

    Types written: ``SubsetProvisioned``, ``SubsetUpdated``, ``SubsetFailure``, ``UnitedDeploymentUpdated``.
    """

    type: str | None = Field(default=None, description="Type of in place set condition.")
    status: str | None = Field(
        default=None, description="Status of the condition, one of True, False, Unknown."
    )
    last_transition_time: Time | None = Field(
        default=None, description="Last time the condition transitioned from one status to another."
    )
    reason: str | None = Field(default=None, description="The reason for the condition's last transition.")
    message: str | None = Field(
        default=None, description="A human-readable message indicating details about the transition."
    )


class UnitedDeploymentSubsetCondition(KubeModel):
    """One condition of a subset (type ``Schedulable``, used by the Adaptive strategy)."""

    type: str
    status: str
    last_transition_time: Time | None = None
    reason: str | None = None
    message: str | None = None


class UnitedDeploymentSubsetStatus(KubeModel):
    """The observed state of one subset; its ``Schedulable`` condition drives the Adaptive strategy."""

    name: str | None = Field(default=None, description="Subset name specified in Topology.Subsets")
    replicas: Int32 | None = Field(default=None, description="Records the current replicas.")
    ready_replicas: Int32 | None = Field(default=None, description="Records the current ready replicas.")
    partition: Int32 | None = Field(default=None, description="Records the current partition.")
    reserved_pods: Int32 | None = Field(default=None, description="Records the reserved pods in the subset.")
    conditions: list[UnitedDeploymentSubsetCondition] | None = Field(
        default=None, description="Conditions is an array of current observed subset conditions."
    )


class UpdateStatus(KubeModel):
    """UpdateStatus defines the observed update state of UnitedDeployment."""

    updated_revision: str | None = Field(default=None, description="Records the latest revision.")
    current_partitions: dict[str, Int32] | None = Field(
        default=None, description="Records the current partition."
    )


_REQUIRED = SchemaRequired()


class UnitedDeploymentStatus(KubeModel):
    """UnitedDeploymentStatus defines the observed state of UnitedDeployment.

    ``replicas``, ``updatedReplicas`` and ``currentRevision`` have no ``omitempty`` upstream and are
    required in the CRD.
    """

    observed_generation: Int64 | None = Field(
        default=None,
        description="ObservedGeneration is the most recent generation observed for this UnitedDeployment. "
        "It corresponds to the UnitedDeployment's generation, which is updated on mutation by the API "
        "Server.",
    )
    ready_replicas: Int32 | None = Field(default=None, description="The number of ready replicas.")
    replicas: Annotated[Int32, _REQUIRED] = Field(
        default=0, description="Replicas is the most recently observed number of replicas."
    )
    updated_replicas: Annotated[Int32, _REQUIRED] = Field(
        default=0, description="The number of pods in current version."
    )
    reserved_pods: Int32 | None = Field(
        default=None, description="The number of reserved pods in temporary adaptive strategy."
    )
    updated_ready_replicas: Int32 | None = Field(
        default=None, description="The number of ready current revision replicas for this UnitedDeployment."
    )
    collision_count: Int32 | None = Field(
        default=None,
        description="Count of hash collisions for the UnitedDeployment. The UnitedDeployment controller uses "
        "this field as a collision avoidance mechanism when it needs to create the name for the newest "
        "ControllerRevision.",
    )
    current_revision: Annotated[str, _REQUIRED] = Field(
        default="",
        description="CurrentRevision, if not empty, indicates the current version of the UnitedDeployment.",
    )
    subset_replicas: dict[str, Int32] | None = Field(
        default=None, description="Records the topology detail information of the replicas of each subset."
    )
    subset_statuses: list[UnitedDeploymentSubsetStatus] | None = Field(
        default=None, description="Record the conditions of each subset."
    )
    conditions: list[UnitedDeploymentCondition] | None = Field(
        default=None,
        description="Represents the latest available observations of a UnitedDeployment's current state.",
    )
    update_status: UpdateStatus | None = Field(
        default=None, description="Records the information of update progress."
    )
    label_selector: str | None = Field(
        default=None,
        description="LabelSelector is label selectors for query over pods that should match the replica "
        "count used by HPA.",
    )
