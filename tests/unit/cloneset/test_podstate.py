from __future__ import annotations

from datetime import timedelta

import pytest
from cloneset_builders import NEW, NOW, OLD, pod

from kruise.workloads.cloneset.podstate import (
    is_cloneset_available,
    is_pod_update_ready,
)
from kruise.workloads.pods import (
    deletion_cost,
    equal_to_revision_hash,
    has_unavailable_label,
    is_active,
    is_available,
    is_pod_update,
    is_ready,
    is_specified_delete,
    lifecycle_state,
    max_container_restarts,
    ready_time,
)


def test_active_excludes_finished_and_terminating_pods() -> None:
    assert is_active(pod())
    assert not is_active(pod(phase="Succeeded"))
    assert not is_active(pod(phase="Failed"))
    terminating = pod()
    terminating["metadata"]["deletionTimestamp"] = "2024-05-01T12:00:00Z"
    assert not is_active(terminating)


@pytest.mark.parametrize(
    ("ready_for", "min_ready", "expected"),
    [
        pytest.param(timedelta(seconds=5), 0, True, id="ready is enough without minReadySeconds"),
        pytest.param(timedelta(seconds=5), 30, False, id="ready 5s is not available with minReadySeconds 30"),
        pytest.param(timedelta(seconds=30), 30, False, id="exactly minReadySeconds is not yet available"),
        pytest.param(timedelta(seconds=31), 30, True, id="past minReadySeconds is available"),
    ],
)
def test_availability_honours_min_ready_seconds(ready_for: timedelta, min_ready: int, expected: bool) -> None:
    assert is_available(pod(ready_since=NOW - ready_for), min_ready, NOW) is expected


def test_not_ready_is_never_available() -> None:
    assert not is_available(pod(ready=False), 0, NOW)
    assert ready_time(pod(ready=False)) is None


def test_update_ready_needs_running_ready_and_in_place_ready_not_false() -> None:
    assert is_pod_update_ready(pod(), 0, NOW)
    assert is_pod_update_ready(pod(in_place_ready=True), 0, NOW)
    assert not is_pod_update_ready(pod(in_place_ready=False), 0, NOW)
    assert not is_pod_update_ready(pod(phase="Pending"), 0, NOW)
    assert is_ready(pod(phase="Pending"))  # readiness alone ignores the phase


@pytest.mark.parametrize(
    ("state", "expected"),
    [
        pytest.param(None, True, id="no lifecycle label counts as available"),
        pytest.param("Normal", True, id="Normal counts as available"),
        pytest.param("PreparingNormal", False, id="PreparingNormal is not available"),
        pytest.param("Updating", False, id="Updating is not available"),
        pytest.param("PreparingDelete", False, id="PreparingDelete is not available"),
    ],
)
def test_cloneset_availability_requires_normal_lifecycle(state: str | None, expected: bool) -> None:
    assert is_cloneset_available(pod(state=state), 0, NOW) is expected
    assert lifecycle_state(pod(state=state)) == (state or "")


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        pytest.param(None, 0, id="absent cost is 0"),
        pytest.param("100", 100, id="positive cost"),
        pytest.param("-5", -5, id="negative cost"),
        pytest.param("0", 0, id="zero cost"),
        pytest.param("+10", 0, id="leading plus is invalid"),
        pytest.param("008", 0, id="leading zeros are invalid"),
        pytest.param("abc", 0, id="non numeric is invalid"),
        pytest.param("2147483648", 0, id="beyond int32 is invalid"),
    ],
)
def test_deletion_cost(value: str | None, expected: int) -> None:
    annotations = {} if value is None else {"controller.kubernetes.io/pod-deletion-cost": value}
    assert deletion_cost(pod(annotations=annotations)) == expected


def test_revision_hash_compares_full_and_short_forms() -> None:
    assert equal_to_revision_hash(pod(NEW), NEW)
    assert equal_to_revision_hash(pod("newhash"), NEW)  # CloneSetShortHash pods
    assert not equal_to_revision_hash(pod(OLD), NEW)


def test_preparing_update_counts_as_updated_only_with_the_gate() -> None:
    preparing = pod(OLD, state="PreparingUpdate")
    assert not is_pod_update(preparing, NEW)
    assert is_pod_update(preparing, NEW, preparing_update_as_update=True)


def test_labels_for_specified_delete_and_unavailable() -> None:
    assert is_specified_delete(pod(specified_delete=True))
    assert is_specified_delete(pod(labels={"apps.kruise.io/specified-delete": ""}))
    assert not is_specified_delete(pod())
    assert has_unavailable_label(pod(labels={"unavailable-pod.kruise.io/maintenance": "true"}))
    assert not has_unavailable_label(pod())


def test_max_container_restarts() -> None:
    assert max_container_restarts(pod()) == 0
    assert max_container_restarts(pod(restarts=4)) == 4
