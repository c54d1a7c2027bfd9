"""The BatchRelease controller's fight guard (batchrelease/fights.py) over a fake client: the held
workload patch, one event, the condition written and removed, the counter."""

from __future__ import annotations

import copy
from typing import Any, cast

from prometheus_client import REGISTRY

from kruise.core.events import EventRecorder
from kruise.core.kube.client import KubeClient
from kruise.core.kube.resources import CLONESETS, PODS
from kruise.rollouts.batchrelease.fights import FightGuard
from kruise.rollouts.workloads.fight import HOLD_SECONDS
from kruise.rollouts.workloads.ops import ControlDecision, Op, OpKind

JSON = dict[str, Any]
ARGO = {
    "manager": "argocd-controller",
    "operation": "Apply",
    "time": "2026-01-01T00:00:00Z",
    "fieldsV1": {"f:spec": {"f:updateStrategy": {"f:partition": {}}}},
}


def conflicts() -> float:
    labels = {"namespace": "shop", "name": "web", "writer": "argocd-controller"}
    return REGISTRY.get_sample_value("kruise_rollout_conflicts_total", labels) or 0.0


class FakeKube:
    def __init__(self) -> None:
        self.live: JSON = {}
        self.status_patches: list[JSON] = []

    async def get(self, res: Any, name: str, namespace: str | None = None) -> JSON:
        return copy.deepcopy(self.live)

    async def patch(self, res: Any, name: str, body: JSON, namespace: str | None = None, **_: Any) -> JSON:
        self.status_patches.append(body)
        return body


class FakeRecorder:
    def __init__(self) -> None:
        self.events: list[tuple[str, str, str]] = []

    def event(self, obj: Any, type_: str, reason: str, message: str) -> None:
        self.events.append((type_, reason, message))


def cloneset(partition: int, managed: list[JSON] | None = None) -> JSON:
    meta: JSON = {"name": "web", "namespace": "shop", "resourceVersion": "1"}
    if managed is not None:
        meta["managedFields"] = managed
    return {"metadata": meta, "spec": {"replicas": 5, "updateStrategy": {"partition": partition}}}


ROLLOUT: JSON = {"metadata": {"name": "web", "namespace": "shop", "resourceVersion": "9"}, "status": {}}
WRITE = Op(OpKind.PATCH, CLONESETS, "web", {"spec": {"updateStrategy": {"partition": 4}}})
LABEL = Op(OpKind.PATCH, PODS, "web-1", {"metadata": {"labels": {"a": "b"}}})


async def test_a_revert_holds_the_patch_announces_once_and_clears_after_holding() -> None:
    kube, recorder, now = FakeKube(), FakeRecorder(), [0.0]
    guard = FightGuard(cast(KubeClient, kube), cast(EventRecorder, recorder), clock=lambda: now[0])
    before = conflicts()
    decision = ControlDecision((WRITE, LABEL), {}, None)

    first = await guard.guard("shop/web", "CloneSet", ROLLOUT, cloneset(5), decision)
    assert first.ops == (WRITE, LABEL)  # nothing written yet: no fight
    guard.applied("shop/web", "CloneSet", cloneset(5), [WRITE, LABEL])

    kube.live = cloneset(5, [ARGO])  # the syncer set it back
    now[0] = 10.0
    held = await guard.guard("shop/web", "CloneSet", ROLLOUT, cloneset(5), decision)
    assert held.ops == (LABEL,) and held.requeue_after == 1.0
    assert [e[:2] for e in recorder.events] == [("Warning", "WorkloadFieldReverted")]
    assert "argocd-controller" in recorder.events[0][2]
    cond = kube.status_patches[-1]["status"]["conditions"][0]
    assert (cond["type"], cond["status"], cond["reason"]) == ("Conflict", "True", "ReconciliationConflict")
    assert "argocd-controller" in cond["message"] and "spec.updateStrategy.partition" in cond["message"]
    assert kube.status_patches[-1]["metadata"]["resourceVersion"] == "9"
    assert conflicts() == before + 1

    now[0] = 11.0
    shown = {**ROLLOUT, "status": {"conditions": [cond]}}
    again = await guard.guard("shop/web", "CloneSet", shown, cloneset(5), decision)
    assert again.ops == (WRITE, LABEL)  # the backoff passed: re-assert
    guard.applied("shop/web", "CloneSet", cloneset(5), [WRITE])
    assert len(recorder.events) == 1 and len(kube.status_patches) == 1  # condition unchanged

    now[0] = 11.0 + HOLD_SECONDS
    cleared = await guard.guard("shop/web", "CloneSet", shown, cloneset(4), ControlDecision((), {}, None))
    assert cleared.requeue_after is None
    assert kube.status_patches[-1]["status"]["conditions"] == []


async def test_a_value_only_we_own_is_no_fight_and_a_new_template_forgets() -> None:
    kube, recorder = FakeKube(), FakeRecorder()
    guard = FightGuard(cast(KubeClient, kube), cast(EventRecorder, recorder), clock=lambda: 0.0)
    decision = ControlDecision((WRITE,), {}, None)
    await guard.guard("shop/web", "CloneSet", ROLLOUT, cloneset(5), decision)
    guard.applied("shop/web", "CloneSet", cloneset(5), [WRITE])
    kube.live = cloneset(5, [{**ARGO, "manager": "kruise-manager"}])
    out = await guard.guard("shop/web", "CloneSet", ROLLOUT, cloneset(5), decision)
    assert out.ops == (WRITE,) and not recorder.events and not kube.status_patches

    kube.live = cloneset(5, [ARGO])
    moved = cloneset(5)
    moved["spec"]["template"] = {"metadata": {"labels": {"v": "2"}}}
    out = await guard.guard("shop/web", "CloneSet", ROLLOUT, moved, decision)
    assert out.ops == (WRITE,) and not recorder.events
