"""API models of the Kruise workloads (``apps.kruise.io``) and their CRD descriptions.

One module per kind (``cloneset``...), plus ``pub`` for the types the workloads share.
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

__all__ = [
    "CLONESET_CRD",
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
    "UpdatePriorityOrderTerm",
    "UpdatePriorityStrategy",
    "UpdatePriorityWeightTerm",
    "UpdateScatterTerm",
]
