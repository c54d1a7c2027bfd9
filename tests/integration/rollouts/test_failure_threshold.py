"""Test > failure threshold (``KR:test/e2e/rollout_v1beta1_test.go``).

A CloneSet of 10 (``maxUnavailable: 100%``) released in steps of 10% / 30% / 60% / 100% with
``failureThreshold: 20%``: a step is done once its pods run the new revision and all but
``ceil(20% of the updated pods)`` of them are Ready (``IsBatchReady``), never with none Ready.
Upstream's run has every pod Ready and only checks that the ready counts lie in 1..1, 2..3 and
4..6; here the new revision carries a readiness gate the test owns, so the test decides how many
new pods are Ready and shows both sides of the threshold at each step.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from kruise.core.kube import KubeClient
from kruise.core.kube.resources import CLONESETS, PODS
from tests.integration.rollouts import helpers as h
from tests.support.podready import set_gate
from tests.support.wait import eventually

pytestmark = pytest.mark.usefixtures("manager")

GATE = "example.com/serving"
STEPS: list[dict[str, Any]] = [
    {"replicas": "10%", "pause": {}},
    {"replicas": "30%", "pause": {}},
    {"replicas": "60%", "pause": {}},
    {"replicas": "100%", "pause": {}},
]


async def new_pods(kube: KubeClient, namespace: str) -> list[str]:
    """Live pods of the new revision (the one with the readiness gate), oldest first."""
    items = (await kube.list(PODS, namespace, label_selector="app=web"))["items"]
    gated = [
        p
        for p in items
        if not p["metadata"].get("deletionTimestamp")
        and any(g.get("conditionType") == GATE for g in p["spec"].get("readinessGates") or [])
    ]
    return [p["metadata"]["name"] for p in sorted(gated, key=lambda p: p["metadata"]["creationTimestamp"])]


async def open_gates(kube: KubeClient, namespace: str, opened: set[str], count: int) -> None:
    """Let ``count`` more new pods become Ready."""
    for name in [n for n in await new_pods(kube, namespace) if n not in opened][:count]:
        await set_gate(kube, namespace, name, GATE)
        opened.add(name)


async def held_at_upgrade(kube: KubeClient, namespace: str, step: int, updated: int, ready: int) -> None:
    """The step waits in StepUpgrade with ``updated`` new pods, ``ready`` of them Ready."""

    async def probe() -> bool:
        st = (await kube.get(CLONESETS, "web", namespace)).get("status") or {}
        sub = h.canary_status(await h.get_rollout(kube, namespace))
        return (sub.get("currentStepIndex"), sub.get("currentStepState")) == (step, "StepUpgrade") and (
            st.get("updatedReplicas"),
            st.get("updatedReadyReplicas"),
        ) == (updated, ready)

    await eventually(probe, timeout=40, what=f"step {step} waiting with {ready}/{updated} new pods Ready")
    await asyncio.sleep(2)
    assert await probe(), f"step {step} must not pass with {ready}/{updated} new pods Ready"


async def test_failure_threshold(kube: KubeClient, namespace: str) -> None:
    ro = h.rollout(namespace, STEPS)
    ro["spec"]["strategy"]["canary"]["failureThreshold"] = "20%"
    await h.start(kube, namespace, ro)
    await kube.patch(
        CLONESETS,
        "web",
        {"spec": {"updateStrategy": {"maxUnavailable": "100%"}}},
        namespace,
        patch_type="merge",
    )
    release = {
        "metadata": {"labels": {"rollouts.kruise.io/rollout-id": "1"}},
        "spec": {
            "template": {
                "spec": {
                    "containers": [{"name": "web", "image": h.V2}],
                    "readinessGates": [{"conditionType": GATE}],
                }
            }
        },
    }
    await kube.patch(CLONESETS, "web", release, namespace, patch_type="merge")
    opened: set[str] = set()

    # step 1 (1 pod): 20% of 1 tolerates one unready pod, but a batch needs one Ready pod
    await held_at_upgrade(kube, namespace, 1, updated=1, ready=0)
    await open_gates(kube, namespace, opened, 1)
    await h.wait_paused_at(kube, namespace, 1)

    # step 2 (3 pods): ceil(20% of 3) = 1 may be unready: 1 Ready of 3 is too few, 2 pass
    await h.approve(kube, namespace)
    await held_at_upgrade(kube, namespace, 2, updated=3, ready=1)
    await open_gates(kube, namespace, opened, 1)
    await h.wait_paused_at(kube, namespace, 2)

    # step 3 (6 pods): ceil(20% of 6) = 2 may be unready: 3 Ready is too few, 4 pass
    await h.approve(kube, namespace)
    await held_at_upgrade(kube, namespace, 3, updated=6, ready=2)
    await open_gates(kube, namespace, opened, 1)
    await held_at_upgrade(kube, namespace, 3, updated=6, ready=3)
    await open_gates(kube, namespace, opened, 1)
    ro = await h.wait_paused_at(kube, namespace, 3)
    st = (await kube.get(CLONESETS, "web", namespace))["status"]
    assert (st["updatedReplicas"], st["updatedReadyReplicas"]) == (6, 4)
    assert h.canary_status(ro)["canaryReadyReplicas"] == 4
