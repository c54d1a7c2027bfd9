"""The Rollout's BatchRelease writes read the informer's copy first (upstream reads it through
controller-runtime's cached client) but trust it only when it is at least as new as what this
process last read or wrote (same uid, generation not lower): a stale copy never hides a spec
write of ours, and after a restart the first look goes to the API server. A trusted copy is
also what an update starts from (no read before the write); if someone else wrote since, the
update conflicts and the next round reads."""

from __future__ import annotations

import asyncio
import copy
from typing import Any

from kruise.core.errors import ConflictError
from kruise.core.kube.resources import Resource
from kruise.rollouts.resources import BATCH_RELEASES
from kruise.rollouts.rollout.effects import Effects
from kruise.rollouts.rollout.model import Action, ActionKind

JSON = dict[str, Any]
ROLLOUT = {"metadata": {"name": "web", "namespace": "ns", "uid": "r-1"}}


def spec(partition: int) -> JSON:
    return {"releasePlan": {"batchPartition": partition, "batches": [{"canaryReplicas": 1}]}}


def stored(partition: int, generation: int) -> JSON:
    return {
        "metadata": {"name": "web", "namespace": "ns", "uid": "br-1", "generation": generation},
        "spec": spec(partition),
    }


class Kube:
    def __init__(self, batch: JSON | None) -> None:
        self.batch = batch
        self.calls: list[str] = []

    async def get_or_none(self, resource: Resource, name: str, namespace: str) -> JSON | None:
        assert resource == BATCH_RELEASES
        self.calls.append("GET")
        return copy.deepcopy(self.batch)

    async def replace(self, resource: Resource, body: JSON) -> JSON:
        self.calls.append("PUT")
        assert self.batch is not None
        self.batch = {
            **body,
            "metadata": {**body["metadata"], "generation": self.batch["metadata"]["generation"] + 1},
        }
        return copy.deepcopy(self.batch)

    async def create(self, resource: Resource, body: JSON, namespace: str) -> JSON:
        self.calls.append("POST")
        self.batch = {**body, "metadata": {**body["metadata"], "uid": "br-1", "generation": 1}}
        return copy.deepcopy(self.batch)


def ensure(effects: Effects, partition: int) -> bool:
    action = Action(ActionKind.ENSURE_BATCH_RELEASE, {"spec": spec(partition)})
    return asyncio.run(effects.run(ROLLOUT, None, action))


def test_a_copy_as_new_as_our_last_write_spares_the_read() -> None:
    kube = Kube(stored(0, 1))
    cache: dict[str, JSON] = {"ns/web": stored(0, 1)}
    effects = Effects(kube, traffic=None, cached_batch=cache.get)  # type: ignore[arg-type]
    assert ensure(effects, 0) is False
    assert kube.calls == ["GET"]  # first look since start: the API server
    assert ensure(effects, 0) is False
    assert kube.calls == ["GET"]  # now the cached copy is known fresh
    assert ensure(effects, 1) is True
    assert kube.calls == ["GET", "PUT"]  # the update starts from the trusted copy


class ConflictingKube(Kube):
    """Someone else wrote the BatchRelease since the copy was taken: the first update conflicts."""

    def __init__(self, batch: JSON | None) -> None:
        super().__init__(batch)
        self.conflicts = 1

    async def replace(self, resource: Resource, body: JSON) -> JSON:
        if self.conflicts:
            self.conflicts -= 1
            self.calls.append("PUT 409")
            raise ConflictError(409, "Conflict", "the object has been modified")
        return await super().replace(resource, body)


def test_an_update_from_a_trusted_copy_that_conflicts_reads_next_round() -> None:
    kube = ConflictingKube(stored(0, 1))
    cache: dict[str, JSON] = {"ns/web": stored(0, 1)}
    effects = Effects(kube, traffic=None, cached_batch=cache.get)  # type: ignore[arg-type]
    assert ensure(effects, 0) is False
    assert ensure(effects, 1) is True  # not written: the machine waits for the next round
    assert kube.calls == ["GET", "PUT 409"]
    assert ensure(effects, 1) is True
    assert kube.calls == ["GET", "PUT 409", "GET", "PUT"]
    assert kube.batch is not None and kube.batch["spec"]["releasePlan"]["batchPartition"] == 1


def test_a_copy_older_than_our_write_is_not_trusted() -> None:
    kube = Kube(stored(0, 1))
    cache: dict[str, JSON] = {"ns/web": stored(0, 1)}
    effects = Effects(kube, traffic=None, cached_batch=cache.get)  # type: ignore[arg-type]
    assert ensure(effects, 1) is True  # written: generation 2 at partition 1
    kube.calls.clear()
    # a step jump back to batch 0 while the informer still has generation 1 at partition 0: the
    # cached copy "satisfies" the request but predates our write, so the API server is asked
    assert ensure(effects, 0) is True
    assert kube.calls == ["GET", "PUT"]
    assert kube.batch is not None and kube.batch["spec"]["releasePlan"]["batchPartition"] == 0


def test_a_recreated_batch_release_is_read_again() -> None:
    kube = Kube(None)
    cache: dict[str, JSON] = {}
    effects = Effects(kube, traffic=None, cached_batch=cache.get)  # type: ignore[arg-type]
    assert ensure(effects, 0) is True
    assert kube.calls == ["GET", "POST"]
    other = stored(0, 5)
    other["metadata"]["uid"] = "br-2"  # deleted and made again elsewhere
    cache["ns/web"] = other
    kube.batch = copy.deepcopy(other)
    kube.calls.clear()
    assert ensure(effects, 0) is False
    assert kube.calls == ["GET"]
