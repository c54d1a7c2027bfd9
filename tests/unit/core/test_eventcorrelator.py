"""client-go's EventCorrelator rules (kruise.core.eventcorrelator): aggregation, deduplication and
the per-object spam filter, on an injected clock."""

from __future__ import annotations

import dataclasses
import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kruise.core.eventcorrelator import (
    AGGREGATE_MAX_EVENTS,
    AGGREGATE_PREFIX,
    LRU,
    SPAM_BURST,
    SPAM_QPS,
    Create,
    Decision,
    Drop,
    EventCorrelator,
    Occurrence,
    Patch,
)

BASE = Occurrence(
    component="cloneset-controller",
    kind="CloneSet",
    namespace="ns",
    name="web",
    uid="u1",
    api_version="apps.kruise.io/v1alpha1",
    type="Normal",
    reason="SuccessfulCreate",
    message="succeed to create pod web-0",
)


class Clock:
    def __init__(self) -> None:
        self.now = 1_000.0

    def __call__(self) -> float:
        return self.now


def correlator(clock: Clock, **kw: float) -> tuple[EventCorrelator, itertools.count[int]]:
    return EventCorrelator(clock, **kw), itertools.count()  # type: ignore[arg-type]


def record(c: EventCorrelator, names: itertools.count[int], ev: Occurrence) -> Decision:
    return c.correlate(ev, f"e{next(names)}")


def msg(i: int) -> Occurrence:
    return dataclasses.replace(BASE, message=f"succeed to create pod web-{i}")


def test_first_event_is_created_with_count_one() -> None:
    clock = Clock()
    c, names = correlator(clock)
    assert record(c, names, BASE) == Create("e0", BASE.message, 1, 1_000.0, 1_000.0)


def test_identical_event_patches_the_first_with_count_and_last_timestamp() -> None:
    clock = Clock()
    c, names = correlator(clock)
    record(c, names, BASE)
    clock.now += 7
    assert record(c, names, BASE) == Patch("e0", BASE.message, 2, 1_000.0, 1_007.0)
    clock.now += 3
    assert record(c, names, BASE) == Patch("e0", BASE.message, 3, 1_000.0, 1_010.0)


def test_patch_falls_back_to_a_create_of_the_same_event() -> None:
    patch = Patch("e0", "m", 4, 1.0, 9.0)
    assert patch.as_create() == Create("e0", "m", 4, 1.0, 9.0)


@pytest.mark.parametrize(
    "field,value",
    [
        ("component", "other-controller"),
        ("kind", "Deployment"),
        ("namespace", "other"),
        ("name", "api"),
        ("uid", "u2"),
        ("api_version", "apps.kruise.io/v1beta1"),
        ("type", "Warning"),
        ("reason", "FailedCreate"),
        ("message", "something else"),
    ],
)
def test_any_differing_identity_field_makes_a_new_event(field: str, value: str) -> None:
    clock = Clock()
    c, names = correlator(clock)
    record(c, names, BASE)
    assert isinstance(record(c, names, dataclasses.replace(BASE, **{field: value})), Create)


def test_the_tenth_distinct_message_within_the_interval_is_the_aggregate() -> None:
    """Upstream aggregates when the group's distinct messages reach 10 (client-go's
    ``similar-events-should-aggregate-event``: nine similar events, then the aggregate)."""
    clock = Clock()
    c, names = correlator(clock)
    decisions = [record(c, names, msg(i)) for i in range(AGGREGATE_MAX_EVENTS - 1)]
    assert [d.message for d in decisions] == [msg(i).message for i in range(9)]
    assert all(isinstance(d, Create) for d in decisions)
    assert record(c, names, msg(9)) == Create("e9", AGGREGATE_PREFIX + msg(9).message, 1, 1_000.0, 1_000.0)
    # later distinct messages update that one aggregate Event
    clock.now += 1
    assert record(c, names, msg(10)) == Patch("e9", AGGREGATE_PREFIX + msg(10).message, 2, 1_000.0, 1_001.0)
    # the first nine keep their own Events, deduplicated
    assert record(c, names, msg(3)) == Patch("e3", msg(3).message, 2, 1_000.0, 1_001.0)


def test_aggregation_window_restarts_after_the_interval_of_silence() -> None:
    clock = Clock()
    c, names = correlator(clock)
    for i in range(9):
        record(c, names, msg(i))
        clock.now += 599  # the window slides with each similar event
    assert isinstance(record(c, names, msg(9)), Create)
    assert record(c, names, msg(9)).message.startswith(AGGREGATE_PREFIX)  # type: ignore[union-attr]
    clock.now += 601
    decision = record(c, names, msg(50))
    assert isinstance(decision, Create) and decision.message == msg(50).message


def test_spam_filter_allows_the_burst_then_one_write_per_300_seconds() -> None:
    clock = Clock()
    c, names = correlator(clock)
    written = [record(c, names, msg(0)) for _ in range(SPAM_BURST)]
    assert not any(isinstance(d, Drop) for d in written)
    assert record(c, names, msg(0)) == Drop()
    clock.now += 299
    assert record(c, names, msg(0)) == Drop()
    clock.now += 1
    # the dropped occurrences still count: the permitted patch carries all 28
    assert record(c, names, msg(0)) == Patch("e0", msg(0).message, SPAM_BURST + 3, 1_000.0, 1_300.0)
    assert record(c, names, msg(0)) == Drop()


def test_spam_filter_is_per_object_and_type() -> None:
    clock = Clock()
    c, names = correlator(clock)
    for _ in range(SPAM_BURST):
        record(c, names, BASE)
    assert record(c, names, dataclasses.replace(BASE, reason="Other")) == Drop()  # same bucket
    assert not isinstance(record(c, names, dataclasses.replace(BASE, type="Warning")), Drop)
    assert not isinstance(record(c, names, dataclasses.replace(BASE, name="api", uid="u2")), Drop)


def test_spend_takes_a_token_without_recording() -> None:
    clock = Clock()
    c, names = correlator(clock)
    assert all(c.spend(BASE) for _ in range(SPAM_BURST))
    assert not c.spend(BASE)
    assert record(c, names, BASE) == Drop()


def test_dropped_create_is_patched_later_and_then_created_by_the_writer() -> None:
    clock = Clock()
    c, names = correlator(clock)
    for _ in range(SPAM_BURST):
        c.spend(BASE)
    assert record(c, names, BASE) == Drop()
    clock.now += 300
    assert record(c, names, BASE) == Patch("e0", BASE.message, 2, 1_000.0, 1_300.0)


def test_lru_forgets_the_least_recently_used_key() -> None:
    lru: LRU[str, int] = LRU(2)
    lru.put("a", 1)
    lru.put("b", 2)
    assert lru.get("a") == 1
    lru.put("c", 3)
    assert (lru.get("a"), lru.get("b"), lru.get("c"), len(lru)) == (1, None, 3, 2)


def test_evicted_event_is_created_afresh() -> None:
    clock = Clock()
    c, names = correlator(clock, cache_size=1)
    record(c, names, BASE)
    record(c, names, dataclasses.replace(BASE, reason="Other"))
    assert isinstance(record(c, names, BASE), Create)


events = st.lists(
    st.tuples(
        st.floats(min_value=0, max_value=400, allow_nan=False),  # seconds since the previous event
        st.sampled_from(["Normal", "Warning"]),
        st.sampled_from(["A", "B"]),  # reason
        st.integers(0, 14),  # message
    ),
    max_size=120,
)


@settings(max_examples=200, deadline=None)
@given(events)
def test_writes_stay_within_the_bucket_and_identical_events_are_created_once(
    seq: list[tuple[float, str, str, int]],
) -> None:
    clock = Clock()
    c, names = correlator(clock)
    start = clock.now
    writes: dict[str, int] = {}
    created: set[tuple[str, str, str]] = set()
    for gap, type_, reason, i in seq:
        clock.now += gap
        decision = record(c, names, dataclasses.replace(msg(i), type=type_, reason=reason))
        if isinstance(decision, Drop):
            continue
        writes[type_] = writes.get(type_, 0) + 1
        assert writes[type_] <= SPAM_BURST + (clock.now - start) * SPAM_QPS
        if isinstance(decision, Create):
            # an aggregate is created once per group; a message once per group (while cached)
            msg_key = AGGREGATE_PREFIX if decision.message.startswith(AGGREGATE_PREFIX) else decision.message
            assert (type_, reason, msg_key) not in created
            created.add((type_, reason, msg_key))


def test_constants_are_client_gos() -> None:
    """``events_cache.go``: maxLruCacheEntries, defaultAggregateMaxEvents/-IntervalInSeconds,
    defaultSpamBurst/-QPS and EventAggregatorByReasonMessageFunc's prefix."""
    from kruise.core import eventcorrelator as ec

    assert (ec.LRU_ENTRIES, ec.AGGREGATE_MAX_EVENTS, ec.AGGREGATE_INTERVAL) == (4096, 10, 600.0)
    assert (ec.SPAM_BURST, ec.SPAM_QPS) == (25, 1 / 300)
    assert ec.AGGREGATE_PREFIX == "(combined from similar events): "
