"""CloneSet (``apps.kruise.io/v1alpha1``): the model tree and its CRD description.

Field names, types and descriptions follow OpenKruise's ``apis/apps/v1alpha1/cloneset_types.go``
(v1.8 line, plus the additive fields of master's v1alpha1 CRD: ``progressDeadlineSeconds``,
``inPlaceUpdateStrategy.imagePreDownload*`` and ``conditions[].lastUpdateTime``). As upstream:

- ``template`` and ``volumeClaimTemplates`` are kept verbatim here (plain dicts), so pod
  templates round-trip byte for byte; upstream's CRD leaves them schemaless, ours types them
  (:mod:`kruise.core.api.pod`: unknown fields kept) so a wrong JSON type inside is refused by
  the API server with its own field path;
- defaults (replicas 1, maxUnavailable 20%, revisionHistoryLimit 10, ...) are *not* in the model
  or the CRD: the mutating webhook applies them (``SetDefaultsCloneSet``);
- enumerations such as ``updateStrategy.type`` are plain strings in the schema; the validating
  webhook rejects bad values with upstream's messages.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated, Any, ClassVar

from pydantic import Field

from kruise.core.api import (
    Bool,
    Int32,
    Int64,
    IntOrString,
    KubeModel,
    KubeObject,
    LabelSelector,
    SchemaModel,
    SchemaRequired,
    WorkloadCondition,
)
from kruise.core.api.pod import PersistentVolumeClaimTemplate, PodTemplateSpec
from kruise.core.crdgen import AGE_COLUMN, CRDSpec, CRDVersion, PrinterColumn, ScaleSubresource
from kruise.workloads.api.pub import (
    InPlaceUpdateStrategy,
    Lifecycle,
    UpdatePriorityStrategy,
    UpdateScatterTerm,
)

__all__ = [
    "CLONESET_CRD",
    "CLONESET_INSTANCE_ID_LABEL",
    "CLONESET_SCALING_EXCLUDE_PREPARING_DELETE_LABEL",
    "DEFAULT_CLONESET_MAX_UNAVAILABLE",
    "CloneSet",
    "CloneSetCondition",
    "CloneSetConditionType",
    "CloneSetScaleStrategy",
    "CloneSetSpec",
    "CloneSetStatus",
    "CloneSetUpdateStrategy",
    "CloneSetUpdateStrategyType",
]

GROUP = "apps.kruise.io"
VERSION = "v1alpha1"

CLONESET_INSTANCE_ID_LABEL = "apps.kruise.io/cloneset-instance-id"
"""Pod and PVC label: the 5-character instance id shared by a pod and its PVCs."""
DEFAULT_CLONESET_MAX_UNAVAILABLE = "20%"
"""Default ``updateStrategy.maxUnavailable`` applied by the mutating webhook."""
CLONESET_SCALING_EXCLUDE_PREPARING_DELETE_LABEL = "apps.kruise.io/cloneset-scaling-exclude-preparing-delete"
"""CloneSet label enabling scalingExcludePreparingDelete for this CloneSet only."""


class CloneSetUpdateStrategyType(StrEnum):
    """Values of ``spec.updateStrategy.type`` (``CloneSetUpdateStrategyType``); default ReCreate."""

    RECREATE = "ReCreate"
    IN_PLACE_IF_POSSIBLE = "InPlaceIfPossible"
    IN_PLACE_ONLY = "InPlaceOnly"


class CloneSetConditionType(StrEnum):
    """Condition types the CloneSet controller writes (``CloneSetConditionType``)."""

    FAILED_SCALE = "FailedScale"
    FAILED_UPDATE = "FailedUpdate"


class CloneSetScaleStrategy(KubeModel):
    """CloneSetScaleStrategy defines strategies for pods scale.

    Mirrors ``CloneSetScaleStrategy``; ``maxUnavailable`` limits scale-up only.
    """

    pods_to_delete: list[str] | None = Field(
        default=None,
        description="PodsToDelete is the names of Pod should be deleted. Note that this list will be "
        "truncated for non-existing pod names.",
    )
    max_unavailable: IntOrString | None = Field(
        default=None,
        description="The maximum number of pods that can be unavailable for scaled pods. This field can "
        "control the changes rate of replicas for CloneSet so as to minimize the impact for users' "
        "service. The scale will fail if the number of unavailable pods were greater than this "
        "MaxUnavailable at scaling up. MaxUnavailable works only when scaling up.",
    )
    disable_pvc_reuse: Bool | None = Field(
        default=None,
        alias="disablePVCReuse",
        description="Indicate if cloneSet will reuse already existed pvc to rebuild a new pod",
    )


class CloneSetUpdateStrategy(KubeModel):
    """CloneSetUpdateStrategy defines strategies for pods update.

    Mirrors ``CloneSetUpdateStrategy``. ``partition``/``maxUnavailable``/``maxSurge`` are resolved
    with ``scaled_value_from_int_or_percent`` by the controller.
    """

    type: str | None = Field(
        default=None,
        description="Type indicates the type of the CloneSetUpdateStrategy. Default is ReCreate.",
    )
    partition: IntOrString | None = Field(
        default=None,
        description="Partition is the desired number of pods in old revisions. Value can be an absolute "
        "number (ex: 5) or a percentage of desired pods (ex: 10%). Absolute number is calculated from "
        "percentage by rounding up by default. It means when partition is set during pods updating, "
        "(replicas - partition value) number of pods will be updated. Default value is 0.",
    )
    max_unavailable: IntOrString | None = Field(
        default=None,
        description="The maximum number of pods that can be unavailable during update or scale. Value can "
        "be an absolute number (ex: 5) or a percentage of desired pods (ex: 10%). Absolute number is "
        "calculated from percentage by rounding up by default. When maxSurge > 0, absolute number is "
        "calculated from percentage by rounding down. Defaults to 20%.",
    )
    max_surge: IntOrString | None = Field(
        default=None,
        description="The maximum number of pods that can be scheduled above the desired replicas during "
        "update or specified delete. Value can be an absolute number (ex: 5) or a percentage of desired "
        "pods (ex: 10%). Absolute number is calculated from percentage by rounding up. Defaults to 0.",
    )
    paused: Bool | None = Field(
        default=None,
        description="Paused indicates that the CloneSet is paused. Default value is false",
    )
    priority_strategy: UpdatePriorityStrategy | None = Field(
        default=None,
        description="Priorities are the rules for calculating the priority of updating pods. Each pod to "
        "be updated, will pass through these terms and get a sum of weights.",
    )
    scatter_strategy: list[UpdateScatterTerm] | None = Field(
        default=None,
        description="ScatterStrategy defines the scatter rules to make pods been scattered when update. "
        "This will avoid pods with the same key-value to be updated in one batch. - Note that pods will "
        "be scattered after priority sort. So, although priority strategy and scatter strategy can be "
        "applied together, we suggest to use either one of them. - If scatterStrategy is used, we "
        "suggest to just use one term. Otherwise, the update order can be hard to understand.",
    )
    in_place_update_strategy: InPlaceUpdateStrategy | None = Field(
        default=None,
        description="InPlaceUpdateStrategy contains strategies for in-place update.",
    )


_ClaimTemplate = Annotated[dict[str, Any], SchemaModel(PersistentVolumeClaimTemplate)]


class CloneSetSpec(KubeModel):
    """CloneSetSpec defines the desired state of CloneSet

    Mirrors ``CloneSetSpec``; ``selector`` and ``template`` are the only required fields.
    """

    replicas: Int32 | None = Field(
        default=None,
        description="Replicas is the desired number of replicas of the given Template. These are replicas "
        "in the sense that they are instantiations of the same Template. If unspecified, defaults to 1.",
    )
    selector: LabelSelector = Field(
        description="Selector is a label query over pods that should match the replica count. It must "
        "match the pod template's labels. More info: "
        "https://kubernetes.io/docs/concepts/overview/working-with-objects/labels/#label-selectors",
    )
    template: Annotated[dict[str, Any], SchemaModel(PodTemplateSpec)] = Field(
        description="Template describes the pods that will be created.",
    )
    volume_claim_templates: list[_ClaimTemplate] | None = Field(
        default=None,
        description="VolumeClaimTemplates is a list of claims that pods are allowed to reference. Note "
        "that PVC will be deleted when its pod has been deleted.",
    )
    scale_strategy: CloneSetScaleStrategy | None = Field(
        default=None,
        description="ScaleStrategy indicates the ScaleStrategy that will be employed to create and delete "
        "Pods in the CloneSet.",
    )
    update_strategy: CloneSetUpdateStrategy | None = Field(
        default=None,
        description="UpdateStrategy indicates the UpdateStrategy that will be employed to update Pods in "
        "the CloneSet when a revision is made to Template.",
    )
    revision_history_limit: Int32 | None = Field(
        default=None,
        description="RevisionHistoryLimit is the maximum number of revisions that will be maintained in "
        "the CloneSet's revision history. The revision history consists of all revisions not represented "
        "by a currently applied CloneSetSpec version. The default value is 10.",
    )
    min_ready_seconds: Int32 | None = Field(
        default=None,
        description="Minimum number of seconds for which a newly created pod should be ready without any "
        "of its container crashing, for it to be considered available. Defaults to 0 (pod will be "
        "considered available as soon as it is ready)",
    )
    lifecycle: Lifecycle | None = Field(
        default=None,
        description="Lifecycle defines the lifecycle hooks for Pods pre-available(pre-normal), pre-delete, "
        "in-place update.",
    )
    progress_deadline_seconds: Int32 | None = Field(
        default=None,
        description="ProgressDeadlineSeconds specifies the maximum time for the CloneSet to reach "
        "available or paused state due to partitioning.",
    )


class CloneSetCondition(WorkloadCondition):
    """CloneSetCondition describes the state of a CloneSet at a certain point.

    Mirrors ``CloneSetCondition``; the controller appends ``FailedScale``/``FailedUpdate``.
    """

    type: str = Field(description="Type of CloneSet condition.")


_REQUIRED = SchemaRequired()


class CloneSetStatus(KubeModel):
    """CloneSetStatus defines the observed state of CloneSet

    Mirrors ``CloneSetStatus``: counters without ``omitempty`` upstream default to 0 here and are
    listed as required in the CRD, as controller-gen does.
    """

    observed_generation: Int64 = Field(
        default=0,
        description="ObservedGeneration is the most recent generation observed for this CloneSet. It "
        "corresponds to the CloneSet's generation, which is updated on mutation by the API Server.",
    )
    replicas: Annotated[Int32, _REQUIRED] = Field(
        default=0, description="Replicas is the number of Pods created by the CloneSet controller."
    )
    ready_replicas: Annotated[Int32, _REQUIRED] = Field(
        default=0,
        description="ReadyReplicas is the number of Pods created by the CloneSet controller that have a "
        "Ready Condition.",
    )
    available_replicas: Annotated[Int32, _REQUIRED] = Field(
        default=0,
        description="AvailableReplicas is the number of Pods created by the CloneSet controller that have "
        "a Ready Condition for at least minReadySeconds.",
    )
    updated_replicas: Annotated[Int32, _REQUIRED] = Field(
        default=0,
        description="UpdatedReplicas is the number of Pods created by the CloneSet controller from the "
        "CloneSet version indicated by updateRevision.",
    )
    updated_ready_replicas: Annotated[Int32, _REQUIRED] = Field(
        default=0,
        description="UpdatedReadyReplicas is the number of Pods created by the CloneSet controller from "
        "the CloneSet version indicated by updateRevision and have a Ready Condition.",
    )
    updated_available_replicas: Int32 = Field(
        default=0,
        description="UpdatedAvailableReplicas is the number of Pods created by the CloneSet controller "
        "from the CloneSet version indicated by updateRevision and have a Ready Condition for at least "
        "minReadySeconds.",
    )
    expected_updated_replicas: Int32 = Field(
        default=0,
        description="ExpectedUpdatedReplicas is the number of Pods that should be updated by CloneSet "
        "controller. This field is calculated via Replicas - Partition.",
    )
    update_revision: str | None = Field(
        default=None,
        description="UpdateRevision, if not empty, indicates the latest revision of the CloneSet.",
    )
    current_revision: str | None = Field(
        default=None,
        description="currentRevision, if not empty, indicates the current revision version of the CloneSet.",
    )
    collision_count: Int32 | None = Field(
        default=None,
        description="CollisionCount is the count of hash collisions for the CloneSet. The CloneSet "
        "controller uses this field as a collision avoidance mechanism when it needs to create the name "
        "for the newest ControllerRevision.",
    )
    conditions: list[CloneSetCondition] | None = Field(
        default=None,
        description="Conditions represents the latest available observations of a CloneSet's current state.",
    )
    label_selector: str | None = Field(
        default=None,
        description="LabelSelector is label selectors for query over pods that should match the replica "
        "count used by HPA.",
    )


class CloneSet(KubeObject):
    """CloneSet is the Schema for the clonesets API

    Mirrors OpenKruise's ``CloneSet`` (apps.kruise.io/v1alpha1). ``spec`` is required by the model
    (controllers always need it) but not by the CRD, matching upstream's schema.
    """

    API_VERSION: ClassVar[str] = f"{GROUP}/{VERSION}"
    KIND: ClassVar[str] = "CloneSet"

    spec: Annotated[CloneSetSpec, SchemaRequired(False)]
    status: CloneSetStatus | None = None


def _int_column(name: str, path: str, description: str) -> PrinterColumn:
    return PrinterColumn(name=name, type="integer", json_path=path, description=description)


CLONESET_CRD = CRDSpec(
    group=GROUP,
    kind="CloneSet",
    plural="clonesets",
    singular="cloneset",
    short_names=("clone",),
    scope="Namespaced",
    versions=(
        CRDVersion(
            name=VERSION,
            model=CloneSet,
            served=True,
            storage=True,
            status_subresource=True,
            scale=ScaleSubresource(
                spec_replicas_path=".spec.replicas",
                status_replicas_path=".status.replicas",
                label_selector_path=".status.labelSelector",
            ),
            printer_columns=(
                _int_column("DESIRED", ".spec.replicas", "The desired number of pods."),
                _int_column("UPDATED", ".status.updatedReplicas", "The number of pods updated."),
                _int_column(
                    "UPDATED_READY", ".status.updatedReadyReplicas", "The number of pods updated and ready."
                ),
                _int_column(
                    "UPDATED_AVAILABLE",
                    ".status.updatedAvailableReplicas",
                    "The number of pods updated and available.",
                ),
                _int_column("READY", ".status.readyReplicas", "The number of pods ready."),
                _int_column("TOTAL", ".status.replicas", "The number of currently all pods."),
                AGE_COLUMN,
                PrinterColumn(
                    name="CONTAINERS",
                    type="string",
                    priority=1,
                    json_path=".spec.template.spec.containers[*].name",
                    description="The containers of currently cloneset.",
                ),
                PrinterColumn(
                    name="IMAGES",
                    type="string",
                    priority=1,
                    json_path=".spec.template.spec.containers[*].image",
                    description="The images of currently cloneset.",
                ),
                PrinterColumn(
                    name="SELECTOR",
                    type="string",
                    priority=1,
                    json_path=".status.labelSelector",
                    description="The selector of currently cloneset.",
                ),
            ),
        ),
    ),
)
"""The CloneSet CRD: namespaced, short name ``clone``, status + scale subresources and the
printer columns of OpenKruise master (DESIRED ... AGE; CONTAINERS, IMAGES, SELECTOR at -o wide)."""
