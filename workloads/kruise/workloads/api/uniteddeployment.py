"""UnitedDeployment (``apps.kruise.io/v1alpha1``, short name ``ud``): the model tree and its CRD.

Field names, types and descriptions follow OpenKruise's ``apis/apps/v1alpha1/uniteddeployment_types.go``
with master's additive fields (Appendix A of the reference: ``adaptive.unschedulableDuration``,
``adaptive.reserveUnschedulablePods``, ``status.reservedPods``, ``subsetStatuses[].readyReplicas``
and ``reservedPods``). v1.8's ``adaptive.unschedulableLastSeconds`` is kept too, so a v1.8
manifest loses nothing; :meth:`AdaptiveUnitedDeploymentStrategy.unschedulable_seconds` reads both.

As upstream:

- the subset workload templates reuse the workloads' own spec models: ``cloneSetTemplate.spec`` is a
  :class:`~kruise.workloads.api.cloneset.CloneSetSpec`, ``advancedStatefulSetTemplate.spec`` a
  v1beta1 :class:`~kruise.workloads.api.statefulset.StatefulSetSpec`; the Kubernetes
  ``statefulSetTemplate``/``deploymentTemplate`` specs and every template's ``metadata`` are kept
  verbatim (preserve-unknown-fields);
- ``subsets[].patch`` is schemaless (any JSON, kept verbatim);
- defaults (``revisionHistoryLimit`` 10, ``updateStrategy`` Manual) belong to the mutating webhook.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated, Any, ClassVar, Literal

from pydantic import Field

from kruise.core.api import (
    Bool,
    Int32,
    IntOrString,
    KubeModel,
    KubeObject,
    LabelSelector,
    PreservedObject,
    Schemaless,
    SchemaRequired,
)
from kruise.core.api.pod import Toleration
from kruise.core.api.scheduling import NodeSelectorTerm
from kruise.core.crdgen import AGE_COLUMN, CRDSpec, CRDVersion, PrinterColumn, ScaleSubresource
from kruise.workloads.api.cloneset import CloneSetSpec
from kruise.workloads.api.statefulset import StatefulSetSpec
from kruise.workloads.api.uniteddeployment_status import (
    UnitedDeploymentCondition,
    UnitedDeploymentStatus,
    UnitedDeploymentSubsetCondition,
    UnitedDeploymentSubsetStatus,
    UpdateStatus,
)

__all__ = [
    "DEFAULT_RESCHEDULE_CRITICAL_SECONDS",
    "DEFAULT_UNSCHEDULABLE_SECONDS",
    "RESERVED_POD_LABEL",
    "SUBSET_NAME_LABEL",
    "SUBSET_PATCH_ANNOTATION",
    "UNITEDDEPLOYMENT_CRD",
    "AdaptiveUnitedDeploymentStrategy",
    "ManualUpdate",
    "ScheduleStrategyType",
    "Subset",
    "SubsetTemplate",
    "Topology",
    "UnitedDeployment",
    "UnitedDeploymentCondition",
    "UnitedDeploymentScheduleStrategy",
    "UnitedDeploymentSpec",
    "UnitedDeploymentStatus",
    "UnitedDeploymentSubsetCondition",
    "UnitedDeploymentSubsetStatus",
    "UnitedDeploymentUpdateStrategy",
    "UpdateStatus",
    "WorkloadTemplate",
]

GROUP = "apps.kruise.io"
VERSION = "v1alpha1"

SUBSET_NAME_LABEL = "apps.kruise.io/subset-name"
"""Label on every subset workload (and its pods): the ``topology.subsets[].name`` it serves."""
SUBSET_PATCH_ANNOTATION = "apps.kruise.io/subset-patch"
"""Annotation on a subset workload: the subset's ``patch`` applied to its template, as JSON."""
RESERVED_POD_LABEL = "apps.kruise.io/united-deployment-reserved-pod"
"""Reservation mode: ``"true"`` on a reserved pod, ``"false"`` on a subset's other pods
(``ReservedPodLabelKey``)."""
DEFAULT_RESCHEDULE_CRITICAL_SECONDS = 30
"""``adaptive.rescheduleCriticalSeconds`` when unset: a pod pending this long is moved away."""
DEFAULT_UNSCHEDULABLE_SECONDS = 300
"""``adaptive.unschedulableDuration`` when unset: how long a subset stays unschedulable."""


class ScheduleStrategyType(StrEnum):
    """Values of ``topology.scheduleStrategy.type``; empty means Fixed."""

    ADAPTIVE = "Adaptive"
    FIXED = "Fixed"


class WorkloadTemplate(KubeModel):
    """The subset template of a Kubernetes StatefulSet or Deployment: metadata and spec kept verbatim."""

    metadata: PreservedObject | None = None
    spec: PreservedObject


class CloneSetTemplateSpec(KubeModel):
    """CloneSetTemplateSpec defines the subset template of CloneSet."""

    metadata: PreservedObject | None = None
    spec: CloneSetSpec


class AdvancedStatefulSetTemplateSpec(KubeModel):
    """AdvancedStatefulSetTemplateSpec defines the subset template of AdvancedStatefulSet."""

    metadata: PreservedObject | None = None
    spec: StatefulSetSpec


class SubsetTemplate(KubeModel):
    """SubsetTemplate defines the subset template under the UnitedDeployment. UnitedDeployment will
    provision every subset based on one workload templates in SubsetTemplate.

    Exactly one template must be set; the validating webhook enforces it.
    """

    stateful_set_template: WorkloadTemplate | None = Field(default=None, description="StatefulSet template")
    advanced_stateful_set_template: AdvancedStatefulSetTemplateSpec | None = Field(
        default=None, description="AdvancedStatefulSet template"
    )
    clone_set_template: CloneSetTemplateSpec | None = Field(default=None, description="CloneSet template")
    deployment_template: WorkloadTemplate | None = Field(default=None, description="Deployment template")


class Subset(KubeModel):
    """Subset defines the detail of a subset.

    ``replicas`` is exclusive with ``minReplicas``/``maxReplicas`` (webhook); int-or-percent values
    resolve against ``spec.replicas`` (:mod:`kruise.workloads.uniteddeployment.allocator`).
    """

    name: str = Field(
        description="Indicates subset name as a DNS_LABEL, which will be used to generate subset workload "
        "name prefix in the format '<deployment-name>-<subset-name>-'. Name should be unique between all "
        "of the subsets under one UnitedDeployment."
    )
    node_selector_term: NodeSelectorTerm | None = Field(
        default=None,
        description="Indicates the node selector to form the subset. Depending on the node selector, pods "
        "provisioned could be distributed across multiple groups of nodes. A subset's nodeSelectorTerm is "
        "not allowed to be updated.",
    )
    tolerations: list[Toleration] | None = Field(
        default=None,
        description="Indicates the tolerations the pods under this subset have. A subset's tolerations is "
        "not allowed to be updated.",
    )
    replicas: IntOrString | None = Field(
        default=None,
        description="Indicates the number of the pod to be created under this subset. Replicas could also "
        "be percentage like '10%', which means 10% of UnitedDeployment replicas of pods will be distributed "
        "under this subset. If nil, the number of replicas in this subset is determined by controller. "
        "Controller will try to keep all the subsets with nil replicas have average pods. Replicas and "
        "MinReplicas/MaxReplicas are mutually exclusive in a UnitedDeployment.",
    )
    min_replicas: IntOrString | None = Field(
        default=None,
        description="Indicates the lower bounded replicas of the subset. MinReplicas must be more than or "
        "equal to 0 if it is set. Controller will prioritize satisfy minReplicas for each subset according "
        "to the order of Topology.Subsets. Defaults to 0.",
    )
    max_replicas: IntOrString | None = Field(
        default=None,
        description="Indicates the upper bounded replicas of the subset. MaxReplicas must be more than or "
        "equal to MinReplicas. MaxReplicas == nil means no limitation. Please ensure that at least one "
        "subset has empty MaxReplicas(no limitation) to avoid stuck scaling. Defaults to nil.",
    )
    patch: Annotated[Any, Schemaless] = Field(
        default=None,
        description="Patch indicates patching to the templateSpec. Patch takes precedence over other "
        "fields If the Patch also modifies the Replicas, NodeSelectorTerm or Tolerations, use value in the "
        "Patch",
    )


class AdaptiveUnitedDeploymentStrategy(KubeModel):
    """AdaptiveUnitedDeploymentStrategy is used to communicate parameters when Type is
    AdaptiveUnitedDeploymentScheduleStrategyType."""

    reschedule_critical_seconds: Int32 | None = Field(
        default=None,
        description="RescheduleCriticalSeconds indicates how long controller will reschedule a schedule "
        "failed Pod to the subset that has redundant capacity after the subset where the Pod lives. If a "
        "Pod was scheduled failed and still in an unschedulabe status over RescheduleCriticalSeconds "
        "duration, the controller will reschedule it to a suitable subset. Default is 30 seconds.",
    )
    unschedulable_duration: Int32 | None = Field(
        default=None,
        description="UnschedulableDuration is used to set the number of seconds for a Subset to recover "
        "from an unschedulable state, with a default value of 300 seconds.",
    )
    unschedulable_last_seconds: Int32 | None = Field(
        default=None,
        description="UnschedulableLastSeconds is OpenKruise v1.8's name of UnschedulableDuration, used when "
        "that is unset.",
    )
    reserve_unschedulable_pods: Bool | None = Field(
        default=None,
        description="ReserveUnschedulablePods indicates whether to enable reservation rescheduling mode, "
        "which is disabled by default.",
    )

    def reschedule_critical(self) -> int:
        """Seconds a pod may stay unschedulable before it is moved (default 30)."""
        if self.reschedule_critical_seconds is None:
            return DEFAULT_RESCHEDULE_CRITICAL_SECONDS
        return self.reschedule_critical_seconds

    def unschedulable_seconds(self) -> int:
        """Seconds a subset stays unschedulable: ``unschedulableDuration``, else v1.8's
        ``unschedulableLastSeconds``, else 300."""
        for value in (self.unschedulable_duration, self.unschedulable_last_seconds):
            if value is not None:
                return value
        return DEFAULT_UNSCHEDULABLE_SECONDS


class UnitedDeploymentScheduleStrategy(KubeModel):
    """UnitedDeploymentScheduleStrategy defines the schedule performance of UnitedDeployment."""

    type: Literal["Adaptive", "Fixed", ""] | None = Field(
        default=None,
        description="Type indicates the type of the UnitedDeploymentScheduleStrategy. Default is Fixed",
    )
    adaptive: AdaptiveUnitedDeploymentStrategy | None = Field(
        default=None,
        description="Adaptive is used to communicate parameters when Type is "
        "AdaptiveUnitedDeploymentScheduleStrategyType.",
    )

    def is_adaptive(self) -> bool:
        """True for ``type: Adaptive`` (upstream ``IsAdaptive``)."""
        return self.type == ScheduleStrategyType.ADAPTIVE.value

    def reserves_unschedulable_pods(self) -> bool:
        """Adaptive with ``reserveUnschedulablePods: true`` (upstream ``ShouldReserveUnschedulablePods``)."""
        return (
            self.is_adaptive()
            and self.adaptive is not None
            and bool(self.adaptive.reserve_unschedulable_pods)
        )

    def settings(self) -> AdaptiveUnitedDeploymentStrategy:
        """The adaptive parameters, an empty (all-default) one when unset."""
        return self.adaptive or AdaptiveUnitedDeploymentStrategy()


class Topology(KubeModel):
    """Topology defines the spread detail of each subset under UnitedDeployment. A UnitedDeployment
    manages multiple homogeneous workloads which are called subset. Each of subsets under the
    UnitedDeployment is described in Topology."""

    subsets: list[Subset] | None = Field(
        default=None,
        description="Contains the details of each subset. Each element in this array represents one subset "
        "which will be provisioned and managed by UnitedDeployment.",
    )
    schedule_strategy: UnitedDeploymentScheduleStrategy | None = Field(
        default=None,
        description="ScheduleStrategy indicates the strategy the UnitedDeployment used to preform the "
        "schedule between each of subsets.",
    )


class ManualUpdate(KubeModel):
    """ManualUpdate is a update strategy which allows users to control the update progress by
    providing the partition of each subset."""

    partitions: dict[str, Int32] | None = Field(
        default=None, description="Indicates number of subset partition."
    )


class UnitedDeploymentUpdateStrategy(KubeModel):
    """UnitedDeploymentUpdateStrategy defines the update performance when template of UnitedDeployment
    is changed."""

    type: Literal["Manual", ""] | None = Field(
        default=None, description="Type of UnitedDeployment update strategy. Default is Manual."
    )
    manual_update: ManualUpdate | None = Field(
        default=None, description="Includes all of the parameters a Manual update strategy needs."
    )


class UnitedDeploymentSpec(KubeModel):
    """UnitedDeploymentSpec defines the desired state of UnitedDeployment."""

    replicas: Int32 | None = Field(
        default=None,
        description="Replicas is the total desired replicas of all the subsets. If unspecified, "
        "defaults to 1.",
    )
    selector: LabelSelector = Field(
        description="Selector is a label query over pods that should match the replica count. It must match "
        "the pod template's labels."
    )
    template: SubsetTemplate | None = Field(
        default=None, description="Template describes the subset that will be created."
    )
    topology: Topology | None = Field(
        default=None, description="Topology describes the pods distribution detail between each of subsets."
    )
    update_strategy: UnitedDeploymentUpdateStrategy | None = Field(
        default=None,
        description="UpdateStrategy indicates the strategy the UnitedDeployment use to preform the update, "
        "when template is changed.",
    )
    revision_history_limit: Int32 | None = Field(
        default=None,
        description="Indicates the number of histories to be conserved. If unspecified, defaults to 10.",
    )


class UnitedDeployment(KubeObject):
    """UnitedDeployment is the Schema for the uniteddeployments API

    Mirrors OpenKruise's ``UnitedDeployment`` (apps.kruise.io/v1alpha1).
    """

    API_VERSION: ClassVar[str] = f"{GROUP}/{VERSION}"
    KIND: ClassVar[str] = "UnitedDeployment"

    spec: Annotated[UnitedDeploymentSpec, SchemaRequired(False)]
    status: UnitedDeploymentStatus | None = None


UNITEDDEPLOYMENT_CRD = CRDSpec(
    group=GROUP,
    kind="UnitedDeployment",
    plural="uniteddeployments",
    singular="uniteddeployment",
    short_names=("ud",),
    scope="Namespaced",
    versions=(
        CRDVersion(
            name=VERSION,
            model=UnitedDeployment,
            served=True,
            storage=True,
            status_subresource=True,
            scale=ScaleSubresource(".spec.replicas", ".status.replicas", ".status.labelSelector"),
            printer_columns=(
                PrinterColumn.integer("DESIRED", ".spec.replicas", "The desired number of pods."),
                PrinterColumn.integer("CURRENT", ".status.replicas", "The number of currently all pods."),
                PrinterColumn.integer("UPDATED", ".status.updatedReplicas", "The number of pods updated."),
                PrinterColumn.integer("READY", ".status.readyReplicas", "The number of pods ready."),
                AGE_COLUMN,
            ),
        ),
    ),
)
"""The UnitedDeployment CRD: namespaced, short name ``ud``, v1alpha1 only (as v1.8), status and scale
subresources (HPA scales ``spec.replicas``), master's printer columns DESIRED, CURRENT, UPDATED,
READY, AGE."""
