"""EphemeralJob through ``kruise manager`` on the real control plane with KWOK pods.

Named after upstream's e2e ``It``\\ s (``test/e2e/apps/v1alpha1/ephemeraljob.go``) where they
apply. The containers are injected through the real API server's ``ephemeralcontainers``
subresource; their run is played by :class:`~tests.integration.ephemeraljob.helpers.FakeKubelet`
(KWOK reports no ephemeral container statuses; see that module). The real kubelet's own run is
``tests/integration/realnode/test_ephemeraljob.py``.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from kruise.core.errors import KruiseError
from kruise.core.kube import KubeClient
from kruise.core.kube.resources import EPHEMERALJOBS, EVENTS
from kruise.workloads.api.ephemeraljob import EJOB_ENV_KEY
from kruise.workloads.ephemeraljob.plan import FINALIZER
from tests.integration.ephemeraljob.helpers import (
    FakeKubelet,
    condition,
    debugger,
    new_job,
    pod,
    running_pods,
    wait_job,
)
from tests.support.wait import eventually

pytestmark = pytest.mark.usefixtures("manager")
JSON = dict[str, Any]


def injected(p: JSON) -> list[JSON]:
    return list(p["spec"].get("ephemeralContainers") or [])


async def test_create_ephemeral_running_succeed_job(kube: KubeClient, namespace: str) -> None:
    """Five pods, replicas 4, parallelism 1: the four oldest get the container one at a time
    (never two in flight), each marked with the job's UID; the job ends Succeeded with
    ``succeeded: 4``; the youngest pod is left alone."""
    names = ("p0", "p1", "p2", "p3", "p4")
    await running_pods(kube, namespace, *names)
    async with FakeKubelet(kube, namespace).running() as kubelet:
        created = await kube.create(EPHEMERALJOBS, new_job("job", replicas=4, parallelism=1), namespace)
        job = await wait_job(kube, namespace, "job", timeout=90, phase="Succeeded")
    st = job["status"]
    assert (st["match"], st["succeeded"], st["failed"], st["running"], st["waiting"]) == (4, 4, 0, 0, 0)
    assert st["startTime"] and st["completionTime"]
    assert condition(job, "JobSucceeded")["message"] == "job success to run all tasks"  # type: ignore[index]
    assert condition(job, "Initialized") is not None
    assert kubelet.most_in_flight == 1, "parallelism 1: one pod at a time"
    assert kubelet.injected == ["p0", "p1", "p2", "p3"]
    for name in names[:4]:
        (c,) = injected(await pod(kube, namespace, name))
        assert c["name"] == "debugger" and c["command"] == ["sleep", "3"]
        assert {"name": EJOB_ENV_KEY, "value": created["metadata"]["uid"]} in c["env"]
    assert injected(await pod(kube, namespace, "p4")) == []
    assert FINALIZER in job["metadata"]["finalizers"]


async def test_parallelism_bounds_pods_in_flight(kube: KubeClient, namespace: str) -> None:
    """Four pods, parallelism 2, every pod: never more than two containers working at once, and
    two at once do happen."""
    await running_pods(kube, namespace, "a", "b", "c", "d")
    async with FakeKubelet(kube, namespace, run_seconds=1.5).running() as kubelet:
        await kube.create(EPHEMERALJOBS, new_job("job", parallelism=2), namespace)
        job = await wait_job(kube, namespace, "job", timeout=90, phase="Succeeded")
    assert job["status"]["succeeded"] == 4 and job["status"]["match"] == 4
    assert kubelet.most_in_flight == 2
    assert sorted(kubelet.injected) == ["a", "b", "c", "d"]


async def test_create_ephemeral_running_error_exit_job(kube: KubeClient, namespace: str) -> None:
    """Every container exits 1: ``failed`` counts every pod and the job ends Failed."""
    await running_pods(kube, namespace, "a", "b", "c")
    async with FakeKubelet(kube, namespace, exit={"debugger": 1}).running():
        await kube.create(
            EPHEMERALJOBS,
            new_job("job", debugger(command=("ls", "sdfewasf")), replicas=3, parallelism=3),
            namespace,
        )
        job = await wait_job(kube, namespace, "job", timeout=90, phase="Failed")
    assert (job["status"]["failed"], job["status"]["succeeded"], job["status"]["match"]) == (3, 0, 3)
    assert job["status"]["completionTime"]
    failed = condition(job, "JobFailed")
    assert failed is not None and failed["reason"] == "CreateFailed"
    assert failed["message"] == f"EphemeralJob {namespace}/job failed to create ephemeral container"


async def test_create_ephemeral_running_active_deadline_seconds(kube: KubeClient, namespace: str) -> None:
    """A container that keeps running past ``activeDeadlineSeconds``: the job fails with
    ``DeadlineExceeded``."""
    await running_pods(kube, namespace, "a")
    async with FakeKubelet(kube, namespace, keep_running=("debugger",)).running():
        await kube.create(
            EPHEMERALJOBS,
            new_job(
                "job", debugger(command=("sleep", "9999")), replicas=1, parallelism=1, activeDeadlineSeconds=3
            ),
            namespace,
        )
        await wait_job(kube, namespace, "job", running=1)
        job = await wait_job(kube, namespace, "job", timeout=30, phase="Failed")
    failed = condition(job, "JobFailed")
    assert failed is not None and failed["reason"] == "DeadlineExceeded"
    assert failed["message"] == f"EphemeralJob {namespace}/job was active longer than specified deadline"


async def test_create_two_ephemeral_running_job(kube: KubeClient, namespace: str) -> None:
    """Two jobs with different container names both inject into the one pod."""
    await running_pods(kube, namespace, "a")
    async with FakeKubelet(kube, namespace, keep_running=("debugger", "debugger2")).running():
        await kube.create(EPHEMERALJOBS, new_job("job1", replicas=1, parallelism=1), namespace)
        await kube.create(
            EPHEMERALJOBS, new_job("job2", debugger("debugger2"), replicas=1, parallelism=1), namespace
        )

        async def two() -> bool:
            statuses = (await pod(kube, namespace, "a"))["status"].get("ephemeralContainerStatuses") or []
            return len(statuses) == 2

        await eventually(two, timeout=60, what="two ephemeral containers reported")
        await wait_job(kube, namespace, "job1", running=1, match=1)
        await wait_job(kube, namespace, "job2", running=1, match=1)
    assert sorted(c["name"] for c in injected(await pod(kube, namespace, "a"))) == ["debugger", "debugger2"]


async def test_create_ephemeral_running_two_job_but_to_one_target(kube: KubeClient, namespace: str) -> None:
    """A second job whose container has the first one's name matches no pod (Waiting,
    ``MatchedEmpty``) and injects nothing."""
    await running_pods(kube, namespace, "a")
    async with FakeKubelet(kube, namespace, keep_running=("debugger",)).running():
        await kube.create(EPHEMERALJOBS, new_job("job1", replicas=1, parallelism=1), namespace)
        await wait_job(kube, namespace, "job1", running=1)
        await kube.create(EPHEMERALJOBS, new_job("job2", replicas=1, parallelism=1), namespace)
        job2 = await wait_job(kube, namespace, "job2", match=0, phase="Waiting")
        await asyncio.sleep(2)
    empty = condition(job2, "MatchedEmpty")
    assert empty is not None and (empty["reason"], empty["message"]) == ("MatchEmpty", "job match no pods")
    (c,) = injected(await pod(kube, namespace, "a"))
    job1 = await kube.get(EPHEMERALJOBS, "job1", namespace)
    assert {"name": EJOB_ENV_KEY, "value": job1["metadata"]["uid"]} in c["env"]


async def test_check_ttl(kube: KubeClient, namespace: str) -> None:
    """A finished job with ``ttlSecondsAfterFinished: 2`` is deleted (its finalizer removed by the
    controller); the pod keeps its ephemeral container (they cannot be removed)."""
    await running_pods(kube, namespace, "a")
    async with FakeKubelet(kube, namespace).running():
        await kube.create(
            EPHEMERALJOBS, new_job("job", replicas=1, parallelism=1, ttlSecondsAfterFinished=2), namespace
        )
        await wait_job(kube, namespace, "job", phase="Succeeded")

        async def gone() -> bool:
            return await kube.get_or_none(EPHEMERALJOBS, "job", namespace) is None

        await eventually(gone, timeout=30, what="the job deleted past its TTL")
    assert [c["name"] for c in injected(await pod(kube, namespace, "a"))] == ["debugger"]


async def test_a_deleted_job_loses_its_finalizer_and_goes(kube: KubeClient, namespace: str) -> None:
    await running_pods(kube, namespace, "a")
    await kube.create(EPHEMERALJOBS, new_job("job", replicas=1), namespace)

    async def finalized() -> bool:
        job = await kube.get(EPHEMERALJOBS, "job", namespace)
        return FINALIZER in (job["metadata"].get("finalizers") or [])

    await eventually(finalized, what="the finalizer added")
    await kube.delete(EPHEMERALJOBS, "job", namespace)

    async def gone() -> bool:
        return await kube.get_or_none(EPHEMERALJOBS, "job", namespace) is None

    await eventually(gone, what="the deleted job gone")


async def test_validation_refuses_and_changes_nothing(kube: KubeClient, namespace: str) -> None:
    """Appendix B: a create with a padded image or a forbidden field is refused with upstream's
    message and stores nothing; an update to such a template is refused and the stored job stays."""
    bad = debugger()
    bad["image"] = " busybox"
    bad["ports"] = [{"containerPort": 80, "protocol": "TCP"}]
    with pytest.raises(KruiseError) as err:
        await kube.create(EPHEMERALJOBS, new_job("bad", bad), namespace)
    message = str(err.value)
    assert (
        'ephemeralContainers[0].image: Invalid value: " busybox": '
        "must not have leading or trailing whitespace" in message
    )
    assert "ephemeralContainers[0].ports: Forbidden: cannot be set for an Ephemeral Container" in message
    assert await kube.get_or_none(EPHEMERALJOBS, "bad", namespace) is None

    await kube.create(EPHEMERALJOBS, new_job("good", paused=True), namespace)
    before = await kube.get(EPHEMERALJOBS, "good", namespace)
    mount = debugger()
    mount["volumeMounts"] = [{"name": "v", "mountPath": "/v", "subPath": "x"}]
    with pytest.raises(KruiseError) as err:
        await kube.patch(
            EPHEMERALJOBS, "good", {"spec": {"template": {"ephemeralContainers": [mount]}}}, namespace
        )
    assert (
        "ephemeralContainers[0].volumeMounts[0].subPath: Forbidden: cannot be set for an Ephemeral Container"
        in str(err.value)
    )
    after = await kube.get(EPHEMERALJOBS, "good", namespace)
    assert after["spec"] == before["spec"]


async def test_paused_job_injects_nothing(kube: KubeClient, namespace: str) -> None:
    await running_pods(kube, namespace, "a")
    await kube.create(EPHEMERALJOBS, new_job("job", paused=True), namespace)
    await wait_job(kube, namespace, "job", phase="Paused", match=1)
    await asyncio.sleep(1)
    assert injected(await pod(kube, namespace, "a")) == []
    await kube.patch(EPHEMERALJOBS, "job", {"spec": {"paused": False}}, namespace)

    async def got() -> bool:
        return bool(injected(await pod(kube, namespace, "a")))

    await eventually(got, what="injected once unpaused")


async def test_a_refused_injection_is_a_create_failed_event(kube: KubeClient, namespace: str) -> None:
    """The API server refuses what the webhook leaves to it (an env var without a name): the
    job records upstream's ``CreateFailed`` warning and the pod is unchanged."""
    await running_pods(kube, namespace, "a")
    broken = debugger()
    broken["env"] = [{"value": "x"}]
    await kube.create(EPHEMERALJOBS, new_job("job", broken), namespace)

    async def warned() -> JSON | None:
        events = (await kube.list(EVENTS, namespace))["items"]
        hits = [
            e for e in events if e.get("reason") == "CreateFailed" and e["involvedObject"]["name"] == "job"
        ]
        return hits[0] if hits else None

    event: JSON = await eventually(warned, timeout=30, what="a CreateFailed event")
    assert event["type"] == "Warning"
    assert event["message"].startswith(f"failed to create ephemeral container in pod {namespace}/a: ")
    assert injected(await pod(kube, namespace, "a")) == []
