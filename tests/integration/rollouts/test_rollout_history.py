"""RolloutHistory (issue 17 item 5; feature gate ``RolloutHistory``).

Upstream e2e ``KR:test/e2e/rollouthistory_test.go`` ("CloneSet canary rollout with RolloutHistory"):
"V1->V2: Percentage, 20%,60% Succeeded", "V1->V2: Percentage, 20%, and rollback(v1)" and
"V1->V2: Percentage, 20%,40% and continuous release v3", on the example CloneSet (5 pods) whose
``rollouts.kruise.io/rollout-id`` label changes with each release (upstream's v1alpha1 suite changed
``spec.rolloutID``; v1beta1 moved the id to the workload). Upstream's rollback restarted the release
under the new id; here that is ``rollouts.kruise.io/rollback-in-batch`` (a plain rollback cancels).
Upstream's StatefulSet groups of the same file need workloads this product does not serve yet.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from kruise.core.errors import InvalidError
from kruise.core.kube import KubeClient
from kruise.core.kube.resources import PODS
from kruise.rollouts.manager.process import ManagerProcess
from kruise.rollouts.resources import ROLLOUT_HISTORIES
from tests.integration.rollouts import helpers as h
from tests.integration.rollouts.test_batch_labels import ID, set_rollout_id
from tests.support.cluster import TestCluster
from tests.support.managers import own_replica
from tests.support.wait import eventually

BATCH = "rollouts.kruise.io/rollout-batch-id"
JSON = dict[str, Any]


@pytest.fixture
async def recording(manager: ManagerProcess, cluster: TestCluster, tmp_path: Path) -> AsyncIterator[None]:
    async with own_replica(
        manager, cluster, tmp_path / "history", extra_args=("--feature-gates=RolloutHistory=true",)
    ):
        yield


async def histories(kube: KubeClient, namespace: str) -> dict[str, JSON]:
    """The namespace's RolloutHistories by rollout-id."""
    items = (await kube.list(ROLLOUT_HISTORIES, namespace))["items"]
    return {h["spec"]["rollout"]["rolloutID"]: h for h in items}


async def wait_history(
    kube: KubeClient, namespace: str, rollout_id: str, steps: list[int], phase: str = ""
) -> JSON:
    """The history of ``rollout_id`` listing ``steps`` pods per step (and ``phase``)."""

    async def probe() -> JSON | None:
        found = (await histories(kube, namespace)).get(rollout_id)
        status = (found or {}).get("status") or {}
        counts = [len(s.get("pods") or []) for s in status.get("canarySteps") or []]
        seen.append(f"{counts} {status.get('phase')}")
        return found if counts == steps and (status.get("phase") or "") == phase else None

    seen: list[str] = []
    try:
        return await eventually(
            probe, timeout=40, interval=0.5, what=f"history {rollout_id}: {steps} {phase}"
        )
    except AssertionError as err:
        raise AssertionError(f"{err}; last seen {seen[-1:]}") from None


async def check_pods(kube: KubeClient, namespace: str, history: JSON) -> None:
    """Every recorded pod carries the release's id and its step's batch id, with its IP and node."""
    rollout_id = history["spec"]["rollout"]["rolloutID"]
    for step in history["status"]["canarySteps"]:
        for entry in step.get("pods") or []:
            pod = await kube.get(PODS, entry["name"], namespace)
            labels = pod["metadata"]["labels"]
            assert (labels[ID], labels[BATCH]) == (rollout_id, str(step["canaryStepIndex"]))
            assert (entry["ip"], entry["nodeName"]) == (pod["status"]["podIP"], pod["spec"]["nodeName"])


STEPS: list[JSON] = [
    {"replicas": "20%", "pause": {}},
    {"replicas": "60%", "pause": {}},
    {"replicas": "100%", "pause": {"duration": 0}},
]


@pytest.mark.usefixtures("recording")
async def test_v1_to_v2_percentage_20_60_succeeded(
    kube: KubeClient, namespace: str, cluster: TestCluster
) -> None:
    await h.start(
        kube,
        namespace,
        h.rollout(namespace, STEPS, h.ROUTING_INGRESS),
        "ingress",
        replicas=5,
        labels={ID: "1"},
    )
    assert await histories(kube, namespace) == {}  # no release yet
    await set_rollout_id(kube, namespace, "2", h.V2)

    await h.wait_paused_at(kube, namespace, 1)
    history = await wait_history(kube, namespace, "2", [1])
    assert history["metadata"]["labels"] == {"rollouts.kruise.io/rollout-name": "web", ID: "2"}
    spec = history["spec"]
    assert (spec["rollout"]["name"], spec["workload"]["name"], spec["workload"]["kind"]) == (
        "web",
        "web",
        "CloneSet",
    )
    assert spec["rollout"]["data"]["strategy"]["canary"]["steps"][0]["replicas"] == "20%"
    assert spec["workload"]["data"]["template"]["spec"]["containers"][0]["image"] == h.V2
    assert (spec["service"]["name"], spec["trafficRouting"]["ingress"]["name"]) == ("web", "web")
    assert spec["service"]["data"]["selector"]["app"] == "web"

    await h.approve(kube, namespace)
    await h.wait_paused_at(kube, namespace, 2)
    await check_pods(kube, namespace, await wait_history(kube, namespace, "2", [1, 2]))

    await h.approve(kube, namespace)
    ro = await h.wait_completed(kube, namespace)
    assert h.condition(ro, "Succeeded")["status"] == "True"
    history = await wait_history(kube, namespace, "2", [1, 2, 2], "completed")
    await check_pods(kube, namespace, history)
    assert list(await histories(kube, namespace)) == ["2"]

    shown = h.kruise("rollout", "history", "rollout/web", "--releases", "-n", namespace, cluster=cluster)
    assert shown.returncode == 0, shown.stdout + shown.stderr
    releases = shown.stdout.split("rollout.rollouts.kruise.io/web\n")[1].splitlines()
    assert releases[0].split() == ["ROLLOUT-ID", "PHASE", "STEPS", "PODS", "AGE"], shown.stdout
    assert releases[1].split()[:4] == ["2", "completed", "3", "5"], shown.stdout
    detail = h.kruise(
        "rollout",
        "history",
        "rollout/web",
        "--releases",
        "--rollout-id",
        "2",
        "-n",
        namespace,
        cluster=cluster,
    )
    assert detail.returncode == 0, detail.stdout + detail.stderr
    for step in history["status"]["canarySteps"]:
        for pod in step["pods"]:
            assert f"{step['canaryStepIndex']}     {pod['name']}  {pod['ip']}" in detail.stdout, detail.stdout
    missing = h.kruise(
        "rollout",
        "history",
        "rollout/web",
        "--releases",
        "--rollout-id",
        "9",
        "-n",
        namespace,
        cluster=cluster,
    )
    assert missing.returncode != 0 and "rollout-id '9'" in missing.stderr + missing.stdout


@pytest.mark.usefixtures("recording")
async def test_v1_to_v2_percentage_20_and_rollback_v1(kube: KubeClient, namespace: str) -> None:
    ro = h.rollout(namespace, [{"replicas": "20%", "pause": {}}, *STEPS[1:]])
    ro["metadata"]["annotations"] = {"rollouts.kruise.io/rollback-in-batch": "true"}
    await h.start(kube, namespace, ro, replicas=5, labels={ID: "0"})
    await set_rollout_id(kube, namespace, "1", h.V2)
    await h.wait_paused_at(kube, namespace, 1)
    await wait_history(kube, namespace, "1", [1])

    # back to v1 under a new id: the rollback is released in batches, recorded as release 2
    await set_rollout_id(kube, namespace, "2", h.V1)

    async def restarted() -> bool:  # the Rollout was already paused at step 1 of release 1
        cs = h.canary_status(await h.get_rollout(kube, namespace))
        at = (cs.get("observedRolloutID"), cs.get("currentStepIndex"), cs.get("currentStepState"))
        return at == ("2", 1, "StepPaused")

    await eventually(restarted, timeout=60, interval=0.3, what="release 2 paused at step 1")
    await h.approve(kube, namespace)
    await h.wait_paused_at(kube, namespace, 2)
    await h.approve(kube, namespace)
    await h.wait_completed(kube, namespace)
    found = await histories(kube, namespace)
    assert sorted(found) == ["1", "2"]
    assert (found["1"].get("status") or {}).get("phase") is None  # the abandoned release stays open
    await h.wait_pods(kube, namespace, {h.V1: 5})
    history = await wait_history(kube, namespace, "2", [1, 2, 2], "completed")
    await check_pods(kube, namespace, history)


@pytest.mark.usefixtures("recording")
async def test_v1_to_v2_percentage_20_40_and_continuous_release_v3(kube: KubeClient, namespace: str) -> None:
    steps = [{"replicas": "20%", "pause": {}}, {"replicas": "40%", "pause": {}}, STEPS[2]]
    await h.start(kube, namespace, h.rollout(namespace, steps), replicas=5, labels={ID: "0"})
    await set_rollout_id(kube, namespace, "1", h.V2)
    await h.wait_paused_at(kube, namespace, 1)
    await wait_history(kube, namespace, "1", [1])

    await set_rollout_id(kube, namespace, "2", h.V3)  # v1 -> v2 -> v3
    await h.wait_paused_at(kube, namespace, 1)
    await wait_history(kube, namespace, "2", [1])
    assert sorted(await histories(kube, namespace)) == ["1", "2"]
    for step in (1, 2):
        await h.wait_paused_at(kube, namespace, step)
        await h.approve(kube, namespace)
    await h.wait_completed(kube, namespace)
    await h.wait_pods(kube, namespace, {h.V3: 5})
    history = await wait_history(kube, namespace, "2", [1, 1, 3], "completed")
    await check_pods(kube, namespace, history)
    first = (await histories(kube, namespace))["1"]
    assert first["status"].get("phase") is None and len(first["status"]["canarySteps"]) == 1


@pytest.mark.usefixtures("recording")
async def test_a_release_without_a_rollout_id_is_not_recorded(kube: KubeClient, namespace: str) -> None:
    await h.start(kube, namespace, h.rollout(namespace, STEPS), replicas=5)
    await h.set_image(kube, namespace, h.V2)
    await h.wait_paused_at(kube, namespace, 1)
    await h.approve(kube, namespace)
    await h.wait_paused_at(kube, namespace, 2)
    assert await histories(kube, namespace) == {}


@pytest.mark.parametrize(
    ("spec", "field"),
    [
        pytest.param(
            {"rollout": {"name": "web", "rolloutID": ""}}, "spec.rollout.rolloutID", id="empty rollout-id"
        ),
        pytest.param({"workload": {"name": "web"}}, "spec.rollout", id="no rollout at all"),
    ],
)
async def test_a_history_of_a_release_without_rollout_id_is_refused(
    kube: KubeClient, namespace: str, spec: JSON, field: str
) -> None:
    body = {
        "apiVersion": ROLLOUT_HISTORIES.api_version,
        "kind": "RolloutHistory",
        "metadata": {"name": "web-manual"},
        "spec": spec,
    }
    with pytest.raises(InvalidError) as refused:
        await kube.create(ROLLOUT_HISTORIES, body, namespace)
    assert field in refused.value.message, refused.value.message
    assert await histories(kube, namespace) == {}
