"""Reservation mode (upstream master's CheckPodReallyInReservedStatus and
calculateSubsetsStatusForReservedAdaptiveStrategy): which pods are reserved, the labels written,
when to look again, the raised maxUnavailable and what the status shows."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from kruise.workloads.api.uniteddeployment import RESERVED_POD_LABEL, UnitedDeployment
from kruise.workloads.uniteddeployment.allocation import Allocation, ObservedSubset, PodScheduling, allocate
from kruise.workloads.uniteddeployment.kinds import CLONESET, DEPLOYMENT, STATEFULSET
from kruise.workloads.uniteddeployment.reservation import (
    PodReservation,
    SubsetReservation,
    raised_max_unavailable,
    reserve,
    reserve_subsets,
)
from kruise.workloads.uniteddeployment.status import RoundOutcome, status_patch
from kruise.workloads.uniteddeployment.subsets import REVISION_LABEL

T0 = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)
CRITICAL, HOLD = 30, 300


def pending(
    name: str, created: datetime, *, marked: bool | None = None, revision: str = "r2"
) -> PodReservation:
    return PodReservation(name, PodScheduling(created=created), marked=marked, revision=revision)


def running(
    name: str, ready_since: datetime | None, *, marked: bool | None = True, revision: str = "r2"
) -> PodReservation:
    scheduling = PodScheduling(created=T0, pending=False, bound=True, unschedulable=False)
    return PodReservation(
        name, scheduling, marked=marked, revision=revision, running=True, ready_since=ready_since
    )


def assess(
    pods: list[PodReservation], *, marked: bool = False, updating_since: datetime | None = None, now: datetime
) -> Any:
    return reserve(
        pods,
        marked_unschedulable=marked,
        revision="r2",
        updating_since=updating_since,
        reschedule_critical_seconds=CRITICAL,
        unschedulable_seconds=HOLD,
        now=now,
    )


def test_a_pod_pending_past_the_critical_time_is_reserved_and_labelled() -> None:
    young, old = pending("young", T0 + timedelta(seconds=20)), pending("old", T0)
    found = assess([young, old], now=T0 + timedelta(seconds=31))
    assert found.reserved == 1 and found.update_timeout == 0
    assert found.labels == {"young": False, "old": True}, "a missing label is written either way"
    assert found.check_after == pytest.approx(19.0), "young times out 19 s later"
    again = assess(
        [pending("young", T0 + timedelta(seconds=20), marked=False), pending("old", T0, marked=True)],
        now=T0 + timedelta(seconds=31),
    )
    assert again.labels == {}, "labels already right are not rewritten"
    assert again.reserved == 1 and again.check_after == pytest.approx(19.0)


def test_a_reserved_pod_is_released_after_being_ready_for_the_unschedulable_duration() -> None:
    now = T0 + timedelta(hours=1)
    settled = running("settled", now - timedelta(seconds=HOLD + 1))
    recent = running("recent", now - timedelta(seconds=100))
    starting = running("starting", None)
    old_revision = running("stale", now - timedelta(hours=1), revision="r1")
    found = assess([settled, recent, starting, old_revision], now=now)
    assert found.reserved == 3
    assert found.labels == {"settled": False}
    assert found.check_after == pytest.approx(200.0), "recent leaves the reservation in 200 s"


def test_in_an_unschedulable_subset_new_pods_are_reserved_at_once() -> None:
    fresh = pending("fresh", T0)
    found = assess([fresh, pending("known", T0, marked=False)], marked=True, now=T0 + timedelta(seconds=1))
    assert found.reserved == 1 and found.labels == {"fresh": True}


def test_pods_of_an_old_revision_time_out_with_the_update() -> None:
    old = running("old", T0, marked=False, revision="r1")
    late = assess([old], updating_since=T0, now=T0 + timedelta(seconds=CRITICAL + 1))
    assert (late.reserved, late.update_timeout, late.labels) == (1, 1, {"old": True})
    early = assess([old], updating_since=T0, now=T0 + timedelta(seconds=10))
    assert (early.reserved, early.update_timeout, early.check_after) == (0, 0, pytest.approx(20.0))
    assert assess([old], updating_since=None, now=T0 + timedelta(hours=1)).reserved == 0, (
        "no update under way"
    )


def pod_dict(name: str, *, labels: dict[str, str], phase: str, ready_at: str | None = None) -> dict[str, Any]:
    conditions: list[dict[str, Any]] = [
        {"type": "PodScheduled", "status": "False", "reason": "Unschedulable"}
    ]
    if ready_at:
        conditions = [{"type": "Ready", "status": "True", "lastTransitionTime": ready_at}]
    return {
        "metadata": {"name": name, "labels": labels, "creationTimestamp": "2026-01-01T12:00:00Z"},
        "status": {"phase": phase, "conditions": conditions},
    }


def test_facts_are_read_from_the_pod() -> None:
    facts = PodReservation.of(
        pod_dict(
            "p",
            labels={RESERVED_POD_LABEL: "true", REVISION_LABEL: "r2"},
            phase="Running",
            ready_at="2026-01-01T12:05:00Z",
        )
    )
    assert (facts.name, facts.marked, facts.revision, facts.running) == ("p", True, "r2", True)
    assert facts.ready_since == datetime(2026, 1, 1, 12, 5, tzinfo=UTC)
    bare = PodReservation.of(pod_dict("q", labels={RESERVED_POD_LABEL: "no"}, phase="Pending"))
    assert bare.marked is False and bare.ready_since is None and bare.scheduling.unschedulable
    assert PodReservation.of(pod_dict("r", labels={}, phase="Pending")).marked is None


def reserving_ud(status: dict[str, Any] | None = None, reserve_pods: bool = True) -> UnitedDeployment:
    return UnitedDeployment.model_validate(
        {
            "spec": {
                "replicas": 4,
                "selector": {"matchLabels": {"app": "x"}},
                "topology": {
                    "subsets": [{"name": "a", "maxReplicas": 2}, {"name": "b"}],
                    "scheduleStrategy": {
                        "type": "Adaptive",
                        "adaptive": {
                            "reserveUnschedulablePods": reserve_pods,
                            "rescheduleCriticalSeconds": CRITICAL,
                        },
                    },
                },
            },
            "status": status or {},
        }
    )


def test_subsets_are_assessed_with_their_schedulable_condition_and_the_update_time() -> None:
    status = {
        "currentRevision": "r1",
        "conditions": [
            {
                "type": "UnitedDeploymentUpdated",
                "status": "False",
                "lastTransitionTime": "2026-01-01T12:00:00Z",
            }
        ],
        "subsetStatuses": [
            {"name": "a", "conditions": [{"type": "Schedulable", "status": "False", "reason": "reschedule"}]},
            {"name": "b"},
        ],
    }
    ud = reserving_ud(status)
    pods = {"a": [pending("a-new", T0)], "b": [running("b-old", T0, marked=False, revision="r1")]}
    found = reserve_subsets(ud, pods, "r2", T0 + timedelta(seconds=CRITICAL + 1))
    assert found["a"].labels == {"a-new": True}, "a is marked unschedulable: new pods reserved at once"
    assert (found["b"].reserved, found["b"].update_timeout) == (1, 1), "the update started at T0"
    assert reserve_subsets(reserving_ud(status, reserve_pods=False), pods, "r2", T0) == {}


def test_unschedulable_subsets_get_a_raised_max_unavailable_written_where_each_kind_keeps_it() -> None:
    found = {"a": SubsetReservation(reserved=2, update_timeout=1), "b": SubsetReservation()}
    assert raised_max_unavailable({"a": 3, "b": 2}, {"a": 1, "b": 2}, frozenset({"a"}), found) == {"a": 3}
    spec: dict[str, Any] = {"updateStrategy": {"partition": 1}}
    CLONESET.set_max_unavailable(spec, 3)
    assert spec == {"updateStrategy": {"partition": 1, "maxUnavailable": 3}}
    assert CLONESET.read_max_unavailable({"spec": spec}) == 3
    assert STATEFULSET.read_max_unavailable({"spec": {}}) is None
    sts: dict[str, Any] = {}
    STATEFULSET.set_max_unavailable(sts, 2)
    assert sts == {"updateStrategy": {"rollingUpdate": {"maxUnavailable": 2}}}
    deployment: dict[str, Any] = {"strategy": {"type": "RollingUpdate"}}
    DEPLOYMENT.set_max_unavailable(deployment, 1)
    assert deployment == {"strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 1}}}


def test_status_counts_reserved_pods_apart_and_the_selector_skips_them() -> None:
    body = reserving_ud().to_dict()
    body["metadata"] = {"name": "web", "generation": 1}
    workloads = {
        "a": {"status": {"replicas": 2, "readyReplicas": 0}},
        "b": {"status": {"replicas": 4, "readyReplicas": 4}},
    }
    new = status_patch(
        body,
        workloads,
        {},
        Allocation(replicas={"a": 2, "b": 4}),
        {},
        "r1",
        0,
        RoundOutcome(),
        T0,
        {"a": 2, "b": 0},
    )
    assert new is not None
    assert (new["replicas"], new["reservedPods"]) == (4, 2)
    assert new["subsetStatuses"][0]["reservedPods"] == 2 and "reservedPods" not in new["subsetStatuses"][1]
    assert new["labelSelector"] == f"app=x,{RESERVED_POD_LABEL}=false"
    plain = status_patch(
        body | {"spec": {**body["spec"], "topology": {"subsets": []}}},
        {},
        {},
        Allocation(replicas={}),
        {},
        "r1",
        0,
        RoundOutcome(),
        T0,
    )
    assert plain is not None and plain["labelSelector"] == "app=x" and "reservedPods" not in plain


def test_a_subset_added_to_the_topology_starts_unschedulable() -> None:
    ud = reserving_ud({"subsetStatuses": [{"name": "a"}]})
    decided = allocate(ud, {"a": ObservedSubset(replicas=2, status_replicas=2, ready_replicas=2)}, T0)
    condition = decided.schedulable["b"]
    assert (condition.status, condition.reason, condition.message) == (
        "False",
        "created",
        "newly-created subsets in reservation strategy",
    )
    fresh = allocate(reserving_ud(), {}, T0)
    assert fresh.schedulable == {}, "a new UnitedDeployment has no subset statuses yet: none created"
