"""UnitedDeployment topology validation: subset names, replicas, bounds and partitions (pure).

Mirrors ``validateSubsetReplicas`` and the subset loop of ``validateUnitedDeploymentSpec`` in
OpenKruise v1.8's ``pkg/webhook/uniteddeployment/validating``, messages and field paths verbatim,
upstream's slips included:

- a ``maxReplicas`` that does not parse is reported at ``subsets[i].minReplicas``, and every
  bound error shows the subset's ``maxReplicas`` as the bad value;
- "sum of indicated subset replicas %d should not be greater than UnitedDeployment replicas %d"
  formats a *pointer* with ``%d`` upstream, so its second number is a memory address there; here
  it is the replicas (the only deliberate difference in these texts).

A subset's ``nodeSelectorTerm`` and ``tolerations`` are judged by the API server itself, as the
pod template is (Kubernetes' ``ValidateNodeSelectorTerm``/``ValidateTolerations`` are what
upstream calls): :func:`subset_scheduling_pod` builds a Pod carrying them and
:func:`subset_scheduling_errors` moves the refusal's field paths onto the subset.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from kruise.workloads.admission.fielderrors import (
    FieldError,
    GoSyntax,
    go_int_or_string,
    go_quote,
    invalid,
    required,
)
from kruise.workloads.admission.metavalidation import is_dns1123_label
from kruise.workloads.admission.podtemplate import DRY_RUN_GENERATE_NAME, RenderedError, template_errors
from kruise.workloads.uniteddeployment.allocator import AllocationError, parse_subset_replicas

__all__ = [
    "subset_scheduling_errors",
    "subset_scheduling_pod",
    "validate_partitions",
    "validate_subset_names",
    "validate_subset_replicas",
]

SUBSETS = "spec.topology.subsets"
_NO_MAX = 1000000
"""The ``maxReplicas`` an unbounded subset counts for in the sums (upstream's constant)."""
_EXCLUSIVE = (
    "subset.Replicas and subset.MinReplicas/subset.MaxReplicas are mutually exclusive in a UnitedDeployment"
)
_MIN_ABOVE_MAX = (
    "sum of indicated subset.minReplicas should not be greater than sum of indicated subset.maxReplicas"
)
_TERM_PATH = "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0]"


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _subsets(spec: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    subsets = _mapping(spec.get("topology")).get("subsets")
    return [_mapping(s) for s in subsets] if isinstance(subsets, list) else []


def _shown(value: Any) -> GoSyntax | None:
    """A dereferenced ``*intstr.IntOrString`` (``None``: a nil pointer, printed ``"null"``)."""
    return None if value is None else go_int_or_string(value)


def _parse(ud_replicas: int, value: Any) -> int | str:
    """``ParseSubsetReplicas``: the number, or upstream's error text (``-1``: replicas unset)."""
    try:
        return parse_subset_replicas(None if ud_replicas == -1 else ud_replicas, value)
    except AllocationError as err:
        return str(err)


def validate_subset_replicas(spec: Mapping[str, Any]) -> list[FieldError]:
    """``validateSubsetReplicas``: replicas, minReplicas and maxReplicas of every subset together."""
    subsets = _subsets(spec)
    replicas = spec.get("replicas")
    expected = replicas if isinstance(replicas, int) else -1
    errs: list[FieldError] = []
    sum_replicas = sum_min = sum_max = count_replicas = count_max = 0
    has_replicas = has_capacity = False
    for index, subset in enumerate(subsets):
        at = f"{SUBSETS}[{index}]"
        shown_max = _shown(subset.get("maxReplicas"))
        value = 0
        if subset.get("replicas") is not None:
            count_replicas += 1
            has_replicas = True
            parsed = _parse(expected, subset["replicas"])
            if isinstance(parsed, str):
                errs.append(invalid(f"{at}.replicas", _shown(subset["replicas"]), parsed))
            else:
                value = parsed
        sum_replicas += value
        low = 0
        if subset.get("minReplicas") is not None:
            has_capacity = True
            parsed = _parse(expected, subset["minReplicas"])
            if isinstance(parsed, str):
                errs.append(invalid(f"{at}.minReplicas", shown_max, parsed))
            else:
                low = parsed
        sum_min += low
        high = _NO_MAX
        if subset.get("maxReplicas") is not None:
            count_max += 1
            has_capacity = True
            parsed = _parse(expected, subset["maxReplicas"])
            if isinstance(parsed, str):
                errs.append(invalid(f"{at}.minReplicas", shown_max, parsed))
                high = 0
            else:
                high = parsed
        sum_max += high
        if low > high:
            detail = f"subset[{index}].minReplicas must be more than or equal to maxReplicas"
            errs.append(invalid(f"{at}.minReplicas", shown_max, detail))
    if has_replicas and has_capacity:
        errs.append(invalid(SUBSETS, list(subsets), _EXCLUSIVE))
        return errs
    if has_capacity:
        if expected == -1:
            errs.append(
                invalid(
                    SUBSETS, -1, "spec.replicas must be not empty if you set subset.minReplicas/maxReplicas"
                )
            )
        if count_max >= len(subsets):
            errs.append(invalid(SUBSETS, count_max, "at least one subset.maxReplicas must be empty"))
        if sum_min > sum_max:
            errs.append(invalid(SUBSETS, sum_min, _MIN_ABOVE_MAX))
    elif expected != -1:
        if sum_replicas > expected:
            detail = (
                f"sum of indicated subset replicas {sum_replicas} should not be greater than "
                f"UnitedDeployment replicas {expected}"
            )
            errs.append(invalid(SUBSETS, sum_replicas, detail))
        if 0 < count_replicas == len(subsets) and sum_replicas != expected:
            detail = (
                "if replicas of all subsets are provided, the sum of indicated subset replicas "
                f"{sum_replicas} should equal UnitedDeployment replicas {expected}"
            )
            errs.append(invalid(SUBSETS, sum_replicas, detail))
    elif count_replicas != len(subsets):
        detail = "if UnitedDeployment replicas is not provided, replicas of all subsets should be provided"
        errs.append(invalid(SUBSETS, sum_replicas, detail))
    return errs


def validate_subset_names(spec: Mapping[str, Any]) -> list[FieldError]:
    """Every subset named, uniquely, as a DNS label (the subset loop of ``validateUnitedDeploymentSpec``)."""
    errs: list[FieldError] = []
    seen: set[str] = set()
    for index, subset in enumerate(_subsets(spec)):
        name = str(subset.get("name") or "")
        at = f"{SUBSETS}[{index}].name"
        if not name:
            errs.append(required(at))
        if name in seen:
            errs.append(invalid(at, name, f"duplicated subset name {name}"))
        seen.add(name)
        problems = is_dns1123_label(name)
        if problems:
            errs.append(invalid(at, name, f"invalid subset name {', '.join(problems)}"))
    return errs


def _go_partitions(partitions: Mapping[str, Any]) -> GoSyntax:
    """``%#v`` of a ``map[string]int32``: keys sorted."""
    items = ", ".join(f"{go_quote(str(k))}:{partitions[k]}" for k in sorted(partitions))
    return GoSyntax("map[string]int32{" + items + "}")


def validate_partitions(spec: Mapping[str, Any]) -> list[FieldError]:
    """Every ``updateStrategy.manualUpdate.partitions`` key names a subset ("subset %s does not exist")."""
    manual = _mapping(spec.get("updateStrategy")).get("manualUpdate")
    if not isinstance(manual, Mapping):
        return []
    partitions = _mapping(manual.get("partitions"))
    names = {str(s.get("name") or "") for s in _subsets(spec)}
    shown = _go_partitions(partitions)
    return [
        invalid("spec.updateStrategy.partitions", shown, f"subset {subset} does not exist")
        for subset in sorted(partitions)
        if subset not in names
    ]


def subset_scheduling_pod(subset: Mapping[str, Any], namespace: str) -> dict[str, Any] | None:
    """A Pod carrying the subset's ``nodeSelectorTerm`` (as its one required node-affinity term)
    and ``tolerations``, whose dry-run creation validates them; ``None`` when it has neither."""
    term = _mapping(subset.get("nodeSelectorTerm"))
    tolerations = subset.get("tolerations")
    has_term = bool(term.get("matchExpressions") or term.get("matchFields"))
    if not has_term and not tolerations:
        return None
    spec: dict[str, Any] = {"containers": [{"name": "c", "image": "kruise.local/check"}]}
    if has_term:
        required_terms = {"nodeSelectorTerms": [dict(term)]}
        spec["affinity"] = {
            "nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": required_terms}
        }
    if tolerations:
        spec["tolerations"] = tolerations
    meta = {"generateName": DRY_RUN_GENERATE_NAME, "namespace": namespace}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec}


def subset_scheduling_errors(status: int, body: Mapping[str, Any], index: int) -> list[FieldError]:
    """The refusal of :func:`subset_scheduling_pod`'s dry run as errors at ``subsets[index]``.

    Causes at the node-affinity term move to ``.nodeSelectorTerm``, at ``spec.tolerations`` to
    ``.tolerations``; other causes and answers that are no verdict (policy, outage) give nothing.
    """
    at = f"{SUBSETS}[{index}]"
    moved: list[FieldError] = []
    for err in template_errors(status, body, "") or []:
        for prefix, target in (
            (_TERM_PATH, f"{at}.nodeSelectorTerm"),
            ("spec.tolerations", f"{at}.tolerations"),
        ):
            if err.field == prefix or err.field.startswith((f"{prefix}.", f"{prefix}[")):
                moved.append(RenderedError(err.type, target + err.field[len(prefix) :], err.body()))
    return moved


def subset_names(spec: Mapping[str, Any]) -> Sequence[str]:
    """The subset names in topology order (empty names included)."""
    return [str(s.get("name") or "") for s in _subsets(spec)]
