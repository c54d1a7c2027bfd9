"""CloneSet status as upstream serialises it (omitempty) and its kstatus conditions.

kstatus is computed by ``tests.support.kstatus`` (its documented algorithm), Argo CD's health by
its own script: both on the status :func:`status_to_write` produces.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from cloneset_builders import NOW
from cloneset_builders import cloneset as build
from tests.support.argocd import argocd_health
from tests.support.kstatus import CURRENT, FAILED, IN_PROGRESS, compute

from kruise.traffic.lua import run_lua
from kruise.workloads.cloneset.readiness import cloneset_health
from kruise.workloads.cloneset.status import OMIT_EMPTY, omit_empty, status_to_write


def cloneset(replicas: int, **kw: Any) -> dict[str, Any]:
    """As the defaulting webhook leaves it: ``partition`` defaults to 0 (Argo CD's script reads it)."""
    return build(replicas, **{"partition": 0, **kw})


def counters(replicas: int, updated: int, available: int, *, expected: int | None = None) -> dict[str, Any]:
    return {
        "observedGeneration": 2,
        "replicas": replicas,
        "readyReplicas": available,
        "availableReplicas": available,
        "updatedReplicas": updated,
        "updatedReadyReplicas": min(updated, available),
        "updatedAvailableReplicas": min(updated, available),
        "expectedUpdatedReplicas": replicas if expected is None else expected,
        "updateRevision": "web-new",
        "currentRevision": "web-new" if updated == replicas else "web-old",
        "labelSelector": "app=demo",
        "collisionCount": 0,
    }


def written(cs: dict[str, Any], new: dict[str, Any], old: dict[str, Any] | None = None) -> dict[str, Any]:
    """The object as it reads back after the controller wrote ``new`` (a merge patch of the status)."""
    patch = status_to_write(old or {}, new, {}, NOW, cloneset_health(cs, new))
    assert patch is not None
    status = {k: v for k, v in patch.items() if v is not None}
    cs["metadata"]["generation"] = 2
    return {"apiVersion": "apps.kruise.io/v1alpha1", "kind": "CloneSet", **cs, "status": status}


@pytest.mark.parametrize(
    ("cs", "new", "reason", "kstatus", "argocd"),
    [
        pytest.param(
            cloneset(5), counters(5, 5, 5), "Available", CURRENT, "Healthy", id="all updated and available"
        ),
        pytest.param(
            cloneset(5),
            counters(3, 3, 0),
            "LessReplicas",
            IN_PROGRESS,
            "Suspended",
            id="pods being created (none available: upstream's script says paused)",
        ),
        pytest.param(
            cloneset(3),
            counters(5, 5, 5, expected=3),
            "ExtraPods",
            IN_PROGRESS,
            "Healthy",
            id="scaling in (the script compares with status.replicas)",
        ),
        pytest.param(
            cloneset(5), counters(5, 2, 5), "LessUpdated", IN_PROGRESS, "Degraded", id="rolling update"
        ),
        pytest.param(
            cloneset(5),
            counters(5, 5, 3),
            "LessAvailable",
            IN_PROGRESS,
            "Degraded",
            id="updated, not yet available",
        ),
        pytest.param(
            cloneset(5, partition=3),
            counters(5, 2, 5, expected=2),
            "Partitioned",
            IN_PROGRESS,
            "Suspended",
            id="a canary step: the partition holds 3 pods",
        ),
        pytest.param(
            cloneset(5, paused=True),
            counters(5, 1, 5),
            "UpdatePaused",
            IN_PROGRESS,
            "Suspended",
            id="update paused",
        ),
        pytest.param(
            cloneset(0),
            counters(0, 0, 0),
            "Available",
            CURRENT,
            "Suspended",
            id="scaled to zero: Argo CD says Suspended, as for upstream's status",
        ),
    ],
)
def test_kstatus_and_argocd_read_the_written_status(
    cs: dict[str, Any], new: dict[str, Any], reason: str, kstatus: str, argocd: str
) -> None:
    obj = written(cs, new)
    ready = next(c for c in obj["status"]["conditions"] if c["type"] == "Ready")
    assert ready["reason"] == reason
    assert compute(obj) == kstatus
    assert argocd_health(obj)[0] == argocd


def test_a_partition_is_not_reconciling_but_not_ready_either() -> None:
    obj = written(cloneset(5, partition=3), counters(5, 2, 5, expected=2))
    types = {c["type"]: c["status"] for c in obj["status"]["conditions"]}
    assert types == {"Ready": "False"}, "the controller is done; the release is not"


def test_a_progress_deadline_exceeded_condition_stalls_it() -> None:
    cs = cloneset(5)
    cs["status"] = {
        "conditions": [{"type": "Progressing", "status": "False", "reason": "ProgressDeadlineExceeded"}]
    }
    assert compute(written(cs, counters(5, 2, 5))) == FAILED


def test_zero_and_empty_omitempty_fields_are_left_out_and_removed_by_the_patch() -> None:
    new = counters(0, 0, 0)
    new.update(updateRevision="web-new", currentRevision="", labelSelector="")
    shaped = omit_empty(new)
    assert "updatedAvailableReplicas" not in shaped and "expectedUpdatedReplicas" not in shaped
    assert "currentRevision" not in shaped and "labelSelector" not in shaped
    for required in (
        "replicas",
        "readyReplicas",
        "availableReplicas",
        "updatedReplicas",
        "updatedReadyReplicas",
    ):
        assert shaped[required] == 0, f"{required} has no omitempty upstream"
    assert shaped["collisionCount"] == 0, "a pointer upstream always sets"
    patch = status_to_write({"updatedAvailableReplicas": 3}, new, {}, NOW)
    assert patch is not None
    assert {k for k, v in patch.items() if v is None} >= {
        "updatedAvailableReplicas",
        "expectedUpdatedReplicas",
    }
    assert set(OMIT_EMPTY) <= set(patch), "every omitempty field is either written or removed"


def test_a_written_status_is_not_rewritten_while_nothing_changes() -> None:
    """The omitted zeros and the kstatus conditions compare equal to what was written."""
    for cs, new in (
        (cloneset(0), counters(0, 0, 0)),
        (cloneset(5, partition=3), counters(5, 2, 5, expected=2)),
    ):
        obj = written(cs, new)
        later = NOW.replace(hour=13)
        assert status_to_write(obj["status"], new, {}, later, cloneset_health(cs, new)) is None


def test_a_legacy_zero_counter_is_removed_once() -> None:
    cs, new = cloneset(0), counters(0, 0, 0)
    first = written(cs, new)
    legacy = {**first["status"], "updatedAvailableReplicas": 0, "expectedUpdatedReplicas": 0}
    patch = status_to_write(legacy, new, {}, NOW, cloneset_health(cs, new))
    assert patch is not None and patch["updatedAvailableReplicas"] is None


def test_the_ready_condition_keeps_its_transition_time_until_it_flips() -> None:
    cs = cloneset(5)
    obj = written(cs, counters(5, 5, 5))
    ready = next(c for c in obj["status"]["conditions"] if c["type"] == "Ready")
    later = NOW.replace(hour=14)
    moved = status_to_write(
        obj["status"],
        {**counters(5, 5, 5), "readyReplicas": 4},
        {},
        later,
        cloneset_health(cs, counters(5, 5, 5)),
    )
    assert moved is not None
    again = next(c for c in moved["conditions"] if c["type"] == "Ready")
    assert again["lastTransitionTime"] == ready["lastTransitionTime"]
    flipped = status_to_write(
        obj["status"], counters(5, 2, 5), {}, later, cloneset_health(cs, counters(5, 2, 5))
    )
    assert flipped is not None
    assert (
        next(c for c in flipped["conditions"] if c["type"] == "Ready")["lastTransitionTime"]
        != ready["lastTransitionTime"]
    )


def test_failure_conditions_stay_beside_the_kstatus_ones() -> None:
    cs, new = cloneset(5), counters(5, 2, 5)
    patch = status_to_write({}, new, {"FailedScale": "quota"}, NOW, cloneset_health(cs, new))
    assert patch is not None
    assert [c["type"] for c in patch["conditions"]] == ["FailedScale", "Ready", "Reconciling"]


DOC_SCRIPT = Path(__file__).resolve().parents[3] / "docs" / "argocd" / "kstatus-health.lua"


@pytest.mark.parametrize(
    ("cs", "new", "health"),
    [
        (cloneset(5), counters(5, 5, 5), "Healthy"),
        (cloneset(5), counters(3, 3, 0), "Progressing"),
        (cloneset(5), counters(5, 2, 5), "Progressing"),
        (cloneset(5, partition=3), counters(5, 2, 5, expected=2), "Suspended"),
        (cloneset(5, paused=True), counters(5, 1, 5), "Suspended"),
        (cloneset(0), counters(0, 0, 0), "Healthy"),
    ],
    ids=["done", "creating", "updating", "partitioned", "paused", "zero replicas"],
)
def test_the_documented_argocd_health_check(cs: dict[str, Any], new: dict[str, Any], health: str) -> None:
    """docs/argocd/kstatus-health.lua (docs/gitops.md) reads the kstatus conditions."""
    assert run_lua(DOC_SCRIPT.read_text(), written(cs, new))["status"] == health
