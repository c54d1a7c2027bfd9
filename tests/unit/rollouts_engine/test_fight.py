"""GitOps fight detection (pure): what was reverted, by whom, and the capped re-assert backoff."""

from __future__ import annotations

import itertools
from typing import Any

import pytest

from kruise.rollouts.workloads.fight import (
    CAP_SECONDS,
    HOLD_SECONDS,
    UNKNOWN_WRITER,
    Revert,
    conflict_conditions,
    delay,
    field_writer,
    judge,
    same,
    spec_leaves,
    step,
    template_key,
)

PARTITION = ("spec", "updateStrategy", "partition")
PAUSED = ("spec", "updateStrategy", "paused")
OURS = "kruise-manager"


def managed(manager: str, time: str, *leaves: str, operation: str = "Apply") -> dict[str, Any]:
    strategy = {f"f:{leaf}": {} for leaf in leaves}
    return {
        "manager": manager,
        "operation": operation,
        "time": time,
        "fieldsType": "FieldsV1",
        "fieldsV1": {"f:spec": {"f:updateStrategy": strategy, "f:replicas": {}}},
    }


def cloneset(
    partition: Any, paused: Any = None, fields: list[dict[str, Any]] | None = None
) -> dict[str, Any]:
    strategy: dict[str, Any] = {"partition": partition}
    if paused is not None:
        strategy["paused"] = paused
    return {
        "metadata": {"name": "echo", "managedFields": fields or []},
        "spec": {"replicas": 5, "updateStrategy": strategy, "template": {"metadata": {"labels": {"a": "b"}}}},
    }


def test_spec_leaves_keep_spec_scalars_only() -> None:
    patch = {
        "metadata": {"annotations": {"x": "y"}, "resourceVersion": "7"},
        "spec": {"updateStrategy": {"partition": "80%", "paused": False}, "list": [1]},
    }
    assert spec_leaves(patch) == {PARTITION: "80%", PAUSED: False}
    assert spec_leaves(None) == {} == spec_leaves({"metadata": {"a": 1}})


@pytest.mark.parametrize(
    ("wanted", "live", "equal"),
    [
        (4, 4, True),
        (4, 5, False),
        ("80%", "80%", True),
        ("80%", 4, False),
        (None, 0, True),  # a cleared partition defaults to 0
        (None, "0%", True),
        (None, None, True),
        (False, None, True),  # not paused
        (False, True, False),
        (True, 1, False),
        (4, "4", False),
    ],
)
def test_same_reads_values_as_the_workload(wanted: Any, live: Any, equal: bool) -> None:
    assert same(wanted, live) is equal


@pytest.mark.parametrize(
    ("fields", "writer"),
    [
        ([managed(OURS, "2026-01-01T00:00:05Z", "partition")], UNKNOWN_WRITER),
        (
            [
                managed(OURS, "2026-01-01T00:00:05Z", "paused"),
                managed("argocd-controller", "2026-01-01T00:00:06Z", "partition"),
            ],
            "argocd-controller",
        ),
        (
            [
                managed("kubectl-edit", "2026-01-01T00:00:01Z", "partition", operation="Update"),
                managed("flux", "2026-01-01T00:00:09Z", "partition"),
            ],
            "flux",
        ),
        ([managed("helm", "2026-01-01T00:00:01Z", "paused")], UNKNOWN_WRITER),  # owns another leaf
        ([], UNKNOWN_WRITER),
    ],
)
def test_field_writer_is_the_other_owner_of_the_path(fields: list[dict[str, Any]], writer: str) -> None:
    assert field_writer(fields, PARTITION, OURS) == writer


@pytest.mark.parametrize(
    ("written", "live", "verdict"),
    [
        ({PARTITION: 4}, cloneset(4), None),
        ({PARTITION: None}, cloneset(0), None),
        (
            {PARTITION: 4},
            cloneset(5, fields=[managed("argocd-controller", "2026-01-01T00:00:06Z", "partition")]),
            Revert("argocd-controller", ("spec.updateStrategy.partition",)),
        ),
        (
            {PARTITION: 4, PAUSED: False},
            cloneset(5, True, fields=[managed("argocd-controller", "t", "partition", "paused")]),
            Revert("argocd-controller", ("spec.updateStrategy.partition", "spec.updateStrategy.paused")),
        ),
        ({PARTITION: 4}, cloneset(5), None),  # no other owner: our own controllers moved it
        ({PARTITION: 4}, cloneset(5, fields=[managed(OURS, "t", "partition")]), None),
        ({}, cloneset(5), None),
    ],
)
def test_judge(written: dict[tuple[str, ...], Any], live: dict[str, Any], verdict: Revert | None) -> None:
    assert judge(written, live, OURS) == verdict


def test_template_key_follows_the_template_only() -> None:
    one, two = cloneset(4), cloneset(5)
    assert template_key(one) == template_key(two)
    two["spec"]["template"]["metadata"]["labels"]["a"] = "c"
    assert template_key(one) != template_key(two)


@pytest.mark.parametrize(("attempts", "seconds"), [(0, 1), (1, 2), (2, 4), (5, 32), (6, 60), (40, 60)])
def test_delay_doubles_up_to_the_cap(attempts: int, seconds: float) -> None:
    assert delay(attempts) == seconds


REVERT = Revert("argocd-controller", ("spec.updateStrategy.partition",))


def simulate(syncer_period: float, seconds: float) -> list[float]:
    """Our write times while a syncer reverts the value ``syncer_period`` after each of our writes
    (and at its own period), looking every 0.1 s."""
    fight = None
    writes: list[float] = []
    reverted_at = 0.0  # the syncer's first revert
    t = 0.0
    while t < seconds:
        reverted = t >= reverted_at
        s = step(fight, REVERT if reverted else None, t)
        fight = s.fight
        if s.write and reverted:
            writes.append(t)
            reverted_at = (int(t / syncer_period) + 1) * syncer_period
        t = round(t + 0.1, 1)
    return writes


def test_a_syncer_every_two_seconds_gets_at_most_six_writes_a_minute() -> None:
    writes = simulate(2.0, 300.0)
    assert writes[:3] == [1.0, 3.0, 7.0]
    for start in writes:
        assert len([w for w in writes if start <= w < start + 60]) <= 6
    late = [w for w in writes if w >= 120]
    assert all(b - a >= CAP_SECONDS for a, b in itertools.pairwise(late))


def test_first_revert_is_announced_once_and_counted_per_reassert() -> None:
    first = step(None, REVERT, 0.0)
    assert (first.write, first.started, first.new_revert, first.recheck) == (False, True, True, 1.0)
    again = step(first.fight, REVERT, 0.5)  # still reverted, same revert: not counted again
    assert (again.write, again.started, again.new_revert) == (False, False, False)
    assert again.recheck == pytest.approx(0.5)
    out = step(again.fight, REVERT, 1.0)  # backoff passed: re-assert
    assert (out.write, out.new_revert) == (True, False)
    assert out.fight is not None and out.fight.attempts == 1 and out.fight.next_at == 3.0
    held = step(out.fight, None, 1.5)
    back = step(held.fight, REVERT, 2.0)  # reverted again after our write: counted
    assert (back.write, back.new_revert, back.started) == (False, True, False)


def test_the_fight_ends_once_the_value_held_long_enough() -> None:
    s = step(None, REVERT, 0.0)
    s = step(s.fight, REVERT, 1.0)
    holding = step(s.fight, None, 1.0 + HOLD_SECONDS / 2)
    assert holding.fight is not None and holding.write
    assert holding.recheck == pytest.approx(HOLD_SECONDS / 2)
    over = step(holding.fight, None, 1.0 + HOLD_SECONDS)
    assert over.fight is None and over.write and over.recheck is None
    assert step(None, None, 5.0) == over


def test_conflict_condition_is_added_kept_and_removed() -> None:
    other = {"type": "Progressing", "status": "True", "reason": "InRolling"}
    added = conflict_conditions([other], REVERT, "m", "T1")
    assert added == [
        other,
        {
            "type": "Conflict",
            "status": "True",
            "reason": "ReconciliationConflict",
            "message": "m",
            "lastUpdateTime": "T1",
            "lastTransitionTime": "T1",
        },
    ]
    assert conflict_conditions(added, REVERT, "m", "T2") == added  # unchanged: no write
    assert conflict_conditions(added, REVERT, "n", "T2")[1]["lastTransitionTime"] == "T1"
    assert conflict_conditions(added, None, "", "T3") == [other]
