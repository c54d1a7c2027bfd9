"""v1alpha1 <-> v1beta1 conversion of BatchRelease (upstream ``BatchRelease.ConvertTo/ConvertFrom``).

The two versions differ only in where the workload is named (v1alpha1
``spec.targetReference.workloadRef``, v1beta1 ``spec.workloadRef``), in the v1alpha1 rolling-style
annotation, and in ``status.message`` (v1beta1 only). Re-exported by
:mod:`kruise.rollouts.api.conversion`, which also converts whole wire objects.
"""

from __future__ import annotations

from kruise.rollouts.api.batchrelease import (
    BatchRelease,
    BatchReleaseSpec,
    BatchReleaseSpecV1alpha1,
    BatchReleaseStatus,
    BatchReleaseStatusV1alpha1,
    BatchReleaseV1alpha1,
    ReleasePlan,
    TargetReference,
)
from kruise.rollouts.api.common import ROLLING_STYLE_ANNOTATION, ObjectRef, RollingStyle
from kruise.rollouts.api.rollout_v1alpha1 import WorkloadRef

__all__ = ["batchrelease_to_v1alpha1", "batchrelease_to_v1beta1"]


_STYLES = {style.lower(): style for style in RollingStyle}


def _plan_copy(plan: ReleasePlan) -> ReleasePlan:
    return plan.model_copy(deep=True)


def batchrelease_to_v1beta1(src: BatchReleaseV1alpha1) -> BatchRelease:
    """Convert a v1alpha1 BatchRelease to v1beta1 (``BatchRelease.ConvertTo`` upstream).

    The rolling-style annotation (case-insensitive) decides ``releasePlan.rollingStyle``; without
    it the v1alpha1 ``releasePlan.rollingStyle`` is kept.
    """
    ref = src.spec.target_reference.workload_ref
    plan = _plan_copy(src.spec.release_plan)
    annotation = (src.metadata.annotations or {}).get(ROLLING_STYLE_ANNOTATION, "").lower()
    if annotation in _STYLES:
        plan.rolling_style = _STYLES[annotation].value
    dst = BatchRelease(
        metadata=src.metadata.model_copy(deep=True),
        spec=BatchReleaseSpec(
            workload_ref=ObjectRef(api_version=ref.api_version, kind=ref.kind, name=ref.name)
            if ref
            else ObjectRef(),
            release_plan=plan,
        ),
    )
    if src.status is not None:
        dst.status = BatchReleaseStatus.model_validate(
            src.status.model_dump(by_alias=True, exclude_none=True)
        )
    return dst


def batchrelease_to_v1alpha1(src: BatchRelease) -> BatchReleaseV1alpha1:
    """Convert a v1beta1 BatchRelease to v1alpha1 (``BatchRelease.ConvertFrom`` upstream).

    The rolling style is also written, lower-cased, to the ``rollouts.kruise.io/rolling-style``
    annotation; ``status.message`` has no v1alpha1 field and is dropped.
    """
    ref = src.spec.workload_ref
    metadata = src.metadata.model_copy(deep=True)
    plan = _plan_copy(src.spec.release_plan)
    if plan.rolling_style:
        metadata.annotations = {
            **(metadata.annotations or {}),
            ROLLING_STYLE_ANNOTATION: plan.rolling_style.lower(),
        }
    dst = BatchReleaseV1alpha1(
        metadata=metadata,
        spec=BatchReleaseSpecV1alpha1(
            target_reference=TargetReference(
                workload_ref=WorkloadRef(api_version=ref.api_version, kind=ref.kind, name=ref.name)
            ),
            release_plan=plan,
        ),
    )
    if src.status is not None:
        fields = src.status.model_dump(by_alias=True, exclude_none=True)
        fields.pop("message", None)
        dst.status = BatchReleaseStatusV1alpha1.model_validate(fields)
    return dst
