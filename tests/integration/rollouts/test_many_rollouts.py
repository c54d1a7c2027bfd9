"""Fifty Rollouts released at once (issue 28, item 6): every one completes, and none leaves a
timed pause earlier than the pause allows.

Each Rollout steers its own CloneSet of 2 pods (KWOK) through ``50%`` + ``pause 3 s`` and
``100%``; all fifty are released by one image PATCH each, sent together. The pause is measured
with the controller's own clock as the status records it (``canaryStatus.lastUpdateTime``, one
second resolution, stamped on entering a step state): the stamp of ``StepReady`` after the
pause (or of step 2, when both came in one write) minus the stamp of the step's ``StepPaused``
is at least the duration, as upstream's ``doCanaryPaused`` (``duration`` seconds since
``LastUpdateTime``). Only a lower bound on a pause is asserted; how long anything took is the
benchmark's business (``bench/rollouts_scale.py``).
"""

from __future__ import annotations

import asyncio
import datetime
from typing import Any

import pytest

from kruise.core.kube import KubeClient
from kruise.core.kube.resources import CLONESETS
from kruise.rollouts.resources import ROLLOUTS
from tests.integration.cloneset.test_cloneset_inplace import web_cloneset
from tests.integration.rollouts import helpers as h
from tests.support.wait import eventually

pytestmark = pytest.mark.usefixtures("manager")

JSON = dict[str, Any]
N = 50
PAUSE = 3
STEPS = [{"replicas": "50%", "pause": {"duration": PAUSE}}, {"replicas": "100%"}]


def names() -> list[str]:
    return [f"app-{i:02d}" for i in range(N)]


def objects(namespace: str, name: str) -> tuple[JSON, JSON]:
    cloneset = web_cloneset(namespace, replicas=2, partition=0)
    cloneset["metadata"]["name"] = name
    cloneset["spec"]["selector"] = {"matchLabels": {"app": name}}
    cloneset["spec"]["template"]["metadata"]["labels"] = {"app": name}
    cloneset["spec"]["template"]["spec"]["terminationGracePeriodSeconds"] = 0
    rollout = h.rollout(namespace, STEPS)
    rollout["metadata"]["name"] = name
    rollout["spec"]["workloadRef"]["name"] = name
    return cloneset, rollout


def stamp(value: str) -> datetime.datetime:
    return datetime.datetime.strptime(value, "%Y-%m-%dT%H:%M:%SZ")


async def test_fifty_concurrent_rollouts_complete_and_keep_their_pauses(
    kube: KubeClient, namespace: str
) -> None:
    for name in names():
        cloneset, rollout = objects(namespace, name)
        await kube.create(ROLLOUTS, rollout, namespace)
        await kube.create(CLONESETS, cloneset, namespace)

    async def all_phase(phase: str) -> list[JSON] | None:
        items = (await kube.list(ROLLOUTS, namespace))["items"]
        ok = len(items) == N and all((ro.get("status") or {}).get("phase") == phase for ro in items)
        return items if ok else None

    await eventually(lambda: all_phase("Healthy"), timeout=120, what=f"{N} Rollouts Healthy")

    # every status each Rollout passes through, from one watch opened before the release
    listing = await kube.list(ROLLOUTS, namespace)
    before = {
        ro["metadata"]["name"]: ro["status"]["canaryStatus"]["canaryRevision"] for ro in listing["items"]
    }
    seen: dict[str, list[JSON]] = {name: [] for name in names()}

    async def record() -> None:
        version = listing["metadata"]["resourceVersion"]
        async for event in kube.watch(ROLLOUTS, namespace, resource_version=version):
            name = event.object["metadata"]["name"]
            if event.type != "BOOKMARK" and name in seen:
                seen[name].append((event.object.get("status") or {}).get("canaryStatus") or {})

    def released(name: str) -> list[JSON]:
        """The statuses of this release (the canary revision moved off the one before)."""
        return [s for s in seen[name] if s.get("canaryRevision") not in (None, before[name])]

    async def all_completed() -> bool:
        return all(any(s.get("currentStepState") == "Completed" for s in released(n)) for n in names())

    watcher = asyncio.create_task(record())
    patch = {"spec": {"template": {"spec": {"containers": [{"name": "web", "image": h.V2}]}}}}
    try:
        await asyncio.gather(
            *(kube.patch(CLONESETS, name, patch, namespace, patch_type="merge") for name in names())
        )
        await eventually(all_completed, timeout=300, what=f"{N} releases completed")
    finally:
        watcher.cancel()
    await eventually(lambda: all_phase("Healthy"), timeout=60, what=f"{N} Rollouts Healthy again")

    for name in names():
        statuses = released(name)
        paused = next(
            s
            for s in statuses
            if s.get("currentStepIndex") == 1 and s.get("currentStepState") == "StepPaused"
        )
        # the first status past the pause: step 1 Ready, or step 2 if both came in one write
        ready = next(
            s
            for s in statuses[statuses.index(paused) :]
            if s.get("currentStepState") == "StepReady" or (s.get("currentStepIndex") or 0) >= 2
        )
        waited = (stamp(ready["lastUpdateTime"]) - stamp(paused["lastUpdateTime"])).total_seconds()
        assert waited >= PAUSE, (name, paused, ready)
    for name in names():
        cloneset = await kube.get(CLONESETS, name, namespace)
        assert (cloneset["status"]["updatedReplicas"], cloneset["status"]["updatedReadyReplicas"]) == (
            2,
            2,
        ), name
