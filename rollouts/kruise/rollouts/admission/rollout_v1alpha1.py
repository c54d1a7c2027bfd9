"""Rollout validation, v1alpha1 rules (``pkg/webhook/rollout/validating/validate_v1alphal_rollout.go``).

A v1alpha1 Rollout is validated in its own version, with rules that differ from v1beta1:

- ``spec.objectRef.workloadRef`` is required; the rolling-style annotation must be empty,
  ``canary`` or ``partition`` (any case);
- a step needs ``weight`` or ``replicas``; without replicas the weight is the step's share;
- the rolling style is Canary only for an ``apps/v1`` Deployment without ``partition`` style;
- on update (Progressing/Terminating) ``objectRef``, ``canary.trafficRoutings`` and the
  rolling-style annotation are immutable; the step count is not checked.

Messages are upstream's, including its spelling ("patition").
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable
from typing import Any

from kruise.rollouts.admission.checks import is_supported_workload, scaled_percent, traffic_routing_errors
from kruise.rollouts.admission.gorender import (
    GATEWAY_V1ALPHA1,
    INGRESS_V1ALPHA1,
    INT_OR_STRING,
    STEPS_V1ALPHA1,
    TRAFFIC_ROUTINGS_V1ALPHA1,
    WORKLOAD_REF,
    render,
)
from kruise.rollouts.admission.rollout import DEFAULT_PARTITION_PERCENT_LIMIT, RolloutLike, conflict_errors
from kruise.rollouts.api.common import ROLLING_STYLE_ANNOTATION, RollingStyle, RolloutPhase
from kruise.rollouts.api.rollout_v1alpha1 import CanaryStepV1alpha1, RolloutV1alpha1
from kruise.rollouts.api.trafficrouting import TrafficRoutingRefV1alpha1
from kruise.workloads.admission.fielderrors import FieldError, forbidden, invalid
from kruise.workloads.admission.intstr import IntOrStringError

__all__ = [
    "update_errors_v1alpha1",
    "validate_rollout_spec_v1alpha1",
    "validate_v1alpha1",
    "validation_style_v1alpha1",
]

_REPLICAS_MESSAGE = 'replicas must be positive number, or a percentage with "0%" < canaryReplicas <= "100%"'
_STYLES = ("", RollingStyle.CANARY.lower(), RollingStyle.PARTITION.lower())


def _annotation(rollout: RolloutV1alpha1) -> str:
    return (rollout.metadata.annotations or {}).get(ROLLING_STYLE_ANNOTATION, "")


def validation_style_v1alpha1(rollout: RolloutV1alpha1) -> str:
    """``GetContextFromv1alpha1Rollout``: Canary only for an ``apps/v1`` Deployment whose
    rolling-style annotation is empty or ``canary``; Partition otherwise (also without workloadRef).
    """
    ref = rollout.spec.object_ref.workload_ref
    if (
        _annotation(rollout).lower() in ("", RollingStyle.CANARY.lower())
        and ref is not None
        and ref.api_version == "apps/v1"
        and ref.kind == "Deployment"
    ):
        return RollingStyle.CANARY.value
    return RollingStyle.PARTITION.value


def _percent_type(step: CanaryStepV1alpha1) -> bool:
    """``IsPercentageCanaryReplicasType``: nil replicas count as a percentage."""
    return step.replicas is None or isinstance(step.replicas, str)


def _steps_errors(
    style: str, steps: list[CanaryStepV1alpha1] | None, path: str, is_traffic: bool, limit: int
) -> list[FieldError]:
    """``validateV1alpha1RolloutSpecCanarySteps``: the first bad step ends the check."""
    wire = None if steps is None else [s.to_dict() for s in steps]
    if not steps:
        return [invalid(path, render(STEPS_V1ALPHA1, wire), "The number of Canary.Steps cannot be empty")]
    for i, step in enumerate(steps):
        if step.weight is None and step.replicas is None:
            return [
                invalid(
                    f"{path}[{i}].steps",
                    render(STEPS_V1ALPHA1, wire),
                    "weight and replicas cannot be empty at the same time",
                )
            ]
        if step.replicas is not None:
            try:
                replicas: int | None = scaled_percent(step.replicas)
            except IntOrStringError:
                replicas = None
            if replicas is None or replicas <= 0 or (replicas > 100 and isinstance(step.replicas, str)):
                return [
                    invalid(
                        f"{path}[{i}].Replicas",
                        render(INT_OR_STRING, step.replicas),
                        _REPLICAS_MESSAGE,
                    )
                ]
            if (
                style == RollingStyle.PARTITION
                and isinstance(step.replicas, str)
                and replicas > limit
                and (step.matches is not None or step.weight is not None)
            ):
                return [
                    invalid(
                        f"{path}[{i}].steps",
                        render(STEPS_V1ALPHA1, wire),
                        "For patition style rollout: step[x].replicas must not greater than "
                        "replicasLimitWithTraffic if traffic or matches specified",
                    )
                ]
            continue
        weight = step.weight or 0
        if style == RollingStyle.PARTITION and weight > limit:
            return [
                invalid(
                    f"{path}[{i}].steps",
                    render(STEPS_V1ALPHA1, wire),
                    "For patition style rollout: step[x].weight must not greater than "
                    "replicasLimitWithTraffic if replicas is not specified",
                )
            ]
        if weight <= 0 or weight > 100:
            return [
                invalid(
                    f"{path}[{i}].Weight",
                    weight,
                    "weight must be positive number, and less than or equal to replicasLimitWithTraffic "
                    "(defaults to 30)",
                )
            ]
    for prev, curr in itertools.pairwise(steps):
        if is_traffic and curr.weight is not None and prev.weight is not None and curr.weight < prev.weight:
            return [
                invalid(
                    f"{path}.Weight",
                    render(STEPS_V1ALPHA1, wire),
                    "Steps.Weight must be a non decreasing sequence",
                )
            ]
        if _percent_type(prev) != _percent_type(curr):
            continue
        before = scaled_percent(prev.replicas) if prev.replicas is not None else prev.weight or 0
        after = scaled_percent(curr.replicas) if curr.replicas is not None else curr.weight or 0
        if after < before:
            return [
                invalid(
                    f"{path}.CanaryReplicas",
                    render(STEPS_V1ALPHA1, wire),
                    "Steps.CanaryReplicas must be a non decreasing sequence",
                )
            ]
    return []


def validate_rollout_spec_v1alpha1(
    rollout: RolloutV1alpha1,
    *,
    partition_percent_limit: int = DEFAULT_PARTITION_PERCENT_LIMIT,
    filter_workload_type: bool = True,
) -> list[FieldError]:
    """``validateV1alpha1RolloutSpec``: workload reference, rolling-style annotation, strategy."""
    errors: list[FieldError] = []
    ref = rollout.spec.object_ref.workload_ref
    path = "Spec.ObjectRef.WorkloadRef"
    if ref is None:
        errors.append(invalid(path, None, "WorkloadRef is required"))
    elif not is_supported_workload(ref.api_version, ref.kind, filter_workload_type=filter_workload_type):
        errors.append(invalid(path, render(WORKLOAD_REF, ref.to_dict()), "WorkloadRef kind is not supported"))
    annotation = _annotation(rollout)
    if annotation.lower() not in _STYLES:
        errors.append(
            invalid("RollingStyle", annotation, "Rolling style must be 'Canary', 'Partition' or empty")
        )
    canary = rollout.spec.strategy.canary
    if canary is None:
        return [*errors, invalid("Spec.Strategy.Canary", None, "Canary cannot be empty")]
    routings = [t.to_dict() for t in canary.traffic_routings or []]
    errors += _steps_errors(
        validation_style_v1alpha1(rollout),
        canary.steps,
        "Spec.Strategy.Canary.Steps",
        bool(routings),
        partition_percent_limit,
    )
    if len(routings) > 1:
        errors.append(
            invalid(
                "Spec.Strategy.Canary",
                render(TRAFFIC_ROUTINGS_V1ALPHA1, routings),
                "Rollout currently only support single TrafficRouting.",
            )
        )
    for ref_wire in routings:
        errors += traffic_routing_errors(
            ref_wire,
            "Spec.Strategy.Canary.TrafficRouting",
            ingress_type=INGRESS_V1ALPHA1,
            gateway_type=GATEWAY_V1ALPHA1,
        )
    return errors


def update_errors_v1alpha1(old: RolloutV1alpha1, new: RolloutV1alpha1, phase: str | None) -> list[FieldError]:
    """``validateV1alpha1RolloutUpdate``: immutability while Progressing or Terminating (first hit)."""
    if phase not in (RolloutPhase.PROGRESSING, RolloutPhase.TERMINATING):
        return []
    if old.spec.object_ref.to_dict() != new.spec.object_ref.to_dict():
        return [forbidden("Spec.ObjectRef", "Rollout 'ObjectRef' field is immutable")]
    old_canary, new_canary = old.spec.strategy.canary, new.spec.strategy.canary
    old_routings = None if old_canary is None else old_canary.traffic_routings
    new_routings = None if new_canary is None else new_canary.traffic_routings
    if _dump(old_routings) != _dump(new_routings):
        return [
            forbidden(
                "Spec.Strategy.Canary.TrafficRoutings",
                "Rollout 'Strategy.Canary.TrafficRoutings' field is immutable",
            )
        ]
    if _annotation(old).lower() != _annotation(new).lower():
        return [forbidden("Metadata.Annotation", "Rollout 'Rolling-Style' annotation is immutable")]
    return []


def _dump(items: list[TrafficRoutingRefV1alpha1] | None) -> list[dict[str, Any]] | None:
    return None if items is None else [item.to_dict() for item in items]


def validate_v1alpha1(
    new: RolloutV1alpha1,
    old: RolloutV1alpha1 | None,
    *,
    partition_percent_limit: int,
    workload_lookup: Iterable[RolloutLike],
    latest: RolloutV1alpha1 | None,
    filter_workload_type: bool,
) -> list[FieldError]:
    """``Handle`` for a v1alpha1 Rollout: spec + conflict; on update, the immutability rules."""
    errors = validate_rollout_spec_v1alpha1(
        new, partition_percent_limit=partition_percent_limit, filter_workload_type=filter_workload_type
    )
    errors += conflict_errors(new, workload_lookup)
    if errors or old is None:
        return errors
    stored = old if latest is None else latest
    phase = stored.status.phase if stored.status is not None else None
    return update_errors_v1alpha1(old, new, phase)
