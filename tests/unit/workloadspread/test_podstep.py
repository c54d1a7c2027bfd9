"""The WorkloadSpread pod step's choice of the copy to try a status write with first
(:func:`newest_copy`): the informer's, or the one its last write returned when newer."""

from __future__ import annotations

from typing import Any

from kruise.workloads.workloadspread.podstep import newest_copy


def ws(rv: str, uid: str = "u1") -> dict[str, Any]:
    return {"metadata": {"name": "ws", "namespace": "ns", "uid": uid, "resourceVersion": rv}}


def test_the_written_copy_wins_while_the_informer_lags() -> None:
    assert newest_copy(ws("10"), ws("12")) == ws("12")


def test_the_informer_wins_once_it_caught_up_or_went_past() -> None:
    assert newest_copy(ws("12"), ws("12")) == ws("12")
    cached = ws("15")
    assert newest_copy(cached, ws("12")) is cached


def test_resource_versions_compare_as_integers_not_strings() -> None:
    assert newest_copy(ws("9"), ws("10")) == ws("10")
    cached = ws("100")
    assert newest_copy(cached, ws("99")) is cached


def test_a_recreated_workloadspread_uses_the_informer_copy() -> None:
    cached = ws("5", uid="u2")
    assert newest_copy(cached, ws("50", uid="u1")) is cached


def test_one_side_missing() -> None:
    assert newest_copy(None, ws("3")) == ws("3")
    assert newest_copy(ws("3"), None) == ws("3")
    assert newest_copy(None, None) is None
