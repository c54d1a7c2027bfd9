"""kstatus conditions: additive, abnormal-true, timestamps kept until a flip."""

from __future__ import annotations

from kruise.core.kstatus import Health, kstatus_changed, with_kstatus
from tests.support.kstatus import CURRENT, FAILED, IN_PROGRESS, compute

T0, T1 = "2024-05-01T12:00:00Z", "2024-05-01T12:05:00Z"
OTHER = {"type": "Progressing", "status": "True", "reason": "InRolling", "message": "m"}


def obj(conditions: list[dict[str, object]]) -> dict[str, object]:
    return {"metadata": {"generation": 1}, "status": {"observedGeneration": 1, "conditions": conditions}}


def test_other_conditions_keep_their_place_and_content() -> None:
    out = with_kstatus([OTHER], Health(False, "Progressing", "step 1", reconciling=True), T0)
    assert out[0] == OTHER
    assert [c["type"] for c in out] == ["Progressing", "Ready", "Reconciling"]
    assert compute(obj(out)) == IN_PROGRESS


def test_reconciling_and_stalled_are_removed_when_no_longer_true() -> None:
    busy = with_kstatus([OTHER], Health(False, "Progressing", "", reconciling=True), T0)
    done = with_kstatus(busy, Health(True, "Succeeded", "done"), T1)
    assert [c["type"] for c in done] == ["Progressing", "Ready"]
    assert compute(obj(done)) == CURRENT
    failed = with_kstatus(done, Health(False, "ReleaseFailed", "boom", reconciling=True, stalled=True), T1)
    assert {c["type"] for c in failed} == {"Progressing", "Ready", "Stalled"}, (
        "never both stalled and reconciling"
    )
    assert compute(obj(failed)) == FAILED


def test_transition_time_moves_only_on_a_flip_and_update_time_on_a_new_reason() -> None:
    first = with_kstatus([], Health(False, "Progressing", "step 1", reconciling=True), T0, update_time=True)
    same = with_kstatus(first, Health(False, "Progressing", "step 1", reconciling=True), T1, update_time=True)
    assert same == first, "deciding twice on the same world changes nothing"
    assert not kstatus_changed(first, same)
    reworded = with_kstatus(
        first, Health(False, "Progressing", "step 2", reconciling=True), T1, update_time=True
    )
    ready = reworded[0]
    assert ready["lastTransitionTime"] == T0 and ready["lastUpdateTime"] == T1
    assert kstatus_changed(first, reworded)
    flipped = with_kstatus(first, Health(True, "Succeeded", ""), T1, update_time=True)
    assert flipped[0]["lastTransitionTime"] == T1
