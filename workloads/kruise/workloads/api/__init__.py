"""API models of the Kruise workloads (``apps.kruise.io``) and their CRD descriptions.

One module per kind (``cloneset``, ``statefulset`` with ``statefulset_v1alpha1``...), plus ``pub``
for the types the workloads share.
"""

from kruise.workloads.api.cloneset import (
    CLONESET_CRD,
    CloneSet,
    CloneSetCondition,
    CloneSetConditionType,
    CloneSetScaleStrategy,
    CloneSetSpec,
    CloneSetStatus,
    CloneSetUpdateStrategy,
    CloneSetUpdateStrategyType,
)
from kruise.workloads.api.pub import (
    InPlaceUpdateStrategy,
    Lifecycle,
    LifecycleHook,
    LifecycleStateType,
    UpdatePriorityOrderTerm,
    UpdatePriorityStrategy,
    UpdatePriorityWeightTerm,
    UpdateScatterTerm,
)
from kruise.workloads.api.statefulset import (
    STATEFULSET_CRD,
    StatefulSet,
    StatefulSetSpec,
    StatefulSetStatus,
)
from kruise.workloads.api.statefulset_v1alpha1 import StatefulSetV1alpha1

__all__ = [
    "CLONESET_CRD",
    "STATEFULSET_CRD",
    "CloneSet",
    "CloneSetCondition",
    "CloneSetConditionType",
    "CloneSetScaleStrategy",
    "CloneSetSpec",
    "CloneSetStatus",
    "CloneSetUpdateStrategy",
    "CloneSetUpdateStrategyType",
    "InPlaceUpdateStrategy",
    "Lifecycle",
    "LifecycleHook",
    "LifecycleStateType",
    "StatefulSet",
    "StatefulSetSpec",
    "StatefulSetStatus",
    "StatefulSetV1alpha1",
    "UpdatePriorityOrderTerm",
    "UpdatePriorityStrategy",
    "UpdatePriorityWeightTerm",
    "UpdateScatterTerm",
]
