"""Adaptive rescheduling (upstream ``rescheduleSubset`` / ``PodUnscheduledTimeout``): which pods
are schedule-failed, the subsets' ``Schedulable`` condition, the 5-minute recovery, the last
subset, and the condition removed without ``rescheduleCriticalSeconds``."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from kruise.workloads.api.workloadspread import SubsetStatusView
from kruise.workloads.workloadspread.reschedule import MAX_SCHEDULED_FAILED, critical_seconds, reschedule

NOW = datetime(2026, 12, 4, 12, 0, 0, tzinfo=UTC)
JSON = dict[str, Any]


def stamp(t: datetime) -> str:
    return t.strftime("%Y-%m-%dT%H:%M:%SZ")


def pod(name: str, age: float, *, unschedulable: bool = True, node: str = "", phase: str = "Pending") -> JSON:
    conditions = (
        [{"type": "PodScheduled", "status": "False", "reason": "Unschedulable"}] if unschedulable else []
    )
    return {
        "metadata": {"name": name, "creationTimestamp": stamp(NOW - timedelta(seconds=age))},
        "spec": {"nodeName": node} if node else {},
        "status": {"phase": phase, "conditions": conditions},
    }


def status(name: str, condition: JSON | None = None) -> SubsetStatusView:
    out: SubsetStatusView = {"name": name, "replicas": 0, "missingReplicas": -1}
    if condition is not None:
        out["conditions"] = [condition]  # type: ignore[list-item]
    return out


def schedulable(s: SubsetStatusView) -> tuple[str, str, str] | None:
    for c in s.get("conditions") or []:
        if c.get("type") == "Schedulable":
            return (str(c.get("status")), str(c.get("reason")), str(c.get("lastTransitionTime")))
    return None


def test_critical_seconds_only_under_adaptive() -> None:
    assert (
        critical_seconds(
            {"scheduleStrategy": {"type": "Fixed", "adaptive": {"rescheduleCriticalSeconds": 5}}}
        )
        == 0
    )
    assert critical_seconds({"scheduleStrategy": {"type": "Adaptive"}}) == 0
    assert (
        critical_seconds(
            {"scheduleStrategy": {"type": "Adaptive", "adaptive": {"rescheduleCriticalSeconds": 5}}}
        )
        == 5
    )


def test_a_pod_unschedulable_past_the_critical_seconds_fails_its_subset() -> None:
    pods = {
        "a": [
            pod("old", 31),
            pod("young", 10),
            pod("bound", 60, node="n1"),
            pod("waiting", 60, unschedulable=False),
        ],
        "b": [pod("also-old", 60)],  # the last subset is never rescheduled
    }
    out = reschedule([status("a"), status("b")], pods, 30, NOW)
    assert out.failed == {"a": ["old"]}
    assert schedulable(out.statuses[0]) == ("False", "PodUnschedulable", stamp(NOW))
    assert schedulable(out.statuses[1]) == ("True", "Sufficient", stamp(NOW))
    assert out.check_after == 20  # the young pod times out in 20 s


def test_an_unschedulable_subset_recovers_after_five_minutes() -> None:
    since = NOW - MAX_SCHEDULED_FAILED + timedelta(seconds=30)
    failed = {
        "type": "Schedulable",
        "status": "False",
        "reason": "PodUnschedulable",
        "lastTransitionTime": stamp(since),
    }
    out = reschedule([status("a", failed), status("b")], {}, 30, NOW)
    assert schedulable(out.statuses[0]) == ("False", "PodUnschedulable", stamp(since))
    assert out.recovered == [] and out.check_after == 30
    later = reschedule([status("a", failed), status("b")], {}, 30, NOW + timedelta(seconds=31))
    assert schedulable(later.statuses[0]) == ("True", "Sufficient", stamp(NOW + timedelta(seconds=31)))
    assert later.recovered == ["a"]


def test_an_unchanged_condition_keeps_its_time() -> None:
    earlier = stamp(NOW - timedelta(hours=1))
    ok = {"type": "Schedulable", "status": "True", "reason": "Sufficient", "lastTransitionTime": earlier}
    out = reschedule([status("a", ok), status("b", ok)], {}, 30, NOW)
    assert [schedulable(s) for s in out.statuses] == [("True", "Sufficient", earlier)] * 2


def test_without_critical_seconds_the_condition_goes() -> None:
    ok = {
        "type": "Schedulable",
        "status": "False",
        "reason": "PodUnschedulable",
        "lastTransitionTime": stamp(NOW),
    }
    out = reschedule([status("a", ok), status("b")], {"a": [pod("old", 600)]}, 0, NOW)
    assert [schedulable(s) for s in out.statuses] == [None, None]
    assert out.failed == {} and "conditions" not in out.statuses[0]
