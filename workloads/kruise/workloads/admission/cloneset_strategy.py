"""CloneSet ``scaleStrategy`` and ``updateStrategy`` validation (OpenKruise v1.8 webhook).

Mirrors ``validateScaleStrategy`` / ``validateUpdateStrategy`` of
``pkg/webhook/cloneset/validating/validation.go`` and the ``FieldsValidation`` methods of
``UpdatePriorityStrategy`` and ``CloneSetUpdateScatterStrategy``, messages verbatim:

- ``podsToDelete``: duplicates are reported once (and stop the scale checks); every name *added*
  compared with the old object must be an existing, non-terminating pod controlled by this
  CloneSet (``find pod <n> failed: <err>`` / ``already terminating`` / ``owner is not this
  CloneSet``).
- ``type`` is ReCreate, InPlaceIfPossible or InPlaceOnly; ``partition`` must be an int or a
  percentage, fractional ones included (``"33.5%"``), and not be negative; ``maxUnavailable``/
  ``maxSurge`` (and ``scaleStrategy.maxUnavailable``, which upstream leaves unchecked) an int or
  an integer percentage (see :mod:`.intstr` for why); ``maxSurge > 0`` is rejected with
  InPlaceOnly; with ``replicas > 0``, maxUnavailable and maxSurge (as pod counts) may not both
  be below 1.
- priority: weight and order lists are exclusive, weights in 0..100 (upstream's message says
  1-100 but accepts 0), selectors non-empty and valid, ordered keys non-empty; scatter: keys
  non-empty, no duplicate key/value pair. Both are reported as ``Required`` errors, as upstream.

Upstream only rejects a negative *partition*; a negative maxUnavailable or maxSurge is caught by
the "both less than 1" rule when replicas > 0.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from kruise.workloads.admission.fielderrors import (
    FieldError,
    go_int_or_string,
    go_string_slice,
    go_value_list,
    invalid,
    required,
)
from kruise.workloads.admission.intstr import (
    IntOrStringError,
    get_scaled_float_percent,
    get_scaled_int_percent,
    int_or_string_text,
)
from kruise.workloads.admission.metavalidation import (
    IS_NEGATIVE_ERROR_MSG,
    LabelSelectorError,
    selector_requirements,
)

__all__ = [
    "UPDATE_STRATEGY_TYPES",
    "PodLookup",
    "priority_strategy_error",
    "scatter_strategy_error",
    "validate_scale_strategy",
    "validate_update_strategy",
]

PodLookup = Callable[[str], Mapping[str, Any] | None]
"""Returns the pod of that name in the CloneSet's namespace, ``None`` if it does not exist.

An exception raised by the lookup is reported as ``find pod <name> failed: <str(exc)>``.
"""

UPDATE_STRATEGY_TYPES = ("ReCreate", "InPlaceIfPossible", "InPlaceOnly")


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _duplicates(names: list[str]) -> list[str]:
    """``util.CheckDuplicate``: every repeated occurrence, in order."""
    seen: set[str] = set()
    dups = []
    for name in names:
        if name in seen:
            dups.append(name)
        seen.add(name)
    return dups


def _controller_uid(pod: Mapping[str, Any]) -> str | None:
    for ref in _list(_mapping(pod.get("metadata")).get("ownerReferences")):
        if isinstance(ref, Mapping) and ref.get("controller") is True:
            return str(ref.get("uid") or "")
    return None


def validate_scale_strategy(
    strategy: Mapping[str, Any],
    old_strategy: Mapping[str, Any] | None,
    metadata: Mapping[str, Any],
    pod_lookup: PodLookup,
    path: str,
) -> list[FieldError]:
    """``validateScaleStrategy``: ``podsToDelete`` duplicates and the newly added names' pods;
    then (ours, upstream leaves it unchecked) ``maxUnavailable`` is an int or an integer percentage."""
    errs = _pods_to_delete_errors(strategy, old_strategy, metadata, pod_lookup, f"{path}.podsToDelete")
    _int_percent_count(strategy.get("maxUnavailable"), 1, "maxUnavailable", f"{path}.maxUnavailable", errs)
    return errs


def _pods_to_delete_errors(
    strategy: Mapping[str, Any],
    old_strategy: Mapping[str, Any] | None,
    metadata: Mapping[str, Any],
    pod_lookup: PodLookup,
    pods_path: str,
) -> list[FieldError]:
    names = [str(n) for n in _list(strategy.get("podsToDelete"))]
    dups = _duplicates(names)
    if dups:
        return [invalid(pods_path, go_string_slice(names), f"duplicated items {go_value_list(dups)}")]
    old_names = {str(n) for n in _list(_mapping(old_strategy).get("podsToDelete"))}
    uid = str(metadata.get("uid") or "")
    errs: list[FieldError] = []
    for name in sorted(set(names) - old_names):
        try:
            pod = pod_lookup(name)
        except Exception as exc:
            errs.append(invalid(pods_path, name, f"find pod {name} failed: {exc}"))
            continue
        if pod is None:
            errs.append(invalid(pods_path, name, f'find pod {name} failed: pods "{name}" not found'))
        elif _mapping(pod.get("metadata")).get("deletionTimestamp") is not None:
            errs.append(invalid(pods_path, name, f"find pod {name} already terminating"))
        elif _controller_uid(pod) != uid:
            errs.append(invalid(pods_path, name, f"find pod {name} owner is not this CloneSet"))
    return errs


def priority_strategy_error(strategy: Any) -> str | None:
    """``UpdatePriorityStrategy.FieldsValidation``: the first problem, or ``None``."""
    if not isinstance(strategy, Mapping):
        return None
    weights = _list(strategy.get("weightPriority"))
    orders = _list(strategy.get("orderPriority"))
    if weights and orders:
        return "only one of weightPriority and orderPriority can be used"
    for term in map(_mapping, weights):
        weight = term.get("weight")
        if isinstance(weight, int) and not 0 <= weight <= 100:
            return "weight must be valid number in the range 1-100"
        selector = _mapping(term.get("matchSelector"))
        if not _mapping(selector.get("matchLabels")) and not _list(selector.get("matchExpressions")):
            return "selector can not be empty"
        try:
            selector_requirements(selector)
        except LabelSelectorError as err:
            return f"invalid selector {err}"
    for term in map(_mapping, orders):
        if not term.get("orderedKey"):
            return "order key can not be empty"
    return None


def scatter_strategy_error(strategy: Any) -> str | None:
    """``CloneSetUpdateScatterStrategy.FieldsValidation``: the first problem, or ``None``."""
    seen: set[tuple[str, str]] = set()
    for term in map(_mapping, _list(strategy)):
        key, value = str(term.get("key") or ""), str(term.get("value") or "")
        if not key:
            return "key should not be empty"
        if (key, value) in seen:
            return f"duplicated key={key} value={value}"
        seen.add((key, value))
    return None


def _int_percent_count(value: Any, replicas: int, field: str, path: str, errs: list[FieldError]) -> int:
    if value is None:
        return 0
    try:
        return get_scaled_int_percent(value, replicas, True)
    except IntOrStringError as err:
        errs.append(
            invalid(path, int_or_string_text(value), f"failed getValueFromIntOrPercent for {field}: {err}")
        )
        return 0


def validate_update_strategy(strategy: Mapping[str, Any], replicas: int, path: str) -> list[FieldError]:
    """``validateUpdateStrategy`` for ``spec.updateStrategy`` (see the module docstring)."""
    errs: list[FieldError] = []
    kind = str(strategy.get("type") or "")
    if kind not in UPDATE_STRATEGY_TYPES:
        errs.append(invalid(f"{path}.type", kind, "must be 'ReCreate', InPlaceIfPossible or 'InPlaceOnly'"))
    partition_raw = strategy.get("partition")
    try:
        partition = get_scaled_float_percent(partition_raw, replicas, True)
    except IntOrStringError as err:
        partition = 0
        errs.append(
            invalid(
                f"{path}.partition",
                int_or_string_text(partition_raw),
                f"failed getValueFromIntOrPercent for partition: {err}",
            )
        )
    if partition < 0:
        errs.append(invalid(f"{path}.partition", partition, IS_NEGATIVE_ERROR_MSG))
    priority = priority_strategy_error(strategy.get("priorityStrategy"))
    if priority:
        errs.append(required(f"{path}.priorityStrategy", priority))
    scatter = scatter_strategy_error(strategy.get("scatterStrategy"))
    if scatter:
        errs.append(required(f"{path}.scatterStrategy", scatter))
    unavailable_raw = strategy.get("maxUnavailable")
    max_unavailable = _int_percent_count(
        unavailable_raw, replicas, "maxUnavailable", f"{path}.maxUnavailable", errs
    )
    surge_raw = strategy.get("maxSurge")
    max_surge = _int_percent_count(surge_raw, replicas, "maxSurge", f"{path}.maxSurge", errs)
    if surge_raw is not None and kind == "InPlaceOnly" and max_surge > 0:
        errs.append(
            invalid(
                f"{path}.maxSurge",
                int_or_string_text(surge_raw),
                "can not use maxSurge with strategy type InPlaceOnly",
            )
        )
    if replicas > 0 and max_unavailable < 1 and max_surge < 1:
        shown = None if unavailable_raw is None else go_int_or_string(unavailable_raw)
        errs.append(
            invalid(
                f"{path}.maxUnavailable", shown, "maxUnavailable and maxSurge should not both be less than 1"
            )
        )
    return errs
