"""The controller shell's guards, on a cache that lags behind its writes: injection expectations
keep a stale cache from injecting into a pod twice (or into more pods than ``parallelism``), the
finalizer goes on before the rest and comes off alone, and pod events wake only the jobs whose
selector matches. The cache is a dict the test fills (what the informer would show); the client
only records the writes (their effect on the cluster is the integration tests')."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from kruise.core.errors import ApiError
from kruise.core.informer import Delta, EventType
from kruise.core.kube import Resource
from kruise.core.kube.resources import EPHEMERALJOBS, PODS
from kruise.workloads.ephemeraljob.controller import (
    POD_NAMESPACE_INDEX,
    EphemeralJobController,
    EphemeralJobOptions,
    EphemeralJobSyncError,
)
from kruise.workloads.ephemeraljob.plan import FINALIZER
from tests.unit.ephemeraljob.builders import NS, RUNNING, injected, job, pod

JSON = dict[str, Any]
KEY = f"{NS}/ejob"


class Cache:
    def __init__(self, ejobs: list[JSON], pods: list[JSON]) -> None:
        self.objects: dict[Resource, list[JSON]] = {EPHEMERALJOBS: ejobs, PODS: pods}

    def get(self, resource: Resource, key: str) -> JSON | None:
        return next(
            (
                o
                for o in self.objects[resource]
                if f"{o['metadata']['namespace']}/{o['metadata']['name']}" == key
            ),
            None,
        )

    def by_index(self, resource: Resource, index: str, value: str) -> list[JSON]:
        assert (resource, index) == (PODS, POD_NAMESPACE_INDEX)
        return [o for o in self.objects[resource] if o["metadata"]["namespace"] == value]

    def list(self, resource: Resource) -> list[JSON]:
        return list(self.objects[resource])


class Kube:
    def __init__(self) -> None:
        self.patches: list[tuple[str, str, str | None, JSON]] = []  # (resource, name, subresource, body)
        self.deleted: list[str] = []
        self.fail_injection = False

    async def patch(self, resource: Resource, name: str, body: JSON, *args: Any, **kwargs: Any) -> JSON:
        subresource = kwargs.get("subresource")
        if subresource == "ephemeralcontainers":
            assert kwargs.get("patch_type") == "strategic"
            if self.fail_injection:
                raise ApiError(422, "Invalid", "nope")
        self.patches.append((resource.plural, name, subresource, copy.deepcopy(body)))
        meta = {"name": name, "uid": "job-uid-1", "resourceVersion": str(100 + len(self.patches))}
        return {"metadata": meta}

    async def delete(self, resource: Resource, name: str, *args: Any, **kwargs: Any) -> None:
        self.deleted.append(name)

    def injected_into(self) -> list[str]:
        return [name for plural, name, sub, _ in self.patches if sub == "ephemeralcontainers"]


class Recorder:
    def __init__(self) -> None:
        self.events: list[tuple[str, str]] = []

    def event(self, obj: JSON, type_: str, reason: str, message: str) -> None:
        self.events.append((reason, message))


def controller(cache: Cache, kube: Kube, recorder: Recorder | None = None) -> EphemeralJobController:
    return EphemeralJobController(kube, recorder or Recorder(), cache, EphemeralJobOptions())  # type: ignore[arg-type]


async def test_a_stale_cache_does_not_inject_twice() -> None:
    """Round one injects into the oldest pod; the cache does not show it yet, so round two waits
    instead of injecting again (or into the next pod: parallelism 1)."""
    ej = job()
    ej["metadata"]["resourceVersion"] = "1"
    cache = Cache([ej], [pod("a", age=2), pod("b", age=1)])
    kube = Kube()
    c = controller(cache, kube)
    await c.reconcile(KEY)
    assert kube.injected_into() == ["a"]
    ((_, _, _, body),) = [p for p in kube.patches if p[2] == "ephemeralcontainers"]
    assert body["spec"]["ephemeralContainers"][0]["env"] == [{"name": "KRUISE_EJOB_ID", "value": "job-uid-1"}]
    c.rv_expectations.delete("job-uid-1")  # the job's own status write seen; the pod's change is not
    result = await c.reconcile(KEY)
    assert kube.injected_into() == ["a"] and result.requeue_after is not None
    cache.objects[PODS][0] = pod("a", age=2, ephemeral=[injected()], states={"debugger": RUNNING})
    await c.reconcile(KEY)
    assert kube.injected_into() == ["a"], "a runs: parallelism 1 is taken"


async def test_the_finalizer_goes_on_first_and_comes_off_alone() -> None:
    ej = job(finalizers=())
    ej["metadata"]["resourceVersion"] = "7"
    kube = Kube()
    await controller(Cache([ej], [pod("a")]), kube).reconcile(KEY)
    first = kube.patches[0]
    assert first == (
        "ephemeraljobs",
        "ejob",
        None,
        {"metadata": {"finalizers": [FINALIZER], "resourceVersion": "7"}},
    )
    status_write = kube.patches[-1]
    assert status_write[2] == "status" and status_write[3]["metadata"]["resourceVersion"] == "101"

    gone = job(deleting=True, finalizers=("other", FINALIZER))
    kube = Kube()
    await controller(Cache([gone], [pod("a")]), kube).reconcile(KEY)
    assert kube.patches == [
        ("ephemeraljobs", "ejob", None, {"metadata": {"finalizers": ["other"], "resourceVersion": None}})
    ]


async def test_a_refused_injection_is_a_create_failed_event_and_a_retry() -> None:
    kube, recorder = Kube(), Recorder()
    kube.fail_injection = True
    with pytest.raises(EphemeralJobSyncError):
        await controller(Cache([job()], [pod("a")]), kube, recorder).reconcile(KEY)
    ((reason, message),) = recorder.events
    assert reason == "CreateFailed"
    assert message.startswith(f"failed to create ephemeral container in pod {NS}/a: ")
    assert [p[2] for p in kube.patches] == ["status"]  # the status is still written once


def test_pod_events_wake_the_jobs_whose_selector_matches() -> None:
    other = job()
    other["metadata"]["name"] = "other"
    other["spec"]["selector"] = {"matchLabels": {"run": "redis"}}
    elsewhere = job()
    elsewhere["metadata"]["namespace"] = "elsewhere"
    c = controller(Cache([job(), other, elsewhere], []), Kube())
    assert list(c.job_keys(pod("a"))) == [KEY]
    assert list(c.job_keys(pod("r", labels={"run": "redis"}))) == [f"{NS}/other"]
    assert list(c.job_keys(pod("x", labels={}))) == []


@pytest.mark.parametrize(
    ("change", "wakes"),
    [
        pytest.param(
            lambda p: p["status"].update(ephemeralContainerStatuses=[{"name": "d"}]), True, id="statuses"
        ),
        pytest.param(lambda p: p["spec"].update(ephemeralContainers=[injected()]), True, id="injected"),
        pytest.param(lambda p: p["metadata"]["labels"].update(run="x"), True, id="labels"),
        pytest.param(lambda p: p["status"].update(phase="Succeeded"), True, id="phase"),
        pytest.param(
            lambda p: p["status"].update(conditions=[{"type": "Ready"}]), False, id="conditions only"
        ),
    ],
)
def test_which_pod_updates_wake_jobs(change: Any, wakes: bool) -> None:
    spec = controller(Cache([], []), Kube()).spec()
    (pods_watch,) = [w for w in spec.watches if w.resource == PODS]
    old = pod("a")
    new = copy.deepcopy(old)
    change(new)
    assert pods_watch.accept is not None
    assert pods_watch.accept(Delta(EventType.MODIFIED, new, old)) is wakes
