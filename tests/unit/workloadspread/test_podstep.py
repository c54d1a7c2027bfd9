"""The WorkloadSpread pod step's status writes: the copy tried first (:func:`newest_copy`: the
informer's, or the one its last write returned when newer), a burst of admissions taking turns
(:class:`StatusWrites`) and the pause after a conflict (:func:`backoff`)."""

from __future__ import annotations

import asyncio
import copy
from collections.abc import Awaitable
from datetime import UTC, datetime
from types import SimpleNamespace
from typing import Any, cast

from kruise.core.errors import ConflictError
from kruise.workloads.workloadspread.customtargets import CustomTargets
from kruise.workloads.workloadspread.podstep import StatusWrites, backoff, newest_copy
from kruise.workloads.workloadspread.subsets import record_creation, record_deletion


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


class OneObjectApi:
    """Just enough of an API server for one WorkloadSpread's status: reads return a copy, a write
    with a stale resourceVersion is a 409, each call yields to the loop (so concurrent callers
    interleave as they would over HTTP)."""

    def __init__(self, obj: dict[str, Any]) -> None:
        self.obj = obj
        self.writes = 0
        self.conflicts = 0

    async def get(self, res: object, name: str, ns: str) -> dict[str, Any]:
        await asyncio.sleep(0.001)
        return copy.deepcopy(self.obj)

    async def replace(self, res: object, body: dict[str, Any], subresource: str = "") -> dict[str, Any]:
        await asyncio.sleep(0.001)
        rv = self.obj["metadata"]["resourceVersion"]
        if body["metadata"]["resourceVersion"] != rv:
            self.conflicts += 1
            raise ConflictError(409, "Conflict", "the object has been modified")
        self.writes += 1
        self.obj = {
            **copy.deepcopy(body),
            "metadata": {**body["metadata"], "resourceVersion": str(int(rv) + 1)},
        }
        return copy.deepcopy(self.obj)


def spread(cap: int) -> dict[str, Any]:
    return {
        **ws("1"),
        "spec": {"subsets": [{"name": "a", "maxReplicas": cap}, {"name": "b", "maxReplicas": cap}]},
    }


async def test_a_burst_of_admissions_takes_turns_without_a_conflict() -> None:
    """Eight pods of one workload admitted at once (the CREATEs offered the informer's copy, which
    goes stale at the first write), then three deletions at once (fresh reads): every write
    succeeds first time, each subset takes its cap of three, the last two pods find no room."""
    api = OneObjectApi(spread(cap=3))
    writes = StatusWrites(cast(CustomTargets, SimpleNamespace(kube=api)))
    cached = copy.deepcopy(api.obj)
    now = datetime.now(UTC)

    async def create(i: int) -> str | None:
        done = await writes.record(
            "ws", "ns", "v1", lambda s: record_creation(s, f"p{i}", now), cached=cached
        )
        assert done is not None
        return done[1].subset

    placed = await asyncio.gather(*(create(i) for i in range(8)))
    assert placed == ["a", "a", "a", "b", "b", "b", None, None]
    assert (api.writes, api.conflicts) == (6, 0)

    def delete(i: int) -> Awaitable[object]:
        return writes.record("ws", "ns", "v1", lambda s: record_deletion(s, f"q{i}", "a", now))

    await asyncio.gather(*(delete(i) for i in range(3)))
    a = next(e for e in api.obj["status"]["versionedSubsetStatuses"]["v1"] if e["name"] == "a")
    assert sorted(a["deletingPods"]) == ["q0", "q1", "q2"]
    assert (api.writes, api.conflicts) == (9, 0)
    assert not writes._turns, "no lock outlives its requests"


def test_a_conflict_waits_upstreams_default_backoff() -> None:
    """10 ms, then 5 times longer each time, each up to 10% longer."""
    for attempt in range(4):
        assert 0.01 * 5**attempt <= backoff(attempt) <= 0.011 * 5**attempt
