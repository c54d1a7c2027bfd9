"""``rollout status`` of a Rollout (pure parts): when it ends, with what, and what it shows."""

from __future__ import annotations

from typing import Any

import pytest

from kruise.rollouts.cli.status_view import degraded_reason, final_line, finished_exit_code, progress_of
from kruise.rollouts.rollout.outcome import Outcome, release_outcome


def rollout(status: dict[str, Any], generation: int = 2) -> dict[str, Any]:
    return {
        "metadata": {"name": "web", "generation": generation},
        "spec": {
            "workloadRef": {"apiVersion": "apps.kruise.io/v1alpha1", "kind": "CloneSet", "name": "gone"}
        },
        "status": status,
    }


NOT_FOUND = {"observedGeneration": 2, "phase": "Initial", "message": "Workload Not Found"}


@pytest.mark.parametrize(
    ("status", "missing", "expected"),
    [
        pytest.param(NOT_FOUND, True, "Workload Not Found: CloneSet gone", id="reported and missing"),
        pytest.param(NOT_FOUND, False, "", id="the workload appeared since: wait"),
        pytest.param({**NOT_FOUND, "observedGeneration": 1}, True, "", id="an older generation's status"),
        pytest.param({}, True, "", id="no controller has looked yet: wait"),
        pytest.param(
            {"observedGeneration": 2, "phase": "Healthy", "message": "rollout is healthy"},
            True,
            "",
            id="healthy",
        ),
    ],
)
def test_a_missing_workload_is_degraded_only_when_the_rollout_says_so(
    status: dict[str, Any], missing: bool, expected: str
) -> None:
    assert degraded_reason(rollout(status), workload_missing=missing) == expected


def test_degraded_ends_the_watch_with_exit_1_and_says_why() -> None:
    ro = rollout(NOT_FOUND)
    assert release_outcome(ro) is Outcome.PENDING  # the outcome alone would wait forever
    waiting = progress_of(ro, release_outcome(ro))
    assert finished_exit_code(waiting) is None
    degraded = progress_of(ro, release_outcome(ro), degraded=degraded_reason(ro, workload_missing=True))
    assert finished_exit_code(degraded) == 1
    assert final_line(degraded) == 'rollout "web" is degraded: Workload Not Found: CloneSet gone'


@pytest.mark.parametrize(
    ("outcome", "code"),
    [
        (Outcome.SUCCEEDED, 0),
        (Outcome.IDLE, 0),
        (Outcome.FAILED, 1),
        (Outcome.CANCELLED, 1),
        (Outcome.PAUSED, None),
    ],
)
def test_outcomes_keep_their_exit_codes(outcome: Outcome, code: int | None) -> None:
    assert finished_exit_code(progress_of(rollout({}), outcome)) == code
