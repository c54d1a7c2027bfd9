"""How many replicas each subset gets: upstream's four replica allocators, as pure arithmetic.

Upstream (``pkg/controller/uniteddeployment/allocator.go``) picks one allocator per
UnitedDeployment, in this order:

1. **reservation** (Adaptive with ``reserveUnschedulablePods``): pods that cannot schedule stay
   reserved in their subset and temporary substitutes are created in later subsets;
2. **adaptive** (Adaptive): an unschedulable subset keeps only its ready pods, the rest move on;
   ready pods of a schedulable subset are never taken away;
3. **min/max** ("elastic", any subset with ``minReplicas``/``maxReplicas``): fill every subset's
   minimum in topology order, then up to each maximum in the same order;
4. **specific** (the rest): subsets with ``replicas`` (int or percent of ``spec.replicas``) get
   them, the others share what is left evenly, the subsets holding most pods taking the remainder.

Percentages resolve with :func:`parse_subset_replicas` (round half up). The input is the spec plus
one :class:`SubsetState` per existing subset workload; the output maps every subset of the
topology to its next ``spec.replicas``. Errors are :class:`AllocationError` with upstream's text.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from kruise.core.api import IntOrPercentError, int_or_percent_value
from kruise.workloads.api.uniteddeployment import Subset, UnitedDeploymentSpec

__all__ = [
    "AllocationError",
    "SubsetState",
    "allocator_kind",
    "next_replicas",
    "parse_subset_replicas",
]

UNBOUNDED = 2**31 - 1
"""An unset ``maxReplicas`` (upstream ``math.MaxInt32``)."""


class AllocationError(ValueError):
    """The topology cannot be allocated; the message is upstream's (the controller reports it in a
    ``Failed SpecifySubsetReplicas`` event and leaves every subset as it is)."""


@dataclass(frozen=True)
class SubsetState:
    """What the allocators read of one existing subset workload (upstream ``Subset``).

    Attributes:
        replicas: the workload's ``spec.replicas`` (pods it currently asks for).
        ready_replicas: its ``status.readyReplicas``.
        unschedulable: Adaptive only: the subset cannot take more pods now.
        marked_unschedulable: reservation only: its ``Schedulable`` condition is False.
        reserved_pods: reservation only: pods expected never to start there.
    """

    replicas: int
    ready_replicas: int = 0
    unschedulable: bool = False
    marked_unschedulable: bool = False
    reserved_pods: int = 0

    @property
    def allocatable(self) -> bool:
        """Neither unschedulable nor marked so (upstream ``Subset.Allocatable``)."""
        return not self.unschedulable and not self.marked_unschedulable


def parse_subset_replicas(ud_replicas: int | None, value: int | str) -> int:
    """Resolve a subset's ``replicas``/``minReplicas``/``maxReplicas`` (upstream ``ParseSubsetReplicas``).

    An int must be >= 0. A percentage needs ``spec.replicas`` (``None`` refuses it), must lie in
    [0, 100] and gives ``floor(replicas * p / 100 + 0.5)`` (``"50%"`` of 5 -> 3). Raises
    :class:`AllocationError` otherwise.
    """
    if isinstance(value, int):
        if value < 0:
            raise AllocationError(f"subset replicas ({value}) should not be less than 0")
        return value
    if ud_replicas is None:
        raise AllocationError(
            f"subsetReplicas ({value}) should not be string when unitedDeployment replicas is empty"
        )
    if not value.endswith("%"):
        raise AllocationError(
            f"subset replicas ({value}) only support integer value or percentage value with a suffix '%'"
        )
    try:
        percent, _ = int_or_percent_value(value)
    except IntOrPercentError as err:
        raise AllocationError(
            f"subset replicas ({value}) should be correct percentage integer: {err}"
        ) from err
    if percent > 100:
        raise AllocationError(f"subset replicas ({value}) should be in range [0, 100]")
    return (2 * ud_replicas * percent + 100) // 200


def allocator_kind(spec: UnitedDeploymentSpec) -> str:
    """Which allocator upstream's ``NewReplicaAllocator`` picks: ``reservation``, ``adaptive``,
    ``minmax`` or ``specific``."""
    strategy = spec.topology.schedule_strategy if spec.topology else None
    if strategy is not None and strategy.reserves_unschedulable_pods():
        return "reservation"
    if strategy is not None and strategy.is_adaptive():
        return "adaptive"
    if any(s.min_replicas is not None or s.max_replicas is not None for s in _subsets(spec)):
        return "minmax"
    return "specific"


def next_replicas(spec: UnitedDeploymentSpec, existing: Mapping[str, SubsetState]) -> dict[str, int]:
    """Every topology subset's next ``spec.replicas``, by upstream's allocator for ``spec``.

    ``existing`` holds the subset workloads that exist, by subset name (a subset missing from it
    is new: 0 replicas, schedulable). The result has one entry per ``topology.subsets`` name, in
    topology order. Raises :class:`AllocationError` when the specified replicas do not fit.
    """
    kind = allocator_kind(spec)
    if kind == "specific":
        return _specific(spec, existing)
    replicas = spec.replicas if spec.replicas is not None else 0
    subsets = _subsets(spec)
    low, high = _min_max(replicas, subsets)
    names = [s.name for s in subsets]
    if kind == "reservation":
        return _reserve(replicas, names, low, high, existing)
    if kind == "adaptive":
        for name in names:
            low[name], high[name] = _adaptive_bounds(low[name], high[name], existing.get(name))
    return _fill(replicas, names, low, high)


def _subsets(spec: UnitedDeploymentSpec) -> Sequence[Subset]:
    return (spec.topology.subsets or []) if spec.topology else []


def _min_max(replicas: int, subsets: Sequence[Subset]) -> tuple[dict[str, int], dict[str, int]]:
    """Upstream ``calculateRawMinMaxMap``: unparsable bounds count as unset (0 / unbounded)."""
    low: dict[str, int] = {}
    high: dict[str, int] = {}
    for index, subset in enumerate(subsets):
        low[subset.name] = _bound(replicas, subset.min_replicas, 0)
        high[subset.name] = _bound(replicas, subset.max_replicas, UNBOUNDED)
        if low[subset.name] > high[subset.name]:
            raise AllocationError(
                f"subset[{index}].maxReplicas({high[subset.name]}) must be more than or equal to "
                f"minReplicas({low[subset.name]})"
            )
    return low, high


def _bound(replicas: int, value: int | str | None, unset: int) -> int:
    if value is None:
        return unset
    try:
        return parse_subset_replicas(replicas, value)
    except AllocationError:
        return 0  # upstream ignores the parse error and keeps the zero value


def _adaptive_bounds(low: int, high: int, state: SubsetState | None) -> tuple[int, int]:
    """An unschedulable subset is held to its ready pods; a schedulable one keeps them."""
    ready = state.ready_replicas if state is not None else 0
    unschedulable = state is not None and state.unschedulable
    if unschedulable:
        low, high = max(ready, low), min(ready, high)
    if not unschedulable and ready > low:
        low = min(ready, high)
    return low, high


def _fill(
    replicas: int, names: Sequence[str], low: Mapping[str, int], high: Mapping[str, int]
) -> dict[str, int]:
    """Upstream ``allocateByMinMaxMap``: minimums first, then maximums, both in topology order."""
    out: dict[str, int] = {}
    allocated = 0
    for name in names:
        add = max(min(low[name], replicas - allocated), 0)
        out[name] = add
        allocated += add
    if allocated >= replicas:
        return out
    for name in names:
        add = max(min(high[name] - low[name], replicas - allocated), 0)
        out[name] += add
        allocated += add
    return out


@dataclass
class _Reservation:
    """Upstream ``reservationAllocatorSubsetRecord``: a negative ``room`` counts reserved pods."""

    room: int
    allocated: int = 0

    def allocate(self, to: int, rest: int) -> int:
        """Raise this subset toward ``to`` (at most ``rest`` more); return how many of the added
        pods are expected to run, i.e. how much of ``rest`` they really use."""
        add = min(to - self.allocated, rest)
        self.allocated += add
        self.room -= add
        if self.room < 0:
            return max(0, add + self.room)
        return add


def _reserve(
    replicas: int,
    names: Sequence[str],
    low: Mapping[str, int],
    high: Mapping[str, int],
    existing: Mapping[str, SubsetState],
) -> dict[str, int]:
    """Upstream ``allocateByMinMaxMapAndReservation``."""
    records: dict[str, _Reservation] = {}
    for name in names:
        state = existing.get(name)
        room = UNBOUNDED if state is None or state.allocatable else state.replicas - state.reserved_pods
        records[name] = _Reservation(room)
    rest = replicas
    for name in names:
        rest -= records[name].allocate(low[name], rest)
        if rest <= 0:
            return {n: r.allocated for n, r in records.items()}
    for name in names:
        state = existing.get(name)
        target = high[name] if state is None or not state.unschedulable else state.replicas
        rest -= records[name].allocate(target, rest)
        if rest <= 0:
            break
    return {n: r.allocated for n, r in records.items()}


def _specific(spec: UnitedDeploymentSpec, existing: Mapping[str, SubsetState]) -> dict[str, int]:
    """Upstream ``specificAllocator``: specified replicas, the rest spread evenly."""
    expected = spec.replicas
    specified: dict[str, int] = {}
    for subset in _subsets(spec):
        if subset.replicas is None:
            continue
        try:
            specified[subset.name] = parse_subset_replicas(expected, subset.replicas)
        except AllocationError:
            continue  # upstream logs the subset and leaves it unspecified
    current = {s.name: existing[s.name].replicas if s.name in existing else 0 for s in _subsets(spec)}
    order = sorted(current, key=lambda n: (current[n], n))
    total = sum(specified.values())
    count = sum(1 for name in order if name in specified)
    if expected is not None:
        if total > expected:
            raise AllocationError(
                f"specified subsets' replica ({total}) is greater than UnitedDeployment replica ({expected})"
            )
        if total < expected and count == len(order):
            raise AllocationError(
                f"specified subsets' replica ({total}) is less than UnitedDeployment replica ({expected})"
            )
    elif count != len(order):
        raise AllocationError("all subsets must be specified when UnitedDeployment replica is unspecified")
    out = {name: specified.get(name, current[name]) for name in current}
    left = [name for name in order if name not in specified]
    if left:
        average, remainder = divmod((expected or 0) - total, len(left))
        for name in reversed(left):
            out[name] = average + (1 if remainder > 0 else 0)
            remainder -= 1
    return out
