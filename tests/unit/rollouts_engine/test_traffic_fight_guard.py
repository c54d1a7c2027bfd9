"""The Rollout's traffic fight guard (rollout/trafficfights.py) over a fake client: held writes,
one event, the counter, a re-assert during a pause, the fight ending once the value holds."""

from __future__ import annotations

import copy
from typing import Any, cast

import pytest
from prometheus_client import REGISTRY

from kruise.core.errors import NotFoundError, TransientError
from kruise.core.events import EventRecorder
from kruise.core.kube.client import KubeClient
from kruise.core.kube.recorded import record_answer
from kruise.rollouts.rollout.trafficfight import Target
from kruise.rollouts.rollout.trafficfights import TrafficFights
from kruise.rollouts.workloads.fight import HOLD_SECONDS
from kruise.traffic.resources import HTTPROUTES

JSON = dict[str, Any]
TARGET = Target(HTTPROUTES, "shop", "web", ("spec", "rules"))
ARGO = {
    "manager": "argocd-controller",
    "operation": "Apply",
    "time": "2026-01-01T00:00:00Z",
    "fieldsV1": {"f:spec": {"f:rules": {}}},
}
OURS = {**ARGO, "manager": "kruise-manager", "operation": "Update"}
ROLLOUT: JSON = {
    "metadata": {"name": "web", "namespace": "shop", "uid": "u"},
    "spec": {
        "strategy": {"canary": {"trafficRoutings": [{"service": "web", "gateway": {"httpRouteName": "web"}}]}}
    },
}


def route(canary: int, manager: JSON) -> JSON:
    refs = [{"name": "web", "weight": 100 - canary}]
    if canary:
        refs.append({"name": "web-canary", "weight": canary})
    return {
        "kind": "HTTPRoute",
        "metadata": {"name": "web", "namespace": "shop", "managedFields": [manager]},
        "spec": {"rules": [{"backendRefs": refs}]},
    }


def conflicts() -> float:
    labels = {"namespace": "shop", "name": "web", "writer": "argocd-controller"}
    return REGISTRY.get_sample_value("kruise_rollout_conflicts_total", labels) or 0.0


class FakeKube:
    def __init__(self) -> None:
        self.live: JSON | None = route(0, ARGO)
        self.writes = 0
        self.reverted_at_once = False

    async def get(self, res: Any, name: str, namespace: str | None = None) -> JSON:
        if self.live is None:
            raise NotFoundError(404, "NotFound", "gone")
        return copy.deepcopy(self.live)

    async def ensure(self) -> bool:
        """The router: 20% to the canary, written when the route says otherwise."""
        if self.live == route(20, OURS):
            return False
        self.writes += 1
        self.live = route(20, OURS)
        record_answer("PATCH", None, copy.deepcopy(self.live))  # the API server's answer
        if self.reverted_at_once:
            self.live = route(0, ARGO)  # the syncer's apply lands before anyone reads the route
        return True


class FakeRecorder:
    def __init__(self) -> None:
        self.events: list[tuple[str, str, str]] = []

    def event(self, obj: Any, type_: str, reason: str, message: str) -> None:
        self.events.append((type_, reason, message))


def guard() -> tuple[TrafficFights, FakeKube, FakeRecorder, list[float]]:
    kube, recorder, now = FakeKube(), FakeRecorder(), [0.0]
    fights = TrafficFights(cast(KubeClient, kube), cast(EventRecorder, recorder), clock=lambda: now[0])
    return fights, kube, recorder, now


async def test_a_revert_holds_our_write_is_announced_once_and_counted_per_revert() -> None:
    fights, kube, recorder, now = guard()
    before = conflicts()
    assert await fights.guarded([TARGET], kube.ensure) is True and kube.writes == 1
    assert await fights.conflict(ROLLOUT) is None  # our value holds

    kube.live = route(0, ARGO)  # the syncer applies Git's route
    now[0] = 5.0
    assert await fights.guarded([TARGET], kube.ensure) is True  # held: "changed", nothing written
    assert kube.writes == 1
    shown = await fights.conflict(ROLLOUT)
    assert shown is not None and shown.revert.writer == "argocd-controller"
    assert "HTTPRoute web" in shown.message and "spec.rules[0].backendRefs[0].weight" in shown.message
    assert [e[:2] for e in recorder.events] == [("Warning", "TrafficFieldReverted")]
    assert conflicts() == before + 1

    now[0] = 6.0  # the backoff's first second passed: the re-assert goes out
    assert await fights.guarded([TARGET], kube.ensure) is True and kube.writes == 2
    kube.live = route(0, ARGO)  # and is set back again
    now[0] = 6.5
    assert await fights.guarded([TARGET], kube.ensure) is True and kube.writes == 2  # 2 s to wait now
    await fights.conflict(ROLLOUT)
    assert len(recorder.events) == 1 and conflicts() == before + 2


async def test_a_revert_landing_right_after_our_write_is_still_seen_and_answered() -> None:
    # what we wrote is taken from the API server's answer to our write: a read after the write
    # would already show the syncer's values, we would remember them as ours and never re-assert
    fights, kube, recorder, now = guard()
    kube.reverted_at_once = True
    assert await fights.guarded([TARGET], kube.ensure) is True and kube.writes == 1
    assert kube.live == route(0, ARGO)
    now[0] = 1.0
    shown = await fights.conflict(ROLLOUT)
    assert shown is not None and shown.revert.writer == "argocd-controller"
    kube.reverted_at_once = False
    now[0] = 2.0
    await fights.conflict(ROLLOUT)  # the backoff's second passed: re-asserted
    assert kube.writes == 2 and kube.live == route(20, OURS)
    assert [e[:2] for e in recorder.events] == [("Warning", "TrafficFieldReverted")]


async def test_a_revert_during_a_pause_is_reasserted_by_the_backoff_alone() -> None:
    fights, kube, recorder, now = guard()
    await fights.guarded([TARGET], kube.ensure)
    kube.live = route(0, ARGO)
    now[0] = 1.0
    assert await fights.conflict(ROLLOUT) is not None and kube.writes == 1  # seen, not answered yet
    now[0] = 1.5
    await fights.conflict(ROLLOUT)
    assert kube.writes == 1
    now[0] = 2.0
    await fights.conflict(ROLLOUT)  # no ensure is asked for in a pause: the remembered one runs
    assert kube.writes == 2 and kube.live == route(20, OURS)

    now[0] = 2.0 + HOLD_SECONDS - 0.1
    assert await fights.conflict(ROLLOUT) is not None  # holding, not long enough yet
    now[0] = 2.0 + HOLD_SECONDS
    assert await fights.conflict(ROLLOUT) is None
    assert kube.writes == 2 and len(recorder.events) == 1


async def test_forgotten_objects_and_other_rollouts_show_nothing() -> None:
    fights, kube, _, _ = guard()
    await fights.guarded([TARGET], kube.ensure)
    kube.live = route(0, ARGO)
    other = copy.deepcopy(ROLLOUT)
    other["spec"]["strategy"]["canary"]["trafficRoutings"][0]["gateway"]["httpRouteName"] = "other"
    assert await fights.conflict(other) is None
    fights.forget([TARGET])
    assert await fights.conflict(ROLLOUT) is None
    assert await fights.guarded([TARGET], kube.ensure) is True and kube.writes == 2  # no memory: writes


async def test_a_route_that_is_gone_is_no_fight() -> None:
    fights, kube, _, _ = guard()
    await fights.guarded([TARGET], kube.ensure)
    kube.live = None
    assert await fights.conflict(ROLLOUT) is None


async def test_a_calm_object_is_read_at_most_every_check_period() -> None:
    fights, kube, _, now = guard()
    await fights.guarded([TARGET], kube.ensure)
    reads: list[float] = []
    get = kube.get

    async def counted(*args: Any, **kwargs: Any) -> JSON:
        reads.append(now[0])
        return await get(*args, **kwargs)

    kube.get = counted  # type: ignore[method-assign]
    for tick in (0.0, 0.5, 1.0, 1.5, 2.0, 2.5):
        now[0] = tick
        assert await fights.conflict(ROLLOUT) is None
    assert reads == [0.0, 2.0]
    kube.live = route(0, ARGO)
    now[0] = 4.0
    assert await fights.conflict(ROLLOUT) is not None  # seen at the next check
    now[0] = 4.5
    await fights.conflict(ROLLOUT)  # in a fight: read every time
    assert reads == [0.0, 2.0, 4.0, 4.5]


async def test_a_failing_reassert_leaves_the_fight_shown_and_raises_nothing() -> None:
    fights, kube, _, now = guard()
    await fights.guarded([TARGET], kube.ensure)

    async def broken() -> bool:
        raise TransientError("connection reset")

    with pytest.raises(TransientError):  # the machine's own call fails as before
        await fights.guarded([TARGET], broken)  # and the step's wish is now the failing call
    kube.live = route(0, ARGO)
    now[0] = 2.0
    assert await fights.conflict(ROLLOUT) is not None
    now[0] = 3.0  # the re-assert is due and fails
    shown = await fights.conflict(ROLLOUT)
    assert shown is not None and shown.revert.writer == "argocd-controller"


async def test_the_rollout_is_woken_when_the_backoff_is_due_and_not_outside_a_fight() -> None:
    # route changes do not wake the Rollout: a step paused for minutes must still requeue for
    # the next re-assert and for the end of the hold
    fights, kube, _, now = guard()
    await fights.guarded([TARGET], kube.ensure)
    assert fights.wake_in(ROLLOUT) is None  # calm
    kube.live = route(0, ARGO)
    now[0] = 1.0
    await fights.conflict(ROLLOUT)
    assert fights.wake_in(ROLLOUT) == 1.0  # the first re-assert may go out a second later
    now[0] = 2.0
    await fights.conflict(ROLLOUT)  # re-asserted; our value holds from now on
    assert kube.writes == 2 and fights.wake_in(ROLLOUT) == 2.0
    now[0] = 4.0
    await fights.conflict(ROLLOUT)  # no revert: the hold runs from the last one seen (2.0)
    assert fights.wake_in(ROLLOUT) == HOLD_SECONDS - 2.0
    now[0] = 2.0 + HOLD_SECONDS
    assert await fights.conflict(ROLLOUT) is None and fights.wake_in(ROLLOUT) is None
