"""PodUnavailableBudget arithmetic: available pods, int-or-percent rounding, expiry, spending."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kruise.core.api.base import IntOrPercentError, format_time
from kruise.workloads.api.podunavailablebudget import PubSpecView, PubStatusView
from kruise.workloads.podunavailablebudget.budget import (
    BudgetRefused,
    Operation,
    decide_status,
    desired_available,
    exempt,
    is_pod_available,
    is_protected,
    prune_records,
    spend,
)

NOW = datetime(2026, 1, 1, 12, 0, 0, tzinfo=UTC)
JSON = dict[str, Any]


def pod(name: str, *, ready: bool = True, phase: str = "Running", **meta: Any) -> JSON:
    return {
        "metadata": {"name": name, "namespace": "ns", **meta},
        "spec": {"containers": [{"name": "app", "image": "nginx:1"}]},
        "status": {
            "phase": phase,
            "conditions": [{"type": "Ready", "status": "True" if ready else "False"}],
            "containerStatuses": [{"name": "app", "image": "nginx:1", "imageID": "sha256:aaa"}],
        },
    }


@pytest.mark.parametrize(
    ("budget", "expected", "desired"),
    [
        pytest.param({"maxUnavailable": 1}, 5, 4, id="max-int"),
        pytest.param({"maxUnavailable": "25%"}, 10, 7, id="max-percent-rounds-the-unavailable-up"),
        pytest.param({"maxUnavailable": "50%"}, 3, 1, id="max-50pct-of-3-allows-2"),
        pytest.param({"maxUnavailable": 8}, 5, 0, id="max-above-total-never-negative"),
        pytest.param({"minAvailable": 3}, 5, 3, id="min-int"),
        pytest.param({"minAvailable": 7}, 5, 7, id="min-int-above-total-kept"),
        pytest.param({"minAvailable": "25%"}, 10, 3, id="min-percent-rounds-up"),
        pytest.param({"minAvailable": "100%"}, 4, 4, id="min-100pct"),
        pytest.param({"maxUnavailable": 1, "minAvailable": 5}, 5, 4, id="max-wins-over-min"),
        pytest.param({}, 5, 0, id="no-budget-allows-all"),
    ],
)
def test_desired_available(budget: PubSpecView, expected: int, desired: int) -> None:
    assert desired_available(budget, expected) == desired


def test_malformed_percent_raises() -> None:
    with pytest.raises(IntOrPercentError):
        desired_available({"maxUnavailable": "ten"}, 5)


@given(st.integers(0, 100), st.integers(0, 500))
def test_max_unavailable_percent_never_leaves_fewer_than_floor(percent: int, total: int) -> None:
    desired = desired_available({"maxUnavailable": f"{percent}%"}, total)
    assert 0 <= desired <= total
    assert desired == total - -(-percent * total // 100)


@pytest.mark.parametrize(
    ("candidate", "available"),
    [
        pytest.param(pod("a"), True, id="running-and-ready"),
        pytest.param(pod("a", ready=False), False, id="not-ready"),
        pytest.param(pod("a", phase="Pending"), False, id="not-running"),
        pytest.param(pod("a", deletionTimestamp="2026-01-01T00:00:00Z"), False, id="terminating"),
        pytest.param(
            pod("a", labels={"unavailable-pod.kruise.io/drain": "x"}), False, id="unavailable-label"
        ),
        pytest.param(
            pod("a", annotations={"apps.kruise.io/inplace-update-grace": "{}"}),
            False,
            id="in-place-grace-pending",
        ),
    ],
)
def test_pod_available(candidate: JSON, available: bool) -> None:
    assert is_pod_available(candidate) is available


def test_digest_image_must_match_the_running_digest() -> None:
    p = pod("a")
    p["spec"]["containers"][0]["image"] = "nginx@sha256:bbb"
    p["status"]["containerStatuses"][0]["imageID"] = "docker.io/nginx@sha256:aaa"
    assert not is_pod_available(p)
    p["status"]["containerStatuses"][0]["imageID"] = "docker.io/nginx@sha256:bbb"
    assert is_pod_available(p)


def test_records_expire_as_upstream() -> None:
    status: PubStatusView = {
        "disruptedPods": {
            "fresh": format_time(NOW - timedelta(seconds=5)),
            "stale": format_time(NOW - timedelta(seconds=21)),
            "gone": format_time(NOW),
        },
        "unavailablePods": {
            "updating": format_time(NOW - timedelta(seconds=9)),
            "settled": format_time(NOW - timedelta(seconds=11)),
        },
    }
    pods = [pod("fresh"), pod("stale"), pod("updating"), pod("settled")]
    records = prune_records(pods, status, NOW)
    assert set(records.disrupted) == {"fresh"}
    assert set(records.unavailable) == {"updating"}
    assert records.not_deleted == ("stale",)
    assert records.recheck_at == NOW + timedelta(seconds=1)  # "updating" expires first


def test_status_counts_recorded_pods_as_unavailable() -> None:
    pods = [pod("a"), pod("b"), pod("c"), pod("d", ready=False)]
    current: PubStatusView = {"disruptedPods": {"a": format_time(NOW)}}
    status, _ = decide_status({"maxUnavailable": 1}, 3, pods, 4, current, NOW)
    assert status == {
        "observedGeneration": 3,
        "unavailableAllowed": 0,
        "currentAvailable": 2,
        "desiredAvailable": 3,
        "totalReplicas": 4,
        "disruptedPods": {"a": format_time(NOW)},
    }
    status, _ = decide_status({"maxUnavailable": 2}, 3, pods, 4, {}, NOW)
    assert (status["currentAvailable"], status["unavailableAllowed"]) == (3, 1)
    assert "disruptedPods" not in status


def test_spend_takes_one_unit_and_records_the_pod() -> None:
    status: PubStatusView = {"unavailableAllowed": 1, "currentAvailable": 3}
    after = spend(status, "web-1", Operation.DELETE, NOW)
    assert after["unavailableAllowed"] == 0
    assert after["disruptedPods"] == {"web-1": "2026-01-01T12:00:00Z"}
    assert "unavailablePods" not in after
    updated = spend(status, "web-2", Operation.UPDATE, NOW)
    assert updated["unavailablePods"] == {"web-2": "2026-01-01T12:00:00Z"}
    with pytest.raises(BudgetRefused, match=r"^pub unavailable allowed is negative$"):
        spend(after, "web-3", Operation.EVICT, NOW)


def test_spend_refuses_past_the_record_limit() -> None:
    many = {f"p{i}": format_time(NOW) for i in range(2001)}
    with pytest.raises(BudgetRefused, match="map too big"):
        spend({"unavailableAllowed": 5, "disruptedPods": many}, "x", Operation.DELETE, NOW)


@pytest.mark.parametrize(
    ("annotation", "operation", "protected"),
    [
        (None, Operation.UPDATE, True),
        ("", Operation.DELETE, True),
        ("EVICT", Operation.DELETE, False),
        ("EVICT", Operation.EVICT, True),
        ("DELETE,UPDATE", Operation.UPDATE, True),
    ],
)
def test_protected_operations(annotation: str | None, operation: Operation, protected: bool) -> None:
    annotations = {} if annotation is None else {"kruise.io/pub-protect-operations": annotation}
    assert is_protected(annotations, operation) is protected


def test_no_protect_and_unready_pods_are_exempt() -> None:
    assert exempt(pod("a", annotations={"pub.kruise.io/no-protect": "true"}))
    assert exempt(pod("a", ready=False))
    assert not exempt(pod("a"))
