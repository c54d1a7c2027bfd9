"""The CloneSet asks each pod's PodUnavailableBudget before updating it (gate
``PodUnavailableBudgetUpdateGate``, upstream's ``cloneset_update.go``): in the round's order, once
per pod, stopping at the first refusal."""

from __future__ import annotations

from typing import Any

from kruise.workloads.cloneset.sync_update import admit_in_order
from kruise.workloads.cloneset.update import PodUpdateAction, UpdateKind
from kruise.workloads.objects import KubeObject

REFUSAL = 'podunavailablebudget.policy.kruise.io "web" is forbidden: pub unavailable allowed is negative'
PODS: dict[str, KubeObject] = {n: {"metadata": {"name": n}} for n in ("a", "b", "c")}


def action(pod: str, kind: UpdateKind = UpdateKind.IN_PLACE) -> PodUpdateAction:
    return PodUpdateAction(pod, 0, kind, "rev-2")


class Budget:
    """Admits ``allowed`` pods, then refuses with upstream's message."""

    def __init__(self, allowed: int) -> None:
        self.allowed = allowed
        self.asked: list[str] = []

    async def __call__(self, pod: KubeObject) -> str | None:
        self.asked.append(pod["metadata"]["name"])
        if self.allowed == 0:
            return REFUSAL
        self.allowed -= 1
        return None


async def test_every_pod_admitted_keeps_the_round() -> None:
    budget = Budget(3)
    actions = [action("a"), action("b", UpdateKind.RECREATE), action("c", UpdateKind.LIFECYCLE)]
    kept, refusal = await admit_in_order(actions, PODS, budget)
    assert kept == actions and refusal is None
    assert budget.asked == ["a", "b", "c"]


async def test_the_round_stops_at_the_first_refusal() -> None:
    budget = Budget(1)
    kept, refusal = await admit_in_order([action("a"), action("b"), action("c")], PODS, budget)
    assert [a.pod_name for a in kept] == ["a"]
    assert refusal is not None and refusal.endswith("pub unavailable allowed is negative")
    assert budget.asked == ["a", "b"], "no pod after the refused one is asked"


async def test_errors_are_not_asked_and_a_pod_is_asked_once() -> None:
    budget = Budget(1)
    actions: list[Any] = [action("a", UpdateKind.LIFECYCLE), action("a"), action("b", UpdateKind.ERROR)]
    kept, refusal = await admit_in_order(actions, PODS, budget)
    assert kept == actions and refusal is None
    assert budget.asked == ["a"]
