"""The ImagePullJob controller's NodeImage writes: concurrent, from the cache, re-read on conflict,
and never repeated from a cache that has not caught up (against an in-memory API double)."""

from __future__ import annotations

import asyncio
import copy
from typing import Any

from kruise.core.errors import ConflictError, NotFoundError
from kruise.core.informer.store import Delta, EventType
from kruise.core.kube.resources import Resource
from kruise.daemon.api.nodeimage import NODEIMAGES
from kruise.daemon.imagepulljob.admission import PROTECTION_FINALIZER
from kruise.daemon.imagepulljob.controller import (
    EXPECTATION_REQUEUE,
    SYNC_CONCURRENCY,
    ImagePullJobController,
)

JSON = dict[str, Any]
IMAGE = "registry.example.com/app"


class Api:
    """NodeImages and jobs with resourceVersions; ``replace`` checks them as the API server
    does, and counts requests and how many NodeImage writes were in flight at once."""

    def __init__(self, nodes: int) -> None:
        self.rv = 10
        self.objects: dict[tuple[str, str], JSON] = {}
        for i in range(nodes):
            name = f"node-{i}"
            self.objects[("nodeimages", name)] = {
                "apiVersion": "apps.kruise.io/v1alpha1",
                "kind": "NodeImage",
                "metadata": {"name": name, "uid": f"uid-{name}", "resourceVersion": self.next_rv(),
                             "labels": {"pool": "a"}},
                "spec": {},
            }  # fmt: skip
        self.gets = 0
        self.writes = 0
        self.in_flight = 0
        self.most_in_flight = 0

    def next_rv(self) -> str:
        self.rv += 1
        return str(self.rv)

    def bump(self, name: str) -> None:
        """Someone else (the NodeImage controller, the daemon) wrote NodeImage ``name``."""
        self.objects[("nodeimages", name)]["metadata"]["resourceVersion"] = self.next_rv()

    def _key(self, res: Resource, name: str) -> tuple[str, str]:
        key = (res.plural, name)
        if key not in self.objects:
            raise NotFoundError(404, "NotFound", f"{res.plural} {name} not found")
        return key

    async def get(self, res: Resource, name: str, namespace: str | None = None) -> JSON:
        self.gets += 1
        await asyncio.sleep(0)
        return copy.deepcopy(self.objects[self._key(res, name)])

    async def replace(self, res: Resource, body: JSON, *, subresource: str | None = None) -> JSON:
        key = self._key(res, body["metadata"]["name"])
        if res is NODEIMAGES:
            self.writes += 1
            self.in_flight += 1
            self.most_in_flight = max(self.most_in_flight, self.in_flight)
        try:
            await asyncio.sleep(0.001)
            if body["metadata"]["resourceVersion"] != self.objects[key]["metadata"]["resourceVersion"]:
                raise ConflictError(409, "Conflict", "the object has been modified")
            stored = copy.deepcopy(body)
            stored["metadata"]["resourceVersion"] = self.next_rv()
            self.objects[key] = stored
            return copy.deepcopy(stored)
        finally:
            if res is NODEIMAGES:
                self.in_flight -= 1


class Cache:
    """What the informers would hold: a snapshot taken by :meth:`sync` (stale until then)."""

    def __init__(self, api: Api) -> None:
        self.api = api
        self.seen: dict[tuple[str, str], JSON] = {}
        self.sync()

    def sync(self) -> None:
        self.seen = copy.deepcopy(self.api.objects)

    def get(self, res: Resource, key: str) -> JSON | None:
        return self.seen.get((res.plural, key.rpartition("/")[2]))

    def list(self, res: Resource) -> list[JSON]:
        return [o for (plural, _), o in self.seen.items() if plural == res.plural]

    def by_index(self, res: Resource, index: str, value: str) -> list[JSON]:
        raise AssertionError("not used")


def with_job(api: Api, nodes: int) -> None:
    api.objects[("imagepulljobs", "job")] = {
        "apiVersion": "apps.kruise.io/v1alpha1",
        "kind": "ImagePullJob",
        "metadata": {"name": "job", "namespace": "ns", "uid": "job-uid", "resourceVersion": api.next_rv(),
                     "finalizers": [PROTECTION_FINALIZER]},
        "spec": {"image": f"{IMAGE}:v1", "selector": {"matchLabels": {"pool": "a"}},
                 "parallelism": nodes, "completionPolicy": {"type": "Always"},
                 "pullPolicy": {"timeoutSeconds": 600, "backoffLimit": 3}},
    }  # fmt: skip


def tagged(api: Api) -> list[str]:
    """NodeImages whose spec holds the job's tag."""
    out = []
    for (plural, name), obj in api.objects.items():
        tags = obj.get("spec", {}).get("images", {}).get(IMAGE, {}).get("tags", ())
        if plural == "nodeimages" and any(t["tag"] == "v1" for t in tags):
            out.append(name)
    return sorted(out)


def controller(api: Api, cache: Cache) -> ImagePullJobController:
    return ImagePullJobController(api, cache)  # type: ignore[arg-type]


async def test_a_round_writes_every_target_concurrently_from_the_cache_without_reads() -> None:
    api = Api(100)
    with_job(api, 100)
    cache = Cache(api)
    await controller(api, cache).reconcile("ns/job")
    assert tagged(api) == sorted(f"node-{i}" for i in range(100))
    assert api.writes == 100
    assert api.gets == 0
    assert 1 < api.most_in_flight <= SYNC_CONCURRENCY


async def test_a_conflict_rereads_the_nodeimage_and_keeps_what_the_other_writer_wrote() -> None:
    api = Api(3)
    with_job(api, 3)
    cache = Cache(api)
    api.objects[("nodeimages", "node-1")]["metadata"]["labels"]["fresh"] = "yes"
    api.bump("node-1")  # the cache's copy of node-1 is now stale
    await controller(api, cache).reconcile("ns/job")
    assert tagged(api) == ["node-0", "node-1", "node-2"]
    assert api.gets == 1
    assert api.writes == 4  # node-1: the conflicting write and the one after the read
    assert api.objects[("nodeimages", "node-1")]["metadata"]["labels"]["fresh"] == "yes"


async def test_a_round_waits_for_the_cache_to_show_its_writes_and_then_writes_nothing_again() -> None:
    api = Api(5)
    with_job(api, 5)
    cache = Cache(api)
    ctl = controller(api, cache)
    await ctl.reconcile("ns/job")
    assert api.writes == 5
    cache.seen[("imagepulljobs", "job")] = copy.deepcopy(api.objects[("imagepulljobs", "job")])
    result = await ctl.reconcile("ns/job")  # the NodeImages in the cache are still the old ones
    assert result is not None and result.requeue_after == EXPECTATION_REQUEUE
    assert api.writes == 5 and api.gets == 0
    cache.sync()
    await ctl.reconcile("ns/job")
    assert api.writes == 5 and api.gets == 0
    status = api.objects[("imagepulljobs", "job")]["status"]
    assert (status["desired"], status["active"]) == (5, 5)


async def test_a_nodeimage_deleted_before_the_write_is_skipped() -> None:
    api = Api(2)
    with_job(api, 2)
    cache = Cache(api)
    del api.objects[("nodeimages", "node-0")]
    await controller(api, cache).reconcile("ns/job")
    assert tagged(api) == ["node-1"]


async def test_a_nodeimage_deleted_after_the_write_leaves_no_expectation_behind() -> None:
    """A node (and its NodeImage) removed before the cache showed our write: its DELETED event
    drops what was expected of it, so nothing waits for it and nothing is kept for it."""
    api = Api(2)
    with_job(api, 2)
    cache = Cache(api)
    ctl = controller(api, cache)
    await ctl.reconcile("ns/job")
    gone = api.objects.pop(("nodeimages", "node-0"))
    assert set(ctl._written._wanted) == {"uid-node-0", "uid-node-1"}
    (watch,) = [w for w in ctl.spec().watches if w.resource is NODEIMAGES]
    assert watch.observe is not None
    watch.observe(Delta(EventType.DELETED, gone, gone))
    assert gone["metadata"]["uid"] not in ctl._written._wanted
    assert len(ctl._written._wanted) == 1
