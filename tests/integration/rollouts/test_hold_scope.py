"""The workload hold's scope: the API server calls ``mcloneset-rollout.kruise.io`` only for an
UPDATE that can start a release (its ``matchConditions``: the pod template or the rollout-id
changed), counted on the manager's ``controller_runtime_webhook_requests_total``. A release's
partition patches, label and annotation edits and scaling cost no call; a template change and a
rollout-id change each reach it, and the template change is still held.
"""

from __future__ import annotations

import pytest

from kruise.core.kube import KubeClient
from kruise.core.kube.resources import CLONESETS
from kruise.rollouts.manager.process import ManagerProcess
from kruise.rollouts.resources import ROLLOUTS
from tests.integration.rollouts import helpers as h
from tests.integration.test_manager_metrics import scrape
from tests.support.wait import eventually

pytestmark = pytest.mark.usefixtures("manager")

HOLD = "/mutate-rollouts-kruise-io-workload-cloneset"
ROLLOUT_ID = "rollouts.kruise.io/rollout-id"
STEPS = [{"replicas": 1, "pause": {}}, {"replicas": "100%"}]


def calls(manager: ManagerProcess) -> float:
    return scrape(manager).value("controller_runtime_webhook_requests_total", webhook=HOLD, code="200")


async def test_only_template_and_rollout_id_changes_reach_the_hold(
    kube: KubeClient, namespace: str, manager: ManagerProcess
) -> None:
    await kube.create(ROLLOUTS, h.rollout(namespace, STEPS), namespace)
    await h.create_web(kube, namespace)
    await h.wait_phase(kube, namespace, "Healthy")

    async def labelled() -> bool:  # the hold's objectSelector: the Rollout labels its workload
        cloneset = await kube.get(CLONESETS, "web", namespace)
        return "rollouts.kruise.io/workload-type" in (cloneset["metadata"].get("labels") or {})

    await eventually(labelled, timeout=30, what="the CloneSet labelled by its Rollout")

    before = calls(manager)
    for body in (
        {"spec": {"updateStrategy": {"partition": 3}}},
        {"spec": {"updateStrategy": {"partition": None}}},
        {"metadata": {"labels": {"team": "a"}, "annotations": {"note": "x"}}},
        {"spec": {"replicas": 11}},
        # an absent rollout-id removed: still absent, no change
        {"metadata": {"labels": {ROLLOUT_ID: None}, "annotations": {ROLLOUT_ID: None}}},
    ):
        await kube.patch(CLONESETS, "web", body, namespace, patch_type="merge")
    # none of these can start a release: not one call (the manager counts a call before it
    # answers, so the count is final when the PATCH returns)
    assert calls(manager) == before

    patch = {"metadata": {"labels": {ROLLOUT_ID: "r2"}}}
    await kube.patch(CLONESETS, "web", patch, namespace, patch_type="merge")
    after_id = calls(manager)
    assert after_id >= before + 1  # a rollout-id change can start one: called (again if the API
    # server retries the write on a conflict with a concurrent status write)

    await h.set_image(kube, namespace, h.V2)
    assert calls(manager) >= after_id + 1
    cloneset = await kube.get(CLONESETS, "web", namespace)
    assert cloneset["spec"]["updateStrategy"]["partition"] == "100%"  # held: no pod moves yet
    await h.wait_paused_at(kube, namespace, 1)
