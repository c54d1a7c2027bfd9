"""``spec.targetFilter`` (pure): which of the target's pods a WorkloadSpread manages and how many
replicas its percentages resolve against, after upstream's ``IsPodSelected``,
``filterWorkload`` and ``GetReplicasFromObject`` (v1.8).

- The pod webhook (:func:`admits`) spreads a pod only when no filter is set, or the filter's
  ``selector`` matches the pod's labels: an empty selector matches every pod, a filter **without**
  a selector matches none (upstream's ``ValidatedLabelSelectorAsSelector(nil)`` is
  ``labels.Nothing()``).
- The controller (:func:`counts`) counts and adopts the pods the ``selector`` matches, every pod
  when there is no filter or no selector (upstream filters only with a selector).
- :func:`filtered_replicas`: with a non-empty ``replicasPathList`` the workload's replicas are the
  sum of the integers at those dot-separated paths of the workload object (a missing field counts
  0; a value that is not an integer raises :class:`TargetFilterError`, upstream's
  ``NestedField[int64]`` error that fails the round); otherwise the workload's own replicas.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kruise.workloads.api.workloadspread import TargetFilterView
from kruise.workloads.objects import KubeObject
from kruise.workloads.selector import selector_matches

__all__ = ["TargetFilterError", "admits", "counts", "filtered_replicas"]


class TargetFilterError(ValueError):
    """A ``replicasPathList`` entry names a field that is not an integer."""


def admits(target_filter: TargetFilterView | None, labels: Mapping[str, str]) -> bool:
    """Whether the pod webhook spreads a pod with ``labels`` (see the module doc).

    Raises:
        kruise.workloads.selector.SelectorError: a malformed selector (the webhook skips this
            WorkloadSpread, as upstream).
    """
    if target_filter is None:
        return True
    selector = target_filter.get("selector")
    if selector is None:
        return False
    if not selector.get("matchLabels") and not selector.get("matchExpressions"):
        return True
    return selector_matches(selector, labels)


def counts(target_filter: TargetFilterView | None, labels: Mapping[str, str]) -> bool:
    """Whether the controller counts (and adopts) a pod with ``labels`` (see the module doc).

    Raises:
        kruise.workloads.selector.SelectorError: a malformed selector.
    """
    if target_filter is None or target_filter.get("selector") is None:
        return True
    return admits(target_filter, labels)


def filtered_replicas(workload: KubeObject, target_filter: TargetFilterView | None, replicas: int) -> int:
    """The replicas the subsets' percentages resolve against (see the module doc); ``replicas``
    is the workload's own count."""
    paths = (target_filter or {}).get("replicasPathList") or []
    if not paths:
        return replicas
    total = 0
    for path in paths:
        value: Any = workload
        for part in path.split(".") if path else ():
            value = value.get(part) if isinstance(value, Mapping) else None
            if value is None:
                break
        if value is None or not path:
            continue
        if isinstance(value, bool) or not isinstance(value, int):
            raise TargetFilterError(f"{path} is not an integer: {value!r}")
        total += value
    return total
