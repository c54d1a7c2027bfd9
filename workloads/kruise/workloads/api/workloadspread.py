"""WorkloadSpread (``apps.kruise.io/v1alpha1``, namespaced, short name ``ws``): models and CRD.

Field names, types and descriptions follow OpenKruise's ``apis/apps/v1alpha1/workloadspread_types.go``
(v1.8): ``spec.targetRef`` names the workload whose pods are spread (CloneSet, Deployment,
ReplicaSet, Job, Advanced or native StatefulSet), ``spec.subsets`` are ordered node domains with
an optional int-or-percent ``maxReplicas`` cap; ``status.subsetStatuses`` keeps per-subset
accounting (``missingReplicas`` is ``-1`` for an uncapped subset) and the pods the webhook has
admitted (``creatingPods``) or seen deleted (``deletingPods``) but the controller has not yet
observed (pod name -> time); ``status.versionedSubsetStatuses`` holds the same entries per pod
revision (``versionIgnored`` for workloads not versioned), the ones the pod webhook counts in.

The ``*View`` ``TypedDict``\\ s are the raw (orjson) shape the webhook step and controller read.
"""

from __future__ import annotations

from typing import Annotated, Any, ClassVar, TypedDict

from pydantic import Field

from kruise.core.api import (
    Bool,
    Int32,
    Int64,
    IntOrString,
    KubeModel,
    KubeObject,
    LabelSelector,
    Schemaless,
    SchemaRequired,
    Time,
)
from kruise.core.api.base import SchemaExtra
from kruise.core.api.pod import Toleration
from kruise.core.api.scheduling import NodeSelectorTerm
from kruise.core.crdgen import CRDSpec, CRDVersion
from kruise.core.kube.resources import Resource

__all__ = [
    "ADAPTIVE",
    "FIXED",
    "MATCHED_ANNOTATION",
    "SUBSET_SCHEDULABLE",
    "WORKLOADSPREADS",
    "WORKLOADSPREAD_CRD",
    "SubsetStatusView",
    "SubsetView",
    "TargetFilterView",
    "WorkloadSpread",
    "WorkloadSpreadView",
    "WsSpecView",
]

GROUP = "apps.kruise.io"
VERSION = "v1alpha1"
KIND = "WorkloadSpread"
WORKLOADSPREADS = Resource(GROUP, VERSION, "workloadspreads", KIND, namespaced=True)

MATCHED_ANNOTATION = "apps.kruise.io/matched-workloadspread"
"""Pod annotation written by the pod webhook: JSON ``{"name": <ws>, "subset": <subset>}`` with
``"uid"`` added when the pod had no name yet (upstream's ``InjectWorkloadSpread``)."""
SUBSET_SCHEDULABLE = "Schedulable"
"""Subset condition type; ``False`` (Adaptive strategy) makes the webhook skip the subset."""
FIXED = "Fixed"
"""Schedule strategy (the default): pods only go to subsets with room."""
ADAPTIVE = "Adaptive"
"""Schedule strategy: a pod that stays unschedulable is rescheduled to a later subset."""


class TargetReference(KubeModel):
    """TargetReference contains enough information to let you identify an workload"""

    api_version: Annotated[str, SchemaRequired()] = Field(description="API version of the referent.")
    kind: Annotated[str, SchemaRequired()] = Field(description="Kind of the referent.")
    name: Annotated[str, SchemaRequired()] = Field(description="Name of the referent.")


class TargetFilter(KubeModel):
    """TargetFilter is used to filter the Pods to be managed by the WorkloadSpread."""

    selector: LabelSelector | None = Field(
        default=None, description="Selector is used to filter the Pods to be managed."
    )
    replicas_path_list: list[str] | None = Field(
        default=None,
        description="ReplicasPathList is a list of resource paths used to specify how to determine the "
        "total number of replicas of the target workload after filtering.",
    )


class PreferredSchedulingTerm(KubeModel):
    """An empty preferred scheduling term matches all objects with implicit weight 0."""

    weight: Annotated[Int32, SchemaRequired()] = Field(
        description="Weight associated with matching the corresponding nodeSelectorTerm, in the range 1-100."
    )
    preference: Annotated[NodeSelectorTerm, SchemaRequired()] = Field(
        description="A node selector term, associated with the corresponding weight."
    )


class WorkloadSpreadSubset(KubeModel):
    """WorkloadSpreadSubset defines the details of a subset."""

    name: Annotated[str, SchemaRequired()] = Field(
        description="Name should be unique between all of the subsets under one WorkloadSpread."
    )
    required_node_selector_term: NodeSelectorTerm | None = Field(
        default=None, description="Indicates the node required selector to form the subset."
    )
    preferred_node_selector_terms: list[PreferredSchedulingTerm] | None = Field(
        default=None, description="Indicates the node preferred selector to form the subset."
    )
    tolerations: list[Toleration] | None = Field(
        default=None, description="Indicates the tolerations the pods under this subset have."
    )
    max_replicas: IntOrString | None = Field(
        default=None, description="MaxReplicas indicates the desired max replicas of this subset."
    )
    patch: Annotated[Any, Schemaless] = Field(
        default=None, description="Patch indicates patching podTemplate to the Pod."
    )


class AdaptiveWorkloadSpreadStrategy(KubeModel):
    """Adaptive is used to communicate parameters when Type is AdaptiveWorkloadSpreadScheduleStrategyType."""

    disable_simulation_schedule: Bool | None = Field(
        default=None,
        description="DisableSimulationSchedule indicates whether to disable the feature of simulation "
        "schedule.",
    )
    reschedule_critical_seconds: Int32 | None = Field(
        default=None,
        description="RescheduleCriticalSeconds indicates how long controller will reschedule a schedule "
        "failed Pod to the subset that has redundant capacity after the subset where the Pod lives.",
    )


class WorkloadSpreadScheduleStrategy(KubeModel):
    """WorkloadSpreadScheduleStrategy defines the schedule performance of WorkloadSpread"""

    type: Annotated[str, SchemaExtra({"enum": ["Adaptive", "Fixed", ""]})] | None = Field(
        default=None, description="Type indicates the type of the WorkloadSpreadScheduleStrategy."
    )
    adaptive: AdaptiveWorkloadSpreadStrategy | None = Field(
        default=None,
        description="Adaptive is used to communicate parameters when Type is "
        "AdaptiveWorkloadSpreadScheduleStrategyType.",
    )


class WorkloadSpreadSpec(KubeModel):
    """WorkloadSpreadSpec defines the desired state of WorkloadSpread."""

    target_ref: Annotated[TargetReference, SchemaRequired()] = Field(
        alias="targetRef",
        description="TargetReference is the target workload that WorkloadSpread want to control.",
    )
    target_filter: TargetFilter | None = Field(
        default=None,
        description="TargetFilter allows WorkloadSpread to manage only a portion of the Pods in the "
        "TargetReference: by specifying the criteria for the Pods to be managed through a label selector.",
    )
    subsets: Annotated[list[WorkloadSpreadSubset], SchemaRequired()] = Field(
        description="Subsets describes the pods distribution details between each of subsets."
    )
    schedule_strategy: WorkloadSpreadScheduleStrategy | None = Field(
        default=None,
        description="ScheduleStrategy indicates the strategy the WorkloadSpread used to preform the schedule "
        "between each of subsets.",
    )


class WorkloadSpreadSubsetCondition(KubeModel):
    """WorkloadSpreadSubsetCondition describes the state of a subset."""

    type: Annotated[str, SchemaRequired()] = Field(description="Type of in place set condition.")
    status: Annotated[str, SchemaRequired()] = Field(
        description="Status of the condition, one of True, False, Unknown."
    )
    last_transition_time: Time | None = Field(
        default=None, description="Last time the condition transitioned from one status to another."
    )
    reason: str | None = Field(default=None, description="The reason for the condition's last transition.")
    message: str | None = Field(
        default=None, description="A human readable message indicating details about the transition."
    )


class WorkloadSpreadSubsetStatus(KubeModel):
    """WorkloadSpreadSubsetStatus defines the observed state of subset"""

    name: Annotated[str, SchemaRequired()] = Field(
        description="Name should be unique between all of the subsets under one WorkloadSpread."
    )
    replicas: Annotated[Int32, SchemaRequired()] = Field(
        description="Replicas is the most recently observed number of active replicas for subset."
    )
    conditions: list[WorkloadSpreadSubsetCondition] | None = Field(
        default=None, description="Conditions is an array of current observed subset conditions."
    )
    missing_replicas: Annotated[Int32, SchemaRequired()] = Field(
        description="MissingReplicas is the number of active replicas belong to this subset not be found."
    )
    creating_pods: dict[str, Time] | None = Field(
        default=None,
        description="CreatingPods contains information about pods whose creation was processed by the "
        "webhook handler but not yet been observed by the WorkloadSpread controller.",
    )
    deleting_pods: dict[str, Time] | None = Field(
        default=None,
        description="DeletingPods is similar with CreatingPods and it contains information about pod "
        "deletion.",
    )


class WorkloadSpreadStatus(KubeModel):
    """WorkloadSpreadStatus defines the observed state of WorkloadSpread."""

    observed_generation: Int64 | None = Field(
        default=None,
        description="ObservedGeneration is the most recent generation observed for this WorkloadSpread.",
    )
    subset_statuses: list[WorkloadSpreadSubsetStatus] | None = Field(
        default=None, description="Contains the status of each subset."
    )
    versioned_subset_statuses: dict[str, list[WorkloadSpreadSubsetStatus]] | None = Field(
        default=None,
        description="VersionedSubsetStatuses is to solve rolling-update problems, where the creation of "
        "new-version pod may be earlier than deletion of old-version pod. We have to calculate the pod "
        "subset distribution for each version.",
    )


class WorkloadSpread(KubeObject):
    """WorkloadSpread is the Schema for the WorkloadSpread API"""

    API_VERSION: ClassVar[str] = f"{GROUP}/{VERSION}"
    KIND: ClassVar[str] = KIND

    spec: WorkloadSpreadSpec | None = Field(
        default=None, description="WorkloadSpreadSpec defines the desired state of WorkloadSpread."
    )
    status: WorkloadSpreadStatus | None = Field(
        default=None, description="WorkloadSpreadStatus defines the observed state of WorkloadSpread."
    )


WORKLOADSPREAD_CRD = CRDSpec(
    group=GROUP,
    kind=KIND,
    plural="workloadspreads",
    singular="workloadspread",
    scope="Namespaced",
    short_names=("ws",),
    versions=(CRDVersion(name=VERSION, model=WorkloadSpread),),
)
"""The WorkloadSpread CRD: namespaced, short name ``ws``, status subresource."""


# ---------------------------------------------------------------------------- raw shapes


class SubsetView(TypedDict, total=False):
    """One ``spec.subsets`` entry (node terms and tolerations as raw Kubernetes JSON)."""

    name: str
    requiredNodeSelectorTerm: dict[str, Any]
    preferredNodeSelectorTerms: list[dict[str, Any]]
    tolerations: list[dict[str, Any]]
    maxReplicas: int | str
    patch: dict[str, Any]


class AdaptiveView(TypedDict, total=False):
    """``spec.scheduleStrategy.adaptive``."""

    disableSimulationSchedule: bool
    rescheduleCriticalSeconds: int


class StrategyView(TypedDict, total=False):
    """``spec.scheduleStrategy``."""

    type: str
    adaptive: AdaptiveView


class TargetView(TypedDict, total=False):
    """``spec.targetRef``."""

    apiVersion: str
    kind: str
    name: str


class TargetFilterView(TypedDict, total=False):
    """``spec.targetFilter``: a label selector and dot-separated integer field paths."""

    selector: dict[str, Any]
    replicasPathList: list[str]


class WsSpecView(TypedDict, total=False):
    """``spec``."""

    targetRef: TargetView
    targetFilter: TargetFilterView
    subsets: list[SubsetView]
    scheduleStrategy: StrategyView


class ConditionView(TypedDict, total=False):
    """One subset condition."""

    type: str
    status: str
    lastTransitionTime: str
    reason: str
    message: str


class SubsetStatusView(TypedDict, total=False):
    """One ``status.subsetStatuses`` entry; pod maps are name -> RFC 3339 time."""

    name: str
    replicas: int
    missingReplicas: int
    creatingPods: dict[str, str]
    deletingPods: dict[str, str]
    conditions: list[ConditionView]


class WsStatusView(TypedDict, total=False):
    """``status``."""

    observedGeneration: int
    subsetStatuses: list[SubsetStatusView]
    versionedSubsetStatuses: dict[str, list[SubsetStatusView]]


class WorkloadSpreadView(TypedDict, total=False):
    """A WorkloadSpread as the informers hold it."""

    apiVersion: str
    kind: str
    metadata: dict[str, Any]
    spec: WsSpecView
    status: WsStatusView
