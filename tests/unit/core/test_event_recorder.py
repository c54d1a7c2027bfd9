"""EventRecorder writes the correlator's decisions: creates, patches in order, re-creates a gone
Event, drops past the spam filter (still logging), and transitions are never correlated."""

from __future__ import annotations

import asyncio
import logging
from typing import Any, cast

import pytest

from kruise.core.errors import AlreadyExistsError, NotFoundError
from kruise.core.eventcorrelator import AGGREGATE_PREFIX, SPAM_BURST, EventCorrelator
from kruise.core.events import EventRecorder
from kruise.core.kube.client import KubeClient
from kruise.core.kube.resources import Resource

CS = {
    "apiVersion": "apps.kruise.io/v1alpha1",
    "kind": "CloneSet",
    "metadata": {"name": "web", "namespace": "ns", "uid": "u1"},
}


class FakeEvents:
    """The events of one namespace, and the writes made, in order."""

    def __init__(self) -> None:
        self.events: dict[str, dict[str, Any]] = {}
        self.writes: list[tuple[str, str]] = []

    async def create(self, res: Resource, body: dict[str, Any], namespace: str) -> dict[str, Any]:
        await asyncio.sleep(0)
        name = body["metadata"]["name"]
        self.writes.append(("POST", name))
        if name in self.events:
            raise AlreadyExistsError(409, "AlreadyExists", name)
        self.events[name] = body
        return body

    async def patch(self, res: Resource, name: str, patch: dict[str, Any], namespace: str) -> dict[str, Any]:
        await asyncio.sleep(0)
        self.writes.append(("PATCH", name))
        if name not in self.events:
            raise NotFoundError(404, "NotFound", name)
        self.events[name].update(patch)
        return self.events[name]


class Clock:
    now = 1_000.0

    def __call__(self) -> float:
        return self.now


def recorder(fake: FakeEvents, clock: Clock | None = None) -> EventRecorder:
    return EventRecorder(cast(KubeClient, fake), "cloneset-controller", EventCorrelator(clock or Clock()))


async def test_repeats_patch_the_first_event_in_order() -> None:
    fake = FakeEvents()
    rec = recorder(fake)
    for _ in range(3):
        rec.event(CS, "Warning", "FailedCreate", "quota exceeded")
    await rec.flush()
    ((name, event),) = fake.events.items()
    assert fake.writes == [("POST", name), ("PATCH", name), ("PATCH", name)]
    assert (event["count"], event["message"], event["type"]) == (3, "quota exceeded", "Warning")
    assert event["involvedObject"]["uid"] == "u1" and event["source"] == {"component": "cloneset-controller"}


async def test_a_gone_event_is_created_again_with_its_count() -> None:
    fake = FakeEvents()
    rec = recorder(fake)
    rec.event(CS, "Normal", "Scaled", "m")
    await rec.flush()
    fake.events.clear()  # the API server's event TTL
    rec.event(CS, "Normal", "Scaled", "m")
    await rec.flush()
    ((name, event),) = fake.events.items()
    assert fake.writes[1:] == [("PATCH", name), ("POST", name)]
    assert event["count"] == 2


async def test_many_distinct_messages_aggregate_and_the_spam_filter_drops_the_rest(
    caplog: pytest.LogCaptureFixture,
) -> None:
    fake = FakeEvents()
    rec = recorder(fake)
    with caplog.at_level(logging.INFO, logger="kruise.core.events"):
        for i in range(100):
            rec.event(CS, "Normal", "SuccessfulCreate", f"succeed to create pod web-{i}")
        await rec.flush()
    assert len(fake.writes) == SPAM_BURST
    assert sum(1 for verb, _ in fake.writes if verb == "POST") == 10
    combined = [e for e in fake.events.values() if e["message"].startswith(AGGREGATE_PREFIX)]
    assert len(combined) == 1 and combined[0]["count"] == SPAM_BURST - 9
    assert sum("SuccessfulCreate" in r.getMessage() for r in caplog.records) == 100, "one log line per call"


async def test_transitions_are_never_dropped_and_take_tokens() -> None:
    fake = FakeEvents()
    rec = recorder(fake)
    for i in range(SPAM_BURST + 5):
        assert await rec.transition(CS, "Normal", "Progressing", f"step {i}", leaving=i)
    assert len(fake.events) == SPAM_BURST + 5
    rec.event(CS, "Normal", "Other", "background")
    await rec.flush()
    assert len(fake.events) == SPAM_BURST + 5, "the object's bucket was spent by the transitions"
