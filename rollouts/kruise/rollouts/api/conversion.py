"""v1alpha1 <-> v1beta1 conversion of Rollout and BatchRelease, as pure functions.

Kruise Rollouts stores v1beta1 and converts through a CRD conversion webhook
(``api/v1alpha1/conversion.go``). The rules mirrored here:

Rollout v1alpha1 -> v1beta1
    ``spec.objectRef.workloadRef`` -> ``spec.workloadRef``; a step's ``weight: N`` -> ``traffic: "N%"``
    and, when the step has no ``replicas``, ``replicas: "N%"``; header matches are copied; the
    annotation ``rollouts.kruise.io/rolling-style`` other than ``partition`` (any case, or absent)
    -> ``canary.enableExtraWorkloadForCanary: true`` (``partition`` -> ``false``); the annotation
    ``rollouts.kruise.io/trafficrouting`` -> ``canary.trafficRoutingRef``; ``status.canaryStatus`` ->
    the v1beta1 canary status. Metadata, annotations included, is copied unchanged.
Rollout v1beta1 -> v1alpha1
    the reverse; ``traffic`` -> ``weight`` (``"N%"`` scaled against 100, 0 when unparsable); the
    rolling-style annotation is always written (``canary``/``partition``) and the trafficrouting
    annotation when ``trafficRoutingRef`` is set. A blue-green Rollout cannot be converted
    (:class:`ConversionError`, upstream's message).
BatchRelease
    ``spec.targetReference.workloadRef`` <-> ``spec.workloadRef``; the rolling-style annotation
    (``partition``/``canary``/``bluegreen``, any case) -> ``releasePlan.rollingStyle``, and back as the
    lower-cased annotation; ``status.message`` exists in v1beta1 only.

Deliberate differences from upstream, all in the direction of losing less: ``disableGenerateCanaryService``
is carried both ways; a v1alpha1 BatchRelease's own ``releasePlan.rollingStyle`` is kept when no
annotation overrides it; converting to v1beta1 fills the top-level ``status.currentStepIndex``/
``currentStepState`` mirrors; missing ``objectRef``/``canary`` are left empty instead of crashing; an
empty rolling style writes no annotation. What cannot survive a v1alpha1 -> v1beta1 -> v1alpha1 trip:
``spec.rolloutID`` (no v1beta1 field); what cannot survive v1beta1 -> v1alpha1 -> v1beta1:
``matches[].path``/``queryParams``, ``trafficRoutings[].additionalParams``, ``blueGreen``.

:func:`convert_object` works on wire dicts (metadata is copied verbatim except annotations, as the
API server requires of a conversion webhook) and :func:`convert_review` answers a whole
``apiextensions.k8s.io/v1`` ConversionReview.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from pydantic import ValidationError

from kruise.core.api.conversion import answer_conversion
from kruise.core.jsoncopy import json_copy
from kruise.rollouts.api.batchrelease import BatchRelease, BatchReleaseV1alpha1
from kruise.rollouts.api.batchrelease_conversion import batchrelease_to_v1alpha1, batchrelease_to_v1beta1
from kruise.rollouts.api.common import (
    GROUP,
    ROLLING_STYLE_ANNOTATION,
    TRAFFIC_ROUTING_ANNOTATION,
    V1ALPHA1,
    V1BETA1,
    ObjectRef,
    RollingStyle,
    RolloutCondition,
)
from kruise.rollouts.api.rollout import (
    CanaryStep,
    CanaryStrategy,
    Rollout,
    RolloutPause,
    RolloutSpec,
    RolloutStrategy,
)
from kruise.rollouts.api.rollout_status import CanaryStatus, RolloutStatus
from kruise.rollouts.api.rollout_v1alpha1 import (
    CanaryStatusV1alpha1,
    CanaryStepV1alpha1,
    CanaryStrategyV1alpha1,
    ObjectRefV1alpha1,
    RolloutPauseV1alpha1,
    RolloutSpecV1alpha1,
    RolloutStatusV1alpha1,
    RolloutStrategyV1alpha1,
    RolloutV1alpha1,
    WorkloadRef,
)
from kruise.rollouts.api.traffic import HttpRouteMatch, TrafficRoutingRef
from kruise.rollouts.api.trafficrouting import (
    CustomNetworkRef,
    HttpRouteMatchV1alpha1,
    TrafficRoutingRefV1alpha1,
)
from kruise.workloads.admission.intstr import IntOrStringError, get_scaled_value

__all__ = [
    "ConversionError",
    "batchrelease_to_v1alpha1",
    "batchrelease_to_v1beta1",
    "convert_object",
    "convert_review",
    "rollout_to_v1alpha1",
    "rollout_to_v1beta1",
]

_ALPHA = f"{GROUP}/{V1ALPHA1}"
_BETA = f"{GROUP}/{V1BETA1}"


class ConversionError(ValueError):
    """An object that cannot be converted; ``str(err)`` is the message the webhook reports."""


# --- Rollout ------------------------------------------------------------------------------


def _conditions_copy(conditions: list[RolloutCondition] | None) -> list[RolloutCondition] | None:
    """Independent copies of ``conditions``: a condition's fields are strings and times, so a
    shallow model copy is a whole one unless it carries unknown (extra) fields."""
    if conditions is None:
        return None
    return [c.model_copy(deep=bool(c.model_extra)) for c in conditions]


def _traffic_routing_to_v1beta1(src: TrafficRoutingRefV1alpha1) -> TrafficRoutingRef:
    refs = src.custom_network_refs
    return TrafficRoutingRef(
        service=src.service,
        grace_period_seconds=src.grace_period_seconds,
        ingress=src.ingress.model_copy(deep=True) if src.ingress else None,
        gateway=src.gateway.model_copy(deep=True) if src.gateway else None,
        custom_network_refs=None
        if refs is None
        else [ObjectRef(api_version=r.api_version, kind=r.kind, name=r.name) for r in refs],
    )


def _traffic_routing_to_v1alpha1(src: TrafficRoutingRef) -> TrafficRoutingRefV1alpha1:
    refs = src.custom_network_refs
    return TrafficRoutingRefV1alpha1(
        service=src.service,
        grace_period_seconds=src.grace_period_seconds,
        ingress=src.ingress.model_copy(deep=True) if src.ingress else None,
        gateway=src.gateway.model_copy(deep=True) if src.gateway else None,
        custom_network_refs=None
        if refs is None
        else [CustomNetworkRef(api_version=r.api_version, kind=r.kind, name=r.name) for r in refs],
    )


def _step_to_v1beta1(src: CanaryStepV1alpha1) -> CanaryStep:
    replicas = src.replicas
    if replicas is None and src.weight is not None:
        replicas = f"{src.weight}%"
    return CanaryStep(
        traffic=None if src.weight is None else f"{src.weight}%",
        request_header_modifier=src.request_header_modifier.model_copy(deep=True)
        if src.request_header_modifier
        else None,
        matches=None
        if src.matches is None
        else [HttpRouteMatch(headers=copy.deepcopy(m.headers)) for m in src.matches],
        replicas=replicas,
        pause=RolloutPause(duration=src.pause.duration),
    )


def _traffic_weight(traffic: str) -> int:
    """``GetScaledValueFromIntOrPercent(FromString(traffic), 100, true)``, errors ignored (0)."""
    try:
        return get_scaled_value(traffic, 100, True)
    except IntOrStringError:
        return 0


def _step_to_v1alpha1(src: CanaryStep) -> CanaryStepV1alpha1:
    return CanaryStepV1alpha1(
        weight=None if src.traffic is None else _traffic_weight(src.traffic),
        request_header_modifier=src.request_header_modifier.model_copy(deep=True)
        if src.request_header_modifier
        else None,
        matches=None
        if src.matches is None
        else [HttpRouteMatchV1alpha1(headers=copy.deepcopy(m.headers)) for m in src.matches],
        replicas=src.replicas,
        pause=RolloutPauseV1alpha1(duration=src.pause.duration),
    )


def _canary_status_to_v1beta1(src: CanaryStatusV1alpha1) -> CanaryStatus:
    fields = src.model_dump(include=set(CanaryStatus.model_fields))
    return CanaryStatus.model_validate(fields)


def _canary_status_to_v1alpha1(src: CanaryStatus) -> CanaryStatusV1alpha1:
    fields = src.model_dump(include=set(CanaryStatusV1alpha1.model_fields))
    return CanaryStatusV1alpha1.model_validate(fields)


def rollout_to_v1beta1(src: RolloutV1alpha1) -> Rollout:
    """Convert a v1alpha1 Rollout to v1beta1 (``Rollout.ConvertTo`` upstream).

    See the module docstring for the mapping. Never raises for a well-typed object.
    """
    spec = src.spec
    workload = spec.object_ref.workload_ref
    annotations = src.metadata.annotations or {}
    canary = None
    if spec.strategy.canary is not None:
        c = spec.strategy.canary
        canary = CanaryStrategy(
            steps=None if c.steps is None else [_step_to_v1beta1(s) for s in c.steps],
            traffic_routings=None
            if c.traffic_routings is None
            else [_traffic_routing_to_v1beta1(t) for t in c.traffic_routings],
            failure_threshold=c.failure_threshold,
            patch_pod_template_metadata=c.patch_pod_template_metadata.model_copy(deep=True)
            if c.patch_pod_template_metadata
            else None,
            disable_generate_canary_service=c.disable_generate_canary_service,
        )
        style = annotations.get(ROLLING_STYLE_ANNOTATION, "").lower()
        canary.enable_extra_workload_for_canary = style != RollingStyle.PARTITION.lower()
        if annotations.get(TRAFFIC_ROUTING_ANNOTATION):
            canary.traffic_routing_ref = annotations[TRAFFIC_ROUTING_ANNOTATION]
    dst = Rollout(
        metadata=src.metadata.model_copy(deep=True),
        spec=RolloutSpec(
            workload_ref=ObjectRef(api_version=workload.api_version, kind=workload.kind, name=workload.name)
            if workload
            else ObjectRef(),
            strategy=RolloutStrategy(paused=spec.strategy.paused, canary=canary),
            disabled=spec.disabled,
        ),
    )
    if src.status is not None:
        st = src.status
        status = RolloutStatus(
            observed_generation=st.observed_generation,
            phase=st.phase,
            message=st.message,
            conditions=_conditions_copy(st.conditions),
        )
        if st.canary_status is not None:
            status.canary_status = _canary_status_to_v1beta1(st.canary_status)
            status.current_step_index = st.canary_status.current_step_index
            status.current_step_state = st.canary_status.current_step_state
        dst.status = status
    return dst


def rollout_to_v1alpha1(src: Rollout) -> RolloutV1alpha1:
    """Convert a v1beta1 Rollout to v1alpha1 (``Rollout.ConvertFrom`` upstream).

    Raises:
        ConversionError: for a blue-green Rollout, with upstream's message
            ``v1beta1 Rollout with BlueGreen strategy cannot be converted to v1alpha1``.
    """
    style = src.spec.strategy.rolling_style()
    if style == RollingStyle.BLUE_GREEN:
        raise ConversionError(f"v1beta1 Rollout with {style} strategy cannot be converted to v1alpha1")
    spec = src.spec
    metadata = src.metadata.model_copy(deep=True)
    canary = None
    if spec.strategy.canary is not None:
        c = spec.strategy.canary
        canary = CanaryStrategyV1alpha1(
            steps=None if c.steps is None else [_step_to_v1alpha1(s) for s in c.steps],
            traffic_routings=None
            if c.traffic_routings is None
            else [_traffic_routing_to_v1alpha1(t) for t in c.traffic_routings],
            failure_threshold=c.failure_threshold,
            patch_pod_template_metadata=c.patch_pod_template_metadata.model_copy(deep=True)
            if c.patch_pod_template_metadata
            else None,
            disable_generate_canary_service=c.disable_generate_canary_service,
        )
        annotations = dict(metadata.annotations or {})
        extra = RollingStyle.CANARY if c.enable_extra_workload_for_canary else RollingStyle.PARTITION
        annotations[ROLLING_STYLE_ANNOTATION] = extra.lower()
        if c.traffic_routing_ref:
            annotations[TRAFFIC_ROUTING_ANNOTATION] = c.traffic_routing_ref
        metadata.annotations = annotations
    ref = spec.workload_ref
    dst = RolloutV1alpha1(
        metadata=metadata,
        spec=RolloutSpecV1alpha1(
            object_ref=ObjectRefV1alpha1(
                workload_ref=WorkloadRef(api_version=ref.api_version, kind=ref.kind, name=ref.name)
            ),
            strategy=RolloutStrategyV1alpha1(paused=spec.strategy.paused, canary=canary),
            disabled=spec.disabled,
        ),
    )
    if src.status is not None:
        st = src.status
        dst.status = RolloutStatusV1alpha1(
            observed_generation=st.observed_generation,
            phase=st.phase,
            message=st.message,
            conditions=_conditions_copy(st.conditions),
            canary_status=None if st.canary_status is None else _canary_status_to_v1alpha1(st.canary_status),
        )
    return dst


# --- wire-level entry points --------------------------------------------------------------


def _convert_model(obj: Mapping[str, Any], desired: str) -> dict[str, Any]:
    kind, current = obj.get("kind"), obj.get("apiVersion")
    if (current, desired) == (_ALPHA, _BETA) and kind == "Rollout":
        return rollout_to_v1beta1(RolloutV1alpha1.from_dict(obj)).to_dict()
    if (current, desired) == (_BETA, _ALPHA) and kind == "Rollout":
        return rollout_to_v1alpha1(Rollout.from_dict(obj)).to_dict()
    if (current, desired) == (_ALPHA, _BETA) and kind == "BatchRelease":
        return batchrelease_to_v1beta1(BatchReleaseV1alpha1.from_dict(obj)).to_dict()
    if (current, desired) == (_BETA, _ALPHA) and kind == "BatchRelease":
        return batchrelease_to_v1alpha1(BatchRelease.from_dict(obj)).to_dict()
    raise ConversionError(f"unsupported conversion of {kind} from {current} to {desired}")


def convert_object(obj: Mapping[str, Any], desired_api_version: str) -> dict[str, Any]:
    """Convert one wire object (a dict) to ``desired_api_version``.

    An object already at that version is returned as a copy. Metadata is copied verbatim except
    ``annotations``, which the conversion may set. Raises :class:`ConversionError` for a kind or
    version pair we do not convert, a blue-green Rollout going to v1alpha1, or a malformed object.
    """
    if obj.get("apiVersion") == desired_api_version:
        return json_copy(dict(obj))
    # the converters read nothing of metadata but its annotations, and metadata is copied from
    # the wire below: validating and deep-copying the rest (managedFields) was most of the cost
    annotations = (obj.get("metadata") or {}).get("annotations")
    slim = {**obj, "metadata": {} if annotations is None else {"annotations": annotations}}
    try:
        out = _convert_model(slim, desired_api_version)
    except ValidationError as err:
        raise ConversionError(f"invalid {obj.get('kind')} {obj.get('apiVersion')}: {err}") from err
    metadata = json_copy(dict(obj.get("metadata") or {}))
    annotations = out.get("metadata", {}).get("annotations")
    if annotations is not None:
        metadata["annotations"] = annotations
    out["metadata"] = metadata
    out["apiVersion"] = desired_api_version
    return out


def convert_review(review: Mapping[str, Any]) -> dict[str, Any]:
    """Answer an ``apiextensions.k8s.io/v1`` ConversionReview (the ``/convert`` webhook body).

    Every object of ``request.objects`` is converted to ``request.desiredAPIVersion``. On any
    :class:`ConversionError` the response has ``result.status: Failure`` with its message and no
    converted objects, which the API server reports to the client.
    """
    return answer_conversion(review, convert_object, (ConversionError,))
