"""Advanced StatefulSet ``apps.kruise.io/v1alpha1`` models (served, converted to the stored v1beta1).

v1alpha1 is the older, smaller shape: v1beta1 (:mod:`.statefulset`) extends these classes with
``reserveOrdinals``, ``ordinals``, ``lifecycle``, ``scaleStrategy``,
``persistentVolumeClaimRetentionPolicy``, ``volumeClaimUpdateStrategy`` and three status fields.
The update strategy is the same in both versions.
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
from kruise.workloads.api.pub import InPlaceUpdateStrategy, UpdatePriorityStrategy

__all__ = [
    "GROUP",
    "V1ALPHA1",
    "PodUpdateStrategyType",
    "RollingUpdateStatefulSetStrategy",
    "StatefulSetCondition",
    "StatefulSetSpecV1alpha1",
    "StatefulSetStatusV1alpha1",
    "StatefulSetUpdateStrategy",
    "StatefulSetV1alpha1",
    "UnorderedUpdateStrategy",
]

GROUP = "apps.kruise.io"
V1ALPHA1 = "v1alpha1"


class PodUpdateStrategyType(StrEnum):
    """``rollingUpdate.podUpdatePolicy`` values; default ``ReCreate``."""

    RECREATE = "ReCreate"
    IN_PLACE_IF_POSSIBLE = "InPlaceIfPossible"
    IN_PLACE_ONLY = "InPlaceOnly"


class UnorderedUpdateStrategy(KubeModel):
    """UnorderedUpdateStrategy defines strategies for non-ordered update.

    Mirrors ``UnorderedUpdateStrategy``; only valid with ``podManagementPolicy: Parallel``.
    """

    priority_strategy: UpdatePriorityStrategy | None = Field(
        default=None, description="Priorities are the rules for calculating the priority of updating pods."
    )


class RollingUpdateStatefulSetStrategy(KubeModel):
    """RollingUpdateStatefulSetStrategy is used to communicate parameter for
    RollingUpdateStatefulSetStrategyType.

    Mirrors ``RollingUpdateStatefulSetStrategy`` (the same in v1alpha1 and v1beta1).
    """

    partition: Int32 | None = Field(
        default=None,
        description="Partition indicates the number of pods the StatefulSet should be partitioned by "
        "default. With unorderedUpdate it is the number of pods kept at the current revision, "
        "otherwise pods with an ordinal index below it stay at the current revision. Default value is 0.",
    )
    max_unavailable: IntOrString | None = Field(
        default=None,
        description="The maximum number of pods that can be unavailable during the update. Value can be "
        "an absolute number (ex: 5) or a percentage of desired pods (ex: 10%). Absolute number is "
        "calculated from percentage by rounding down. Also, maxUnavailable can just be allowed to work "
        "with Parallel podManagementPolicy. Defaults to 1.",
    )
    pod_update_policy: str | None = Field(
        default=None,
        description='PodUpdatePolicy indicates how pods should be updated Default value is "ReCreate"',
    )
    paused: Bool | None = Field(
        default=None, description="Paused indicates that the StatefulSet is paused. Default value is false"
    )
    unordered_update: UnorderedUpdateStrategy | None = Field(
        default=None,
        description="UnorderedUpdate contains strategies for non-ordered update. If it is not nil, pods "
        "will be updated with non-ordered sequence. Noted that UnorderedUpdate can only be allowed to "
        "work with Parallel podManagementPolicy",
    )
    in_place_update_strategy: InPlaceUpdateStrategy | None = Field(
        default=None, description="InPlaceUpdateStrategy contains strategies for in-place update."
    )
    min_ready_seconds: Int32 | None = Field(
        default=None,
        description="MinReadySeconds indicates how long will the pod be considered ready after it's "
        "updated. MinReadySeconds works with both OrderedReady and Parallel podManagementPolicy. It "
        "affects the pod scale up speed when the podManagementPolicy is set to be OrderedReady. "
        "Combined with MaxUnavailable, it affects the pod update speed regardless of podManagementPolicy. "
        "Default value is 0, max is 300.",
    )


class StatefulSetUpdateStrategy(KubeModel):
    """StatefulSetUpdateStrategy indicates the strategy that the StatefulSet controller will use to
    perform updates. It includes any additional parameters necessary to perform the update for the
    indicated strategy."""

    type: str | None = Field(
        default=None,
        description="Type indicates the type of the StatefulSetUpdateStrategy. Default is RollingUpdate.",
    )
    rolling_update: RollingUpdateStatefulSetStrategy | None = Field(
        default=None,
        description="RollingUpdate is used to communicate parameters when Type is "
        "RollingUpdateStatefulSetStrategyType.",
    )


_ClaimTemplate = Annotated[dict[str, Any], SchemaModel(PersistentVolumeClaimTemplate)]
_TEMPLATE_DESCRIPTION = (
    "template is the object that describes the pod that will be created if insufficient replicas are "
    "detected. Each pod stamped out by the StatefulSet will fulfill this Template, but have a unique "
    "identity from the rest of the StatefulSet."
)
_VCT_DESCRIPTION = (
    "volumeClaimTemplates is a list of claims that pods are allowed to reference. The StatefulSet "
    "controller is responsible for mapping network identities to claims in a way that maintains the "
    "identity of a pod. Every claim in this list must have at least one matching (by name) volumeMount "
    "in one container in the template."
)


class StatefulSetSpecV1alpha1(KubeModel):
    """StatefulSetSpec defines the desired state of StatefulSet

    Mirrors the v1alpha1 ``StatefulSetSpec``; v1beta1 adds fields (:class:`StatefulSetSpec`).
    """

    replicas: Int32 | None = Field(
        default=None,
        description="replicas is the desired number of replicas of the given Template. These are replicas "
        "in the sense that they are instantiations of the same Template, but individual replicas also "
        "have a consistent identity. If unspecified, defaults to 1.",
    )
    selector: LabelSelector = Field(
        description="selector is a label query over pods that should match the replica count. It must "
        "match the pod template's labels."
    )
    template: Annotated[dict[str, Any], SchemaModel(PodTemplateSpec)] = Field(
        description=_TEMPLATE_DESCRIPTION
    )
    volume_claim_templates: list[_ClaimTemplate] | None = Field(default=None, description=_VCT_DESCRIPTION)
    service_name: str | None = Field(
        default=None,
        description="serviceName is the name of the service that governs this StatefulSet. This service "
        "must exist before the StatefulSet, and is responsible for the network identity of the set. Pods "
        "get DNS/hostnames that follow the pattern: "
        "pod-specific-string.serviceName.default.svc.cluster.local",
    )
    pod_management_policy: str | None = Field(
        default=None,
        description="podManagementPolicy controls how pods are created during initial scale up, when "
        "replacing pods on nodes, or when scaling down. The default policy is `OrderedReady`, where pods "
        "are created in increasing order and the controller waits until each pod is ready before "
        "continuing. When scaling down, the pods are removed in the opposite order. The alternative "
        "policy is `Parallel` which will create pods in parallel to match the desired scale without "
        "waiting, and on scale down will delete all pods at once.",
    )
    update_strategy: StatefulSetUpdateStrategy | None = Field(
        default=None,
        description="updateStrategy indicates the StatefulSetUpdateStrategy that will be employed to update "
        "Pods in the StatefulSet when a revision is made to Template.",
    )
    revision_history_limit: Int32 | None = Field(
        default=None,
        description="revisionHistoryLimit is the maximum number of revisions that will be maintained in "
        "the StatefulSet's revision history. The revision history consists of all revisions not "
        "represented by a currently applied StatefulSetSpec version. The default value is 10.",
    )


class StatefulSetCondition(WorkloadCondition):
    """StatefulSetCondition describes the state of a statefulset at a certain point.

    Mirrors ``apps/v1.StatefulSetCondition``; the controller writes ``FailedCreatePod`` and
    ``FailedUpdatePod``.
    """

    type: str = Field(description="Type of statefulset condition.")


_REQUIRED = SchemaRequired()


class StatefulSetStatusV1alpha1(KubeModel):
    """StatefulSetStatus defines the observed state of StatefulSet

    Mirrors the v1alpha1 ``StatefulSetStatus``; v1beta1 adds fields.
    """

    observed_generation: Int64 | None = Field(
        default=None,
        description="observedGeneration is the most recent generation observed for this StatefulSet. It "
        "corresponds to the StatefulSet's generation, which is updated on mutation by the API Server.",
    )
    replicas: Annotated[Int32, _REQUIRED] = Field(
        default=0, description="replicas is the number of Pods created by the StatefulSet controller."
    )
    ready_replicas: Annotated[Int32, _REQUIRED] = Field(
        default=0,
        description="readyReplicas is the number of Pods created by the StatefulSet controller that have a "
        "Ready Condition.",
    )
    available_replicas: Annotated[Int32, _REQUIRED] = Field(
        default=0,
        description="AvailableReplicas is the number of Pods created by the StatefulSet controller that "
        "have been ready for minReadySeconds.",
    )
    current_replicas: Annotated[Int32, _REQUIRED] = Field(
        default=0,
        description="currentReplicas is the number of Pods created by the StatefulSet controller from the "
        "StatefulSet version indicated by currentRevision.",
    )
    updated_replicas: Annotated[Int32, _REQUIRED] = Field(
        default=0,
        description="updatedReplicas is the number of Pods created by the StatefulSet controller from the "
        "StatefulSet version indicated by updateRevision.",
    )
    current_revision: str | None = Field(
        default=None,
        description="currentRevision, if not empty, indicates the version of the StatefulSet used to "
        "generate Pods in the sequence [0,currentReplicas).",
    )
    update_revision: str | None = Field(
        default=None,
        description="updateRevision, if not empty, indicates the version of the StatefulSet used to "
        "generate Pods in the sequence [replicas-updatedReplicas,replicas)",
    )
    collision_count: Int32 | None = Field(
        default=None,
        description="collisionCount is the count of hash collisions for the StatefulSet. The StatefulSet "
        "controller uses this field as a collision avoidance mechanism when it needs to create the name "
        "for the newest ControllerRevision.",
    )
    conditions: list[StatefulSetCondition] | None = Field(
        default=None,
        description="Represents the latest available observations of a statefulset's current state.",
    )
    label_selector: str | None = Field(
        default=None,
        description="LabelSelector is label selectors for query over pods that should match the replica "
        "count used by HPA.",
    )


class StatefulSetV1alpha1(KubeObject):
    """StatefulSet is the Schema for the statefulsets API

    Mirrors OpenKruise's ``StatefulSet`` (apps.kruise.io/v1alpha1).
    """

    API_VERSION: ClassVar[str] = f"{GROUP}/{V1ALPHA1}"
    KIND: ClassVar[str] = "StatefulSet"

    spec: Annotated[StatefulSetSpecV1alpha1, SchemaRequired(False)]
    status: StatefulSetStatusV1alpha1 | None = None
