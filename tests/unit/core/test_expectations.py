"""Scale and resourceVersion expectations (OpenKruise pkg/util/expectations)."""

from __future__ import annotations

import pytest

from kruise.core.expectations import (
    ResourceVersionExpectations,
    ScaleAction,
    ScaleExpectations,
    resource_version_newer_or_equal,
)


class Clock:
    def __init__(self) -> None:
        self.t = 0.0

    def __call__(self) -> float:
        return self.t


def test_creations_are_satisfied_once_the_cache_shows_them() -> None:
    exp = ScaleExpectations()
    exp.expect("ns/web", ScaleAction.CREATE, "web-a")
    exp.expect("ns/web", ScaleAction.CREATE, "web-b")
    cache = {"web-a"}
    sat = exp.check("ns/web", lambda n: n in cache)
    assert not sat.satisfied and sat.creates == {"web-b"}
    cache.add("web-b")
    assert exp.check("ns/web", lambda n: n in cache).satisfied


def test_deletions_are_satisfied_once_the_cache_lacks_them() -> None:
    exp = ScaleExpectations()
    exp.expect("ns/web", ScaleAction.DELETE, "web-a")
    assert not exp.check("ns/web", lambda n: True).satisfied
    assert exp.check("ns/web", lambda n: False).satisfied


def test_failed_call_is_forgotten() -> None:
    exp = ScaleExpectations()
    exp.expect("ns/web", ScaleAction.CREATE, "web-a")
    exp.forget("ns/web", ScaleAction.CREATE, "web-a")
    assert exp.check("ns/web", lambda n: False).satisfied


def test_unsatisfied_expectations_time_out() -> None:
    clock = Clock()
    exp = ScaleExpectations(timeout=300, clock=clock)
    exp.expect("ns/web", ScaleAction.CREATE, "web-a")
    clock.t = 299
    assert not exp.timed_out(exp.check("ns/web", lambda n: False))
    clock.t = 300
    assert exp.timed_out(exp.check("ns/web", lambda n: False))


def test_other_owners_are_independent() -> None:
    exp = ScaleExpectations()
    exp.expect("ns/a", ScaleAction.CREATE, "a-1")
    assert exp.check("ns/b", lambda n: False).satisfied


def test_resource_version_expectation_waits_for_newer_cache() -> None:
    exp = ResourceVersionExpectations()
    exp.expect("uid-1", "105")
    assert not exp.check("uid-1", "100")
    assert exp.check("uid-1", "105")
    assert exp.check("uid-1", "90"), "satisfied expectations are dropped"


def test_resource_versions_compare_as_integers() -> None:
    assert resource_version_newer_or_equal("1000", "999")
    assert not resource_version_newer_or_equal("999", "1000")
    assert not resource_version_newer_or_equal(None, "1")


def test_resource_version_entries_of_objects_never_checked_again_are_swept(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(ResourceVersionExpectations, "SWEEP_MIN", 3)
    clock = Clock()
    exp = ResourceVersionExpectations(timeout=10.0, clock=clock)
    for i in range(3):  # three pods patched in place, then deleted before any check
        exp.expect(f"gone-{i}", "5")
    clock.t = 10.0
    exp.expect("fresh", "7")  # the fourth crosses the threshold: the timed-out three go
    assert len(exp) == 1
    assert exp.check("fresh", "6") is False, "the fresh expectation still holds"
    assert exp.check("gone-0", "1") is True


def test_resource_version_entries_within_the_timeout_are_kept_by_a_sweep(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(ResourceVersionExpectations, "SWEEP_MIN", 2)
    clock = Clock()
    exp = ResourceVersionExpectations(timeout=10.0, clock=clock)
    exp.expect("a", "5")
    clock.t = 5.0
    exp.expect("b", "5")
    exp.expect("c", "5")
    assert len(exp) == 3
    assert exp.check("a", "4") is False


def test_an_object_written_is_expected_until_a_cached_copy_shows_it() -> None:
    exp = ResourceVersionExpectations()
    exp.expect_written({"metadata": {"uid": "u1", "resourceVersion": "12"}})
    exp.expect_written({"metadata": {"uid": "u2"}})  # no resourceVersion in the answer: nothing
    assert len(exp) == 1
    assert not exp.caught_up({"metadata": {"uid": "u1", "resourceVersion": "11"}})
    assert exp.caught_up({"metadata": {"uid": "u2", "resourceVersion": "1"}})
    assert exp.caught_up({"metadata": {"uid": "u1", "resourceVersion": "12"}})
    assert len(exp) == 0
