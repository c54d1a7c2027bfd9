"""States with nothing to wait for are passed in one reconcile (issue 28).

A canary step without traffic routing or analysis passes ``StepTrafficRouting`` and
``StepMetricsAnalysis`` at once; upstream writes each to the status in its own reconcile and is
woken again by its own write. Ours runs those rounds in the same reconcile and writes the status
once (``RolloutController._decide_chain``). What must still hold, checked on every status a
watch opened before the release delivers: those two states are never written, each pause still
lasts its duration (``lastUpdateTime`` stamps), the release completes with every pod updated,
and the events of the transitions passed through in one write are all posted, once each.
"""

from __future__ import annotations

import asyncio
import datetime
from collections import Counter
from typing import Any

import pytest

from kruise.core.kube import KubeClient
from kruise.core.kube.resources import EVENTS
from kruise.rollouts.resources import ROLLOUTS
from tests.integration.rollouts import helpers as h

pytestmark = pytest.mark.usefixtures("manager")

JSON = dict[str, Any]
PAUSE = 2
STEPS = [
    {"replicas": "25%", "pause": {"duration": PAUSE}},
    {"replicas": "50%", "pause": {"duration": PAUSE}},
    {"replicas": "100%"},
]
PASSED_THROUGH = {"StepTrafficRouting", "StepMetricsAnalysis"}


def stamp(value: str) -> datetime.datetime:
    return datetime.datetime.strptime(value, "%Y-%m-%dT%H:%M:%SZ")


async def test_a_step_without_traffic_or_analysis_passes_its_empty_states_in_one_write(
    kube: KubeClient, namespace: str
) -> None:
    await h.start(kube, namespace, h.rollout(namespace, STEPS), replicas=4)
    listing = await kube.list(ROLLOUTS, namespace)
    stable = listing["items"][0]["status"]["canaryStatus"]["canaryRevision"]
    seen: list[JSON] = []

    async def record() -> None:
        async for event in kube.watch(
            ROLLOUTS, namespace, resource_version=listing["metadata"]["resourceVersion"]
        ):
            if event.type != "BOOKMARK":
                seen.append((event.object.get("status") or {}).get("canaryStatus") or {})

    watcher = asyncio.create_task(record())
    try:
        await h.set_image(kube, namespace, h.V2)
        ro = await h.wait_completed(kube, namespace)
        await asyncio.sleep(1)  # the watch delivers the last writes
    finally:
        watcher.cancel()
    assert h.condition(ro, "Succeeded")["status"] == "True"
    await h.wait_pods(kube, namespace, {h.V2: 4})

    release = [s for s in seen if s.get("canaryRevision") not in (None, stable)]
    states = [(s.get("currentStepIndex"), s.get("currentStepState")) for s in release]
    assert not PASSED_THROUGH & {state for _, state in states}, states
    assert (3, "Completed") in states, states
    for step in (1, 2):
        paused = next(
            s for s in release if (s["currentStepIndex"], s["currentStepState"]) == (step, "StepPaused")
        )
        after = release[release.index(paused) :]
        moved = next(s for s in after if s["currentStepIndex"] > step or s["currentStepState"] == "StepReady")
        waited = (stamp(moved["lastUpdateTime"]) - stamp(paused["lastUpdateTime"])).total_seconds()
        assert waited >= PAUSE, (step, paused, moved)

    events = [
        e for e in (await kube.list(EVENTS, namespace))["items"] if e["involvedObject"]["kind"] == "Rollout"
    ]
    assert all(e.get("count", 1) == 1 for e in events), events
    reasons = Counter(e["reason"] for e in events)
    # one Progressing at the start, one StepUpgrade per step, one StepReady per step left, one Succeeded
    assert {r: reasons[r] for r in ("Progressing", "StepUpgrade", "StepReady", "Succeeded")} == {
        "Progressing": 1,
        "StepUpgrade": 3,
        "StepReady": 2,
        "Succeeded": 1,
    }, reasons
