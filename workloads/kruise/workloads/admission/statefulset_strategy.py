"""Advanced StatefulSet spec rules that are not about the pod template (OpenKruise v1.8 webhook).

Mirrors ``pkg/webhook/statefulset/validating/statefulset_validation.go``, messages verbatim:

- ``podManagementPolicy``: required, ``OrderedReady`` or ``Parallel``;
- ``reserveOrdinals``: a string must look like ``<a>-<b>`` with ``a <= b``, an integer must not be
  negative; reported at ``spec`` with the whole list as the value, as upstream does;
- ``maxUnavailable`` (``rollingUpdate`` and ``scaleStrategy``): a non-negative integer or a
  ``<n>%`` percentage (Kubernetes' ``ValidatePositiveIntOrPercent``), at least 1 once scaled
  against 1 with the deprecated lenient parser, and anything but the integer 1 only with
  ``Parallel``;
- ``updateStrategy``: ``RollingUpdate`` (partition and minReadySeconds non-negative,
  minReadySeconds at most 300, maxUnavailable required, podUpdatePolicy, unorderedUpdate only
  with Parallel and a valid priority strategy) or ``OnDelete`` (no ``rollingUpdate``);
- ``persistentVolumeClaimRetentionPolicy``: ``Retain`` or ``Delete`` for both fields.

Values of composite types (the reserve-ordinal list, the update strategy) are printed in Go
syntax where the type has no pointer fields; a struct with pointers would print memory addresses
in Go, so those are printed as compact JSON instead (documented difference).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from kruise.workloads.admission.cloneset_strategy import priority_strategy_error
from kruise.workloads.admission.fielderrors import (
    FieldError,
    GoSyntax,
    go_int_or_string,
    go_quote,
    invalid,
    not_supported,
    required,
)
from kruise.workloads.admission.intstr import IntOrStringError, get_value
from kruise.workloads.admission.metavalidation import IS_NEGATIVE_ERROR_MSG

__all__ = [
    "IN_PLACE_UPDATE_READY",
    "parse_reserve_range",
    "validate_max_unavailable",
    "validate_pod_management_policy",
    "validate_pvc_retention_policy",
    "validate_reserve_ordinals",
    "validate_update_strategy",
]

IN_PLACE_UPDATE_READY = "InPlaceUpdateReady"
MAX_MIN_READY_SECONDS = 300
_RANGE = re.compile(r"^\d+-\d+$")
_ATOI = re.compile(r"^[+-]?[0-9]+$")
_PERCENT = re.compile(r"^[0-9]+%$")
_PERCENT_MESSAGE = (
    "a valid percent string must be a numeric string followed by an ending '%' (e.g. '1%',  or '93%', "
    "regex used for validation is '[0-9]+%')"
)
_RETENTION = ("Retain", "Delete")
_UNORDERED_NEEDS_PARALLEL = "unorderedUpdate can only work with Parallel PodManagementPolicyType"
_ONLY_ROLLING = "only allowed for updateStrategy 'RollingUpdate'"


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def parse_reserve_range(text: str) -> tuple[int, int]:
    """``apiutil.ParseRange``: ``"a-b"`` -> ``(a, b)``.

    Raises:
        ValueError: Go's text: ``invalid range <s>`` (not two parts, or a > b) or
            ``strconv.Atoi: parsing "x": invalid syntax``.
    """
    parts = text.split("-")
    if len(parts) != 2:
        raise ValueError(f"invalid range {text}")
    for part in parts:
        if not _ATOI.match(part):
            raise ValueError(f"strconv.Atoi: parsing {go_quote(part)}: invalid syntax")
    start, end = int(parts[0]), int(parts[1])
    if start > end:
        raise ValueError(f"invalid range {text}")
    return start, end


def _go_reserve_ordinals(values: list[Any]) -> GoSyntax:
    items = ", ".join(go_int_or_string(v).text for v in values)
    return GoSyntax("[]intstr.IntOrString{" + items + "}")


def _go_readiness_gates(gates: list[Any] | None) -> GoSyntax:
    """``%#v`` of ``[]v1.PodReadinessGate``."""
    if gates is None:
        return GoSyntax("[]v1.PodReadinessGate(nil)")
    kinds = (go_quote(str(_mapping(g).get("conditionType") or "")) for g in gates)
    return GoSyntax(
        "[]v1.PodReadinessGate{" + ", ".join(f"v1.PodReadinessGate{{ConditionType:{k}}}" for k in kinds) + "}"
    )


def validate_pod_management_policy(spec: Mapping[str, Any]) -> list[FieldError]:
    policy = spec.get("podManagementPolicy")
    if policy in (None, ""):
        return [required("spec.podManagementPolicy")]
    if policy not in ("OrderedReady", "Parallel"):
        return [invalid("spec.podManagementPolicy", policy, "must be 'OrderedReady' or 'Parallel'")]
    return []


def validate_reserve_ordinals(spec: Mapping[str, Any]) -> list[FieldError]:
    """``validateReserveOrdinals``: errors at ``spec`` (upstream's ``fldPath.Root()``)."""
    values = spec.get("reserveOrdinals")
    if not isinstance(values, list):
        return []
    shown = _go_reserve_ordinals(values)
    errs: list[FieldError] = []
    for i, value in enumerate(values):
        if isinstance(value, str):
            if not _RANGE.match(value):
                errs.append(invalid("spec", shown, f"{i} th reserve ordinal is not a valid range: {value}"))
            try:
                parse_reserve_range(value)
            except ValueError as err:
                errs.append(
                    invalid("spec", shown, f"{i} th reserve ordinal is invalid: {value}, err = {err}")
                )
        elif _is_int(value) and value < 0:
            errs.append(invalid("spec", shown, f"{i} th reserve ordinal is negative: {value}"))
    return errs


def validate_max_unavailable(value: Any, spec: Mapping[str, Any], path: str) -> list[FieldError]:
    """``validateMaxUnavailableField`` for ``rollingUpdate`` or ``scaleStrategy`` maxUnavailable."""
    shown = go_int_or_string(value)
    errs: list[FieldError] = []
    if isinstance(value, str):
        if not _PERCENT.match(value):
            errs.append(invalid(path, shown, _PERCENT_MESSAGE))
    elif _is_int(value) and value < 0:
        errs.append(invalid(path, value, IS_NEGATIVE_ERROR_MSG))
    try:
        scaled = get_value(1 if value is None else value, 1, True)
    except IntOrStringError as err:
        errs.append(invalid(path, shown, f"getValueFromIntOrPercent error: {err}"))
    else:
        if scaled < 1:
            errs.append(invalid(path, shown, "should not be less than 1"))
    if spec.get("podManagementPolicy") != "Parallel" and value != 1:
        errs.append(invalid(path, shown, "can only work with Parallel PodManagementPolicyType"))
    return errs


def _validate_pod_update_policy(spec: Mapping[str, Any], rolling: Mapping[str, Any]) -> list[FieldError]:
    policy = rolling.get("podUpdatePolicy")
    path = "spec.updateStrategy.rollingUpdate.podUpdatePolicy"
    if policy in (None, ""):
        return [required(path)]
    if policy == "ReCreate":
        return []
    if policy in ("InPlaceIfPossible", "InPlaceOnly"):
        template_spec = _mapping(_mapping(spec.get("template")).get("spec"))
        gates = template_spec.get("readinessGates")
        gates = gates if isinstance(gates, list) else None
        if any(_mapping(g).get("conditionType") == IN_PLACE_UPDATE_READY for g in gates or ()):
            return []
        shown = _go_readiness_gates(gates)
        detail = f"must contains {IN_PLACE_UPDATE_READY} when podUpdatePolicy is {policy}"
        return [invalid("spec.template.spec.readinessGates", shown, detail)]
    return [invalid(path, policy, "must be 'ReCreate', InPlaceIfPossible or 'InPlaceOnly'")]


def _validate_rolling_update(spec: Mapping[str, Any], rolling: Mapping[str, Any]) -> list[FieldError]:
    base = "spec.updateStrategy.rollingUpdate"
    errs: list[FieldError] = []
    for key in ("partition", "minReadySeconds"):
        value = rolling.get(key)
        if isinstance(value, int) and value < 0:
            errs.append(invalid(f"{base}.{key}", value, IS_NEGATIVE_ERROR_MSG))
    ready = rolling.get("minReadySeconds")
    if isinstance(ready, int) and ready > MAX_MIN_READY_SECONDS:
        errs.append(invalid(f"{base}.minReadySeconds", ready, "must be no more than 300 seconds"))
    if rolling.get("maxUnavailable") is None:
        errs.append(required(f"{base}.maxUnavailable"))
    else:
        errs.extend(validate_max_unavailable(rolling["maxUnavailable"], spec, f"{base}.maxUnavailable"))
    errs.extend(_validate_pod_update_policy(spec, rolling))
    unordered = rolling.get("unorderedUpdate")
    if isinstance(unordered, Mapping):
        if spec.get("podManagementPolicy") != "Parallel":
            errs.append(
                required(
                    f"{base}.unorderedUpdate",
                    "unorderedUpdate can only work with Parallel PodManagementPolicyType",
                )
            )
        problem = priority_strategy_error(unordered.get("priorityStrategy"))
        if problem is not None:
            errs.append(required(f"{base}.unorderedUpdate.priorityStrategy", problem))
    return errs


def validate_update_strategy(spec: Mapping[str, Any]) -> list[FieldError]:
    """``validateUpdateStrategyType`` on the defaulted spec."""
    strategy = _mapping(spec.get("updateStrategy"))
    kind = strategy.get("type")
    rolling = strategy.get("rollingUpdate")
    if kind in (None, ""):
        return [required("spec.updateStrategy")]
    if kind == "OnDelete":
        if isinstance(rolling, Mapping):
            return [
                invalid(
                    "spec.updateStrategy.rollingUpdate",
                    dict(rolling),
                    "only allowed for updateStrategy 'RollingUpdate'",
                )
            ]
        return []
    if kind == "RollingUpdate":
        return _validate_rolling_update(spec, rolling) if isinstance(rolling, Mapping) else []
    return [invalid("spec.updateStrategy", dict(strategy), "must be 'RollingUpdate' or 'OnDelete'")]


def validate_pvc_retention_policy(spec: Mapping[str, Any]) -> list[FieldError]:
    """``ValidatePersistentVolumeClaimRetentionPolicy``: both fields Retain or Delete (when set)."""
    policy = spec.get("persistentVolumeClaimRetentionPolicy")
    if not isinstance(policy, Mapping):
        return []
    errs: list[FieldError] = []
    for key in ("whenDeleted", "whenScaled"):
        value = policy.get(key)
        if value not in _RETENTION:
            errs.append(
                not_supported(
                    f"spec.persistentVolumeClaimRetentionPolicy.{key}", value or "", list(_RETENTION)
                )
            )
    return errs
