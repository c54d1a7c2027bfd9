"""The controller shell's guards, on a cache that lags behind its writes: expectations by node
keep a stale cache from giving a node a second pod, and node events wake only the jobs they
matter to. The cache is a dict the test fills (what the informer would show); the client only
records the writes (their effect on the cluster is the integration tests')."""

from __future__ import annotations

import copy
from typing import Any

from kruise.core.errors import ApiError
from kruise.core.informer import Delta, EventType
from kruise.core.kube import Resource
from kruise.core.kube.resources import BROADCASTJOBS, NODES, PODS
from kruise.core.runtime import OWNER_UID
from kruise.workloads.broadcastjob.controller import BroadcastJobController, BroadcastJobOptions
from tests.unit.broadcastjob.builders import NOW, job, node, nodes, pod

JSON = dict[str, Any]
KEY = "ns/job1"


class Cache:
    def __init__(self, bcj: JSON, node_list: list[JSON]) -> None:
        self.objects: dict[Resource, list[JSON]] = {BROADCASTJOBS: [bcj], NODES: node_list, PODS: []}

    def get(self, resource: Resource, key: str) -> JSON | None:
        return next((o for o in self.objects[resource] if f"ns/{o['metadata']['name']}" == key), None)

    def by_index(self, resource: Resource, index: str, value: str) -> list[JSON]:
        assert index == OWNER_UID
        return [
            o
            for o in self.objects[resource]
            if any(r["uid"] == value for r in o["metadata"]["ownerReferences"])
        ]

    def list(self, resource: Resource) -> list[JSON]:
        return list(self.objects[resource])


class Kube:
    def __init__(self) -> None:
        self.created: list[JSON] = []
        self.patched: list[JSON] = []
        self.deleted: list[str] = []
        self.fail_creates = False

    async def create(self, resource: Resource, body: JSON, namespace: str | None = None, **_: Any) -> JSON:
        if self.fail_creates:
            raise ApiError(500, "InternalError", "boom")
        made = copy.deepcopy(body)
        made["metadata"]["name"] = f"job1-{len(self.created)}"
        self.created.append(made)
        return made

    async def patch(self, resource: Resource, name: str, body: JSON, *args: Any, **kwargs: Any) -> JSON:
        self.patched.append(body)
        return {"metadata": {"name": name, "resourceVersion": str(100 + len(self.patched))}}

    async def delete(self, resource: Resource, name: str, *args: Any, **kwargs: Any) -> None:
        self.deleted.append(name)


class Recorder:
    def __init__(self) -> None:
        self.reasons: list[str] = []

    def event(self, obj: JSON, type_: str, reason: str, message: str) -> None:
        self.reasons.append(reason)


def controller(cache: Cache, kube: Kube) -> BroadcastJobController:
    return BroadcastJobController(kube, Recorder(), cache, BroadcastJobOptions())  # type: ignore[arg-type]


def _cached_pod(created: JSON) -> JSON:
    node_name = created["spec"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"][
        "nodeSelectorTerms"
    ][0]["matchFields"][0]["values"][0]
    return pod(job(), node_name, "Pending", name=created["metadata"]["name"], bound=False)


async def test_a_stale_cache_never_gives_a_node_a_second_pod() -> None:
    cache, kube = Cache(job(), nodes(3)), Kube()
    ctl = controller(cache, kube)
    await ctl.reconcile(KEY)
    assert len(kube.created) == 3
    result = await ctl.reconcile(KEY)  # the cache does not show them yet
    assert len(kube.created) == 3 and result.requeue_after is not None
    cache.objects[PODS] = [_cached_pod(p) for p in kube.created[:2]]  # two of three observed
    await ctl.reconcile(KEY)
    assert len(kube.created) == 3
    cache.objects[PODS] = [_cached_pod(p) for p in kube.created]
    await ctl.reconcile(KEY)
    assert len(kube.created) == 3, "every node has its pod: nothing more"


async def test_a_failed_create_is_forgotten_and_retried() -> None:
    cache, kube = Cache(job(), nodes(1)), Kube()
    ctl = controller(cache, kube)
    kube.fail_creates = True
    try:
        await ctl.reconcile(KEY)
    except Exception as err:  # the round reports its error for a retry with backoff
        assert "boom" in str(err)
    else:
        raise AssertionError("the failed create was not reported")
    kube.fail_creates = False
    await ctl.reconcile(KEY)
    assert len(kube.created) == 1


async def test_a_stale_cached_status_is_never_decided_on_twice() -> None:
    """Past its deadline the job fails and its pods are deleted; the next round, on a cache that
    still shows the running job (and the pods terminating), decides nothing and writes nothing,
    until the cache shows the status it wrote."""
    started = (NOW.replace(year=2020)).strftime("%Y-%m-%dT%H:%M:%SZ")
    stale = job(completion={"type": "Always", "activeDeadlineSeconds": 5}, status={"startTime": started})
    stale["metadata"]["resourceVersion"] = "7"
    cache, kube = Cache(stale, nodes(2)), Kube()
    cache.objects[PODS] = [pod(stale, "node1"), pod(stale, "node2")]
    ctl = controller(cache, kube)
    await ctl.reconcile(KEY)
    assert sorted(kube.deleted) == ["job1-node1", "job1-node2"]
    (first,) = kube.patched
    assert first["status"]["phase"] == "failed" and first["status"]["failed"] == 2
    assert first["metadata"]["resourceVersion"] == "7"  # the write's precondition
    for p in cache.objects[PODS]:
        p["metadata"]["deletionTimestamp"] = started
    result = await ctl.reconcile(KEY)
    assert len(kube.patched) == 1 and result.requeue_after is not None
    fresh = {**stale, "metadata": {**stale["metadata"], "resourceVersion": "101"}, "status": first["status"]}
    cache.objects[BROADCASTJOBS] = [fresh]
    await ctl.reconcile(KEY)
    assert len(kube.patched) == 1, "a failed job is left as it is"


def test_node_events_wake_the_jobs_they_matter_to() -> None:
    fresh = node("node9")
    cache = Cache(job(pod_spec={"nodeSelector": {"pool": "a"}}), [])
    ctl = controller(cache, Kube())
    labelled = node("node9", labels={"pool": "a"})
    assert list(ctl.node_keys(Delta(EventType.ADDED, fresh, None))) == []
    assert list(ctl.node_keys(Delta(EventType.ADDED, labelled, None))) == [KEY]
    assert list(ctl.node_keys(Delta(EventType.MODIFIED, labelled, fresh))) == [KEY]
    heartbeat = copy.deepcopy(labelled)
    heartbeat["metadata"]["resourceVersion"] = "2"
    assert list(ctl.node_keys(Delta(EventType.MODIFIED, heartbeat, labelled))) == []
    cordoned = copy.deepcopy(labelled)
    cordoned["spec"]["unschedulable"] = True
    assert list(ctl.node_keys(Delta(EventType.MODIFIED, cordoned, labelled))) == [KEY]


def test_a_finished_job_is_not_woken() -> None:
    done = job(status={"phase": "completed", "conditions": [{"type": "Complete", "status": "True"}]})
    ctl = controller(Cache(done, []), Kube())
    assert list(ctl.node_keys(Delta(EventType.ADDED, node("node9"), None))) == []
