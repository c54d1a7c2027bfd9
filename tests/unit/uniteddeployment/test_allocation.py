"""The pure core over time: Adaptive moves pods out of a subset whose pods stay unschedulable past
``rescheduleCriticalSeconds`` and lets them back ``unschedulableDuration`` after, and the
allocation's invariants hold for any topology (Hypothesis)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from kruise.workloads.api.uniteddeployment import UnitedDeployment
from kruise.workloads.pods import PodScheduling
from kruise.workloads.uniteddeployment.allocation import ObservedSubset, allocate
from kruise.workloads.uniteddeployment.allocator import AllocationError, parse_subset_replicas

T0 = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)


def adaptive_ud(
    adaptive: dict[str, Any] | None = None, status: dict[str, Any] | None = None
) -> UnitedDeployment:
    body: dict[str, Any] = {
        "spec": {
            "replicas": 4,
            "selector": {"matchLabels": {"app": "x"}},
            "topology": {
                "subsets": [{"name": "a", "maxReplicas": 2}, {"name": "b"}, {"name": "c"}],
                "scheduleStrategy": {"type": "Adaptive", **({"adaptive": adaptive} if adaptive else {})},
            },
        },
        "status": status or {"subsetStatuses": [{"name": "a"}, {"name": "b"}, {"name": "c"}]},
    }
    return UnitedDeployment.model_validate(body)


def stuck(created: datetime, count: int) -> tuple[PodScheduling, ...]:
    return tuple(PodScheduling(created=created) for _ in range(count))


def test_pending_pods_move_only_after_the_critical_seconds() -> None:
    ud = adaptive_ud({"rescheduleCriticalSeconds": 10})
    observed = {
        "a": ObservedSubset(replicas=2, status_replicas=2, ready_replicas=2),
        "b": ObservedSubset(replicas=2, status_replicas=2, ready_replicas=0, pods=stuck(T0, 2)),
    }
    early = allocate(ud, observed, T0 + timedelta(seconds=4))
    assert early.replicas == {"a": 2, "b": 2, "c": 0}
    assert early.schedulable == {}
    assert early.requeue_after == 6.0  # when the pods reach the critical age

    late = allocate(ud, observed, T0 + timedelta(seconds=11))
    assert late.replicas == {"a": 2, "b": 0, "c": 2}
    assert late.unschedulable == {"b"}
    cond = late.schedulable["b"]
    assert (cond.type, cond.status, cond.reason, cond.message) == (
        "Schedulable",
        "False",
        "reschedule",
        "timeout pending pods found",
    )
    assert cond.last_transition_time == T0 + timedelta(seconds=11)
    assert late.requeue_after == 300.0


def test_unschedulable_subset_gets_pods_back_after_the_duration() -> None:
    since = T0
    status = {
        "subsetStatuses": [
            {"name": "a"},
            {
                "name": "b",
                "conditions": [
                    {
                        "type": "Schedulable",
                        "status": "False",
                        "reason": "reschedule",
                        "lastTransitionTime": since,
                    }
                ],
            },
            {"name": "c"},
        ]
    }
    ud = adaptive_ud({"unschedulableDuration": 60}, status)
    observed = {
        "a": ObservedSubset(replicas=2, status_replicas=2, ready_replicas=2),
        "b": ObservedSubset(replicas=0),
        "c": ObservedSubset(replicas=2, status_replicas=2, ready_replicas=2),
    }
    held = allocate(ud, observed, since + timedelta(seconds=59))
    assert held.replicas == {"a": 2, "b": 0, "c": 2}
    assert held.schedulable == {}
    assert held.requeue_after == 1.0

    back = allocate(ud, observed, since + timedelta(seconds=61))
    # recovered: b is schedulable again; c's ready pods stay where they run
    assert back.unschedulable == frozenset()
    cond = back.schedulable["b"]
    assert (cond.status, cond.reason, cond.message) == (
        "True",
        "recover",
        "unschedulable subset recovered after 60.000000 seconds",
    )
    assert back.replicas == {"a": 2, "b": 0, "c": 2}
    ud_scaled = adaptive_ud({"unschedulableDuration": 60}, status)
    ud_scaled.spec.replicas = 6
    assert allocate(ud_scaled, observed, since + timedelta(seconds=61)).replicas == {"a": 2, "b": 2, "c": 2}


def test_v18_unschedulable_last_seconds_is_honoured() -> None:
    status = {
        "subsetStatuses": [
            {
                "name": "a",
                "conditions": [{"type": "Schedulable", "status": "False", "lastTransitionTime": T0}],
            }
        ]
    }
    ud = adaptive_ud({"unschedulableLastSeconds": 30}, status)
    observed = {"a": ObservedSubset(replicas=0)}
    assert allocate(ud, observed, T0 + timedelta(seconds=29)).unschedulable == {"a"}
    assert allocate(ud, observed, T0 + timedelta(seconds=31)).unschedulable == frozenset()


def test_bound_deleting_or_merely_pending_pods_do_not_count() -> None:
    ud = adaptive_ud()
    late = T0 + timedelta(hours=1)
    pods = (
        PodScheduling(created=T0, bound=True),
        PodScheduling(created=T0, deleting=True),
        PodScheduling(created=T0, unschedulable=False),
        PodScheduling(created=T0, pending=False),
    )
    observed = {"b": ObservedSubset(replicas=4, status_replicas=4, ready_replicas=0, pods=pods)}
    assert allocate(ud, observed, late).unschedulable == frozenset()


def test_pod_scheduling_reads_the_api_object() -> None:
    pod = {
        "metadata": {"name": "p", "creationTimestamp": "2026-01-01T12:00:00Z"},
        "spec": {},
        "status": {
            "phase": "Pending",
            "conditions": [{"type": "PodScheduled", "status": "False", "reason": "Unschedulable"}],
        },
    }
    view = PodScheduling.of(pod)
    assert view == PodScheduling(created=T0, pending=True, bound=False, deleting=False, unschedulable=True)
    assert view.pending_timeout(timedelta(seconds=30), T0 + timedelta(seconds=31)) == (True, None)
    assert view.pending_timeout(timedelta(seconds=30), T0 + timedelta(seconds=30)) == (False, timedelta(0))


# --- properties ----------------------------------------------------------------------------

bound_values = st.one_of(st.none(), st.integers(0, 30), st.integers(0, 100).map(lambda p: f"{p}%"))


@st.composite
def elastic_topologies(draw: st.DrawFn) -> tuple[UnitedDeployment, dict[str, ObservedSubset]]:
    count = draw(st.integers(1, 5))
    replicas = draw(st.integers(0, 60))
    subsets: list[dict[str, Any]] = []
    for index in range(count):
        subset: dict[str, Any] = {"name": f"s{index}"}
        low, high = draw(bound_values), draw(bound_values)
        if low is not None:
            subset["minReplicas"] = low
        if high is not None and index < count - 1:  # at least one subset unbounded, as the webhook asks
            subset["maxReplicas"] = high
        subsets.append(subset)
    adaptive = draw(st.booleans())
    topology: dict[str, Any] = {"subsets": subsets}
    if adaptive:
        topology["scheduleStrategy"] = {"type": "Adaptive"}
    ud = UnitedDeployment.model_validate(
        {"spec": {"replicas": replicas, "selector": {"matchLabels": {"a": "b"}}, "topology": topology}}
    )
    observed = {}
    for subset in subsets:
        if draw(st.booleans()):
            have = draw(st.integers(0, 20))
            observed[subset["name"]] = ObservedSubset(
                replicas=have, status_replicas=have, ready_replicas=draw(st.integers(0, have))
            )
    return ud, observed


def _max_of(ud: UnitedDeployment, name: str) -> int | None:
    assert ud.spec.topology is not None and ud.spec.topology.subsets is not None
    subset = next(s for s in ud.spec.topology.subsets if s.name == name)
    if subset.max_replicas is None:
        return None
    return parse_subset_replicas(ud.spec.replicas or 0, subset.max_replicas)


@given(elastic_topologies())
def test_fixed_elastic_allocation_sums_to_replicas_within_bounds(world: tuple[UnitedDeployment, Any]) -> None:
    ud, observed = world
    try:
        result = allocate(ud, observed, T0)
    except AllocationError as err:
        assert "must be more than or equal to minReplicas" in str(err)
        return
    assert ud.spec.topology is not None and ud.spec.topology.subsets is not None
    assert list(result.replicas) == [s.name for s in ud.spec.topology.subsets]
    assert all(n >= 0 for n in result.replicas.values())
    if ud.spec.topology.schedule_strategy is None:  # adaptive keeps ready pods, which may exceed replicas
        assert sum(result.replicas.values()) == ud.spec.replicas
    for name, value in result.replicas.items():
        ceiling = _max_of(ud, name)
        assert ceiling is None or value <= ceiling


@given(elastic_topologies())
def test_a_stable_world_allocates_the_same_twice(world: tuple[UnitedDeployment, Any]) -> None:
    ud, observed = world
    try:
        first = allocate(ud, observed, T0)
    except AllocationError:
        return
    assert allocate(ud, observed, T0) == first


@given(st.lists(st.integers(0, 20), min_size=1, max_size=6), st.integers(0, 100))
def test_specific_allocation_sums_to_replicas(current: list[int], replicas: int) -> None:
    subsets = [{"name": f"s{i}"} for i in range(len(current))]
    ud = UnitedDeployment.model_validate(
        {"spec": {"replicas": replicas, "selector": {}, "topology": {"subsets": subsets}}}
    )
    observed = {f"s{i}": ObservedSubset(replicas=n) for i, n in enumerate(current)}
    result = allocate(ud, observed, T0).replicas
    assert sum(result.values()) == replicas
    assert max(result.values()) - min(result.values()) <= 1


@given(st.lists(st.integers(0, 20), min_size=1, max_size=6), st.integers(0, 100))
def test_specific_allocation_is_a_fixpoint_once_applied(current: list[int], replicas: int) -> None:
    """Applying the allocation and deciding again changes nothing (no pods shuffled between subsets)."""
    subsets = [{"name": f"s{i}"} for i in range(len(current))]
    ud = UnitedDeployment.model_validate(
        {"spec": {"replicas": replicas, "selector": {}, "topology": {"subsets": subsets}}}
    )
    first = allocate(ud, {f"s{i}": ObservedSubset(replicas=n) for i, n in enumerate(current)}, T0).replicas
    applied = {name: ObservedSubset(replicas=n) for name, n in first.items()}
    assert allocate(ud, applied, T0).replicas == first
