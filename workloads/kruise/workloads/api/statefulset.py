"""Advanced StatefulSet (``apps.kruise.io/v1beta1``, stored; v1alpha1 served): models and CRD.

Field names, types and descriptions follow OpenKruise's ``apis/apps/v1beta1/statefulset_types.go``
(v1.8 line; the printer columns of master). As upstream:

- ``template`` and ``volumeClaimTemplates`` are kept verbatim (plain dicts); upstream's CRD leaves
  them schemaless, ours types them as the CloneSet's (:mod:`kruise.core.api.pod`, unknown fields
  kept), so a wrong JSON type inside is refused by the API server naming the field;
- defaults (podManagementPolicy OrderedReady, RollingUpdate with partition 0, maxUnavailable 1,
  podUpdatePolicy ReCreate, minReadySeconds 0, replicas 1, revisionHistoryLimit 10, Retain/Retain
  PVC retention) are applied by the mutating webhook (``SetDefaultsStatefulSet``), not the CRD;
- enumerations are plain strings in the schema; the validating webhook refuses bad values with
  upstream's messages.

The v1alpha1 models (:mod:`.statefulset_v1alpha1`) are a subset: they lack ``reserveOrdinals``,
``ordinals``, ``lifecycle``, ``scaleStrategy``, ``persistentVolumeClaimRetentionPolicy``,
``volumeClaimUpdateStrategy`` and the status' ``updatedReadyReplicas``,
``updatedAvailableReplicas`` and ``volumeClaims``.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated, ClassVar

from pydantic import Field

from kruise.core.api import (
    Int32,
    IntOrString,
    KubeModel,
    KubeObject,
    SchemaRequired,
)
from kruise.core.crdgen import AGE_COLUMN, CRDSpec, CRDVersion, PrinterColumn, ScaleSubresource
from kruise.workloads.api.pub import Lifecycle
from kruise.workloads.api.statefulset_v1alpha1 import (
    GROUP,
    V1ALPHA1,
    PodUpdateStrategyType,
    RollingUpdateStatefulSetStrategy,
    StatefulSetCondition,
    StatefulSetSpecV1alpha1,
    StatefulSetStatusV1alpha1,
    StatefulSetUpdateStrategy,
    StatefulSetV1alpha1,
    UnorderedUpdateStrategy,
)

__all__ = [
    "GROUP",
    "MAX_MIN_READY_SECONDS",
    "STATEFULSET_CRD",
    "V1ALPHA1",
    "V1BETA1",
    "PersistentVolumeClaimRetentionPolicyType",
    "PodUpdateStrategyType",
    "RollingUpdateStatefulSetStrategy",
    "StatefulSet",
    "StatefulSetCondition",
    "StatefulSetOrdinals",
    "StatefulSetPersistentVolumeClaimRetentionPolicy",
    "StatefulSetScaleStrategy",
    "StatefulSetSpec",
    "StatefulSetStatus",
    "StatefulSetUpdateStrategy",
    "UnorderedUpdateStrategy",
    "VolumeClaimStatus",
    "VolumeClaimUpdateStrategy",
]

V1BETA1 = "v1beta1"
MAX_MIN_READY_SECONDS = 300
"""Upper bound of ``rollingUpdate.minReadySeconds`` (``MaxMinReadySeconds``)."""


class PersistentVolumeClaimRetentionPolicyType(StrEnum):
    """``persistentVolumeClaimRetentionPolicy.whenDeleted``/``whenScaled`` values; default ``Retain``."""

    RETAIN = "Retain"
    DELETE = "Delete"


class VolumeClaimUpdateStrategy(KubeModel):
    """VolumeClaimUpdateStrategy defines the strategy for updating volume claim templates."""

    type: str | None = Field(
        default=None,
        description="Type specifies the type of update strategy, possible values include: "
        "OnPodRollingUpdateVolumeClaimUpdateStrategyType: Apply the update strategy during pod rolling "
        "updates. OnPVCDeleteVolumeClaimUpdateStrategyType: Apply the update strategy when a "
        "PersistentVolumeClaim is deleted.",
    )


class StatefulSetPersistentVolumeClaimRetentionPolicy(KubeModel):
    """StatefulSetPersistentVolumeClaimRetentionPolicy describes the policy used for PVCs created from
    the StatefulSet VolumeClaimTemplates."""

    when_deleted: str | None = Field(
        default=None,
        description="WhenDeleted specifies what happens to PVCs created from StatefulSet "
        "VolumeClaimTemplates when the StatefulSet is deleted. The default policy of `Retain` causes PVCs "
        "to not be affected by StatefulSet deletion. The `Delete` policy causes those PVCs to be deleted.",
    )
    when_scaled: str | None = Field(
        default=None,
        description="WhenScaled specifies what happens to PVCs created from StatefulSet "
        "VolumeClaimTemplates when the StatefulSet is scaled down. The default policy of `Retain` causes "
        "PVCs to not be affected by a scaledown. The `Delete` policy causes the associated PVCs for any "
        "excess pods above the replica count to be deleted.",
    )


class StatefulSetOrdinals(KubeModel):
    """StatefulSetOrdinals describes the policy used for replica ordinal assignment in this StatefulSet."""

    start: Int32 = Field(
        description="start is the number representing the first replica's index. It may be used to number "
        "replicas from an alternate index (eg: 1-indexed) over the default 0-indexed names, or to "
        "orchestrate progressive movement of replicas from one StatefulSet to another."
    )


class StatefulSetScaleStrategy(KubeModel):
    """StatefulSetScaleStrategy defines strategies for pods scale."""

    max_unavailable: IntOrString | None = Field(
        default=None,
        description="The maximum number of pods that can be unavailable during scaling. Value can be an "
        "absolute number (ex: 5) or a percentage of desired pods (ex: 10%). Absolute number is calculated "
        "from percentage by rounding down. It can just be allowed to work with Parallel "
        "podManagementPolicy.",
    )


class StatefulSetSpec(StatefulSetSpecV1alpha1):
    """StatefulSetSpec defines the desired state of StatefulSet

    Mirrors the v1beta1 ``StatefulSetSpec``.
    """

    volume_claim_update_strategy: VolumeClaimUpdateStrategy | None = Field(
        default=None,
        description="VolumeClaimUpdateStrategy specifies the strategy for updating VolumeClaimTemplates "
        "within a StatefulSet. This field is currently only effective if the StatefulSetAutoResizePVCGate "
        "is enabled.",
    )
    reserve_ordinals: list[IntOrString] | None = Field(
        default=None,
        description="reserveOrdinals controls the ordinal numbers that should be reserved, and the "
        "replicas will always be the expectation number of running Pods. For a sts with replicas=3 and "
        "its Pods in [0, 1, 2]: - If you want to migrate Pod-1 and reserve this ordinal, just set "
        "spec.reserveOrdinal to [1]. Then controller will delete Pod-1 and create Pod-3 (existing Pods "
        "will be [0, 2, 3]) Ranges such as '2-5' are accepted as well.",
    )
    lifecycle: Lifecycle | None = Field(
        default=None,
        description="Lifecycle defines the lifecycle hooks for Pods pre-delete, in-place update.",
    )
    scale_strategy: StatefulSetScaleStrategy | None = Field(
        default=None,
        description="scaleStrategy indicates the StatefulSetScaleStrategy that will be employed to scale "
        "Pods in the StatefulSet.",
    )
    persistent_volume_claim_retention_policy: StatefulSetPersistentVolumeClaimRetentionPolicy | None = Field(
        default=None,
        alias="persistentVolumeClaimRetentionPolicy",
        description="PersistentVolumeClaimRetentionPolicy describes the policy used for PVCs created from "
        "the StatefulSet VolumeClaimTemplates. This requires the StatefulSetAutoDeletePVC feature gate to "
        "be enabled, which is beta and default on from 1.23. Existing PVCs are not affected.",
    )
    ordinals: StatefulSetOrdinals | None = Field(
        default=None,
        description="ordinals controls the numbering of replica indices in a StatefulSet. The default "
        'ordinals behavior assigns a "0" index to the first replica and increments the index by one for '
        "each additional replica requested. Using the ordinals field requires the StatefulSetStartOrdinal "
        "feature gate to be enabled, which is alpha.",
    )


class VolumeClaimStatus(KubeModel):
    """VolumeClaimStatus describes the status of a volume claim template: how many replicas have
    PVCs compatible with it."""

    volume_claim_name: str = Field(description="VolumeClaimName is the name of the volume claim.")
    compatible_replicas: Int32 = Field(
        description="CompatibleReplicas is the number of replicas currently compatible with the volume claim."
    )
    compatible_ready_replicas: Int32 = Field(
        description="CompatibleReadyReplicas is the number of replicas that are both ready and compatible "
        "with the volume claim."
    )


class StatefulSetStatus(StatefulSetStatusV1alpha1):
    """StatefulSetStatus defines the observed state of StatefulSet

    Mirrors the v1beta1 ``StatefulSetStatus``.
    """

    updated_ready_replicas: Int32 | None = Field(
        default=None,
        description="updatedReadyReplicas is the number of updated Pods created by the StatefulSet "
        "controller that have a Ready Condition.",
    )
    updated_available_replicas: Int32 | None = Field(
        default=None,
        description="updatedAvailableReplicas is the number of updated Pods created by the StatefulSet "
        "controller that have a Ready condition for atleast minReadySeconds.",
    )
    volume_claims: list[VolumeClaimStatus] | None = Field(
        default=None,
        description="VolumeClaims represents the status of compatibility between existing PVCs and their "
        "respective templates. It tracks whether the PersistentVolumeClaims have been updated to match "
        "any changes made to the volumeClaimTemplates, ensuring synchronization between the defined "
        "templates and the actual PersistentVolumeClaims in use.",
    )


class StatefulSet(KubeObject):
    """StatefulSet is the Schema for the statefulsets API

    Mirrors OpenKruise's ``StatefulSet`` (apps.kruise.io/v1beta1, the stored version).
    """

    API_VERSION: ClassVar[str] = f"{GROUP}/{V1BETA1}"
    KIND: ClassVar[str] = "StatefulSet"

    spec: Annotated[StatefulSetSpec, SchemaRequired(False)]
    status: StatefulSetStatus | None = None


def _columns() -> tuple[PrinterColumn, ...]:
    def number(name: str, path: str, description: str) -> PrinterColumn:
        return PrinterColumn(name=name, type="integer", json_path=path, description=description)

    def containers(name: str, field: str) -> PrinterColumn:
        return PrinterColumn(
            name=name,
            type="string",
            priority=1,
            json_path=f".spec.template.spec.containers[*].{field}",
            description=f"The {name.lower()} of currently advanced statefulset.",
        )

    return (
        number("DESIRED", ".spec.replicas", "The desired number of pods."),
        number("CURRENT", ".status.replicas", "The number of currently all pods."),
        number("UPDATED", ".status.updatedReplicas", "The number of pods updated."),
        number("READY", ".status.readyReplicas", "The number of pods ready."),
        AGE_COLUMN,
        containers("CONTAINERS", "name"),
        containers("IMAGES", "image"),
    )


def _version(name: str, model: type[KubeObject], *, storage: bool) -> CRDVersion:
    return CRDVersion(
        name=name,
        model=model,
        served=True,
        storage=storage,
        status_subresource=True,
        scale=ScaleSubresource(".spec.replicas", ".status.replicas", ".status.labelSelector"),
        printer_columns=_columns(),
    )


def _statefulset_crd() -> CRDSpec:
    return CRDSpec(
        group=GROUP,
        kind="StatefulSet",
        plural="statefulsets",
        singular="statefulset",
        short_names=("sts", "asts"),
        scope="Namespaced",
        versions=(
            _version(V1ALPHA1, StatefulSetV1alpha1, storage=False),
            _version(V1BETA1, StatefulSet, storage=True),
        ),
    )


STATEFULSET_CRD = _statefulset_crd()
"""The Advanced StatefulSet CRD: namespaced, short names ``sts``/``asts``, v1alpha1 served and
v1beta1 served and stored (converted by the manager's ``/convert`` webhook), status and scale
subresources on both, master's printer columns (DESIRED, CURRENT, UPDATED, READY, AGE;
CONTAINERS, IMAGES at -o wide)."""
