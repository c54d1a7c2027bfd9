"""SIGKILLs of the manager: at seeded random moments of a release, and between an Event and the
status write that records its transition.

- Random moments (``KRUISE_FAULT_SEED``, default 11; ``KILLS`` kills, each after a pause drawn
  from 0.3-2.5 s, while the test drives and approves the reference release): the release
  completes with the right pods and weights, and a pod watch never sees more than the 10 pods
  the CloneSet wants (in-place updates, no surge); the same over a native StatefulSet of 5.
- Between Event and status: the failpoint ``after-transition-event=Progressing`` ends the
  manager (exit 137, no cleanup) right after it posted the Rollout's ``Progressing`` Event and
  before the status that records the transition; the restarted manager decides the transition
  again and records it, and the Rollout has exactly one ``Progressing`` Event.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import random
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from kruise.core.kube import KubeClient
from kruise.core.kube.resources import EVENTS, PODS
from kruise.rollouts.manager.process import ManagerProcess
from kruise.traffic.resources import HTTPROUTES, INGRESSES
from tests.integration.faults.conftest import assert_no_traceback
from tests.integration.rollouts import helpers as h
from tests.integration.rollouts import statefulset_support as sts
from tests.support.cluster import TestCluster
from tests.support.managers import expire_lease, kill_and_restart, own_replica
from tests.support.wait import eventually

SEED = int(os.environ.get("KRUISE_FAULT_SEED", "11"))
KILLS = 5


@contextlib.asynccontextmanager
async def pod_peak(kube: KubeClient, namespace: str) -> AsyncIterator[list[int]]:
    """Watch the namespace's pods; the yielded list holds the largest live count seen so far."""
    peak = [0]
    live: set[str] = set()

    async def watch() -> None:
        start = (await kube.list(PODS, namespace))["metadata"]["resourceVersion"]
        async for event in kube.watch(PODS, namespace, resource_version=start):
            if event.type == "BOOKMARK":
                continue
            pod = event.object
            name = pod["metadata"]["name"]
            if event.type == "DELETED" or pod["metadata"].get("deletionTimestamp"):
                live.discard(name)
            else:
                live.add(name)
            peak[0] = max(peak[0], len(live))

    for pod in (await kube.list(PODS, namespace))["items"]:
        if not pod["metadata"].get("deletionTimestamp"):
            live.add(pod["metadata"]["name"])
    peak[0] = len(live)
    task = asyncio.create_task(watch())
    try:
        yield peak
    finally:
        if task.done():
            task.result()  # a dead watch would leave the peak at its first value
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task


async def chaos(kube: KubeClient, proc: ManagerProcess, rng: random.Random, moments: list[float]) -> None:
    started = time.monotonic()
    for _ in range(KILLS):
        await asyncio.sleep(rng.uniform(0.3, 2.5))
        moments.append(round(time.monotonic() - started, 1))
        await kill_and_restart(kube, proc)


async def test_a_release_completes_through_sigkills_at_random_moments(
    kube: KubeClient, namespace: str, replica: ManagerProcess
) -> None:
    rng = random.Random(SEED)
    ro = h.rollout(namespace, h.REFERENCE_STEPS, h.ROUTING_GATEWAY)
    await h.start(kube, namespace, ro, "httproute")
    moments: list[float] = []
    async with pod_peak(kube, namespace) as peak:
        killer = asyncio.create_task(chaos(kube, replica, rng, moments))
        try:
            await h.set_image(kube, namespace, h.V2)
            await h.wait_paused_at(kube, namespace, 1, timeout=120)
            assert await h.pods_by_image(kube, namespace) == {h.V1: 8, h.V2: 2}
            assert h.route_weights(await kube.get(HTTPROUTES, "web", namespace)) == {
                "web": 95,
                "web-canary": 5,
            }
            await h.approve(kube, namespace)
            await h.wait_paused_at(kube, namespace, 2, timeout=120)
            assert await h.pods_by_image(kube, namespace) == {h.V1: 5, h.V2: 5}
            await h.approve(kube, namespace)
            done = await h.wait_completed(kube, namespace, timeout=120)
        finally:
            await killer
        assert h.condition(done, "Succeeded")["status"] == "True"
        await h.wait_pods(kube, namespace, {h.V2: 10})
    assert peak[0] <= 10, f"{peak[0]} pods alive at once"
    print(f"\n[kruise] seed {SEED}: manager SIGKILLed at {moments} s; peak {peak[0]} pods")


async def test_a_statefulset_release_completes_through_sigkills_at_random_moments(
    kube: KubeClient, namespace: str, replica: ManagerProcess
) -> None:
    """The same over a native StatefulSet (issue 13): 20% with 20% of the traffic, 60%, 100% of
    5 pods; the StatefulSet never runs more than its 5 pods (it deletes before it recreates)."""
    rng = random.Random(SEED + 1)
    steps = [
        {"replicas": "20%", "traffic": "20%", "pause": {}},
        {"replicas": "60%", "pause": {}},
        {"replicas": "100%", "pause": {}},
    ]
    await sts.start(kube, namespace, sts.rollout(namespace, steps))
    moments: list[float] = []
    async with pod_peak(kube, namespace) as peak:
        killer = asyncio.create_task(chaos(kube, replica, rng, moments))
        try:
            await sts.set_image(kube, namespace, sts.V2)
            await h.wait_paused_at(kube, namespace, 1, timeout=120)
            await sts.wait_ordinals(kube, namespace, sts.ordinals(4, 1))
            canary = await kube.get(INGRESSES, "web-canary", namespace)
            assert h.canary_ingress_annotations(canary)["canary-weight"] == "20"
            await h.approve(kube, namespace)
            await h.wait_paused_at(kube, namespace, 2, timeout=120)
            await sts.wait_ordinals(kube, namespace, sts.ordinals(2, 3))
            await h.approve(kube, namespace)
            done = await h.wait_completed(kube, namespace, timeout=120)
        finally:
            await killer
        assert h.condition(done, "Succeeded")["status"] == "True"
        await sts.wait_settled(kube, namespace, 5)
        await sts.wait_ordinals(kube, namespace, dict.fromkeys(range(5), sts.V2))
    assert peak[0] <= 5, f"{peak[0]} pods alive at once"
    assert await kube.get_or_none(INGRESSES, "web-canary", namespace) is None
    print(f"\n[kruise] seed {SEED + 1}: manager SIGKILLed at {moments} s; peak {peak[0]} pods")


def progressing_events(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [
        e for e in events if e.get("reason") == "Progressing" and e["involvedObject"].get("kind") == "Rollout"
    ]


async def test_a_kill_between_an_event_and_its_status_write_neither_loses_nor_doubles_the_event(
    kube: KubeClient, cluster: TestCluster, namespace: str, manager: ManagerProcess, tmp_path: Path
) -> None:
    failpoint = {"KRUISE_FAILPOINTS": "after-transition-event=Progressing"}
    async with own_replica(manager, cluster, tmp_path / "replica", env=failpoint) as replica:
        ro = h.rollout(namespace, [{"replicas": 1, "pause": {}}, {"replicas": "100%"}])
        await h.start(kube, namespace, ro, replicas=3)
        await h.set_image(kube, namespace, h.V2)
        assert replica.proc is not None
        code = await asyncio.to_thread(replica.proc.wait, 60)
        assert code == 137, "the failpoint ended the manager"
        assert (await h.get_rollout(kube, namespace))["status"]["phase"] == "Healthy", "status not written"
        posted = progressing_events((await kube.list(EVENTS, namespace))["items"])
        assert len(posted) == 1, "the event was posted before the status write"

        replica.env = {}
        await expire_lease(kube)
        await asyncio.to_thread(replica.start)
        await h.wait_paused_at(kube, namespace, 1, timeout=90)

        async def events_now() -> list[dict[str, Any]]:
            return progressing_events((await kube.list(EVENTS, namespace))["items"])

        await asyncio.sleep(2)  # a second event, if any, would have been posted by now
        after = await eventually(events_now, timeout=10, what="the Progressing event")
        assert [e["metadata"]["name"] for e in after] == [posted[0]["metadata"]["name"]]
        assert after[0].get("count", 1) == 1
    assert_no_traceback(replica)


@pytest.fixture(autouse=True)
def _seed_in_report(request: pytest.FixtureRequest) -> None:
    request.node.user_properties.append(("fault_seed", SEED))
