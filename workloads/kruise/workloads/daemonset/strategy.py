"""A DaemonSet's update strategy resolved to numbers (pure): surge, unavailability, partition.

Mirrors ``surgeCount``, ``unavailableCount``, ``updatedDesiredNodeCounts``, ``getBurstReplicas``
and the partition read of OpenKruise's ``pkg/controller/daemonset`` (v1.8, partition an
int-or-percent as on master):

- maxSurge and maxUnavailable are scaled against the number of nodes that should run the daemon
  (``desiredNumberScheduled``), rounding **up**; both count only for ``RollingUpdate`` with a
  ``rollingUpdate`` block; when there are nodes and both come out 0, maxUnavailable is 1;
- ``partition`` is scaled against the same number rounding **down** (``"50%"`` of 5 is 2);
- ``burstReplicas`` (default 250) is scaled rounding down; it bounds creations, deletions and
  in-place updates per reconcile;
- surge is *allowed* (the core loop keeps an old and a new pod on a node) when maxSurge scaled
  against 1 node is positive (``allowSurge``).

One difference: upstream scales partition and burstReplicas against the *previous*
``status.desiredNumberScheduled``; here the number counted in the same reconcile is used (equal
once the status is written).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from kruise.workloads.api.daemonset import DEFAULT_BURST_REPLICAS, PROGRESSIVE_CREATE_POD_ANNOTATION
from kruise.workloads.intorpercent import IntOrPercentError, scaled_value
from kruise.workloads.objects import KubeObject, annotations_of, mapping, spec

ROLLING_UPDATE = "RollingUpdate"
ON_DELETE = "OnDelete"
IN_PLACE_IF_POSSIBLE = "InPlaceIfPossible"


class StrategyError(ValueError):
    """A strategy number cannot be read (the webhook refuses such values; an old object may hold one)."""


def update_strategy(ds: KubeObject) -> Mapping[str, Any]:
    """``spec.updateStrategy`` (empty when unset)."""
    return mapping(spec(ds).get("updateStrategy"))


def rolling_update(ds: KubeObject) -> Mapping[str, Any] | None:
    """``spec.updateStrategy.rollingUpdate`` when the type is RollingUpdate (default) and it is set."""
    strategy = update_strategy(ds)
    if (strategy.get("type") or ROLLING_UPDATE) != ROLLING_UPDATE:
        return None
    block = strategy.get("rollingUpdate")
    return block if isinstance(block, Mapping) else None


def _scaled(value: Any, total: int, *, round_up: bool, field: str) -> int:
    if value is None:
        return 0
    try:
        return scaled_value(value, total, round_up=round_up)
    except IntOrPercentError as err:
        raise StrategyError(f"invalid value for {field}: {err}") from err


def surge_count(ds: KubeObject, desired: int) -> int:
    """``surgeCount``: maxSurge of ``desired`` nodes, rounded up (0 without a rolling update)."""
    block = rolling_update(ds)
    return 0 if block is None else _scaled(block.get("maxSurge"), desired, round_up=True, field="MaxSurge")


def unavailable_count(ds: KubeObject, desired: int) -> int:
    """``unavailableCount``: maxUnavailable of ``desired`` nodes, rounded up (0 without a rolling update)."""
    block = rolling_update(ds)
    if block is None:
        return 0
    return _scaled(block.get("maxUnavailable"), desired, round_up=True, field="MaxUnavailable")


def allow_surge(ds: KubeObject) -> bool:
    """``allowSurge``: maxSurge of a single node is positive (malformed counts as no surge)."""
    try:
        return surge_count(ds, 1) > 0
    except StrategyError:
        return False


@dataclass(frozen=True)
class RollingNumbers:
    """``updatedDesiredNodeCounts``: maxSurge and maxUnavailable as node counts."""

    max_surge: int
    max_unavailable: int


def rolling_numbers(ds: KubeObject, desired: int) -> RollingNumbers:
    """Both counts for ``desired`` nodes; maxUnavailable 1 when there are nodes and both are 0.

    Raises:
        StrategyError: a value is neither an int nor ``"<n>%"``.
    """
    surge, unavailable = surge_count(ds, desired), unavailable_count(ds, desired)
    if desired > 0 and surge == 0 and unavailable == 0:
        unavailable = 1
    return RollingNumbers(surge, unavailable)


def partition_count(ds: KubeObject, desired: int) -> int:
    """``rollingUpdate.partition`` of ``desired`` nodes, rounded down; 0 when unset or malformed
    (upstream logs the error and updates as if there were none)."""
    block = rolling_update(ds)
    value = None if block is None else block.get("partition")
    try:
        return max(_scaled(value, desired, round_up=False, field="partition"), 0)
    except StrategyError:
        return 0


def burst_replicas(ds: KubeObject, desired: int) -> int:
    """``getBurstReplicas``: ``spec.burstReplicas`` (default 250) of ``desired``, rounded down."""
    value = spec(ds).get("burstReplicas")
    try:
        return scaled_value(DEFAULT_BURST_REPLICAS if value is None else value, desired, round_up=False)
    except IntOrPercentError:
        return 0


def is_paused(ds: KubeObject) -> bool:
    """``rollingUpdate.paused``: updates stop (creations and deletions of the core loop do not)."""
    return bool(mapping(update_strategy(ds).get("rollingUpdate")).get("paused"))


def is_on_delete(ds: KubeObject) -> bool:
    """``updateStrategy.type: OnDelete``: old pods change only when someone deletes them."""
    return update_strategy(ds).get("type") == ON_DELETE


def is_in_place(ds: KubeObject) -> bool:
    """``rollingUpdateType: InPlaceIfPossible`` (with the RollingUpdate type)."""
    block = rolling_update(ds)
    return block is not None and block.get("rollingUpdateType") == IN_PLACE_IF_POSSIBLE


def node_update_selector(ds: KubeObject) -> Mapping[str, Any] | None:
    """``rollingUpdate.selector``: only nodes whose labels match are updated."""
    block = rolling_update(ds)
    selector = None if block is None else block.get("selector")
    return selector if isinstance(selector, Mapping) else None


def is_progressive(ds: KubeObject) -> bool:
    """The ``daemonset.kruise.io/progressive-create-pod: "true"`` annotation: partition also limits
    how many nodes get a new pod."""
    return annotations_of(ds).get(PROGRESSIVE_CREATE_POD_ANNOTATION) == "true"


def min_ready_seconds(ds: KubeObject) -> int:
    """``spec.minReadySeconds`` (0 when unset)."""
    return int(spec(ds).get("minReadySeconds") or 0)
