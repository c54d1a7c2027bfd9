"""Rollout validation (the ``validate-rollouts-kruise-io-rollout`` webhook), v1beta1 rules.

Mirrors ``pkg/webhook/rollout/validating/rollout_create_update_handler.go``; the v1alpha1 rules
are in :mod:`.rollout_v1alpha1` and :func:`kruise.rollouts.admission.validate.validate_rollout`
is the entry point for both versions. The rules return ``field.ErrorList`` equivalents with
upstream's paths (Go field names such as ``Spec.Strategy.Canary.Steps[0].Replicas``) and
messages; ``aggregate`` (:mod:`kruise.workloads.admission.fielderrors`) turns them into the text
the webhook answers (HTTP 422).

Behaviour mirrored, in upstream's order:

1. spec errors (workload kind, kruise's ``spec.progressDeadlineAbort`` without
   ``spec.progressDeadlineSeconds``, strategy, steps, traffic routings) plus the
   one-Rollout-per-workload conflict check; any error ends validation;
2. on update, while the stored Rollout's phase is Progressing or Terminating: ``workloadRef``,
   the traffic routings, the rolling style and the number of steps are immutable (first hit only).

The lookups upstream does against its cache are inputs here: ``workload_lookup`` is the list of
Rollouts in the namespace, ``latest`` the stored Rollout whose phase gates the immutability rules.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Mapping
from typing import Any

from kruise.rollouts.admission.checks import (
    BLUE_GREEN_WORKLOADS,
    group_kind,
    is_supported_workload,
    scaled_percent,
    traffic_routing_errors,
)
from kruise.rollouts.admission.gorender import (
    GATEWAY,
    INGRESS,
    INT_OR_STRING,
    OBJECT_REF,
    STEPS,
    TRAFFIC_ROUTINGS,
    render,
)
from kruise.rollouts.api.common import RollingStyle, RolloutPhase
from kruise.rollouts.api.rollout import CanaryStep, Rollout, RolloutStrategy
from kruise.rollouts.api.rollout_v1alpha1 import RolloutV1alpha1
from kruise.rollouts.api.traffic import TrafficRoutingRef
from kruise.workloads.admission.fielderrors import FieldError, forbidden, invalid
from kruise.workloads.admission.intstr import IntOrStringError, validate_positive_int_or_percent

__all__ = [
    "DEFAULT_PARTITION_PERCENT_LIMIT",
    "RolloutLike",
    "conflict_errors",
    "parse_rollout",
    "update_errors",
    "validate_rollout_spec",
    "validation_style",
    "workload_ref_of",
]

RolloutLike = Rollout | RolloutV1alpha1 | Mapping[str, Any]
"""A Rollout as a model of either version or as a wire dict (``apiVersion`` picks the version)."""

DEFAULT_PARTITION_PERCENT_LIMIT = 50
"""``--partition-percent-limit``: max percentage ``replicas`` of a partition step with traffic."""


def parse_rollout(obj: RolloutLike) -> Rollout | RolloutV1alpha1:
    """A model of ``obj``: models are returned as they are, dicts parsed by their ``apiVersion``."""
    if isinstance(obj, Rollout | RolloutV1alpha1):
        return obj
    if str(obj.get("apiVersion", "")).endswith("/v1alpha1"):
        return RolloutV1alpha1.from_dict(obj)
    return Rollout.from_dict(obj)


def workload_ref_of(obj: Rollout | RolloutV1alpha1) -> tuple[str, str, str] | None:
    """(apiVersion, kind, name) of the referenced workload; ``None`` for a v1alpha1 Rollout without one."""
    if isinstance(obj, Rollout):
        ref = obj.spec.workload_ref
        return ref.api_version, ref.kind, ref.name
    alpha = obj.spec.object_ref.workload_ref
    return None if alpha is None else (alpha.api_version, alpha.kind, alpha.name)


def validation_style(rollout: Rollout) -> str:
    """``GetContextFromv1beta1Rollout``: the rolling style the step rules use.

    ``""`` without strategy; BlueGreen; Canary only for an ``apps/v1`` Deployment with
    ``enableExtraWorkloadForCanary`` (``IsRealPartition``); Partition otherwise.
    """
    style = rollout.spec.strategy.rolling_style()
    if style is None:
        return ""
    ref = rollout.spec.workload_ref
    if style == RollingStyle.CANARY and not (ref.api_version == "apps/v1" and ref.kind == "Deployment"):
        return RollingStyle.PARTITION.value
    return style.value


def _steps_errors(style: str, steps: list[CanaryStep] | None, path: str, limit: int) -> list[FieldError]:
    """``validateRolloutSpecCanarySteps``: the first bad step ends the check."""
    wire = None if steps is None else [s.to_dict() for s in steps]
    if not steps:
        return [invalid(path, render(STEPS, wire), "The number of Canary.Steps cannot be empty")]
    for i, step in enumerate(steps):
        if step.replicas is None:
            return [invalid(f"{path}[{i}].steps", render(STEPS, wire), "replicas cannot be empty")]
        try:
            replicas = scaled_percent(step.replicas)
        except IntOrStringError:
            replicas = None
        if replicas is None or replicas <= 0 or (replicas > 100 and isinstance(step.replicas, str)):
            return [
                invalid(
                    f"{path}[{i}].Replicas",
                    render(INT_OR_STRING, step.replicas),
                    'replicas must be positive number, or a percentage with "0%" < canaryReplicas <= "100%"',
                )
            ]
        if step.traffic is None and not step.matches:
            continue
        if style == RollingStyle.PARTITION and isinstance(step.replicas, str) and replicas > limit:
            return [
                invalid(
                    f"{path}[{i}].steps",
                    render(STEPS, wire),
                    "For partition style rollout: step[x].replicas must not greater than "
                    "partition-percent-limit if traffic specified",
                )
            ]
        if step.traffic is None:
            continue
        try:
            weight: int | None = scaled_percent(step.traffic)
        except IntOrStringError:
            weight = None
        if style == RollingStyle.BLUE_GREEN:
            if weight is None or weight < 0 or weight > 100:
                return [
                    invalid(
                        f"{path}[{i}].steps",
                        render(STEPS, wire),
                        'traffic must be percentage with "0%" <= traffic <= "100%" in blueGreen strategy',
                    )
                ]
        elif weight is None or weight <= 0 or weight > 100:
            return [
                invalid(
                    f"{path}[{i}].steps",
                    render(STEPS, wire),
                    'traffic must be percentage with "0%" < traffic <= "100%" in canary strategy',
                )
            ]
    for prev, curr in itertools.pairwise(steps):
        if isinstance(prev.replicas, str) != isinstance(curr.replicas, str):
            continue
        if scaled_percent(curr.replicas) < scaled_percent(prev.replicas):
            return [
                invalid(
                    f"{path}.CanaryReplicas",
                    render(STEPS, wire),
                    "Steps.CanaryReplicas must be a non decreasing sequence",
                )
            ]
    return []


def _routings_errors(routings: list[TrafficRoutingRef] | None, path: str) -> list[FieldError]:
    errors: list[FieldError] = []
    wire = [t.to_dict() for t in routings or []]
    if len(wire) > 1:
        errors.append(
            invalid(
                path, render(TRAFFIC_ROUTINGS, wire), "Rollout currently only support single TrafficRouting."
            )
        )
    for ref in wire:
        errors += traffic_routing_errors(
            ref, f"{path}.TrafficRouting", ingress_type=INGRESS, gateway_type=GATEWAY
        )
    return errors


def _strategy_errors(style: str, strategy: RolloutStrategy, limit: int) -> list[FieldError]:
    path = "Spec.Strategy"
    if strategy.canary is None and strategy.blue_green is None:
        return [invalid(path, None, "Canary and BlueGreen cannot both be empty")]
    if strategy.canary is not None and strategy.blue_green is not None:
        return [invalid(path, None, "Canary and BlueGreen cannot both be set")]
    if strategy.blue_green is not None:
        bg = strategy.blue_green
        sub = f"{path}.BlueGreen"
        return (
            _steps_errors(style, bg.steps, f"{sub}.Steps", limit)
            + _routings_errors(bg.traffic_routings, sub)
            + _threshold_errors(bg.failure_threshold, sub)
        )
    assert strategy.canary is not None
    canary = strategy.canary
    sub = f"{path}.Canary"
    return (
        _steps_errors(style, canary.steps, f"{sub}.Steps", limit)
        + _routings_errors(canary.traffic_routings, sub)
        + _threshold_errors(canary.failure_threshold, sub)
    )


def _threshold_errors(value: Any, path: str) -> list[FieldError]:
    """``failureThreshold``: a non-negative int or ``"<n>%"`` up to 100% (ours: upstream's webhook
    does not look, and a malformed value then stops the BatchRelease for good at its first batch,
    with nothing on the objects to say why)."""
    if value is None:
        return []
    return validate_positive_int_or_percent(value, f"{path}.FailureThreshold")


def validate_rollout_spec(
    rollout: Rollout,
    *,
    partition_percent_limit: int = DEFAULT_PARTITION_PERCENT_LIMIT,
    filter_workload_type: bool = True,
) -> list[FieldError]:
    """``validateRolloutSpec``: workload kind, then strategy/steps/traffic rules (v1beta1)."""
    style = validation_style(rollout)
    ref = rollout.spec.workload_ref
    errors: list[FieldError] = []
    path = "Spec.ObjectRef.WorkloadRef"
    if not is_supported_workload(ref.api_version, ref.kind, filter_workload_type=filter_workload_type):
        errors.append(invalid(path, render(OBJECT_REF, ref.to_dict()), "WorkloadRef kind is not supported"))
    elif (
        style == RollingStyle.BLUE_GREEN and group_kind(ref.api_version, ref.kind) not in BLUE_GREEN_WORKLOADS
    ):
        errors.append(
            invalid(
                path,
                render(OBJECT_REF, ref.to_dict()),
                "WorkloadRef kind is not supported for bluegreen style",
            )
        )
    if rollout.spec.progress_deadline_abort and rollout.spec.progress_deadline_seconds is None:
        # kruise's additive fields (rollout/deadline.py): an abort needs a deadline to abort at
        errors.append(
            invalid("spec.progressDeadlineAbort", "true", "requires spec.progressDeadlineSeconds to be set")
        )
    return errors + _strategy_errors(style, rollout.spec.strategy, partition_percent_limit)


def conflict_errors(rollout: Rollout | RolloutV1alpha1, others: Iterable[RolloutLike]) -> list[FieldError]:
    """``validateRolloutConflict``: another Rollout of the namespace already targets the workload.

    Reports the first conflicting Rollout of ``others`` (in order) as ``<namespace>/<name>``.
    Rollouts with the same name, or in another namespace when both namespaces are known, are
    skipped; a v1alpha1 Rollout without ``workloadRef`` never conflicts.
    """
    mine = workload_ref_of(rollout)
    name, namespace = rollout.metadata.name or "", rollout.metadata.namespace
    if mine is None:
        return []
    for item in others:
        other = parse_rollout(item)
        other_ns = other.metadata.namespace
        if other.metadata.name == name or (namespace and other_ns and other_ns != namespace):
            continue
        if workload_ref_of(other) != mine:
            continue
        key = f"{other_ns or ''}/{other.metadata.name or ''}"
        return [
            invalid(
                "Conflict Checker",
                name,
                f"This rollout conflict with Rollout({key}), one workload only have less than one Rollout",
            )
        ]
    return []


def _dump(routings: list[TrafficRoutingRef] | None) -> list[dict[str, Any]] | None:
    return None if routings is None else [t.to_dict() for t in routings]


def update_errors(old: Rollout, new: Rollout, phase: str | None) -> list[FieldError]:
    """``validateRolloutUpdate`` (v1beta1): immutability while Progressing or Terminating.

    ``phase`` is the stored Rollout's phase. Only the first violation is reported.
    """
    if phase not in (RolloutPhase.PROGRESSING, RolloutPhase.TERMINATING):
        return []
    if old.spec.workload_ref.to_dict() != new.spec.workload_ref.to_dict():
        return [forbidden("Spec.ObjectRef", "Rollout 'ObjectRef' field is immutable")]
    if _dump(old.spec.strategy.traffic_routings()) != _dump(new.spec.strategy.traffic_routings()):
        return [
            forbidden(
                "Spec.Strategy.Canary|BlueGreen.TrafficRoutings",
                "Rollout 'Strategy.Canary|BlueGreen.TrafficRoutings' field is immutable",
            )
        ]
    if old.spec.strategy.rolling_style() != new.spec.strategy.rolling_style():
        return [
            forbidden(
                "Spec.Strategy.Canary|BlueGreen",
                "Rollout style and enableExtraWorkloadForCanary are immutable",
            )
        ]
    if len(old.spec.strategy.steps()) != len(new.spec.strategy.steps()):
        return [forbidden("Spec.Strategy.Canary|BlueGreen", "Amount of Rollout steps are immutable")]
    return []
