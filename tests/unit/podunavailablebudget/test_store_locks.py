"""The per-PUB lock of the status writer goes when its last user leaves: a deleted PUB (or the
thousands a long-running manager sees come and go) leaves no entry behind."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from kruise.workloads.podunavailablebudget.store import StatusWriter

JSON = dict[str, Any]


class Kube:
    def __init__(self) -> None:
        self.writes: list[tuple[str, str]] = []  # (event, writer)
        self.inside = 0
        self.most_inside = 0

    async def replace(self, resource: Any, body: JSON, **kwargs: Any) -> JSON:
        self.inside += 1
        self.most_inside = max(self.most_inside, self.inside)
        await asyncio.sleep(0.01)
        self.inside -= 1
        return body


def _pub(name: str) -> JSON:
    return {"metadata": {"name": name, "namespace": "ns", "resourceVersion": "1"}, "status": {}}


async def test_writers_of_one_pub_queue_and_the_lock_goes_with_the_last() -> None:
    kube = Kube()
    writer = StatusWriter(kube)  # type: ignore[arg-type]

    async def write(name: str) -> JSON | None:
        return await writer.update("ns", name, lambda pub: {"unavailableAllowed": 1}, first=_pub(name))  # type: ignore[arg-type,return-value]

    first = asyncio.create_task(write("a"))
    await asyncio.sleep(0)
    assert list(writer._locks) == ["ns/a"], "held while writing"
    await asyncio.gather(first, write("a"), write("a"))
    assert kube.most_inside == 1, "one writer of a PUB at a time"
    assert writer._locks == {}
    assert await write("b") is not None
    assert writer._locks == {}


async def test_the_lock_goes_when_the_change_raises() -> None:
    writer = StatusWriter(Kube())  # type: ignore[arg-type]

    def boom(pub: JSON) -> None:
        raise ValueError("no")

    with pytest.raises(ValueError):
        await writer.update("ns", "a", boom, first=_pub("a"))  # type: ignore[arg-type]
    assert writer._locks == {}
